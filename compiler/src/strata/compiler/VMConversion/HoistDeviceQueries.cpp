//===- HoistDeviceQueries.cpp - each device looked up once ----------------===//
//
// Every host function starts by asking the runtime for its device
// (`hal.devices.get`): an import call per invocation whose answer never
// changes within a context (the session fixes its devices). It is asked
// once, in `__init`, which stores the device in a global (per-context
// state, like the executables); the functions load the global instead.
//
// Only device queries with a constant ordinal are hoisted. The device's
// allocator is still asked for at each call: a device's allocator may be
// replaced after the module was loaded (Device::SetAllocator, e.g. with a
// tracking or limiting wrapper), and later allocations must come from the
// new one.
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
constexpr StringLiteral kInitializer = "__init";

// The global holding one device.
struct DeviceGlobal {
  FlatSymbolRefAttr symbol;
  Type type;
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

// Rewrites the device queries of `func` into loads of `globals` (created on
// first use, one per device ordinal).
void hoistQueries(vm::ModuleOp module, SymbolTable &symbols, vm::FuncOp func,
                  llvm::MapVector<int32_t, DeviceGlobal> &globals) {
  SmallVector<std::pair<vm::CallOp, int32_t>> queries;
  func.walk([&](vm::CallOp call) {
    if (std::optional<int32_t> ordinal = getConstantDeviceOrdinal(call))
      queries.push_back({call, *ordinal});
  });
  for (auto [call, ordinal] : queries) {
    DeviceGlobal &global = globals[ordinal];
    if (!global.symbol) {
      global.type = call.getResult(0).getType();
      OpBuilder unlinked(module.getContext());
      auto op = vm::GlobalRefOp::create(
          unlinked, module.getLoc(),
          unlinked.getStringAttr("__device_" + Twine(ordinal)),
          TypeAttr::get(global.type));
      // Renamed (a suffix) if the module already has that name.
      global.symbol = FlatSymbolRefAttr::get(
          symbols.insert(op, module.getBody().front().begin()));
    }
    OpBuilder builder(call);
    Value device = vm::GlobalLoadRefOp::create(builder, call.getLoc(),
                                               global.type, global.symbol);
    call.getResult(0).replaceAllUsesWith(device);
    call.erase();
  }
}

// Stores every hoisted device at the start of `__init`, before anything
// else it does.
void storeGlobalsInInitializer(
    vm::ModuleOp module,
    const llvm::MapVector<int32_t, DeviceGlobal> &globals) {
  vm::FuncOp init = getOrCreateInitializer(module);
  OpBuilder builder = OpBuilder::atBlockBegin(&init.getBody().front());
  Location loc = init.getLoc();
  auto devicesGet = FlatSymbolRefAttr::get(module.getContext(), kDevicesGet);
  for (const auto &[ordinal, global] : globals) {
    Value ordinalValue = vm::ConstI32Op::create(
        builder, loc, builder.getI32IntegerAttr(ordinal));
    Value device = vm::CallOp::create(builder, loc, TypeRange{global.type},
                                      devicesGet, ValueRange{ordinalValue})
                       .getResult(0);
    vm::GlobalStoreRefOp::create(builder, loc, device, global.symbol);
  }
}

struct HoistDeviceQueriesPass
    : impl::HoistDeviceQueriesPassBase<HoistDeviceQueriesPass> {
  void runOnOperation() override {
    for (auto module : getOperation().getOps<vm::ModuleOp>()) {
      llvm::MapVector<int32_t, DeviceGlobal> globals;
      SymbolTable symbols(module);
      for (auto func : llvm::to_vector(module.getOps<vm::FuncOp>()))
        if (func.getSymName() != kInitializer)
          hoistQueries(module, symbols, func, globals);
      if (!globals.empty())
        storeGlobalsInInitializer(module, globals);
    }
  }
};

} // namespace
} // namespace strata
