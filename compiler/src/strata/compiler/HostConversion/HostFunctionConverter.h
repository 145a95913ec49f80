//===- HostFunctionConverter.h - one host function to hal ops --*- C++ -*-===//
//
// The state of rewriting one host function from tensors into explicit
// memory (ConvertToHostProgram.cpp documents the whole rewrite): where each
// tensor's bytes are, the command buffer being recorded, and a conversion
// per kind of op. The values the host holds without a dispatch (constants,
// views, concatenations, elements read back) are converted in
// HostValues.cpp, run-time conditionals in HostConditionals.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_HOSTCONVERSION_HOSTFUNCTIONCONVERTER_H_
#define STRATA_COMPILER_HOSTCONVERSION_HOSTFUNCTIONCONVERTER_H_

#include "strata/compiler/Dialect/Flow/FlowDialect.h"
#include "strata/compiler/HostConversion/TransientPlanner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace strata::host_conversion {

// (This namespace is the host conversion's own: its files name MLIR's
// types unqualified.)
using llvm::DenseMap;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using llvm::StringRef;
using mlir::Attribute;
using mlir::DenseElementsAttr;
using mlir::Location;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
namespace arith = mlir::arith;
namespace func = mlir::func;
namespace tensor = mlir::tensor;

// Splat constants larger than this are expanded at run time.
inline constexpr int64_t kSplatBlockBytes = 4096;

// Where a tensor's bytes are: a buffer and a byte offset into it.
struct Storage {
  Value buffer;
  int64_t offset = 0;
  RankedTensorType type;
  // Read-only module constant (must be copied before the caller gets it).
  bool isConstant = false;
  // The values (i64) of the type's dynamic dims, in order.
  SmallVector<Value> dynamicDims = {};
  // The offset (i64) where it is only known at run time (in a scaled slab);
  // `offset` is then unused.
  Value dynamicOffset = {};
};

class HostFunctionConverter {
public:
  // `sites` collects the module's dispatch sites (kDispatchSitesAttr).
  HostFunctionConverter(func::FuncOp func, SmallVectorImpl<Attribute> &sites)
      : func(func), builder(func.getContext()), sites(sites) {}

  LogicalResult convert();

private:
  Value constI32(int64_t value) {
    return arith::ConstantOp::create(builder, loc(),
                                     builder.getI32IntegerAttr(value));
  }
  Value constI64(int64_t value) {
    return arith::ConstantOp::create(builder, loc(),
                                     builder.getI64IntegerAttr(value));
  }
  Location loc() { return currentLoc ? *currentLoc : func.getLoc(); }
  MLIRContext *context() { return func.getContext(); }

  LogicalResult checkAbiType(Type type, StringRef what, unsigned index);
  LogicalResult convertArguments();
  // The i64 value of an index value of the host function.
  Value getScalar(Value value);
  LogicalResult convertScalarOp(Operation *op);
  LogicalResult convertDim(tensor::DimOp dim);
  // Every dim of a storage (i64 values) and its size in bytes.
  SmallVector<Value> getDims(const Storage &storage);
  Value getByteLength(const Storage &storage);
  LogicalResult convertDispatch(flow::DispatchOp dispatch);
  // Lists the dispatch as the module's next call site; its site number.
  uint32_t recordDispatchSite(flow::DispatchOp dispatch);
  LogicalResult convertConstant(arith::ConstantOp constant);
  LogicalResult convertLargeSplat(arith::ConstantOp constant,
                                  DenseElementsAttr value);
  LogicalResult convertReshape(Operation *reshape);
  LogicalResult convertConcat(tensor::ConcatOp concat);
  LogicalResult convertExtract(tensor::ExtractOp extract);
  LogicalResult convertReturn(func::ReturnOp ret);
  // A run-time conditional whose branches call functions
  // (HostConditionals.cpp).
  LogicalResult convertConditional(mlir::scf::IfOp conditional);
  LogicalResult convertBranch(mlir::Region &from, mlir::Region &to);
  // A buffer view of a tensor the host holds, for a call; `user` is named
  // in errors.
  mlir::FailureOr<Value> createView(Value tensor, Operation *user);
  // A new buffer for a dynamically shaped value.
  Value allocate(Value bytes, bool hostVisible = true);
  Value createCommandBuffer();
  // Submits the commands recorded so far and waits for them; the next
  // command starts a new command buffer.
  void submitAndWait();
  // Records a copy of `bytes` bytes (after a barrier, as every command).
  void copyBytes(Value source, Value sourceOffset, Value target,
                 Value targetOffset, Value bytes);
  // The byte offset (i64) of `storage` in its buffer.
  Value getOffset(const Storage &storage);
  // The scaled slab `index` of the plan, allocated at its first use: its
  // buffer and the product of its dims (i64).
  std::pair<Value, Value> getScaledSlab(unsigned index);
  // A new buffer. Only what the caller sees (results) must be host-visible;
  // intermediates may stay in device memory on devices that have it.
  Value allocate(int64_t bytes, bool hostVisible = true);

  func::FuncOp func;
  OpBuilder builder;
  SmallVectorImpl<Attribute> &sites;
  std::optional<Location> currentLoc;
  Value device, allocator, commandBuffer, slab;
  // Whether the host reads values of tensors (tensor.extract): transients
  // must then be host-visible.
  bool readsTensorValues = false;
  TransientPlan plan;
  // getScaledSlab's slabs once allocated, by index (null until then).
  SmallVector<std::pair<Value, Value>> scaledSlabs;
  DenseMap<Value, Storage> storages;
  // The i64 values of the function's index values (dims, shape arithmetic).
  DenseMap<Value, Value> scalars;
  // Converted ops still used by later ones; erased at the end.
  SmallVector<Operation *> deadOps;
  // The boundary's tensor types as callers see them (kUnsignedAbiAttr).
  SmallVector<RankedTensorType> abiArguments, abiResults;
  // Their source names (kAbiNameAttr), "" where there is none.
  SmallVector<StringRef> abiArgumentNames, abiResultNames;
};

} // namespace strata::host_conversion

#endif // STRATA_COMPILER_HOSTCONVERSION_HOSTFUNCTIONCONVERTER_H_
