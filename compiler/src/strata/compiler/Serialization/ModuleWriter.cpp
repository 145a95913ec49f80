//===- ModuleWriter.cpp ---------------------------------------------------===//
#include "strata/compiler/Serialization/ModuleWriter.h"

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/Serialization/BytecodeEncoder.h"
#include "strata/compiler/Utils/ElementTypes.h"
#include "strata/schema/module_generated.h"
#include "llvm/Support/CRC.h"

using namespace mlir;
namespace fb = strata::schema;

namespace strata {
namespace {

// Raw bytes of a rodata value: a string's characters or a dense elements
// attribute's storage. Splats (MLIR keeps one element for them, even when
// built from full data) are expanded into `scratch`.
FailureOr<ArrayRef<char>> getRodataBytes(vm::RodataOp op,
                                         std::vector<char> &scratch) {
  Attribute value = op.getValue();
  if (auto str = dyn_cast<StringAttr>(value))
    return ArrayRef<char>(str.getValue().data(), str.getValue().size());
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return op.emitOpError("holds a value that is not raw bytes: ") << value;
  if (dense.getElementType().isInteger(1))
    return op.emitOpError("holds i1 data; store booleans as bytes");
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat() || dense.getNumElements() == 1)
    return raw;
  scratch.clear();
  scratch.reserve(raw.size() * dense.getNumElements());
  for (int64_t i = 0; i < dense.getNumElements(); ++i)
    scratch.insert(scratch.end(), raw.begin(), raw.end());
  return ArrayRef<char>(scratch);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::TensorTypeDef>>>
writeTensorTypes(flatbuffers::FlatBufferBuilder &fbb, Attribute attr,
                 Attribute namesAttr) {
  auto array = dyn_cast_or_null<ArrayAttr>(attr);
  if (!array)
    return 0;
  auto names = dyn_cast_or_null<ArrayAttr>(namesAttr);
  std::vector<flatbuffers::Offset<fb::TensorTypeDef>> types;
  for (auto [index, element] : llvm::enumerate(array)) {
    auto tensorType =
        dyn_cast<RankedTensorType>(cast<TypeAttr>(element).getValue());
    if (!tensorType)
      continue;
    std::vector<int64_t> shape;
    for (int64_t dim : tensorType.getShape())
      shape.push_back(ShapedType::isDynamic(dim) ? -1 : dim);
    StringAttr name = names && index < names.size()
                          ? dyn_cast<StringAttr>(names[index])
                          : StringAttr();
    types.push_back(fb::CreateTensorTypeDef(
        fbb, fbb.CreateVector(shape),
        getElementTypeValue(tensorType.getElementType()).value_or(0),
        name && !name.getValue().empty()
            ? fbb.CreateString(name.getValue().str())
            : 0));
  }
  return fbb.CreateVector(types);
}

// The call sites the host program numbered (kDispatchSitesAttr), in order.
FailureOr<std::vector<flatbuffers::Offset<fb::DispatchSiteDef>>>
writeDispatchSites(flatbuffers::FlatBufferBuilder &fbb, vm::ModuleOp module) {
  std::vector<flatbuffers::Offset<fb::DispatchSiteDef>> defs;
  auto sites = module->getAttrOfType<ArrayAttr>(kDispatchSitesAttr);
  if (!sites)
    return defs;
  for (Attribute site : sites) {
    auto fields = dyn_cast<DictionaryAttr>(site);
    auto name = fields ? fields.getAs<StringAttr>("name") : StringAttr();
    if (!name)
      return module.emitOpError("has a dispatch site without a name: ") << site;
    auto executable = fields.getAs<StringAttr>("executable");
    auto flops = fields.getAs<IntegerAttr>("flops");
    defs.push_back(fb::CreateDispatchSiteDef(
        fbb, fbb.CreateString(name.str()),
        executable ? fbb.CreateString(executable.str()) : 0,
        flops && flops.getInt() > 0 ? uint64_t(flops.getInt()) : 0));
  }
  return defs;
}

} // namespace

LogicalResult writeModuleFile(vm::ModuleOp module, llvm::raw_ostream &os) {
  ModuleOrdinals ordinals;
  SmallVector<vm::FuncOp> functions;
  SmallVector<vm::ImportOp> imports;
  SmallVector<vm::RodataOp> rodata;
  SmallVector<vm::DependencyOp> dependencies;
  uint32_t refGlobalCount = 0;
  for (Operation &op : module.getBody().front()) {
    if (auto func = dyn_cast<vm::FuncOp>(op)) {
      ordinals.functions[func.getSymName()] = functions.size();
      functions.push_back(func);
    } else if (auto import = dyn_cast<vm::ImportOp>(op)) {
      ordinals.imports[import.getSymName()] = imports.size();
      imports.push_back(import);
    } else if (auto data = dyn_cast<vm::RodataOp>(op)) {
      ordinals.rodata[data.getSymName()] = rodata.size();
      rodata.push_back(data);
    } else if (auto global = dyn_cast<vm::GlobalRefOp>(op)) {
      ordinals.refGlobals[global.getSymName()] = refGlobalCount++;
    } else if (auto dependency = dyn_cast<vm::DependencyOp>(op)) {
      dependencies.push_back(dependency);
    } else {
      return op.emitOpError("cannot be serialized into a module file");
    }
  }
  ordinals.firstExtraRodataOrdinal = rodata.size();

  // Encode all functions into one bytecode blob.
  std::vector<uint8_t> bytecode;
  struct FunctionLayout {
    uint32_t offset, length;
    EncodedFunction encoded;
    std::string cconv;
  };
  std::vector<FunctionLayout> layouts;
  for (vm::FuncOp func : functions) {
    auto encoded = encodeFunction(func, ordinals);
    if (failed(encoded))
      return failure();
    auto cconv = getCallingConvention(func.getFunctionType());
    if (failed(cconv))
      return func.emitOpError("has a signature the VM cannot call");
    // Keep every function 8-byte aligned for readable offsets.
    bytecode.resize(llvm::alignTo(bytecode.size(), 8), 0);
    layouts.push_back({static_cast<uint32_t>(bytecode.size()),
                       static_cast<uint32_t>(encoded->bytecode.size()),
                       std::move(*encoded), *cconv});
    llvm::append_range(bytecode, layouts.back().encoded.bytecode);
  }

  flatbuffers::FlatBufferBuilder fbb(1024 * 1024);
  // Rodata first: large blobs, each aligned for use in place.
  std::vector<flatbuffers::Offset<fb::RodataDef>> rodataDefs;
  std::vector<char> scratch;
  for (vm::RodataOp data : rodata) {
    auto bytes = getRodataBytes(data, scratch);
    if (failed(bytes))
      return failure();
    uint32_t alignment = std::max<int64_t>(1, data.getAlignment());
    if (!llvm::isPowerOf2_32(alignment))
      return data.emitOpError("alignment must be a power of two");
    fbb.ForceVectorAlignment(bytes->size(), 1, alignment);
    auto vector = fbb.CreateVector(
        reinterpret_cast<const uint8_t *>(bytes->data()), bytes->size());
    uint32_t crc = llvm::crc32(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(bytes->data()), bytes->size()));
    rodataDefs.push_back(
        fb::CreateRodataDef(fbb, fbb.CreateString(data.getSymName().str()),
                            alignment, vector, crc));
  }
  for (const std::string &message : ordinals.extraRodata) {
    auto vector = fbb.CreateVector(
        reinterpret_cast<const uint8_t *>(message.data()), message.size());
    uint32_t crc = llvm::crc32(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(message.data()), message.size()));
    rodataDefs.push_back(fb::CreateRodataDef(fbb, 0, 1, vector, crc));
  }
  fbb.ForceVectorAlignment(bytecode.size(), 1, 16);
  auto bytecodeVector = fbb.CreateVector(bytecode);

  std::vector<flatbuffers::Offset<fb::DependencyDef>> dependencyDefs;
  for (vm::DependencyOp dependency : dependencies)
    dependencyDefs.push_back(fb::CreateDependencyDef(
        fbb, fbb.CreateString(dependency.getName().str()),
        dependency.getMinimumVersion(), /*is_optional=*/false));

  std::vector<flatbuffers::Offset<fb::ImportDef>> importDefs;
  for (vm::ImportOp import : imports)
    importDefs.push_back(fb::CreateImportDef(
        fbb, fbb.CreateString(import.getSymName().str()),
        fbb.CreateString(import.getCallingConvention().str()),
        /*is_optional=*/false));

  std::vector<flatbuffers::Offset<fb::FunctionDef>> functionDefs;
  std::vector<flatbuffers::Offset<fb::ExportDef>> exportDefs;
  for (auto [ordinal, func] : llvm::enumerate(functions)) {
    FunctionLayout &layout = layouts[ordinal];
    const uint16_t *counts = layout.encoded.registerCounts;
    functionDefs.push_back(fb::CreateFunctionDef(
        fbb, fbb.CreateString(func.getSymName().str()),
        fbb.CreateString(layout.cconv), layout.offset, layout.length, counts[0],
        counts[1], counts[2], counts[3], counts[4]));
    if (!func.getExported())
      continue;
    // Reflection attributes a user (or strata-dump) may want to see.
    std::vector<flatbuffers::Offset<fb::AttrDef>> attrs;
    if (auto transient =
            func->getAttrOfType<IntegerAttr>("strata.transient_bytes"))
      attrs.push_back(fb::CreateAttrDef(
          fbb, fbb.CreateString("transient_bytes"),
          fbb.CreateString(std::to_string(transient.getInt()))));
    exportDefs.push_back(fb::CreateExportDef(
        fbb, fbb.CreateString(func.getSymName().str()), ordinal,
        writeTensorTypes(fbb, func->getAttr("strata.abi.arguments"),
                         func->getAttr(kAbiArgumentNamesAttr)),
        writeTensorTypes(fbb, func->getAttr("strata.abi.results"),
                         func->getAttr(kAbiResultNamesAttr)),
        attrs.empty() ? 0 : fbb.CreateVector(attrs)));
  }

  auto dispatchSites = writeDispatchSites(fbb, module);
  if (failed(dispatchSites))
    return failure();

  auto moduleDef = fb::CreateModuleDef(
      fbb, fbb.CreateString(module.getSymName().str()), module.getVersion(),
      ::strata::vm::kSchemaVersion, ::strata::vm::kBytecodeVersion,
      fbb.CreateVector(dependencyDefs), fbb.CreateVector(importDefs),
      fbb.CreateVector(exportDefs), fbb.CreateVector(functionDefs),
      fbb.CreateVector(rodataDefs), /*global_i32_count=*/0,
      /*global_i64_count=*/0, /*global_f32_count=*/0, /*global_f64_count=*/0,
      refGlobalCount, bytecodeVector, /*source_files=*/0,
      dispatchSites->empty() ? 0 : fbb.CreateVector(*dispatchSites));
  fb::FinishSizePrefixedModuleDefBuffer(fbb, moduleDef);
  os.write(reinterpret_cast<const char *>(fbb.GetBufferPointer()),
           fbb.GetSize());
  return success();
}

} // namespace strata
