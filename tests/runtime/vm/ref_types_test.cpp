// Value, vm.buffer and vm.list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/vm/byte_buffer.h"
#include "strata/vm/list.h"
#include "strata/vm/module.h"
#include "strata/vm/value.h"

namespace strata::vm {
namespace {

TEST(ValueTest, HoldsEachType) {
  EXPECT_TRUE(Value().is_none());
  EXPECT_EQ(Value::I32(-4).i32(), -4);
  EXPECT_EQ(Value::I64(int64_t(1) << 60).i64(), int64_t(1) << 60);
  EXPECT_FLOAT_EQ(Value::F32(0.1f).f32(), 0.1f);
  EXPECT_DOUBLE_EQ(Value::F64(-0.1).f64(), -0.1);
  EXPECT_TRUE(Value::NullRef().is_ref());
  EXPECT_EQ(Value::NullRef().ref(), nullptr);
  EXPECT_EQ(Value::I32(3).ToString(), "i32 3");
  EXPECT_EQ(Value::F32(1.5f).ToString(), "f32 1.5");
  EXPECT_EQ(Value::NullRef().ToString(), "ref null");
  EXPECT_EQ(Value::Ref(ByteBuffer::FromString("x")).ToString(),
            "ref vm.buffer");
}

TEST(ValueTest, RefsAreCounted) {
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  {
    Value a = Value::Ref(buffer);
    Value b = a;
    EXPECT_EQ(buffer->ref_count(), 3);
    RefPtr<RefObject> taken = b.TakeRef();
    EXPECT_EQ(b.ref(), nullptr);
    EXPECT_EQ(buffer->ref_count(), 3);
  }
  EXPECT_EQ(buffer->ref_count(), 1);
}

TEST(ValueTest, CastRefNamesTheProblem) {
  Value buffer = Value::Ref(ByteBuffer::FromString("x"));
  Result<ByteBuffer *> ok = CastRef<ByteBuffer>(buffer, "argument 0");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), buffer.ref());
  Result<List *> wrong = CastRef<List>(buffer, "argument 0");
  EXPECT_EQ(wrong.status().message(),
            "argument 0 must be a vm.list, got vm.buffer");
  EXPECT_EQ(CastRef<List>(Value::NullRef(), "the list").status().message(),
            "the list must be a vm.list, got a null ref");
  EXPECT_EQ(CastRef<List>(Value::I32(1), "x").status().message(),
            "x must be a ref to vm.list, got i32");
  Result<List *> optional = CastOptionalRef<List>(Value::NullRef(), "x");
  ASSERT_TRUE(optional.ok());
  EXPECT_EQ(optional.value(), nullptr);
}

TEST(ByteBufferTest, AllocateIsZeroedAndWritable) {
  Result<RefPtr<ByteBuffer>> buffer = ByteBuffer::Allocate(8);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(buffer.value()->length(), 8u);
  for (uint8_t byte : buffer.value()->data())
    EXPECT_EQ(byte, 0);
  Result<std::span<uint8_t>> bytes = buffer.value()->WriteRange(6, 2);
  ASSERT_TRUE(bytes.ok());
  bytes.value()[1] = 9;
  EXPECT_EQ(buffer.value()->data()[7], 9);
  EXPECT_EQ(buffer.value()->WriteRange(7, 2).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(buffer.value()->ReadRange(UINT64_MAX, 2).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_TRUE(buffer.value()->ReadRange(8, 0).ok());
  EXPECT_EQ(ByteBuffer::Allocate(uint64_t(1) << 40).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(ByteBuffer::Allocate(0).ok());
}

TEST(ByteBufferTest, StringsAreReadOnlyCopies) {
  std::string text = "hal.executable.format";
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString(text);
  text[0] = 'X';
  EXPECT_EQ(buffer->AsStringView(), "hal.executable.format");
  EXPECT_TRUE(buffer->is_read_only());
  EXPECT_EQ(buffer->MutableData().status().code(),
            StatusCode::kFailedPrecondition);
  RefPtr<ByteBuffer> writable =
      ByteBuffer::CopyOf(buffer->data(), /*writable=*/true);
  EXPECT_TRUE(writable->MutableData().ok());
}

// An owner whose destruction is observable.
class Owner final : public RefObject {
public:
  static const RefTypeDescriptor kRefType;
  explicit Owner(bool *destroyed)
      : RefObject(&kRefType), destroyed_(destroyed) {}
  ~Owner() override { *destroyed_ = true; }
  const uint8_t bytes[4] = {1, 2, 3, 4};

private:
  bool *destroyed_;
};
const RefTypeDescriptor Owner::kRefType = {"test.owner"};

TEST(ByteBufferTest, WrappedBytesRetainTheirOwner) {
  bool destroyed = false;
  RefPtr<Owner> owner = MakeRef<Owner>(&destroyed);
  RefPtr<ByteBuffer> view =
      ByteBuffer::WrapReadOnly(std::span(owner->bytes), owner);
  owner.reset();
  EXPECT_FALSE(destroyed);
  EXPECT_EQ(view->data()[3], 4);
  EXPECT_TRUE(view->is_read_only());
  view.reset();
  EXPECT_TRUE(destroyed);
}

TEST(ListTest, GrowsAndChecksBounds) {
  RefPtr<List> list = List::Create(2);
  EXPECT_EQ(list->size(), 0u);
  ASSERT_TRUE(list->PushBack(Value::I32(1)).ok());
  ASSERT_TRUE(list->Resize(4).ok());
  EXPECT_EQ(list->size(), 4u);
  EXPECT_TRUE(list->Get(3).value().is_none());
  EXPECT_EQ(list->GetI32(0).value(), 1);
  EXPECT_EQ(list->GetI32(3).value(), 0);
  EXPECT_EQ(list->GetI64(3).value(), 0);
  EXPECT_EQ(list->GetRef(3).value(), nullptr);
  EXPECT_EQ(list->Get(4).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(list->Set(4, Value()).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(list->GetI64(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(list->Resize(List::kMaxSize + 1).code(),
            StatusCode::kResourceExhausted);
}

TEST(ListTest, ShrinkingReleasesRefs) {
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  RefPtr<List> list = List::Create();
  ASSERT_TRUE(list->Resize(2).ok());
  ASSERT_TRUE(list->Set(1, Value::Ref(buffer)).ok());
  EXPECT_EQ(buffer->ref_count(), 2);
  ASSERT_TRUE(list->Resize(1).ok());
  EXPECT_EQ(buffer->ref_count(), 1);
}

TEST(TensorTypeTest, Formats) {
  TensorTypeInfo f32{{4}, 0x21000020};
  EXPECT_EQ(f32.ToString(), "4xf32");
  TensorTypeInfo dynamic{{2, -1}, 0x11000008};
  EXPECT_EQ(dynamic.ToString(), "2x?xi8");
  TensorTypeInfo scalar{{}, 0x12000010};
  EXPECT_EQ(scalar.ToString(), "ui16");
  EXPECT_EQ(ElementTypeName(0x14000008), "i1");
  EXPECT_EQ(ElementTypeName(0x22000010), "bf16");
  EXPECT_EQ(ElementTypeName(0x99000001), "type_0x99000001");
  ModuleExport module_export;
  module_export.argument_types = {f32, f32};
  module_export.result_types = {f32};
  EXPECT_EQ(module_export.FormatTensorTypes(), "(4xf32, 4xf32) -> (4xf32)");
}

} // namespace
} // namespace strata::vm
