//===- HoistDeviceQueries.cpp - device and allocator looked up once -------===//
//
// Every host function starts by asking the runtime for its device
// (`hal.devices.get`) and that device's allocator (`hal.device.allocator`):
// two import calls per invocation whose answers never change within a
// context. They are asked once, in `__init`, which stores them in globals
// (per-context state, like the executables); the functions load the
// globals instead. A call on the hot path of a small model is ~15 import
// calls, so this is 2 of them.
//
// Only device queries with a constant ordinal are hoisted; an allocator
// query moves with them when its device is one of those devices.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace strata {
#define GEN_PASS_DEF_HOISTDEVICEQUERIESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

constexpr StringLiteral kDevicesGet = "hal.devices.get";
constexpr StringLiteral kDeviceAllocator = "hal.device.allocator";
constexpr StringLiteral kInitializer = "__init";

// The globals holding device `ordinal` and its allocator.
struct DeviceGlobals {
  FlatSymbolRefAttr device, allocator;
  Type deviceType, allocatorType;
};

// The ordinal of a `hal.devices.get` call when it is a constant.
std::optional<int32_t> getConstantDeviceOrdinal(vm::CallOp call) {
  if (call.getCallee() != kDevicesGet || call.getNumOperands() != 1 ||
      call.getNumResults() != 1)
    return std::nullopt;
  auto constant = call.getOperand(0).getDefiningOp<vm::ConstI32Op>();
  if (!constant)
    return std::nullopt;
  return int32_t(constant.getValue());
}

bool isAllocatorQuery(vm::CallOp call) {
  return call.getCallee() == kDeviceAllocator && call.getNumOperands() == 1 &&
         call.getNumResults() == 1;
}

// A symbol named `base` (or `base_N`) no other symbol of `module` uses.
StringAttr getUniqueName(vm::ModuleOp module, StringRef base) {
  std::string name = base.str();
  for (int suffix = 1; SymbolTable::lookupSymbolIn(module, name); ++suffix)
    name = (base + "_" + Twine(suffix)).str();
  return StringAttr::get(module.getContext(), name);
}

// `__init`, created empty (exported, returning nothing) when the module has
// none.
vm::FuncOp getOrCreateInitializer(vm::ModuleOp module) {
  if (auto init = dyn_cast_or_null<vm::FuncOp>(
          SymbolTable::lookupSymbolIn(module, kInitializer)))
    return init;
  OpBuilder builder = OpBuilder::atBlockEnd(&module.getBody().front());
  auto init = vm::FuncOp::create(builder, module.getLoc(), kInitializer,
                                 builder.getFunctionType({}, {}));
  init.setExported(true);
  OpBuilder body = OpBuilder::atBlockBegin(init.addEntryBlock());
  vm::ReturnOp::create(body, module.getLoc(), ValueRange{});
  return init;
}

// Rewrites the queries of `func` into loads of `globals` (created on first
// use, per device ordinal).
void hoistQueries(vm::ModuleOp module, vm::FuncOp func,
                  llvm::MapVector<int32_t, DeviceGlobals> &globals) {
  SmallVector<std::pair<vm::CallOp, int32_t>> deviceQueries;
  func.walk([&](vm::CallOp call) {
    if (std::optional<int32_t> ordinal = getConstantDeviceOrdinal(call))
      deviceQueries.push_back({call, *ordinal});
  });
  for (auto [call, ordinal] : deviceQueries) {
    DeviceGlobals &entry = globals[ordinal];
    OpBuilder moduleBuilder =
        OpBuilder::atBlockBegin(&module.getBody().front());
    if (!entry.device) {
      entry.deviceType = call.getResult(0).getType();
      StringAttr name =
          getUniqueName(module, "__device_" + Twine(ordinal).str());
      vm::GlobalRefOp::create(moduleBuilder, module.getLoc(), name,
                              TypeAttr::get(entry.deviceType));
      entry.device = FlatSymbolRefAttr::get(name);
    }
    OpBuilder builder(call);
    Value device = vm::GlobalLoadRefOp::create(builder, call.getLoc(),
                                               entry.deviceType, entry.device);
    for (OpOperand &use :
         llvm::make_early_inc_range(call.getResult(0).getUses())) {
      auto allocatorCall = dyn_cast<vm::CallOp>(use.getOwner());
      if (!allocatorCall || !isAllocatorQuery(allocatorCall))
        continue;
      if (!entry.allocator) {
        entry.allocatorType = allocatorCall.getResult(0).getType();
        StringAttr name = getUniqueName(
            module, "__device_" + Twine(ordinal).str() + "_allocator");
        vm::GlobalRefOp::create(moduleBuilder, module.getLoc(), name,
                                TypeAttr::get(entry.allocatorType));
        entry.allocator = FlatSymbolRefAttr::get(name);
      }
      OpBuilder allocatorBuilder(allocatorCall);
      Value allocator =
          vm::GlobalLoadRefOp::create(allocatorBuilder, allocatorCall.getLoc(),
                                      entry.allocatorType, entry.allocator);
      allocatorCall.getResult(0).replaceAllUsesWith(allocator);
      allocatorCall.erase();
    }
    call.getResult(0).replaceAllUsesWith(device);
    call.erase();
  }
}

// Stores every hoisted device (and allocator) at the start of `__init`,
// before anything else it does.
void storeGlobalsInInitializer(
    vm::ModuleOp module,
    const llvm::MapVector<int32_t, DeviceGlobals> &globals) {
  vm::FuncOp init = getOrCreateInitializer(module);
  OpBuilder builder = OpBuilder::atBlockBegin(&init.getBody().front());
  Location loc = init.getLoc();
  auto devicesGet = FlatSymbolRefAttr::get(module.getContext(), kDevicesGet);
  auto deviceAllocator =
      FlatSymbolRefAttr::get(module.getContext(), kDeviceAllocator);
  for (const auto &[ordinal, entry] : globals) {
    Value ordinalValue = vm::ConstI32Op::create(
        builder, loc, builder.getI32IntegerAttr(ordinal));
    Value device = vm::CallOp::create(builder, loc, TypeRange{entry.deviceType},
                                      devicesGet, ValueRange{ordinalValue})
                       .getResult(0);
    vm::GlobalStoreRefOp::create(builder, loc, device, entry.device);
    if (!entry.allocator)
      continue;
    Value allocator =
        vm::CallOp::create(builder, loc, TypeRange{entry.allocatorType},
                           deviceAllocator, ValueRange{device})
            .getResult(0);
    vm::GlobalStoreRefOp::create(builder, loc, allocator, entry.allocator);
  }
}

struct HoistDeviceQueriesPass
    : impl::HoistDeviceQueriesPassBase<HoistDeviceQueriesPass> {
  void runOnOperation() override {
    for (auto module : getOperation().getOps<vm::ModuleOp>()) {
      llvm::MapVector<int32_t, DeviceGlobals> globals;
      for (auto func : llvm::to_vector(module.getOps<vm::FuncOp>()))
        if (func.getSymName() != kInitializer)
          hoistQueries(module, func, globals);
      if (!globals.empty())
        storeGlobalsInInitializer(module, globals);
    }
  }
};

} // namespace
} // namespace strata
