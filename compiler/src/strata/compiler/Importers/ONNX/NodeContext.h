//===- NodeContext.h - what one node's lowering sees -------------*- C++
//-*-===//
//
// The state of a graph being imported (values by name, known constant
// values, inferred types) and the view of it one node's lowering gets:
// typed access to inputs, constant inputs, attributes and inferred output
// types, and diagnostics that name the node.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_NODECONTEXT_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_NODECONTEXT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include "strata/compiler/Importers/ONNX/ONNXImporter.h"

#include "onnx/onnx_pb.h"

namespace strata::onnx_importer {

// The MLIR element type of an ONNX TensorProto data type (signless integers,
// i1 for bool), or null when the importer has none for it.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t onnxType);
bool isUnsignedElementType(int32_t onnxType);
// The ONNX data type of a value: the one `known` (its ONNX type, if any)
// names, which keeps signedness, else the one of the MLIR element type.
int32_t getONNXElementType(const onnx::TypeProto *known,
                           mlir::Type elementType);

// Whether `type` is a tensor whose every dimension has a static size.
bool isStaticTensorType(const onnx::TypeProto *type);

// Why a static tensor of `shape` and `elementType` does not fit `limits`: a
// negative dimension, a rank past the limit, an element count or byte size
// past 64 bits or past the limit. Empty when it fits.
std::string checkTensorSize(llvm::ArrayRef<int64_t> shape,
                            mlir::Type elementType,
                            const ONNXImportLimits &limits);

// The ranked tensor type of an ONNX type; sets `error` and returns null for
// non-tensor types, unknown element types and ranks, shapes past `limits`,
// and symbolic or unknown dimensions unless `allowDynamic` (then they are
// dynamic: `?`).
mlir::RankedTensorType convertTensorType(mlir::MLIRContext *context,
                                         const onnx::TypeProto &type,
                                         const ONNXImportLimits &limits,
                                         std::string &error,
                                         bool allowDynamic = false);

// The value of a TensorProto as a dense attribute (raw or typed data); its
// dims are checked against `limits` before anything is allocated.
mlir::DenseElementsAttr convertTensorProto(mlir::MLIRContext *context,
                                           const onnx::TensorProto &tensor,
                                           const ONNXImportLimits &limits,
                                           std::string &error);

// The nodes imported so far against ONNXImportLimits::maxNodes, shared by a
// graph and every subgraph imported within it.
struct ImportBudget {
  ONNXImportLimits limits;
  int64_t nodes = 0;
};

// A sequence value (SequenceConstruct, SplitToSequence, ...): its tensors,
// as many as known at compile time; `elementType` names the element type
// of an empty one.
struct SequenceValue {
  llvm::SmallVector<mlir::Value> elements;
  mlir::Type elementType;
};

// A small integer tensor (rank 0 or 1) computed from dynamic dims: Shape of
// a dynamically shaped value, and Gather, Concat, Unsqueeze or arithmetic
// on it. Each element is a constant or an index value computed at run
// time, so that the Reshape it feeds gets its sizes as values rather than
// reading a tensor (SymbolicShapes.cpp).
struct SymbolicShape {
  llvm::SmallVector<mlir::OpFoldResult> elements;
  bool scalar = false;
  // The tensor's shape when of rank 2 or more (torch's F.pad reorders its
  // pads as [-1, 2] rows); empty for rank 0 or 1.
  llvm::SmallVector<int64_t> dims;
};

// Values of the graph being imported, by ONNX name.
struct GraphState {
  llvm::StringMap<mlir::Value> values;
  // Sequences, which live only inside the graph (not at its boundary).
  llvm::StringMap<SequenceValue> sequences;
  // Values known at compile time: initializers, Constant nodes and the
  // results of shape computations folded by the importer.
  llvm::StringMap<mlir::DenseElementsAttr> constants;
  // Shape computations on dynamic dims, as the elements they hold.
  llvm::StringMap<SymbolicShape> symbolicShapes;
  // How to pin the graph's dynamic dims, for nodes that cannot take them.
  std::string pinHint;
  // Types from graph inputs, outputs and shape inference.
  llvm::StringMap<const onnx::TypeProto *> types;
  // Types inferred for one node at a time while importing (shared: a
  // subgraph's state is a copy of its parent's).
  std::vector<std::shared_ptr<const onnx::TypeProto>> localTypes;
  int64_t opset = 0;
  // The model file, for node locations.
  std::string path;
  // Shared by the graph and its subgraphs; never null while importing.
  ImportBudget *budget = nullptr;
  // The outermost node whose subgraphs are being imported ("node 'l'
  // (Loop)"), which is what multiplies the nodes when the budget runs out.
  std::string expandingNode;
};

class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, mlir::OpBuilder &builder,
              mlir::Location loc, GraphState &state)
      : node(node), builder(builder), loc(loc), state(state) {}

  const onnx::NodeProto &getNode() const { return node; }
  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return loc; }
  mlir::MLIRContext *getContext() { return builder.getContext(); }
  int64_t getOpset() const { return state.opset; }
  // The graph's state (subgraph bodies start from a copy of it).
  const GraphState &getState() const { return state; }
  const ONNXImportLimits &getLimits() const { return state.budget->limits; }

  // Emits "node 'NAME' (OP): reason" and returns failure.
  mlir::InFlightDiagnostic emitError();
  mlir::LogicalResult fail(const llvm::Twine &reason);
  // Fails with a diagnostic when a static tensor `type` is past the
  // import limits (checkTensorSize).
  mlir::LogicalResult checkSize(mlir::Type type);
  // `axis` in [0, rank), counted from the end when negative; fails naming
  // `what` when out of range (inside subgraphs shape inference, not strict,
  // does not reject such axes).
  mlir::FailureOr<int64_t> getAxis(int64_t axis, int64_t rank,
                                   const llvm::Twine &what = "axis");

  // Inputs. Optional inputs may be absent (past the end or empty names).
  unsigned getNumInputs() const { return node.input_size(); }
  bool hasInput(unsigned index) const;
  // The value of input `index`; constants are materialized on first use.
  mlir::Value getInput(unsigned index);
  mlir::RankedTensorType getInputType(unsigned index);
  bool isInputUnsigned(unsigned index) const;
  // Whether input `index` is a sequence, and its value (failing, naming the
  // input, when it is not one).
  bool isSequenceInput(unsigned index) const;
  mlir::FailureOr<SequenceValue> getSequenceInput(unsigned index);
  // The compile-time value of input `index`, if known.
  std::optional<mlir::DenseElementsAttr> getConstantInput(unsigned index);
  // When input `index` holds compile-time indices, fails unless each lies
  // in [-size, size), `size` being what the element at a flat position
  // indexes (the run time clamps; a constant out of range is a bad model).
  mlir::LogicalResult
  checkConstantIndices(unsigned index,
                       llvm::function_ref<int64_t(int64_t)> sizeAt);
  // A host assert that fails the call with "<op> computing '<output>':
  // <broken>" unless `holds` (i1) is true: a shape relation or operand
  // range only known at run time.
  void assertAtCall(mlir::Value holds, const llvm::Twine &broken);
  // Two sizes the op ties together: `a` == `b`, or with `atMost` `a` <=
  // `b`. Known to break it, the import fails; known only at run time, a
  // host assert naming the node checks it at the call. `broken` says what
  // is wrong ("dim 1 of updates and indices differ").
  mlir::LogicalResult checkSizes(mlir::OpFoldResult a, mlir::OpFoldResult b,
                                 const llvm::Twine &broken,
                                 bool atMost = false);
  // Indices (of dims `indexSizes`) that position into data dim `dim` of
  // size `dimSize`: an empty dim has no position to clamp a run-time index
  // into, so unless the indices are empty too the import fails where that
  // is known, and a host assert naming the node fails the call otherwise.
  mlir::LogicalResult
  checkIndexedDimNotEmpty(int64_t dim, mlir::OpFoldResult dimSize,
                          llvm::ArrayRef<mlir::OpFoldResult> indexSizes);
  // Integer values of a constant input (e.g. axes, pads); fails with a
  // diagnostic when the input is not a compile-time constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>> getConstantInts(unsigned index);
  // Float values of input `index` in double, when it is a compile-time
  // float constant (a model's weights and statistics are).
  std::optional<llvm::SmallVector<double>> getConstantFloats(unsigned index);

  // Whether a tensor input has a dynamic dim or is a symbolic shape: the
  // node is imported for sizes known at run time (only lowerings that compute
  // their sizes get such nodes, ONNXImporter.cpp).
  bool hasDynamicInput() const;

  // Outputs. The type is the one shape inference found: static, or with
  // dynamic dims where the node has a dynamic input.
  unsigned getNumOutputs() const { return node.output_size(); }
  bool hasOutput(unsigned index) const;
  mlir::FailureOr<mlir::RankedTensorType> getOutputType(unsigned index);
  // The inferred type when shape inference found one, else `computed` (for
  // lowerings that know their result shape, e.g. when the inference could
  // not see through a shape computation the importer folded).
  mlir::FailureOr<mlir::RankedTensorType>
  getOutputTypeOr(unsigned index, mlir::RankedTensorType computed);
  bool hasInferredOutputType(unsigned index) const;
  bool isOutputUnsigned(unsigned index) const;
  // Binds output `index`; fails when the value's type differs from the
  // inferred one.
  mlir::LogicalResult setOutput(unsigned index, mlir::Value value);
  // Binds output `index` to a sequence.
  void setSequenceOutput(unsigned index, SequenceValue value);
  // The symbolic shape input `index` holds, if any (SymbolicShapes.h).
  const SymbolicShape *findSymbolicInput(unsigned index) const;
  // Records a shape computed from dynamic dims for output `index` and binds
  // it to those elements as an i64 tensor (a constant when all are known).
  mlir::LogicalResult setSymbolicOutput(unsigned index, SymbolicShape shape);
  // Records a compile-time value for output `index` and binds it.
  mlir::LogicalResult setConstantOutput(unsigned index,
                                        mlir::DenseElementsAttr value);

  // Attributes, with the default when absent.
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return findAttr(name); }
  int64_t getIntAttr(llvm::StringRef name, int64_t defaultValue) const;
  float getFloatAttr(llvm::StringRef name, float defaultValue) const;
  std::string getStringAttr(llvm::StringRef name,
                            llvm::StringRef defaultValue) const;
  llvm::SmallVector<int64_t> getIntsAttr(llvm::StringRef name) const;
  llvm::SmallVector<float> getFloatsAttr(llvm::StringRef name) const;

private:
  const onnx::TypeProto *findType(const std::string &name) const;

  const onnx::NodeProto &node;
  mlir::OpBuilder &builder;
  mlir::Location loc;
  GraphState &state;
};

using OpLowering = std::function<mlir::LogicalResult(NodeContext &)>;
using LoweringTable = llvm::StringMap<OpLowering>;

// Imports the nodes of a subgraph (If branch, Loop/Scan body) at the
// builder's insertion point, its inputs bound to `inputs` (and to the
// compile-time values in `known`, where given); the body sees the enclosing
// scope's values. Appends the body's outputs to `results` and, when asked,
// which of them are compile-time values (ONNXImporter.cpp).
mlir::LogicalResult
importSubgraph(NodeContext &ctx, const onnx::GraphProto &body,
               llvm::ArrayRef<mlir::Value> inputs,
               llvm::ArrayRef<std::optional<mlir::DenseElementsAttr>> known,
               llvm::SmallVectorImpl<mlir::Value> &results,
               llvm::SmallVectorImpl<std::optional<mlir::DenseElementsAttr>>
                   *resultConstants = nullptr);

// Slice whose starts/ends/axes/steps arrive at run time (IndexingOps.cpp).
mlir::LogicalResult lowerRuntimeSlice(NodeContext &ctx);

// Each op family registers its lowerings (one file each).
void addElementwiseLowerings(LoweringTable &table);
void addActivationLowerings(LoweringTable &table);
void addMatMulConvLowerings(LoweringTable &table);
void addPoolingLowerings(LoweringTable &table);
void addReductionLowerings(LoweringTable &table);
void addShapeLowerings(LoweringTable &table);
void addIndexingLowerings(LoweringTable &table);
void addNormalizationLowerings(LoweringTable &table);
void addRecurrentLowerings(LoweringTable &table);
void addGeneratorLowerings(LoweringTable &table);
void addLossLowerings(LoweringTable &table);
void addScanSortLowerings(LoweringTable &table);
void addScatterLowerings(LoweringTable &table);
void addResizeLowerings(LoweringTable &table);
void addConvTransposeLowerings(LoweringTable &table);
void addQuantLowerings(LoweringTable &table);
void addEinsumLowerings(LoweringTable &table);
void addSpectralLowerings(LoweringTable &table);
void addTfIdfLowerings(LoweringTable &table);
void addRoiAlignLowerings(LoweringTable &table);
void addControlFlowLowerings(LoweringTable &table);
void addNonMaxSuppressionLowerings(LoweringTable &table);
void addTransformerLowerings(LoweringTable &table);
void addAttentionLowerings(LoweringTable &table);
void addSequenceLowerings(LoweringTable &table);
// The optimizers of the ai.onnx.preview.training domain: ops of a domain
// other than the default one are registered as "domain:OpType".
inline constexpr llvm::StringLiteral kPreviewTrainingDomain =
    "ai.onnx.preview.training";
void addTrainingLowerings(LoweringTable &table);
// Whether input `index` of an `opType` node is a sequence (the sequence
// ops' first input); every other input is a tensor.
bool takesSequenceInput(llvm::StringRef opType, unsigned index);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_NODECONTEXT_H_
