// vm.list and vm.buffer ops.
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

TEST(InterpreterRefsTest, ListOps) {
  ModuleBuilder builder("lists");
  FunctionBuilder &f =
      builder.AddFunction("f", "0r_iIirir", {.i32 = 6, .i64 = 2, .ref = 3});
  f.Op(Opcode::ConstI32).Reg(0).I32(4);
  f.Op(Opcode::ListAlloc).Reg(1).Reg(0);
  f.Op(Opcode::ConstI32).Reg(1).I32(3);
  f.Op(Opcode::ListResize).Reg(1).Reg(1);
  f.Op(Opcode::ConstI32).Reg(2).I32(0);
  f.Op(Opcode::ConstI32).Reg(3).I32(1);
  f.Op(Opcode::ConstI32).Reg(4).I32(2);
  f.Op(Opcode::ConstI32).Reg(5).I32(77);
  f.Op(Opcode::ListSetI32).Reg(1).Reg(2).Reg(5);
  f.Op(Opcode::ConstI64).Reg(0).I64(int64_t(1) << 40);
  f.Op(Opcode::ListSetI64).Reg(1).Reg(3).Reg(0);
  f.Op(Opcode::ListSetRef).Reg(1).Reg(4).Reg(0);
  f.Op(Opcode::ListGetI32).Reg(0).Reg(1).Reg(2);
  f.Op(Opcode::ListGetI64).Reg(1).Reg(1).Reg(3);
  f.Op(Opcode::ListSize).Reg(5).Reg(1);
  f.Op(Opcode::ListGetRef).Reg(2).Reg(1).Reg(4);
  f.Op(Opcode::Return)
      .List({RegI32(0), RegI64(1), RegI32(5), RegRef(2), RegI32(0), RegRef(1)});
  builder.AddExport("f", f.ordinal());

  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("element");
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              RunModule(builder, "f", {Value::Ref(buffer)}));
  EXPECT_EQ(results[0].i32(), 77);
  EXPECT_EQ(results[1].i64(), int64_t(1) << 40);
  EXPECT_EQ(results[2].i32(), 3);
  EXPECT_EQ(results[3].ref(), buffer.get());
  List *list = RefCast<List>(results[5].ref());
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->size(), 3u);
  STRATA_ASSERT_OK_AND_ASSIGN(Value element, list->Get(2));
  EXPECT_EQ(element.ref(), buffer.get());
}

// Runs `op list, index...` on a fresh list of size 2 holding [i64 5, none].
Status RunListAccess(Opcode opcode, int32_t index) {
  ModuleBuilder builder("lists");
  FunctionBuilder &f =
      builder.AddFunction("f", "0i_v", {.i32 = 3, .i64 = 1, .ref = 2});
  f.Op(Opcode::ConstI32).Reg(1).I32(2);
  f.Op(Opcode::ListAlloc).Reg(0).Reg(1);
  f.Op(Opcode::ListResize).Reg(0).Reg(1);
  f.Op(Opcode::ConstI32).Reg(2).I32(0);
  f.Op(Opcode::ConstI64).Reg(0).I64(5);
  f.Op(Opcode::ListSetI64).Reg(0).Reg(2).Reg(0);
  switch (opcode) {
  case Opcode::ListGetI32:
    f.Op(opcode).Reg(1).Reg(0).Reg(0);
    break;
  case Opcode::ListGetI64:
    f.Op(opcode).Reg(0).Reg(0).Reg(0);
    break;
  case Opcode::ListGetRef:
    f.Op(opcode).Reg(1).Reg(0).Reg(0);
    break;
  case Opcode::ListSetI32:
    f.Op(opcode).Reg(0).Reg(0).Reg(0);
    break;
  default:
    ADD_FAILURE();
  }
  f.Op(Opcode::Return).List({});
  builder.AddExport("f", f.ordinal());
  return RunModule(builder, "f", {Value::I32(index)}).status();
}

TEST(InterpreterRefsTest, ListErrors) {
  EXPECT_EQ(RunListAccess(Opcode::ListGetI32, 2).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(RunListAccess(Opcode::ListGetI32, -1).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(RunListAccess(Opcode::ListSetI32, 7).code(),
            StatusCode::kOutOfRange);
  // Element 0 holds an i64.
  Status mismatch = RunListAccess(Opcode::ListGetI32, 0);
  EXPECT_EQ(mismatch.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(mismatch.message()), HasSubstr("holds i64"));
  EXPECT_EQ(RunListAccess(Opcode::ListGetRef, 0).code(),
            StatusCode::kInvalidArgument);
  // Empty slots read as zero / null.
  STRATA_EXPECT_OK(RunListAccess(Opcode::ListGetI32, 1));
  STRATA_EXPECT_OK(RunListAccess(Opcode::ListGetI64, 1));
  STRATA_EXPECT_OK(RunListAccess(Opcode::ListGetRef, 1));
  STRATA_EXPECT_OK(RunListAccess(Opcode::ListGetI64, 0));
}

TEST(InterpreterRefsTest, NullAndMistypedRefsAreErrors) {
  ModuleBuilder builder("refs");
  FunctionBuilder &size =
      builder.AddFunction("size", "0r_i", {.i32 = 1, .ref = 1});
  size.Op(Opcode::ListSize).Reg(0).Reg(0);
  size.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("size", size.ordinal());
  FunctionBuilder &length =
      builder.AddFunction("length", "0r_I", {.i64 = 1, .ref = 1});
  length.Op(Opcode::BufferLength).Reg(0).Reg(0);
  length.Op(Opcode::Return).List({RegI64(0)});
  builder.AddExport("length", length.ordinal());

  Status null_list = RunModule(builder, "size", {Value::NullRef()}).status();
  EXPECT_EQ(null_list.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(null_list.message()), HasSubstr("null"));
  Status wrong_type =
      RunModule(builder, "size", {Value::Ref(ByteBuffer::FromString("x"))})
          .status();
  EXPECT_EQ(wrong_type.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_type.message()), HasSubstr("vm.buffer"));
  EXPECT_EQ(RunModule(builder, "length", {Value::NullRef()}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RunModule(builder, "length", {Value::Ref(List::Create())})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(InterpreterRefsTest, BufferOps) {
  ModuleBuilder builder("buffers");
  uint32_t rodata =
      builder.AddRodata("bytes", std::string("\x10\x20\x30\x40", 4));
  FunctionBuilder &f = builder.AddFunction(
      "f", "0v_iiIfIir", {.i32 = 4, .i64 = 6, .f32 = 1, .ref = 2});
  f.Op(Opcode::ConstI64).Reg(0).I64(16);
  f.Op(Opcode::BufferAlloc).Reg(0).Reg(0);
  f.Op(Opcode::ConstI64).Reg(1).I64(0);
  f.Op(Opcode::ConstI64).Reg(2).I64(8);
  f.Op(Opcode::ConstI64).Reg(3).I64(4);
  f.Op(Opcode::ConstI32).Reg(0).I32(0x01020304);
  f.Op(Opcode::BufferStoreI32).Reg(0).Reg(1).Reg(0);
  f.Op(Opcode::BufferLoadI8U).Reg(1).Reg(0).Reg(1); // low byte first
  f.Op(Opcode::ConstI64).Reg(4).I64(-2);
  f.Op(Opcode::BufferStoreI64).Reg(0).Reg(2).Reg(4);
  f.Op(Opcode::BufferLoadI64).Reg(4).Reg(0).Reg(2);
  f.Op(Opcode::ConstF32).Reg(0).F32(2.5f);
  f.Op(Opcode::BufferStoreF32).Reg(0).Reg(3).Reg(0);
  f.Op(Opcode::BufferLoadF32).Reg(0).Reg(0).Reg(3);
  f.Op(Opcode::BufferLength).Reg(5).Reg(0);
  // Copy 3 rodata bytes from offset 1 over bytes 0..2, then store one byte.
  f.Op(Opcode::ConstRefRodata).Reg(1).Rodata(rodata);
  f.Op(Opcode::ConstI64).Reg(3).I64(1);
  f.Op(Opcode::ConstI64).Reg(2).I64(3);
  f.Op(Opcode::BufferCopy).Reg(0).Reg(1).Reg(1).Reg(3).Reg(2);
  f.Op(Opcode::ConstI32).Reg(3).I32(0x1FF);
  f.Op(Opcode::BufferStoreI8).Reg(0).Reg(2).Reg(3);
  f.Op(Opcode::BufferLoadI32).Reg(2).Reg(0).Reg(1);
  f.Op(Opcode::BufferLoadI32).Reg(3).Reg(1).Reg(1);
  f.Op(Opcode::Return)
      .List({RegI32(1), RegI32(2), RegI64(4), RegF32(0), RegI64(5), RegI32(3),
             RegRef(0)});
  builder.AddExport("f", f.ordinal());

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              RunModule(builder, "f", {}));
  EXPECT_EQ(results[0].i32(), 0x04);
  EXPECT_EQ(static_cast<uint32_t>(results[1].i32()), 0xFF403020u);
  EXPECT_EQ(results[2].i64(), -2);
  EXPECT_FLOAT_EQ(results[3].f32(), 2.5f);
  EXPECT_EQ(results[4].i64(), 16);
  EXPECT_EQ(results[5].i32(), 0x40302010);
  ByteBuffer *buffer = RefCast<ByteBuffer>(results[6].ref());
  ASSERT_NE(buffer, nullptr);
  EXPECT_FALSE(buffer->is_read_only());
  EXPECT_EQ(buffer->length(), 16u);
}

// `buffer.load.i32 %i0, %r0, %I0` with the offset and buffer as arguments.
Status LoadI32At(Value buffer, int64_t offset) {
  ModuleBuilder builder("buffers");
  FunctionBuilder &f =
      builder.AddFunction("load", "0rI_i", {.i32 = 1, .i64 = 1, .ref = 1});
  f.Op(Opcode::BufferLoadI32).Reg(0).Reg(0).Reg(0);
  f.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("load", f.ordinal());
  return RunModule(builder, "load", {std::move(buffer), Value::I64(offset)})
      .status();
}

TEST(InterpreterRefsTest, BufferBoundsAreChecked) {
  auto buffer = [] { return Value::Ref(ByteBuffer::Allocate(8).value()); };
  STRATA_EXPECT_OK(LoadI32At(buffer(), 4));
  EXPECT_EQ(LoadI32At(buffer(), 5).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(LoadI32At(buffer(), -1).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(LoadI32At(buffer(), INT64_MAX).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(LoadI32At(Value::NullRef(), 0).code(),
            StatusCode::kInvalidArgument);
}

TEST(InterpreterRefsTest, RodataIsReadOnly) {
  ModuleBuilder builder("buffers");
  uint32_t rodata = builder.AddRodata("bytes", "abcd");
  FunctionBuilder &f =
      builder.AddFunction("f", "0v_v", {.i32 = 1, .i64 = 1, .ref = 1});
  f.Op(Opcode::ConstRefRodata).Reg(0).Rodata(rodata);
  f.Op(Opcode::ConstI64).Reg(0).I64(0);
  f.Op(Opcode::ConstI32).Reg(0).I32(1);
  f.Op(Opcode::BufferStoreI8).Reg(0).Reg(0).Reg(0);
  f.Op(Opcode::Return).List({});
  builder.AddExport("f", f.ordinal());
  Status status = RunModule(builder, "f", {}).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("read-only"));
}

TEST(InterpreterRefsTest, HugeAllocationsAreErrors) {
  ModuleBuilder builder("buffers");
  FunctionBuilder &f = builder.AddFunction("f", "0I_v", {.i64 = 1, .ref = 1});
  f.Op(Opcode::BufferAlloc).Reg(0).Reg(0);
  f.Op(Opcode::Return).List({});
  builder.AddExport("f", f.ordinal());
  EXPECT_EQ(
      RunModule(builder, "f", {Value::I64(int64_t(1) << 40)}).status().code(),
      StatusCode::kResourceExhausted);
  EXPECT_EQ(RunModule(builder, "f", {Value::I64(-1)}).status().code(),
            StatusCode::kOutOfRange);
}

} // namespace
} // namespace strata::vm::testing
