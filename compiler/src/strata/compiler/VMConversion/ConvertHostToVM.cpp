//===- ConvertHostToVM.cpp - host program into a vm.module ----------------===//
//
// Builds the one vm.module a module file holds:
//   - each hal op becomes a vm.call of the `hal` module import it names,
//     with its calling convention from the runtime's import table; variadic
//     operand groups become variadic segments;
//   - each hal.executable.binary becomes rodata (format and binary) plus a
//     ref global that `__init` fills with hal.executable.create;
//   - func.func / arith.constant / func.return become vm ops;
//   - the host module's dispatch sites move to the vm.module for the module
//     file.
// It is a direct op-by-op translation; the blocks of a host function with
// run-time conditionals (cf branches) become vm blocks, and calls between
// host functions vm.calls.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ElementTypes.h"
#include "strata/compiler/VMConversion/HALImportTable.h"
#include "strata/compiler/VMConversion/HostScalarOps.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "strata/hal/abi_enums.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include <numeric>
#include <set>

namespace strata {
#define GEN_PASS_DEF_CONVERTHOSTTOVMPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

Type convertType(Type type) {
  if (type.getDialect().getNamespace() ==
      hal::HALDialect::getDialectNamespace())
    return vm::RefType::get(type.getContext(), type);
  if (type.isIndex())
    return IntegerType::get(type.getContext(), 64);
  if (type.isInteger(32) || type.isInteger(64) || type.isF32() || type.isF64())
    return type;
  return nullptr;
}

class VMModuleBuilder {
public:
  VMModuleBuilder(ModuleOp root, StringRef name)
      : root(root), builder(root.getContext()) {
    builder.setInsertionPointToStart(root.getBody());
    vmModule = vm::ModuleOp::create(builder, root.getLoc(),
                                    builder.getStringAttr(name),
                                    builder.getI32IntegerAttr(0));
    vmModule.getBody().push_back(new Block());
    builder.setInsertionPointToStart(&vmModule.getBody().front());
    vm::DependencyOp::create(builder, root.getLoc(), "hal",
                             STRATA_HAL_MODULE_VERSION);
    if (Attribute sites = root->getAttr(kDispatchSitesAttr))
      vmModule->setAttr(kDispatchSitesAttr, sites);
  }

  LogicalResult run();

private:
  Location loc() { return root.getLoc(); }
  Type bufferRefType() {
    return vm::RefType::get(root.getContext(),
                            vm::BufferType::get(root.getContext()));
  }

  FailureOr<FlatSymbolRefAttr> getImport(Operation *user, StringRef name,
                                         FunctionType type);
  FlatSymbolRefAttr createRodata(StringRef prefix, Attribute value,
                                 int64_t alignment);
  LogicalResult convertExecutable(hal::ExecutableBinaryOp binary);
  FlatSymbolRefAttr getConstantBufferGlobal(DenseElementsAttr value);
  LogicalResult convertFunction(func::FuncOp func);
  LogicalResult convertOp(Operation *op, OpBuilder &body, IRMapping &mapping);
  LogicalResult emitImportCall(Operation *op, StringRef importName,
                               ArrayRef<Value> operands,
                               ArrayRef<int32_t> segmentSizes, OpBuilder &body,
                               IRMapping &mapping);
  LogicalResult checkExecutableVariants();
  void buildInitializer();
  FlatSymbolRefAttr getCpuFeaturesQuery(vm::FuncOp func, OpBuilder &body);
  Value emitCpuFeaturesPresent(vm::FuncOp func, OpBuilder &body, Value device,
                               const std::set<std::string> &features);
  void emitCpuFeatureChecks(vm::FuncOp func, OpBuilder &body, Value device,
                            const std::set<std::string> &features);
  void emitExecutableCreation(vm::FuncOp func, OpBuilder &body, Value device,
                              size_t variant);
  Value emitFormatSupported(vm::FuncOp func, OpBuilder &body, Value device,
                            StringRef format);
  Value emitQueryNonZero(vm::FuncOp func, OpBuilder &body, Value device,
                         StringRef categoryName, StringRef category,
                         StringRef keyName, StringRef key);
  void emitVariantSelection(vm::FuncOp func, OpBuilder &body, Value device,
                            ArrayRef<size_t> variants);

  ModuleOp root;
  OpBuilder builder;
  vm::ModuleOp vmModule;
  llvm::StringMap<FlatSymbolRefAttr> imports;
  Operation *lastImport = nullptr;
  llvm::StringSet<> usedNames;
  // A binary of an executable for one CPU (--cpu lists several).
  struct ExecutableVariant {
    FlatSymbolRefAttr format, data;
  };
  struct Executable {
    FlatSymbolRefAttr global;
    SmallVector<ExecutableVariant> variants;
  };
  SmallVector<Executable> executables;
  llvm::StringMap<size_t> executableIndices;
  // The CPU features the code of each variant was compiled for (variant i
  // of every executable targets the same CPU).
  SmallVector<std::set<std::string>> variantCpuFeatures;
  // The executable format of each variant (the same for variant i of every
  // executable): a module for several targets has variants of several.
  SmallVector<std::string> variantFormats;
  struct ConstantBuffer {
    FlatSymbolRefAttr global, data;
    int64_t size;
  };
  SmallVector<ConstantBuffer> constantBuffers;
  // One rodata segment and global per distinct constant value.
  DenseMap<Attribute, FlatSymbolRefAttr> constantGlobals;
};

FailureOr<FlatSymbolRefAttr>
VMModuleBuilder::getImport(Operation *user, StringRef name, FunctionType type) {
  auto it = imports.find(name);
  if (it != imports.end())
    return it->second;
  std::optional<StringRef> cconv = lookupHALImport(name);
  if (!cconv)
    return user->emitOpError("needs `") << name
                                        << "`, which the runtime's hal "
                                           "module does not provide";
  // Imports stay together at the top, in order of first use.
  OpBuilder::InsertionGuard guard(builder);
  if (lastImport)
    builder.setInsertionPointAfter(lastImport);
  else
    builder.setInsertionPointToStart(&vmModule.getBody().front());
  lastImport = vm::ImportOp::create(builder, loc(), name, type, *cconv);
  auto symbol = FlatSymbolRefAttr::get(root.getContext(), name);
  imports[name] = symbol;
  return symbol;
}

FlatSymbolRefAttr VMModuleBuilder::createRodata(StringRef prefix,
                                                Attribute value,
                                                int64_t alignment) {
  std::string name = prefix.str();
  for (int suffix = 1; !usedNames.insert(name).second; ++suffix)
    name = (prefix + "_" + Twine(suffix)).str();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&vmModule.getBody().front());
  vm::RodataOp::create(builder, loc(), builder.getStringAttr(name), value,
                       builder.getI64IntegerAttr(alignment));
  return FlatSymbolRefAttr::get(root.getContext(), name);
}

LogicalResult
VMModuleBuilder::convertExecutable(hal::ExecutableBinaryOp binary) {
  StringRef name = binary.getSymName();
  ExecutableVariant variant;
  variant.format =
      createRodata((name + "_format").str(), binary.getFormatAttr(), 1);
  // Executables are used in place from the mapped module file.
  variant.data = createRodata((name + "_data").str(), binary.getData(), 64);
  size_t variantIndex = 0;
  if (FlatSymbolRefAttr primary = binary.getVariantOfAttr()) {
    auto it = executableIndices.find(primary.getValue());
    if (it == executableIndices.end())
      return binary.emitOpError("is a variant of ")
             << primary << ", which is not an earlier executable binary";
    Executable &executable = executables[it->second];
    variantIndex = executable.variants.size();
    executable.variants.push_back(variant);
  } else {
    usedNames.insert(name);
    builder.setInsertionPointToEnd(&vmModule.getBody().front());
    vm::GlobalRefOp::create(
        builder, binary.getLoc(), builder.getStringAttr(name),
        TypeAttr::get(vm::RefType::get(
            root.getContext(), hal::ExecutableType::get(root.getContext()))));
    executableIndices[name] = executables.size();
    executables.push_back(
        {FlatSymbolRefAttr::get(root.getContext(), name), {variant}});
  }
  if (variantCpuFeatures.size() <= variantIndex)
    variantCpuFeatures.resize(variantIndex + 1);
  if (variantFormats.size() <= variantIndex)
    variantFormats.push_back(binary.getFormat().str());
  else if (variantFormats[variantIndex] != binary.getFormat())
    return binary.emitOpError("is variant ")
           << variantIndex << " in format '" << binary.getFormat()
           << "', where other executables have format '"
           << variantFormats[variantIndex] << "'";
  if (ArrayAttr features = binary.getRequiredCpuFeaturesAttr())
    for (StringAttr feature : features.getAsRange<StringAttr>())
      variantCpuFeatures[variantIndex].insert(feature.str());
  return success();
}

// `__init` loads one variant for every executable, so each must have them
// all.
LogicalResult VMModuleBuilder::checkExecutableVariants() {
  for (const Executable &executable : executables)
    if (executable.variants.size() != variantCpuFeatures.size())
      return root.emitError("executable ")
             << executable.global << " has " << executable.variants.size()
             << " variants, others " << variantCpuFeatures.size();
  return success();
}

// The bytes a constant occupies in a buffer: splats expanded, booleans one
// byte each (MLIR packs i1 as bits).
static DenseElementsAttr getStorageAttr(DenseElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  Type elementType = type.getElementType();
  if (elementType.isInteger(1)) {
    SmallVector<int8_t> bytes;
    for (bool bit : value.getValues<bool>())
      bytes.push_back(bit);
    auto byteType = type.clone(IntegerType::get(type.getContext(), 8));
    return DenseElementsAttr::get(cast<ShapedType>(byteType),
                                  ArrayRef<int8_t>(bytes));
  }
  if (!value.isSplat() || type.getNumElements() == 1)
    return value;
  ArrayRef<char> element = value.getRawData();
  std::vector<char> bytes;
  bytes.reserve(element.size() * type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    bytes.insert(bytes.end(), element.begin(), element.end());
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

FlatSymbolRefAttr
VMModuleBuilder::getConstantBufferGlobal(DenseElementsAttr value) {
  auto it = constantGlobals.find(value);
  if (it != constantGlobals.end())
    return it->second;
  DenseElementsAttr storage = getStorageAttr(value);
  // Not the raw data size: MLIR stores a splat as one element.
  int64_t size = getStaticByteSize(cast<ShapedType>(storage.getType()));
  FlatSymbolRefAttr data = createRodata("__constant", storage, 64);
  std::string globalName = (data.getValue() + "_buffer").str();
  usedNames.insert(globalName);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&vmModule.getBody().front());
  vm::GlobalRefOp::create(
      builder, loc(), builder.getStringAttr(globalName),
      TypeAttr::get(vm::RefType::get(root.getContext(),
                                     hal::BufferType::get(root.getContext()))));
  auto global = FlatSymbolRefAttr::get(root.getContext(), globalName);
  constantBuffers.push_back({global, data, size});
  constantGlobals[value] = global;
  return global;
}

FlatSymbolRefAttr VMModuleBuilder::getCpuFeaturesQuery(vm::FuncOp func,
                                                       OpBuilder &body) {
  Type deviceType = vm::RefType::get(root.getContext(),
                                     hal::DeviceType::get(root.getContext()));
  return *getImport(
      func, "hal.device.query.i64",
      body.getFunctionType({deviceType, bufferRefType(), bufferRefType()},
                           {body.getI32Type(), body.getI64Type()}));
}

// Whether device.query.i64(category, key) answers non-zero (an i32, 0 or
// 1), asked without failing; the strings go to rodata named as given.
Value VMModuleBuilder::emitQueryNonZero(vm::FuncOp func, OpBuilder &body,
                                        Value device, StringRef categoryName,
                                        StringRef category, StringRef keyName,
                                        StringRef key) {
  MLIRContext *context = root.getContext();
  FlatSymbolRefAttr query = getCpuFeaturesQuery(func, body);
  Value categoryRef = vm::ConstRefRodataOp::create(
      body, loc(), bufferRefType(),
      createRodata(categoryName, StringAttr::get(context, category), 1));
  Value keyRef = vm::ConstRefRodataOp::create(
      body, loc(), bufferRefType(),
      createRodata(keyName, StringAttr::get(context, key), 1));
  auto answer = vm::CallOp::create(
      body, loc(), TypeRange{body.getI32Type(), body.getI64Type()}, query,
      ValueRange{device, categoryRef, keyRef});
  Value zero = vm::ConstI64Op::create(body, loc(), body.getI64IntegerAttr(0));
  return vm::CmpNeI64Op::create(body, loc(), body.getI32Type(),
                                answer.getResult(1), zero);
}

// Whether the device has every one of `features` ("hal.cpu.features.present"):
// picks a CPU variant.
Value VMModuleBuilder::emitCpuFeaturesPresent(
    vm::FuncOp func, OpBuilder &body, Value device,
    const std::set<std::string> &features) {
  return emitQueryNonZero(func, body, device, "__cpu_features_present_category",
                          "hal.cpu.features.present", "__cpu_features",
                          llvm::join(features, ","));
}

// Before any executable is loaded, `__init` asks the device whether it has
// every CPU feature the executables were compiled for, in one query
// ("hal.cpu.features", comma-separated LLVM names) that fails naming all the
// missing ones (instead of a SIGILL in the first dispatch). A device that
// cannot answer is refused too.
void VMModuleBuilder::emitCpuFeatureChecks(
    vm::FuncOp func, OpBuilder &body, Value device,
    const std::set<std::string> &features) {
  if (features.empty())
    return;
  MLIRContext *context = root.getContext();
  FlatSymbolRefAttr query = getCpuFeaturesQuery(func, body);
  FlatSymbolRefAttr categoryData =
      createRodata("__cpu_features_category",
                   StringAttr::get(context, "hal.cpu.features"), 1);
  FlatSymbolRefAttr keyData = createRodata(
      "__cpu_features", StringAttr::get(context, llvm::join(features, ",")), 1);
  Value category =
      vm::ConstRefRodataOp::create(body, loc(), bufferRefType(), categoryData);
  Value key =
      vm::ConstRefRodataOp::create(body, loc(), bufferRefType(), keyData);
  auto answer = vm::CallOp::create(
      body, loc(), TypeRange{body.getI32Type(), body.getI64Type()}, query,
      ValueRange{device, category, key});
  Block *unanswered = new Block();
  Block *next = new Block();
  func.getBody().push_back(unanswered);
  func.getBody().push_back(next);
  vm::CondBranchOp::create(body, loc(), answer.getResult(0), ValueRange{},
                           ValueRange{}, next, unanswered);
  body.setInsertionPointToStart(unanswered);
  Value code =
      vm::ConstI32Op::create(body, loc(),
                             body.getI32IntegerAttr(9)); // FAILED_PRECONDITION
  vm::FailOp::create(body, loc(), code,
                     "device 0 cannot say whether it has the CPU features "
                     "this module's executables were compiled for "
                     "(hal.cpu.features)");
  body.setInsertionPointToStart(next);
}

// Creates every executable from its binary for `variant` and stores it in
// its global.
void VMModuleBuilder::emitExecutableCreation(vm::FuncOp func, OpBuilder &body,
                                             Value device, size_t variant) {
  MLIRContext *context = root.getContext();
  Type deviceType = vm::RefType::get(context, hal::DeviceType::get(context));
  Type executableType =
      vm::RefType::get(context, hal::ExecutableType::get(context));
  Value affinity = vm::ConstI64Op::create(
      body, loc(), body.getI64IntegerAttr(STRATA_HAL_QUEUE_AFFINITY_ANY));
  Value noConstants = vm::ConstRefZeroOp::create(body, loc(), bufferRefType());
  SmallVector<Type> createArgs = {deviceType, body.getI64Type(),
                                  bufferRefType(), bufferRefType(),
                                  bufferRefType()};
  auto create = *getImport(func, "hal.executable.create",
                           body.getFunctionType(createArgs, {executableType}));
  for (const Executable &executable : executables) {
    const ExecutableVariant &binary = executable.variants[variant];
    Value format = vm::ConstRefRodataOp::create(body, loc(), bufferRefType(),
                                                binary.format);
    Value data =
        vm::ConstRefRodataOp::create(body, loc(), bufferRefType(), binary.data);
    Value loaded = vm::CallOp::create(
                       body, loc(), TypeRange{executableType}, create,
                       ValueRange{device, affinity, format, data, noConstants})
                       .getResult(0);
    vm::GlobalStoreRefOp::create(body, loc(), loaded, executable.global);
  }
}

// Whether device 0 loads executables of `format` ("hal.executable.format").
Value VMModuleBuilder::emitFormatSupported(vm::FuncOp func, OpBuilder &body,
                                           Value device, StringRef format) {
  return emitQueryNonZero(func, body, device, "__executable_format_category",
                          "hal.executable.format", "__executable_format",
                          format);
}

// Creates every executable from one of `variants` (of one format): the
// only one, or for several CPU variants the one needing the most features
// the CPU has; the one needing the fewest is the last resort, refused
// naming what the CPU lacks for it. Leaves `body` where loading is done.
void VMModuleBuilder::emitVariantSelection(vm::FuncOp func, OpBuilder &body,
                                           Value device,
                                           ArrayRef<size_t> variants) {
  if (variants.size() == 1) {
    if (variants.front() < variantCpuFeatures.size())
      emitCpuFeatureChecks(func, body, device,
                           variantCpuFeatures[variants.front()]);
    emitExecutableCreation(func, body, device, variants.front());
    return;
  }
  SmallVector<size_t> order(variants);
  llvm::stable_sort(order, [&](size_t a, size_t b) {
    return variantCpuFeatures[a].size() > variantCpuFeatures[b].size();
  });
  Block *loaded = new Block();
  for (size_t variant : ArrayRef(order).drop_back()) {
    Value present =
        emitCpuFeaturesPresent(func, body, device, variantCpuFeatures[variant]);
    Block *load = new Block();
    Block *next = new Block();
    func.getBody().push_back(load);
    func.getBody().push_back(next);
    vm::CondBranchOp::create(body, loc(), present, ValueRange{}, ValueRange{},
                             load, next);
    body.setInsertionPointToStart(load);
    emitExecutableCreation(func, body, device, variant);
    vm::BranchOp::create(body, loc(), ValueRange{}, loaded);
    body.setInsertionPointToStart(next);
  }
  emitCpuFeatureChecks(func, body, device, variantCpuFeatures[order.back()]);
  emitExecutableCreation(func, body, device, order.back());
  vm::BranchOp::create(body, loc(), ValueRange{}, loaded);
  func.getBody().push_back(loaded);
  body.setInsertionPointToStart(loaded);
}

// `__init` creates every executable on device 0 and wraps every constant's
// rodata in a buffer, storing each in its global.
void VMModuleBuilder::buildInitializer() {
  if (executables.empty() && constantBuffers.empty())
    return;
  MLIRContext *context = root.getContext();
  builder.setInsertionPointToEnd(&vmModule.getBody().front());
  auto func = vm::FuncOp::create(builder, loc(), "__init",
                                 builder.getFunctionType({}, {}));
  func.setExported(true);
  OpBuilder body = OpBuilder::atBlockBegin(func.addEntryBlock());
  Type deviceType =
      vm::RefType::get(root.getContext(), hal::DeviceType::get(context));
  auto zero = vm::ConstI32Op::create(body, loc(), body.getI32IntegerAttr(0));
  auto getDevice =
      *getImport(func, "hal.devices.get",
                 body.getFunctionType({body.getI32Type()}, {deviceType}));
  Value device = vm::CallOp::create(body, loc(), TypeRange{deviceType},
                                    getDevice, ValueRange{zero})
                     .getResult(0);
  // Variants grouped by format, in the order of --target: the device loads
  // the first group whose format it supports.
  SmallVector<std::string> groupFormats;
  SmallVector<SmallVector<size_t>> groups;
  for (auto [variant, format] : llvm::enumerate(variantFormats)) {
    auto it = llvm::find(groupFormats, format);
    if (it == groupFormats.end()) {
      groupFormats.push_back(format);
      groups.emplace_back();
      it = std::prev(groupFormats.end());
    }
    groups[it - groupFormats.begin()].push_back(variant);
  }
  if (groups.size() <= 1) {
    emitVariantSelection(func, body, device,
                         groups.empty() ? SmallVector<size_t>{0} : groups[0]);
  } else {
    Block *loaded = new Block();
    for (auto [format, variants] : llvm::zip(ArrayRef(groupFormats).drop_back(),
                                             ArrayRef(groups).drop_back())) {
      Value supported = emitFormatSupported(func, body, device, format);
      Block *load = new Block();
      Block *next = new Block();
      func.getBody().push_back(load);
      func.getBody().push_back(next);
      vm::CondBranchOp::create(body, loc(), supported, ValueRange{},
                               ValueRange{}, load, next);
      body.setInsertionPointToStart(load);
      emitVariantSelection(func, body, device, variants);
      vm::BranchOp::create(body, loc(), ValueRange{}, loaded);
      body.setInsertionPointToStart(next);
    }
    // The last target's executables: a device that cannot load them either
    // fails in hal.executable.create, naming the formats it supports.
    emitVariantSelection(func, body, device, groups.back());
    vm::BranchOp::create(body, loc(), ValueRange{}, loaded);
    func.getBody().push_back(loaded);
    body.setInsertionPointToStart(loaded);
  }
  if (!constantBuffers.empty()) {
    Value affinity = vm::ConstI64Op::create(
        body, loc(), body.getI64IntegerAttr(STRATA_HAL_QUEUE_AFFINITY_ANY));
    Type allocatorType =
        vm::RefType::get(context, hal::AllocatorType::get(context));
    Type bufferType = vm::RefType::get(context, hal::BufferType::get(context));
    auto getAllocator =
        *getImport(func, "hal.device.allocator",
                   body.getFunctionType({deviceType}, {allocatorType}));
    Value allocator = vm::CallOp::create(body, loc(), TypeRange{allocatorType},
                                         getAllocator, ValueRange{device})
                          .getResult(0);
    SmallVector<Type> importArgs = {allocatorType,     body.getI64Type(),
                                    body.getI32Type(), body.getI32Type(),
                                    bufferRefType(),   body.getI64Type(),
                                    body.getI64Type()};
    auto import = *getImport(func, "hal.allocator.import",
                             body.getFunctionType(importArgs, {bufferType}));
    Value memoryTypes = vm::ConstI32Op::create(
        body, loc(),
        body.getI32IntegerAttr(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                               STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE));
    Value usage = vm::ConstI32Op::create(
        body, loc(), body.getI32IntegerAttr(STRATA_HAL_BUFFER_USAGE_DEFAULT));
    Value zero64 =
        vm::ConstI64Op::create(body, loc(), body.getI64IntegerAttr(0));
    for (const ConstantBuffer &constant : constantBuffers) {
      Value data = vm::ConstRefRodataOp::create(body, loc(), bufferRefType(),
                                                constant.data);
      Value size = vm::ConstI64Op::create(
          body, loc(), body.getI64IntegerAttr(constant.size));
      Value buffer =
          vm::CallOp::create(body, loc(), TypeRange{bufferType}, import,
                             ValueRange{allocator, affinity, memoryTypes, usage,
                                        data, zero64, size})
              .getResult(0);
      vm::GlobalStoreRefOp::create(body, loc(), buffer, constant.global);
    }
  }
  vm::ReturnOp::create(body, loc(), ValueRange{});
}

LogicalResult VMModuleBuilder::emitImportCall(
    Operation *op, StringRef importName, ArrayRef<Value> operands,
    ArrayRef<int32_t> segmentSizes, OpBuilder &body, IRMapping &mapping) {
  SmallVector<Value> args;
  SmallVector<Type> argTypes, resultTypes;
  for (Value operand : operands) {
    args.push_back(mapping.lookup(operand));
    argTypes.push_back(args.back().getType());
  }
  for (Type type : op->getResultTypes())
    resultTypes.push_back(convertType(type));
  auto callee =
      getImport(op, importName, body.getFunctionType(argTypes, resultTypes));
  if (failed(callee))
    return failure();
  auto call =
      vm::CallOp::create(body, op->getLoc(), resultTypes, *callee, args);
  if (!segmentSizes.empty())
    call.setSegmentSizes(segmentSizes);
  for (auto [oldResult, newResult] :
       llvm::zip(op->getResults(), call.getResults()))
    mapping.map(oldResult, newResult);
  return success();
}

// Counts the fixed arguments of a calling convention with at most one
// variadic segment at its end: "0rIIiiCID_r" has 5.
std::optional<unsigned> countFixedArguments(StringRef cconv) {
  StringRef args = cconv.drop_front().split('_').first;
  if (args == "v")
    return 0;
  size_t segment = args.find('C');
  if (segment == StringRef::npos)
    return args.size();
  if (args.find('C', segment + 1) != StringRef::npos || !args.ends_with("D"))
    return std::nullopt;
  return segment;
}

template <typename... OpTys>
void addImportOps(llvm::StringMap<StringRef> &table) {
  (table.insert({OpTys::getOperationName(), OpTys::getImportName()}), ...);
}

const llvm::StringMap<StringRef> &getGenericImportOps() {
  static const llvm::StringMap<StringRef> table = [] {
    llvm::StringMap<StringRef> result;
    addImportOps<
        hal::DevicesGetOp, hal::DeviceAllocatorOp, hal::DeviceQueueExecuteOp,
        hal::AllocatorAllocateOp, hal::BufferLoadOp, hal::BufferViewCreateOp,
        hal::BufferViewBufferOp, hal::BufferViewDimOp,
        hal::CommandBufferCreateOp, hal::CommandBufferFinalizeOp,
        hal::CommandBufferExecutionBarrierOp, hal::CommandBufferCopyBufferOp,
        hal::FenceCreateOp, hal::FenceAwaitOp>(result);
    return result;
  }();
  return table;
}

LogicalResult VMModuleBuilder::convertOp(Operation *op, OpBuilder &body,
                                         IRMapping &mapping) {
  Location opLoc = op->getLoc();
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    Value result;
    if (auto intAttr = dyn_cast<IntegerAttr>(value)) {
      // i1 and i32 in i32 registers (i1 as 0/1), i64 and index in i64 ones.
      if (intAttr.getType().isInteger(1))
        result = vm::ConstI32Op::create(
            body, opLoc,
            body.getI32IntegerAttr(intAttr.getValue().getZExtValue()));
      else if (intAttr.getType().isInteger(32))
        result = vm::ConstI32Op::create(
            body, opLoc, body.getI32IntegerAttr(intAttr.getInt()));
      else
        result = vm::ConstI64Op::create(
            body, opLoc, body.getI64IntegerAttr(intAttr.getInt()));
    } else if (auto floatAttr = dyn_cast<FloatAttr>(value)) {
      if (floatAttr.getType().isF32())
        result = vm::ConstF32Op::create(body, opLoc, floatAttr);
      else if (floatAttr.getType().isF64())
        result = vm::ConstF64Op::create(body, opLoc, floatAttr);
    }
    if (!result)
      return op->emitOpError("has a constant the VM cannot hold: ") << value;
    mapping.map(constant.getResult(), result);
    return success();
  }

  if (op->getDialect() && isa<arith::ArithDialect>(op->getDialect()))
    return convertHostScalarOp(op, body, mapping);

  if (auto check = dyn_cast<cf::AssertOp>(op))
    return convertHostCheck(check, body, mapping);

  auto generic = getGenericImportOps().find(op->getName().getStringRef());
  if (generic != getGenericImportOps().end()) {
    StringRef importName = generic->second;
    std::optional<unsigned> fixed =
        countFixedArguments(*lookupHALImport(importName));
    SmallVector<int32_t> segments;
    if (*fixed != op->getNumOperands() ||
        lookupHALImport(importName)->contains('C'))
      segments.push_back(op->getNumOperands() - *fixed);
    return emitImportCall(op, importName, llvm::to_vector(op->getOperands()),
                          segments, body, mapping);
  }

  if (auto assertOp = dyn_cast<hal::BufferViewAssertOp>(op)) {
    FlatSymbolRefAttr message =
        createRodata("message", assertOp.getMessageAttr(), 1);
    Value messageRef =
        vm::ConstRefRodataOp::create(body, opLoc, bufferRefType(), message);
    // The message is an attribute of the hal op; a null entry marks where
    // its rodata reference goes.
    SmallVector<Value> operands = {assertOp.getView(), Value(),
                                   assertOp.getElementType(),
                                   assertOp.getEncodingType()};
    llvm::append_range(operands, assertOp.getDims());
    SmallVector<Value> args;
    SmallVector<Type> argTypes;
    for (Value operand : operands) {
      args.push_back(operand ? mapping.lookup(operand) : messageRef);
      argTypes.push_back(args.back().getType());
    }
    auto callee = getImport(op, "hal.buffer_view.assert",
                            body.getFunctionType(argTypes, {}));
    if (failed(callee))
      return failure();
    auto call = vm::CallOp::create(body, opLoc, TypeRange{}, *callee, args);
    call.setSegmentSizes({static_cast<int32_t>(assertOp.getDims().size())});
    return success();
  }

  if (auto dispatch = dyn_cast<hal::CommandBufferDispatchOp>(op)) {
    SmallVector<Value> operands = {
        dispatch.getCommandBuffer(), dispatch.getExecutable(),
        dispatch.getExportOrdinal(), dispatch.getWorkgroupX(),
        dispatch.getWorkgroupY(),    dispatch.getWorkgroupZ(),
        dispatch.getFlags()};
    llvm::append_range(operands, dispatch.getConstants());
    for (auto [buffer, offset, length] :
         llvm::zip(dispatch.getBindingBuffers(), dispatch.getBindingOffsets(),
                   dispatch.getBindingLengths()))
      operands.append({buffer, offset, length});
    SmallVector<int32_t> segments = {
        static_cast<int32_t>(dispatch.getConstants().size()),
        static_cast<int32_t>(dispatch.getBindingBuffers().size())};
    return emitImportCall(op, "hal.command_buffer.dispatch", operands, segments,
                          body, mapping);
  }

  if (auto lookup = dyn_cast<hal::ExecutableLookupOp>(op)) {
    Value global = vm::GlobalLoadRefOp::create(
        body, opLoc, convertType(lookup.getType()), lookup.getExecutableAttr());
    mapping.map(lookup.getResult(), global);
    return success();
  }

  if (auto constant = dyn_cast<hal::ConstantBufferOp>(op)) {
    auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!value)
      return op->emitOpError("holds a constant that is not dense data");
    Value global = vm::GlobalLoadRefOp::create(body, opLoc,
                                               convertType(constant.getType()),
                                               getConstantBufferGlobal(value));
    mapping.map(constant.getResult(), global);
    return success();
  }

  if (auto null = dyn_cast<hal::NullFenceOp>(op)) {
    mapping.map(
        null.getResult(),
        vm::ConstRefZeroOp::create(body, opLoc, convertType(null.getType())));
    return success();
  }

  if (auto branch = dyn_cast<cf::BranchOp>(op)) {
    vm::BranchOp::create(
        body, opLoc,
        llvm::map_to_vector(branch.getDestOperands(),
                            [&](Value v) { return mapping.lookup(v); }),
        mapping.lookup(branch.getDest()));
    return success();
  }

  if (auto branch = dyn_cast<cf::CondBranchOp>(op)) {
    auto lookup = [&](ValueRange values) {
      return llvm::map_to_vector(values,
                                 [&](Value v) { return mapping.lookup(v); });
    };
    vm::CondBranchOp::create(body, opLoc, mapping.lookup(branch.getCondition()),
                             lookup(branch.getTrueDestOperands()),
                             lookup(branch.getFalseDestOperands()),
                             mapping.lookup(branch.getTrueDest()),
                             mapping.lookup(branch.getFalseDest()));
    return success();
  }

  // A call of another host function (a branch of a run-time conditional).
  if (auto call = dyn_cast<func::CallOp>(op)) {
    SmallVector<Value> args;
    for (Value operand : call.getOperands())
      args.push_back(mapping.lookup(operand));
    SmallVector<Type> resultTypes;
    for (Type type : call.getResultTypes())
      resultTypes.push_back(convertType(type));
    auto converted = vm::CallOp::create(body, opLoc, resultTypes,
                                        call.getCalleeAttr(), args);
    for (auto [oldResult, newResult] :
         llvm::zip(call.getResults(), converted.getResults()))
      mapping.map(oldResult, newResult);
    return success();
  }

  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    SmallVector<Value> operands;
    for (Value operand : ret.getOperands())
      operands.push_back(mapping.lookup(operand));
    vm::ReturnOp::create(body, opLoc, operands);
    return success();
  }

  return op->emitOpError("cannot be lowered to the VM yet");
}

LogicalResult VMModuleBuilder::convertFunction(func::FuncOp func) {
  SmallVector<Type> argTypes, resultTypes;
  for (Type type : func.getArgumentTypes()) {
    argTypes.push_back(convertType(type));
    if (!argTypes.back())
      return func.emitOpError("has an argument of type ")
             << type << " the VM cannot hold";
  }
  for (Type type : func.getResultTypes()) {
    resultTypes.push_back(convertType(type));
    if (!resultTypes.back())
      return func.emitOpError("has a result of type ")
             << type << " the VM cannot hold";
  }
  builder.setInsertionPointToEnd(&vmModule.getBody().front());
  auto vmFunc =
      vm::FuncOp::create(builder, func.getLoc(), func.getSymName(),
                         builder.getFunctionType(argTypes, resultTypes));
  usedNames.insert(func.getSymName());
  vmFunc.setExported(func.isPublic());
  for (StringRef attr :
       {StringRef("strata.abi.arguments"), StringRef("strata.abi.results"),
        StringRef(kAbiArgumentNamesAttr), StringRef(kAbiResultNamesAttr),
        StringRef("strata.transient_bytes")})
    if (Attribute value = func->getAttr(attr))
      vmFunc->setAttr(attr, value);

  // The blocks first (branches name them), in order, with their arguments.
  IRMapping mapping;
  for (Block &block : func.getBody()) {
    Block *vmBlock;
    if (block.isEntryBlock()) {
      vmBlock = vmFunc.addEntryBlock();
    } else {
      vmBlock = new Block();
      vmFunc.getBody().push_back(vmBlock);
      for (BlockArgument arg : block.getArguments()) {
        Type type = convertType(arg.getType());
        if (!type)
          return func.emitOpError("has a block argument of type ")
                 << arg.getType() << " the VM cannot hold";
        vmBlock->addArgument(type, arg.getLoc());
      }
    }
    mapping.map(&block, vmBlock);
    for (auto [oldArg, newArg] :
         llvm::zip(block.getArguments(), vmBlock->getArguments()))
      mapping.map(oldArg, newArg);
  }
  for (Block &block : func.getBody()) {
    OpBuilder body = OpBuilder::atBlockBegin(mapping.lookup(&block));
    for (Operation &op : block)
      if (failed(convertOp(&op, body, mapping)))
        return failure();
  }
  return success();
}

LogicalResult VMModuleBuilder::run() {
  for (auto binary : llvm::to_vector(root.getOps<hal::ExecutableBinaryOp>()))
    if (failed(convertExecutable(binary)))
      return failure();
  if (failed(checkExecutableVariants()))
    return failure();
  for (auto func : llvm::to_vector(root.getOps<func::FuncOp>())) {
    if (func.isExternal())
      return func.emitOpError("is only declared; external functions are not "
                              "supported");
    if (failed(convertFunction(func)))
      return failure();
  }
  buildInitializer();
  // Everything now lives in the vm.module.
  for (Operation &op : llvm::make_early_inc_range(*root.getBody()))
    if (&op != vmModule.getOperation())
      op.erase();
  return success();
}

struct ConvertHostToVMPass
    : public impl::ConvertHostToVMPassBase<ConvertHostToVMPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(VMModuleBuilder(getOperation(), moduleName).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata
