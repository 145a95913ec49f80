//===- ExecutableLibraryBuilder.cpp ---------------------------------------===//
#include "strata/compiler/Codegen/ExecutableLibraryBuilder.h"

#include "strata/hal/local/executable_library.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace strata {

namespace {

// Byte offsets fixed by executable_library.h.
constexpr unsigned kDispatchStateConstantCountOffset = 24;
constexpr unsigned kDispatchStateConstantsOffset = 32;
constexpr unsigned kDispatchStateBindingPtrsOffset = 40;
constexpr unsigned kDispatchStateBindingLengthsOffset = 48;

llvm::Constant *makeString(llvm::Module &module, llvm::StringRef value,
                           const llvm::Twine &name) {
  llvm::LLVMContext &context = module.getContext();
  auto *init = llvm::ConstantDataArray::getString(context, value);
  auto *global =
      new llvm::GlobalVariable(module, init->getType(), true,
                               llvm::GlobalValue::PrivateLinkage, init, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return global;
}

llvm::Constant *makeConstantArray(llvm::Module &module, llvm::Type *elementType,
                                  llvm::ArrayRef<llvm::Constant *> elements,
                                  const llvm::Twine &name) {
  auto *type = llvm::ArrayType::get(elementType, elements.size());
  auto *global = new llvm::GlobalVariable(
      module, type, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(type, elements), name);
  return global;
}

// Fails the dispatch (returns 1) when `failed` holds, else goes on.
void returnErrorIf(llvm::IRBuilder<> &builder, llvm::Function *entry,
                   llvm::Value *failed) {
  llvm::LLVMContext &context = builder.getContext();
  auto *error = llvm::BasicBlock::Create(context, "error", entry);
  auto *next = llvm::BasicBlock::Create(context, "next", entry);
  builder.CreateCondBr(failed, error, next);
  builder.SetInsertPoint(error);
  builder.CreateRet(builder.getInt32(1));
  builder.SetInsertPoint(next);
}

// The push constants as 64-bit values (two words each, low first), after
// checking that the dispatch gives them all.
llvm::SmallVector<llvm::Value *> loadConstants(llvm::IRBuilder<> &builder,
                                               llvm::Function *entry,
                                               llvm::Value *dispatchState,
                                               unsigned count) {
  llvm::SmallVector<llvm::Value *> values;
  if (count == 0)
    return values;
  auto *i32Type = builder.getInt32Ty();
  auto *i64Type = builder.getInt64Ty();
  llvm::Value *given = builder.CreateLoad(
      i32Type,
      builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), dispatchState,
                                         kDispatchStateConstantCountOffset));
  returnErrorIf(builder, entry,
                builder.CreateICmpULT(given, builder.getInt32(2 * count)));
  llvm::Value *words = builder.CreateLoad(
      builder.getPtrTy(),
      builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), dispatchState,
                                         kDispatchStateConstantsOffset));
  for (unsigned i = 0; i < count; ++i) {
    auto word = [&](unsigned index) {
      return builder.CreateZExt(
          builder.CreateLoad(i32Type, builder.CreateConstInBoundsGEP1_64(
                                          i32Type, words, index)),
          i64Type);
    };
    values.push_back(
        builder.CreateOr(word(2 * i), builder.CreateShl(word(2 * i + 1), 32)));
  }
  return values;
}

// Fails the dispatch when a dynamically shaped binding is shorter than its
// dims say (or their product overflows): the kernel must never run past it.
void checkBindingExtents(llvm::IRBuilder<> &builder, llvm::Function *entry,
                         llvm::Value *dispatchState,
                         const ExecutableExport &exp,
                         llvm::ArrayRef<llvm::Value *> constants) {
  if (exp.bindingExtents.empty())
    return;
  llvm::Module &module = *entry->getParent();
  auto *i64Type = builder.getInt64Ty();
  llvm::Function *multiply = llvm::Intrinsic::getOrInsertDeclaration(
      &module, llvm::Intrinsic::umul_with_overflow, {i64Type});
  llvm::Value *lengths = builder.CreateLoad(
      builder.getPtrTy(),
      builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), dispatchState,
                                         kDispatchStateBindingLengthsOffset));
  llvm::Value *failed = builder.getFalse();
  for (const BindingExtent &extent : exp.bindingExtents) {
    llvm::Value *bytes = builder.getInt64(extent.elementBytes);
    for (int64_t dim : extent.dims) {
      llvm::Value *size = dim >= 0 ? builder.getInt64(dim)
                                   : constants[static_cast<size_t>(-1 - dim)];
      llvm::Value *product = builder.CreateCall(multiply, {bytes, size});
      failed = builder.CreateOr(failed, builder.CreateExtractValue(product, 1));
      bytes = builder.CreateExtractValue(product, 0);
    }
    llvm::Value *length = builder.CreateLoad(
        i64Type,
        builder.CreateConstInBoundsGEP1_64(i64Type, lengths, extent.binding));
    failed = builder.CreateOr(failed, builder.CreateICmpUGT(bytes, length));
  }
  returnErrorIf(builder, entry, failed);
}

// int entry(const env*, const dispatch_state*, const workgroup_state*):
// loads each binding pointer and push constant and calls the kernel. A
// dispatch with fewer constants than the kernel reads, or with bindings
// shorter than its dims say, fails (returns 1) instead of reading past
// them.
llvm::Function *buildDispatchEntry(llvm::Module &module,
                                   const ExecutableExport &exp,
                                   llvm::Function *kernel) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptrType = llvm::PointerType::get(context, 0);
  auto *i32Type = llvm::Type::getInt32Ty(context);
  auto *fnType =
      llvm::FunctionType::get(i32Type, {ptrType, ptrType, ptrType}, false);
  auto *entry =
      llvm::Function::Create(fnType, llvm::GlobalValue::InternalLinkage,
                             exp.name + "_dispatch", module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
  llvm::Value *dispatchState = entry->getArg(1);
  llvm::SmallVector<llvm::Value *> constants =
      loadConstants(builder, entry, dispatchState, exp.constantCount);
  checkBindingExtents(builder, entry, dispatchState, exp, constants);
  llvm::Value *bindingPtrsAddr = builder.CreateConstInBoundsGEP1_64(
      builder.getInt8Ty(), dispatchState, kDispatchStateBindingPtrsOffset);
  llvm::Value *bindingPtrs = builder.CreateLoad(ptrType, bindingPtrsAddr);
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < exp.bindingCount; ++i) {
    llvm::Value *slot =
        builder.CreateConstInBoundsGEP1_64(ptrType, bindingPtrs, i);
    args.push_back(builder.CreateLoad(ptrType, slot));
  }
  llvm::append_range(args, constants);
  // Then the workgroup id and count along x, as index (i64) values.
  llvm::Value *workgroupState = entry->getArg(2);
  args.push_back(builder.CreateZExt(
      builder.CreateLoad(builder.getInt32Ty(), workgroupState),
      builder.getInt64Ty()));
  args.push_back(builder.CreateZExt(
      builder.CreateLoad(builder.getInt32Ty(), dispatchState),
      builder.getInt64Ty()));
  builder.CreateCall(kernel, args);
  builder.CreateRet(builder.getInt32(0));
  return entry;
}

// Defines memset/memcpy/memmove inside the library: executables link no
// libc, yet LLVM lowers large llvm.mem* intrinsics to these calls. Marked
// "no-builtins" so their own loops are not turned back into such calls.
void defineMemoryRoutine(llvm::Module &module, llvm::StringRef name) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptrType = llvm::PointerType::get(context, 0);
  auto *i64Type = llvm::Type::getInt64Ty(context);
  auto *i8Type = llvm::Type::getInt8Ty(context);
  bool isSet = name == "memset";
  llvm::Type *secondType =
      isSet ? static_cast<llvm::Type *>(llvm::Type::getInt32Ty(context))
            : ptrType;
  auto *fnType =
      llvm::FunctionType::get(ptrType, {ptrType, secondType, i64Type}, false);
  llvm::Function *fn = module.getFunction(name);
  if (fn && !fn->isDeclaration())
    return;
  if (!fn)
    fn = llvm::Function::Create(fnType, llvm::GlobalValue::ExternalLinkage,
                                name, module);
  fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
  fn->addFnAttr("no-builtins");
  fn->addFnAttr(llvm::Attribute::NoUnwind);

  llvm::Value *dst = fn->getArg(0), *src = fn->getArg(1), *n = fn->getArg(2);
  auto *entry = llvm::BasicBlock::Create(context, "entry", fn);
  auto *loop = llvm::BasicBlock::Create(context, "loop", fn);
  auto *exit = llvm::BasicBlock::Create(context, "exit", fn);
  llvm::IRBuilder<> builder(entry);
  // memmove copies backwards when the destination is above the source.
  llvm::Value *backwards =
      name == "memmove" ? builder.CreateICmpUGT(dst, src) : builder.getFalse();
  builder.CreateCondBr(builder.CreateICmpEQ(n, builder.getInt64(0)), exit,
                       loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode *i = builder.CreatePHI(i64Type, 2);
  i->addIncoming(builder.getInt64(0), entry);
  llvm::Value *index = builder.CreateSelect(
      backwards,
      builder.CreateSub(builder.CreateSub(n, i), builder.getInt64(1)), i);
  llvm::Value *value =
      isSet ? builder.CreateTrunc(src, i8Type)
            : builder.CreateLoad(i8Type, builder.CreateGEP(i8Type, src, index));
  builder.CreateStore(value, builder.CreateGEP(i8Type, dst, index));
  llvm::Value *next = builder.CreateAdd(i, builder.getInt64(1));
  i->addIncoming(next, loop);
  builder.CreateCondBr(builder.CreateICmpEQ(next, n), exit, loop);
  builder.SetInsertPoint(exit);
  builder.CreateRet(dst);
}
} // namespace

llvm::Error
buildExecutableLibrary(llvm::Module &module, const std::string &libraryName,
                       const std::vector<ExecutableExport> &exports) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptrType = llvm::PointerType::get(context, 0);
  auto *i32Type = llvm::Type::getInt32Ty(context);

  llvm::SmallVector<llvm::Constant *> names, entries, bindingCounts,
      workgroupSizes;
  for (const ExecutableExport &exp : exports) {
    llvm::Function *kernel = module.getFunction(exp.kernelFunction);
    if (!kernel)
      return llvm::createStringError("kernel function '" + exp.kernelFunction +
                                     "' not found in the lowered executable");
    if (kernel->arg_size() != exp.bindingCount + exp.constantCount + 2)
      return llvm::createStringError(
          "kernel '" + exp.kernelFunction + "' takes " +
          std::to_string(kernel->arg_size()) + " arguments but has " +
          std::to_string(exp.bindingCount) + " bindings and " +
          std::to_string(exp.constantCount) +
          " push constants (+ workgroup id and count)");
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
    names.push_back(makeString(module, exp.name, exp.name + "_name"));
    entries.push_back(buildDispatchEntry(module, exp, kernel));
    bindingCounts.push_back(llvm::ConstantInt::get(i32Type, exp.bindingCount));
    for (int i = 0; i < 3; ++i)
      workgroupSizes.push_back(llvm::ConstantInt::get(i32Type, 1));
  }

  // Every other symbol stays private to the library.
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && !function.hasLocalLinkage())
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::StringRef routine : {"memset", "memcpy", "memmove"})
    defineMemoryRoutine(module, routine);

  auto *headerType =
      llvm::StructType::get(context, {i32Type, i32Type, ptrType});
  auto *header = new llvm::GlobalVariable(
      module, headerType, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantStruct::get(
          headerType,
          {llvm::ConstantInt::get(i32Type,
                                  STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0),
           llvm::ConstantInt::get(i32Type,
                                  STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE),
           makeString(module, libraryName, "library_name")}),
      "library_header");

  // Matches strata_hal_executable_library_v0_t (LLVM adds the same padding
  // as the C compiler after the uint32 members).
  auto *libraryType =
      llvm::StructType::get(context, {ptrType, i32Type, ptrType, i32Type,
                                      ptrType, ptrType, ptrType, ptrType});
  auto *nullPtr = llvm::ConstantPointerNull::get(ptrType);
  auto *library = new llvm::GlobalVariable(
      module, libraryType, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantStruct::get(
          libraryType,
          {header, llvm::ConstantInt::get(i32Type, 0), nullPtr,
           llvm::ConstantInt::get(i32Type, exports.size()),
           makeConstantArray(module, ptrType, names, "export_names"),
           makeConstantArray(module, ptrType, entries, "export_ptrs"),
           makeConstantArray(module, i32Type, bindingCounts,
                             "export_binding_counts"),
           makeConstantArray(module, i32Type, workgroupSizes,
                             "export_workgroup_sizes")}),
      "library");

  // const header** query(uint32_t max_version, const environment*)
  auto *queryType = llvm::FunctionType::get(ptrType, {i32Type, ptrType}, false);
  auto *query = llvm::Function::Create(
      queryType, llvm::GlobalValue::ExternalLinkage,
      STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL, module);
  query->setVisibility(llvm::GlobalValue::DefaultVisibility);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", query));
  llvm::Value *supported = builder.CreateICmpUGE(
      query->getArg(0),
      builder.getInt32(STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0));
  builder.CreateRet(builder.CreateSelect(supported, library, nullPtr));
  return llvm::Error::success();
}

} // namespace strata
