// Call contracts (call_contract.h): a native module states limits on its
// arguments and which results are waitables it waits on; registering a
// bytecode module that calls it refuses calls the data flow proves wrong,
// and accepts what it cannot see.
#include <cstdio>

#include "strata/vm/call_contract.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

// "grid": three counts, each <= 100, product <= 1000.
constexpr CallContract kGridContract = {
    .bounded_counts = {.first_argument = 0,
                       .count = 3,
                       .max_each = 100,
                       .max_product = 1000,
                       .name = "grid",
                       .each_unit = "per axis",
                       .product_unit = "cells"}};
// "make" returns a new waitable; "wait" waits on its segment argument 1.
constexpr CallContract kMakeContract = {.creates_waitable_result = 0};
constexpr CallContract kWaitContract = {.awaits_argument = 1};

Status Nothing(Stack &, ModuleState *, std::span<const Value>,
               std::span<Value>) {
  return OkStatus();
}
Status Make(Stack &, ModuleState *, std::span<const Value>,
            std::span<Value> results) {
  results[0] = Value::Ref(List::Create());
  return OkStatus();
}
Status Wait(Stack &, ModuleState *, std::span<const Value>,
            std::span<Value> results) {
  results[0] = Value::I32(0);
  return OkStatus();
}

constexpr NativeFunctionDef kFunctions[] = {
    {"grid", "0iii_v", Nothing, &kGridContract},
    {"make", "0v_r", Make, &kMakeContract},
    {"wait", "0iCrD_i", Wait, &kWaitContract},
    {"keep", "0r_v", Nothing},
};
constexpr NativeModuleDescriptor kDescriptor = {
    .name = "sync", .version = 1, .functions = kFunctions};

// A module "m" with one function "f" ("0i_v": i0 is an unknown argument)
// importing the four functions above.
struct Program {
  ModuleBuilder builder{"m"};
  uint32_t grid = builder.AddImport("sync.grid", "0iii_v");
  uint32_t make = builder.AddImport("sync.make", "0v_r");
  uint32_t wait = builder.AddImport("sync.wait", "0iCrD_i");
  uint32_t keep = builder.AddImport("sync.keep", "0r_v");
  FunctionBuilder &f = builder.AddFunction("f", "0i_v", {.i32 = 8, .ref = 4});

  Program() {
    builder.AddDependency("sync", 1);
    builder.AddExport("f", f.ordinal());
  }

  void Grid(uint16_t x, uint16_t y, uint16_t z) {
    f.Op(Opcode::Call)
        .Import(grid)
        .List({RegI32(x), RegI32(y), RegI32(z)})
        .List({});
  }
  void Const(uint16_t reg, int32_t value) {
    f.Op(Opcode::ConstI32).Reg(reg).I32(value);
  }
  void Make(uint16_t ref) {
    f.Op(Opcode::Call).Import(make).List({}).List({RegRef(ref)});
  }
  void Wait(uint16_t ref) {
    f.Op(Opcode::CallVariadic)
        .Import(wait)
        .Segments({1})
        .List({RegI32(0), RegRef(ref)})
        .List({RegI32(7)});
  }
  void Keep(uint16_t ref) {
    f.Op(Opcode::Call).Import(keep).List({RegRef(ref)}).List({});
  }
  void Return() { f.Op(Opcode::Return).List({}); }

  // Registers the native module and this one; "" or the failure message.
  std::string Register() const {
    Result<RefPtr<NativeModule>> native = NativeModule::Create(kDescriptor);
    EXPECT_TRUE(native.ok()) << native.status().ToString();
    Result<RefPtr<BytecodeModule>> module = LoadModule(builder);
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    if (!native.ok() || !module.ok())
      return "setup failed";
    Result<RefPtr<Context>> context = MakeContext({*native, *module});
    if (context.ok())
      return "";
    EXPECT_EQ(context.status().code(), StatusCode::kInvalidArgument);
    return std::string(context.status().message());
  }
};

std::string At(uint32_t offset) {
  char text[16];
  std::snprintf(text, sizeof(text), "+0x%04x", offset);
  return text;
}

TEST(CallContractTest, ConstantCountsOverTheLimitsAreRefused) {
  Program p;
  p.Const(1, 101);
  p.Const(2, 1);
  uint32_t call = p.f.offset();
  p.Grid(1, 2, 2);
  p.Return();
  EXPECT_EQ(p.Register(),
            "initializing module 'm': invalid bytecode in function 'f' at " +
                At(call) +
                ": call to 'sync.grid': grid 101x1x1 exceeds the limit of 100 "
                "per axis");

  Program product;
  product.Const(1, 50);
  product.Const(2, 1);
  product.Grid(1, 2, 2); // 50 cells: fine.
  uint32_t second = product.f.offset();
  product.Grid(1, 1, 2); // 2500 cells.
  product.Return();
  EXPECT_THAT(product.Register(),
              HasSubstr(At(second) + ": call to 'sync.grid': grid 50x50x1 "
                                     "(2500) exceeds the limit of 1000 cells"));

  Program negative;
  negative.Const(1, -1);
  negative.Grid(1, 1, 1);
  negative.Return();
  EXPECT_THAT(negative.Register(),
              HasSubstr("grid -1x-1x-1 exceeds the limit of 100 per axis"));
}

TEST(CallContractTest, CountsAtTheLimitsOrUnknownAreAccepted) {
  Program at_limit;
  at_limit.Const(1, 10);
  at_limit.Grid(1, 1, 1); // 1000 cells.
  at_limit.Return();
  EXPECT_EQ(at_limit.Register(), "");

  // i0 is an argument: unknown, so only the known counts are checked and the
  // product is left to the callee.
  Program unknown;
  unknown.Const(1, 100);
  unknown.Grid(0, 1, 1);
  unknown.Return();
  EXPECT_EQ(unknown.Register(), "");
  Program unknown_over;
  unknown_over.Const(1, 100000);
  unknown_over.Grid(0, 1, 0);
  unknown_over.Return();
  EXPECT_THAT(unknown_over.Register(),
              HasSubstr("grid ?x100000x? exceeds the limit of 100 per axis"));
}

TEST(CallContractTest, ConstantsFlowThroughMovesAndBranches) {
  Program moved;
  moved.Const(1, 1);
  moved.Const(2, 5000);
  moved.f.Op(Opcode::MovI32).Reg(3).Reg(2);
  moved.Grid(1, 3, 1);
  moved.Return();
  EXPECT_THAT(moved.Register(), HasSubstr("grid 1x5000x1 exceeds"));

  // Overwritten by arithmetic: unknown.
  Program overwritten;
  overwritten.Const(1, 1);
  overwritten.Const(2, 5000);
  overwritten.f.Op(Opcode::AddI32).Reg(2).Reg(0).Reg(1);
  overwritten.Grid(1, 2, 1);
  overwritten.Return();
  EXPECT_EQ(overwritten.Register(), "");

  // Carried into another register by a branch's remap list.
  Program remapped;
  Label next = remapped.f.NewLabel();
  remapped.Const(1, 1);
  remapped.Const(2, 5000);
  remapped.f.Op(Opcode::Branch).Branch(next, {{RegI32(2), RegI32(4)}});
  remapped.f.Bind(next);
  remapped.Grid(1, 4, 1);
  remapped.Return();
  EXPECT_THAT(remapped.Register(), HasSubstr("grid 1x5000x1 exceeds"));
}

// i2 is 5000 on one path into the join and `other` on the other.
std::string JoinOf(int32_t other) {
  Program p;
  Label left = p.f.NewLabel(), right = p.f.NewLabel(), join = p.f.NewLabel();
  p.Const(1, 1);
  p.f.Op(Opcode::CondBranch).Reg(0).Branch(left).Branch(right);
  p.f.Bind(left);
  p.Const(2, 5000);
  p.f.Op(Opcode::Branch).Branch(join);
  p.f.Bind(right);
  p.Const(2, other);
  p.f.Op(Opcode::Branch).Branch(join);
  p.f.Bind(join);
  p.Grid(1, 2, 1);
  p.Return();
  return p.Register();
}

TEST(CallContractTest, OnlyFactsOfEveryPathCount) {
  EXPECT_THAT(JoinOf(5000), HasSubstr("grid 1x5000x1 exceeds"));
  EXPECT_EQ(JoinOf(7), "");
}

TEST(CallContractTest, LoopsReachAFixedPoint) {
  // i2 = 1; loop { grid(1, i2, 1); i2 = i2 + i2 } while i0: i2 is unknown
  // at the call once the back edge is seen.
  Program p;
  Label loop = p.f.NewLabel(), exit = p.f.NewLabel();
  p.Const(1, 1);
  p.Const(2, 1);
  p.f.Bind(loop);
  p.Grid(1, 2, 1);
  p.f.Op(Opcode::AddI32).Reg(2).Reg(2).Reg(2);
  p.f.Op(Opcode::CondBranch).Reg(0).Branch(loop).Branch(exit);
  p.f.Bind(exit);
  p.Return();
  EXPECT_EQ(p.Register(), "");

  // A loop that keeps the bad constant is refused.
  Program bad;
  Label again = bad.f.NewLabel(), done = bad.f.NewLabel();
  bad.Const(1, 1);
  bad.Const(2, 101);
  bad.f.Bind(again);
  bad.Grid(1, 2, 1);
  bad.f.Op(Opcode::CondBranch).Reg(0).Branch(again).Branch(done);
  bad.f.Bind(done);
  bad.Return();
  EXPECT_THAT(bad.Register(), HasSubstr("grid 1x101x1 exceeds"));
}

TEST(CallContractTest, WaitOnAWaitableNothingCanCompleteIsRefused) {
  Program p;
  uint32_t make = p.f.offset();
  p.Make(1);
  p.Const(0, -1);
  uint32_t wait = p.f.offset();
  p.Wait(1);
  p.Return();
  EXPECT_EQ(p.Register(),
            "initializing module 'm': invalid bytecode in function 'f' at " +
                At(wait) +
                ": call to 'sync.wait': waits on the result of "
                "'sync.make' at " +
                At(make) +
                ", which nothing can signal: it is not passed to any other "
                "call, stored or returned before the wait");

  // Through a copy, and through a branch's remap list.
  Program copied;
  copied.Make(1);
  copied.f.Op(Opcode::MovRef).Reg(2).Reg(1);
  copied.Wait(2);
  copied.Return();
  EXPECT_THAT(copied.Register(), HasSubstr("waits on the result of"));
  Program remapped;
  Label next = remapped.f.NewLabel();
  remapped.Make(1);
  remapped.f.Op(Opcode::Branch).Branch(next, {{RegRef(1), RegRef(3)}});
  remapped.f.Bind(next);
  remapped.Wait(3);
  remapped.Return();
  EXPECT_THAT(remapped.Register(), HasSubstr("waits on the result of"));
  // Comparing it does not let anything complete it.
  Program compared;
  compared.Make(1);
  compared.f.Op(Opcode::CmpNzRef).Reg(3).Reg(1);
  compared.Wait(1);
  compared.Return();
  EXPECT_THAT(compared.Register(), HasSubstr("waits on the result of"));
}

TEST(CallContractTest, WaitAfterTheWaitableEscapedIsAccepted) {
  Program passed; // to another call, even through an alias
  passed.Make(1);
  passed.f.Op(Opcode::MovRef).Reg(2).Reg(1);
  passed.Keep(2);
  passed.Wait(1);
  passed.Return();
  EXPECT_EQ(passed.Register(), "");

  Program stored; // in a list
  stored.f.Op(Opcode::ListAlloc).Reg(2).Reg(0);
  stored.Make(1);
  stored.Const(1, 0);
  stored.f.Op(Opcode::ListSetRef).Reg(2).Reg(1).Reg(1);
  stored.Wait(1);
  stored.Return();
  EXPECT_EQ(stored.Register(), "");

  Program global; // in a global
  global.builder.SetGlobalCounts({.ref = 1});
  global.Make(1);
  global.f.Op(Opcode::GlobalStoreRef).Global(0).Reg(1);
  global.Wait(1);
  global.Return();
  EXPECT_EQ(global.Register(), "");

  Program replaced; // the register no longer holds it
  replaced.Make(1);
  replaced.f.Op(Opcode::ConstRefZero).Reg(1);
  replaced.Wait(1);
  replaced.Return();
  EXPECT_EQ(replaced.Register(), "");

  // Escaped on one path into the join only: not provably stuck.
  Program one_path;
  Label keep = one_path.f.NewLabel(), join = one_path.f.NewLabel();
  one_path.Make(1);
  one_path.f.Op(Opcode::CondBranch).Reg(0).Branch(keep).Branch(join);
  one_path.f.Bind(keep);
  one_path.Keep(1);
  one_path.f.Op(Opcode::Branch).Branch(join);
  one_path.f.Bind(join);
  one_path.Wait(1);
  one_path.Return();
  EXPECT_EQ(one_path.Register(), "");
}

TEST(CallContractTest, ContractsMustFitTheSignature) {
  constexpr CallContract kCountsOnARef = {
      .bounded_counts = {.first_argument = 0,
                         .count = 1,
                         .max_each = 1,
                         .max_product = 1,
                         .name = "n",
                         .each_unit = "u",
                         .product_unit = "u"}};
  constexpr CallContract kWaitableI32 = {.creates_waitable_result = 0};
  constexpr CallContract kAwaitsAValue = {.awaits_argument = 0};
  struct Case {
    const char *calling_convention;
    const CallContract *contract;
    const char *error;
  } cases[] = {
      {"0r_v", &kCountsOnARef, "argument 0 is not an i32 count"},
      {"0v_i", &kWaitableI32, "result 0 is not a ref"},
      {"0r_v", &kAwaitsAValue, "argument 0 is not a variadic segment"},
  };
  for (const Case &c : cases) {
    NativeFunctionDef functions[] = {
        {"f", c.calling_convention, Nothing, c.contract}};
    NativeModuleDescriptor descriptor = {.name = "bad", .functions = functions};
    Result<RefPtr<NativeModule>> module = NativeModule::Create(descriptor);
    ASSERT_FALSE(module.ok()) << c.error;
    EXPECT_EQ(module.status().message(),
              StrCat("native function 'bad.f': call contract: ", c.error));
  }
}

} // namespace
} // namespace strata::vm::testing
