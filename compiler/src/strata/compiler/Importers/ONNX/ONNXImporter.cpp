//===- ONNXImporter.cpp - ONNX graph to func.func -------------------------===//
#include "strata/compiler/Importers/ONNX/ONNXImporter.h"

#include "strata/compiler/Importers/ONNX/ModelLoader.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/OpsetAdapters.h"
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace strata {

using namespace onnx_importer;

bool isONNXModel(StringRef path, StringRef contents) {
  if (path.ends_with(".onnx"))
    return true;
  // A ModelProto starts with field 1 (ir_version) as a varint: tag 0x08.
  // No MLIR text starts with that byte.
  return !contents.empty() && contents[0] == 0x08;
}

void registerONNXImporterDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  scf::SCFDialect, tensor::TensorDialect, tosa::TosaDialect>();
}

namespace {

const LoweringTable &getLoweringTable() {
  static const LoweringTable table = [] {
    LoweringTable t;
    addElementwiseLowerings(t);
    addActivationLowerings(t);
    addMatMulConvLowerings(t);
    addPoolingLowerings(t);
    addReductionLowerings(t);
    addShapeLowerings(t);
    addIndexingLowerings(t);
    addNormalizationLowerings(t);
    addRecurrentLowerings(t);
    addGeneratorLowerings(t);
    addLossLowerings(t);
    addScanSortLowerings(t);
    addScatterLowerings(t);
    addResizeLowerings(t);
    addConvTransposeLowerings(t);
    addQuantLowerings(t);
    addEinsumLowerings(t);
    addSpectralLowerings(t);
    addTfIdfLowerings(t);
    addRoiAlignLowerings(t);
    addControlFlowLowerings(t);
    addNonMaxSuppressionLowerings(t);
    addTransformerLowerings(t);
    addAttentionLowerings(t);
    addSequenceLowerings(t);
    addTrainingLowerings(t);
    return t;
  }();
  return table;
}

Location getNodeLoc(MLIRContext *context, StringRef path,
                    const onnx::NodeProto &node) {
  auto fileLoc = FileLineColLoc::get(context, path, 0, 0);
  std::string name = node.name().empty() ? node.op_type() : node.name();
  return NameLoc::get(StringAttr::get(context, name), fileLoc);
}

void setTensorType(onnx::TypeProto &type, int32_t elementType,
                   RankedTensorType shape) {
  auto *tensor = type.mutable_tensor_type();
  tensor->set_elem_type(elementType);
  auto *dims = tensor->mutable_shape();
  dims->clear_dim();
  for (int64_t d : shape.getShape()) {
    auto *dim = dims->add_dim();
    if (!ShapedType::isDynamic(d))
      dim->set_dim_value(d);
  }
}

// How many of `type`'s dims have a static size (-1 when its rank is
// unknown).
int64_t countStaticDims(const onnx::TypeProto *type) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
    return -1;
  return llvm::count_if(type->tensor_type().shape().dim(),
                        [](const auto &dim) { return dim.has_dim_value(); });
}

// Adds `value` as an initializer named `name` when it is a small int64
// tensor (a shape computation inference can fold); false otherwise.
bool addShapeInitializer(onnx::GraphProto &graph, StringRef name,
                         DenseElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.getElementType().isInteger(64) || type.getNumElements() > 1024)
    return false;
  auto *tensor = graph.add_initializer();
  tensor->set_name(name.str());
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : type.getShape())
    tensor->add_dims(d);
  for (const APInt &v : value.getValues<APInt>())
    tensor->add_int64_data(v.getSExtValue());
  return true;
}

// Types of `node`'s outputs that whole-model inference left incomplete: it
// stops where a shape is computed from values it cannot see through (a
// Slice whose bounds come from Shape -> Gather -> Div, as torch exports
// `chunk`, or a Reshape to a shape computed from dynamic dims), though the
// importer has folded them since. The node alone is inferred again from
// its inputs' actual types (dynamic dims unknown) and folded constants, and
// what that types better is kept in `state`.
void inferIncompleteOutputTypes(const onnx::NodeProto &node,
                                GraphState &state) {
  auto isComplete = [&](const std::string &name) {
    return isStaticTensorType(state.types.lookup(name));
  };
  if (llvm::all_of(node.output(), [&](const std::string &name) {
        return name.empty() || isComplete(name);
      }))
    return;
  onnx::GraphProto graph;
  llvm::StringSet<> added;
  for (const std::string &name : node.input()) {
    if (name.empty() || !added.insert(name).second)
      continue;
    auto constant = state.constants.find(name);
    if (constant != state.constants.end() &&
        addShapeInitializer(graph, name, constant->second))
      continue;
    auto value = state.values.find(name);
    auto type = value == state.values.end()
                    ? RankedTensorType()
                    : dyn_cast<RankedTensorType>(value->second.getType());
    if (!type)
      return;
    auto *info = graph.add_input();
    info->set_name(name);
    setTensorType(
        *info->mutable_type(),
        getONNXElementType(state.types.lookup(name), type.getElementType()),
        type);
  }
  *graph.add_node() = node;
  for (const std::string &name : node.output())
    if (!name.empty())
      graph.add_output()->set_name(name);
  std::string error;
  if (!inferGraphShapes(graph, state.opset, error, /*strict=*/false))
    return;
  // What is still incomplete keeps the whole-model type, if any.
  auto keep = [&](const onnx::ValueInfoProto &info) {
    if (!llvm::is_contained(node.output(), info.name()) ||
        isComplete(info.name()) ||
        countStaticDims(&info.type()) <=
            countStaticDims(state.types.lookup(info.name())))
      return;
    auto type = std::make_shared<const onnx::TypeProto>(info.type());
    state.types[info.name()] = type.get();
    state.localTypes.push_back(std::move(type));
  };
  for (const auto &info : graph.output())
    keep(info);
  for (const auto &info : graph.value_info())
    keep(info);
}

// "input 'x' is ?x3x224x224xf32, ..." for the node's dynamic inputs (and
// those computed from dynamic dims).
std::string describeDynamicInputs(NodeContext &ctx) {
  std::string text;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    RankedTensorType type = ctx.hasInput(i) && !ctx.isSequenceInput(i)
                                ? ctx.getInputType(i)
                                : RankedTensorType();
    bool symbolic = ctx.findSymbolicInput(i);
    if (!type || (type.hasStaticShape() && !symbolic))
      continue;
    std::string what;
    llvm::raw_string_ostream os(what);
    if (symbolic) {
      os << "computed from dynamic dims";
    } else {
      for (int64_t d : type.getShape())
        os << (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d))
           << "x";
      os << type.getElementType();
    }
    text += (text.empty() ? "input '" : ", input '") + ctx.getNode().input(i) +
            "' is " + what;
  }
  return text;
}

// How many of `opType`'s leading inputs its lowering takes with dynamic
// dims, computing its result sizes from them (-1: every input; 0: none, only
// shapes computed from dynamic dims, as Range's bounds), or nullopt when it
// takes none. Its other inputs (axes, pads, weights, scales) must be static.
std::optional<int> getDynamicDataInputs(StringRef opType) {
  static const llvm::StringSet<> elementwise = {"Abs",         "Acos",
                                                "Acosh",       "Add",
                                                "And",         "Asin",
                                                "Asinh",       "Atan",
                                                "Atanh",       "Ceil",
                                                "Concat",      "Cos",
                                                "Cosh",        "Div",
                                                "Elu",         "Equal",
                                                "Erf",         "Exp",
                                                "Floor",       "Gelu",
                                                "Greater",     "GreaterOrEqual",
                                                "HardSigmoid", "HardSwish",
                                                "IsInf",       "IsNaN",
                                                "LeakyRelu",   "Less",
                                                "LessOrEqual", "Log",
                                                "Max",         "Mean",
                                                "Min",         "Mish",
                                                "Mul",         "Neg",
                                                "Not",         "Or",
                                                "PRelu",       "Pow",
                                                "Reciprocal",  "Relu",
                                                "Round",       "Selu",
                                                "Sigmoid",     "Sign",
                                                "Sin",         "Sinh",
                                                "Softplus",    "Softsign",
                                                "Sqrt",        "Sub",
                                                "Sum",         "Tan",
                                                "Tanh",        "Where",
                                                "Xor"};
  static const llvm::StringSet<> firstInput = {"ArgMax",
                                               "ArgMin",
                                               "AveragePool",
                                               "BatchNormalization",
                                               "Cast",
                                               "Clip",
                                               "Conv",
                                               "ConvTranspose",
                                               "CumSum",
                                               "DepthToSpace",
                                               "Dropout",
                                               "Expand",
                                               "Flatten",
                                               "GlobalAveragePool",
                                               "GlobalMaxPool",
                                               "Identity",
                                               "InstanceNormalization",
                                               "LayerNormalization",
                                               "LogSoftmax",
                                               "MaxPool",
                                               "OneHot",
                                               "Pad",
                                               "ReduceL1",
                                               "ReduceL2",
                                               "ReduceLogSum",
                                               "ReduceLogSumExp",
                                               "ReduceMax",
                                               "ReduceMean",
                                               "ReduceMin",
                                               "ReduceProd",
                                               "ReduceSum",
                                               "ReduceSumSquare",
                                               "Reshape",
                                               "Resize",
                                               "Shape",
                                               "Size",
                                               "Slice",
                                               "Softmax",
                                               "SpaceToDepth",
                                               "Split",
                                               "Squeeze",
                                               "Tile",
                                               "TopK",
                                               "Transpose",
                                               "Trilu",
                                               "Unsqueeze"};
  // The recurrent ops check themselves that their weights are static;
  // the scatters, GatherND and GatherElements check their operands' shapes
  // against each other.
  if (elementwise.contains(opType) || opType == "LSTM" || opType == "GRU" ||
      opType == "RNN" || opType == "ScatterND" || opType == "GatherND" ||
      opType == "ScatterElements" || opType == "Scatter" ||
      opType == "GatherElements" || opType == "Einsum" ||
      opType == "GridSample")
    return -1;
  if (firstInput.contains(opType))
    return 1;
  if (opType == "MatMul" || opType == "Gather")
    return 2;
  if (opType == "Gemm")
    return 3;
  if (opType == "ConstantOfShape" || opType == "Range")
    return 0;
  return std::nullopt;
}

// Refuses a node with dynamic inputs its lowering does not take, naming
// them and the pins to use.
LogicalResult checkDynamicInputs(NodeContext &ctx, const GraphState &state) {
  std::optional<int> dataInputs = getDynamicDataInputs(ctx.getNode().op_type());
  if (!dataInputs)
    return ctx.fail("dynamic dims (" + describeDynamicInputs(ctx) +
                    ") are not supported by this op yet" + state.pinHint);
  for (unsigned i = *dataInputs < 0 ? ctx.getNumInputs() : *dataInputs;
       i < ctx.getNumInputs(); ++i) {
    RankedTensorType type = ctx.hasInput(i) && !ctx.isSequenceInput(i)
                                ? ctx.getInputType(i)
                                : RankedTensorType();
    if (type && !type.hasStaticShape())
      return ctx.fail("input " + Twine(i) + " ('" + ctx.getNode().input(i) +
                      "') has dynamic dims; the op takes them only in its "
                      "data input" +
                      (*dataInputs > 1 ? "s" : "") + state.pinHint);
  }
  return success();
}

LogicalResult importNode(const onnx::NodeProto &node, OpBuilder &builder,
                         GraphState &state) {
  Location loc = getNodeLoc(builder.getContext(), state.path, node);
  NodeContext ctx(node, builder, loc, state);
  // Which opset the node was read at: an op may be known at another.
  const LoweringTable &table = getLoweringTable();
  bool defaultDomain = isDefaultDomain(node.domain());
  auto it = table.find(defaultDomain ? node.op_type()
                                     : node.domain() + ":" + node.op_type());
  if (it == table.end() && !defaultDomain)
    return ctx.fail("unsupported op: domain '" + node.domain() +
                    "' is not supported (op " + node.op_type() + ")");
  if (it == table.end())
    return ctx.fail("unsupported op " + node.op_type() + " (opset " +
                    std::to_string(state.opset) + ")");
  if (++state.budget->nodes > state.budget->limits.maxNodes) {
    std::string why = "the model expands to more than " +
                      std::to_string(state.budget->limits.maxNodes) +
                      " nodes (--max-onnx-nodes)";
    if (!state.expandingNode.empty())
      why += ": the subgraphs of " + state.expandingNode +
             " are imported once per iteration or branch";
    return ctx.fail(why);
  }
  // Sequences reach only the inputs that take them (SequenceOps.cpp).
  for (int i = 0; i < node.input_size(); ++i) {
    if (ctx.isSequenceInput(i)) {
      if (!takesSequenceInput(node.op_type(), i))
        return ctx.fail("input '" + node.input(i) +
                        "' is a sequence; the op takes a tensor there");
      continue;
    }
    if (ctx.hasInput(i) && !ctx.getInput(i))
      return ctx.fail("input '" + node.input(i) + "' is not defined");
  }
  // A subgraph may reuse a name of its enclosing scope for its own value:
  // no stale outer constant may stand for it.
  for (const std::string &output : node.output())
    if (!output.empty()) {
      state.constants.erase(output);
      state.sequences.erase(output);
      state.symbolicShapes.erase(output);
    }
  inferIncompleteOutputTypes(node, state);
  LogicalResult folded = success();
  if (tryFoldSymbolicShape(ctx, folded)) {
    if (failed(folded))
      return failure();
  } else if (ctx.hasDynamicInput() && failed(checkDynamicInputs(ctx, state))) {
    return failure();
  } else if (failed(it->second(ctx))) {
    return failure();
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (ctx.hasOutput(i) && !state.values.count(node.output(i)) &&
        !state.sequences.count(node.output(i)))
      return ctx.fail("output '" + node.output(i) + "' was not lowered");
  return success();
}

// The linalg verifier inverts an op's indexing maps before it checks them
// against the operands. A lowering handed types that contradict its operands
// (subgraph types come from non-strict inference) could build maps it
// crashes on: such an op is the node's error instead.
LogicalResult checkIndexingMaps(ModuleOp module) {
  WalkResult result = module.walk([](linalg::LinalgOp op) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool valid = maps.size() == op->getNumOperands();
    for (auto [map, operand] : llvm::zip(maps, op->getOpOperands())) {
      auto type = dyn_cast<ShapedType>(operand.get().getType());
      int64_t rank = type ? type.getRank() : 0;
      valid = valid && map.getNumDims() == maps.front().getNumDims() &&
              map.getNumSymbols() == 0 && map.getNumResults() == rank;
      // Built without checks, a map may name loops it does not have.
      for (AffineExpr expr : map.getResults())
        expr.walk([&](AffineExpr e) {
          if (auto dim = dyn_cast<AffineDimExpr>(e))
            valid = valid && dim.getPosition() < map.getNumDims();
        });
    }
    if (valid && !maps.empty() &&
        inversePermutation(concatAffineMaps(maps, op->getContext())))
      return WalkResult::advance();
    InFlightDiagnostic diag = emitError(op->getLoc());
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      diag << "node '" << name.getName().getValue() << "': ";
    diag << "the lowering built a '" << op->getName().getStringRef()
         << "' whose operand shapes contradict its "
            "indexing maps (inconsistent inferred types)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

// How to give the graph inputs' dynamic dims static sizes, for a node that
// cannot take them: by name (--dim), or by input (--input-shape) where a dim
// has none.
std::string getPinHint(const onnx::GraphProto &graph) {
  std::vector<std::string> names;
  std::string shapes;
  for (const auto &input : graph.input()) {
    if (!input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape())
      continue;
    const auto &dims = input.type().tensor_type().shape().dim();
    std::string shape;
    bool unnamed = false;
    for (const auto &dim : dims) {
      unnamed = unnamed || (!dim.has_dim_value() && !dim.has_dim_param());
      if (!dim.has_dim_value() && dim.has_dim_param())
        if (!llvm::is_contained(names, dim.dim_param()))
          names.push_back(dim.dim_param());
      shape += (shape.empty() ? "" : "x") +
               (dim.has_dim_value() ? std::to_string(dim.dim_value())
                                    : std::string("SIZE"));
    }
    if (unnamed)
      shapes += " --input-shape=" + input.name() + "=" + shape;
  }
  std::string pins;
  for (const std::string &name : names)
    pins += " --dim=" + name + "=SIZE";
  pins += shapes;
  if (pins.empty())
    return "";
  return "; pin the dynamic dims when compiling:" + pins;
}

// Whether `computed` has the rank, element type and static sizes of the
// declared `type` (whose other dimensions are symbolic).
bool isCompatibleWithDeclared(RankedTensorType computed,
                              const onnx::TypeProto &type) {
  if (!type.has_tensor_type())
    return false;
  const auto &tensor = type.tensor_type();
  if (convertElementType(computed.getContext(), tensor.elem_type()) !=
      computed.getElementType())
    return false;
  if (!tensor.has_shape())
    return true;
  if (tensor.shape().dim_size() != computed.getRank())
    return false;
  for (auto [dim, size] : llvm::zip(tensor.shape().dim(), computed.getShape()))
    if (dim.has_dim_value() && !ShapedType::isDynamic(size) &&
        dim.dim_value() != size)
      return false;
  return true;
}

// Whether `type` declares a tensor with a dimension of no static size.
bool hasSymbolicDims(const onnx::TypeProto &type) {
  return type.has_tensor_type() && type.tensor_type().has_shape() &&
         !isStaticTensorType(&type);
}

class GraphImporter {
public:
  GraphImporter(MLIRContext *context, StringRef path, int64_t opset,
                const ONNXImportLimits &limits)
      : context(context), builder(context), path(path.str()) {
    state.opset = opset;
    state.path = this->path;
    budget.limits = limits;
    state.budget = &budget;
  }

  OwningOpRef<ModuleOp> import(const onnx::GraphProto &graph,
                               StringRef functionName);

private:
  // A value computed with run-time sizes where the graph declares static
  // ones (a length computed from data): the declared type, with a check
  // that fails the call, naming the output, where the sizes differ.
  Value castToDeclaredOutput(Value value, Type declared, StringRef name);

  MLIRContext *context;
  OpBuilder builder;
  std::string path;
  ImportBudget budget;
  GraphState state;
};

Value GraphImporter::castToDeclaredOutput(Value value, Type declared,
                                          StringRef name) {
  auto computed = cast<RankedTensorType>(value.getType());
  auto type = cast<RankedTensorType>(declared);
  Location loc = value.getLoc();
  for (auto [index, size] : llvm::enumerate(type.getShape())) {
    if (ShapedType::isDynamic(size) || !computed.isDynamicDim(index))
      continue;
    Value dim = tensor::DimOp::create(builder, loc, value, index);
    Value equal = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq, dim,
        arith::ConstantIndexOp::create(builder, loc, size));
    cf::AssertOp::create(builder, loc, equal,
                         ("graph output '" + name + "': dim " + Twine(index) +
                          " computed at run time is not the declared " +
                          Twine(size))
                             .str());
  }
  return tensor::CastOp::create(builder, loc, type, value);
}

OwningOpRef<ModuleOp> GraphImporter::import(const onnx::GraphProto &graph,
                                            StringRef functionName) {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  // The node computing an output is what asks for it.
  auto emitOutputError = [&](const onnx::ValueInfoProto &info,
                             const std::string &why) {
    auto producer = llvm::find_if(graph.node(), [&](const auto &node) {
      return llvm::is_contained(node.output(), info.name());
    });
    if (producer != graph.node().end())
      emitError(getNodeLoc(context, path, *producer))
          << "node '" << producer->name() << "' (" << producer->op_type()
          << "): graph output '" << info.name() << "': " << why;
    else
      emitError(fileLoc) << "graph output '" << info.name() << "': " << why;
  };
  for (const auto &info : graph.input())
    state.types[info.name()] = &info.type();
  for (const auto &info : graph.value_info())
    state.types[info.name()] = &info.type();
  for (const auto &info : graph.output())
    state.types[info.name()] = &info.type();
  state.pinHint = getPinHint(graph);

  std::string error;
  for (const auto &tensor : graph.initializer()) {
    DenseElementsAttr value =
        convertTensorProto(context, tensor, budget.limits, error);
    if (!value) {
      emitError(fileLoc) << "initializer '" << tensor.name() << "': " << error;
      return {};
    }
    state.constants[tensor.name()] = value;
  }

  // Graph inputs that are initializers (IR version < 4) are constants.
  SmallVector<const onnx::ValueInfoProto *> arguments;
  SmallVector<Type> argumentTypes, resultTypes;
  for (const auto &info : graph.input()) {
    if (state.constants.count(info.name()))
      continue;
    RankedTensorType type =
        convertTensorType(context, info.type(), budget.limits, error,
                          /*allowDynamic=*/true);
    if (!type) {
      emitError(fileLoc) << "graph input '" << info.name() << "': " << error;
      return {};
    }
    arguments.push_back(&info);
    argumentTypes.push_back(type);
  }
  // An output declared with symbolic dimensions (torch names them after
  // the op: 'Gemmoutput_dim_0') takes the static type its producer computes.
  // Any other unusable declaration (past a limit) is refused at once.
  SmallVector<std::string> outputErrors;
  for (const auto &info : graph.output()) {
    RankedTensorType type =
        convertTensorType(context, info.type(), budget.limits, error);
    if (!type && !hasSymbolicDims(info.type())) {
      emitOutputError(info, error);
      return {};
    }
    resultTypes.push_back(type);
    outputErrors.push_back(type ? std::string() : error);
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, functionName,
                                   builder.getFunctionType(argumentTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [info, argument] : llvm::zip(arguments, entry->getArguments()))
    state.values[info->name()] = argument;
  builder.setInsertionPointToEnd(entry);

  for (const auto &node : graph.node())
    if (failed(importNode(node, builder, state)))
      return {};

  SmallVector<Value> results;
  for (auto [index, info] : llvm::enumerate(graph.output())) {
    Value value;
    auto it = state.values.find(info.name());
    if (it != state.values.end()) {
      value = it->second;
    } else if (auto constant = state.constants.find(info.name());
               constant != state.constants.end()) {
      value = arith::ConstantOp::create(builder, fileLoc, constant->second);
    }
    if (!value) {
      emitError(fileLoc) << "graph output '" << info.name()
                         << "' is not produced by any node";
      return {};
    }
    if (!resultTypes[index]) {
      auto computed = dyn_cast<RankedTensorType>(value.getType());
      if (!computed || !isCompatibleWithDeclared(computed, info.type())) {
        emitOutputError(info, outputErrors[index]);
        return {};
      }
      resultTypes[index] = computed;
    }
    auto computed = dyn_cast<RankedTensorType>(value.getType());
    if (computed && !computed.hasStaticShape() &&
        computed.getElementType() ==
            cast<RankedTensorType>(resultTypes[index]).getElementType() &&
        succeeded(verifyCompatibleShape(computed, resultTypes[index])))
      value = castToDeclaredOutput(value, resultTypes[index], info.name());
    results.push_back(value);
  }
  func.setFunctionType(builder.getFunctionType(argumentTypes, resultTypes));
  // Unsigned inputs and outputs keep their type at the boundary.
  auto isUnsigned = [](const onnx::ValueInfoProto &info) {
    return info.type().has_tensor_type() &&
           isUnsignedElementType(info.type().tensor_type().elem_type());
  };
  for (auto [index, info] : llvm::enumerate(arguments)) {
    if (isUnsigned(*info))
      func.setArgAttr(index, kUnsignedAbiAttr, builder.getUnitAttr());
    func.setArgAttr(index, kAbiNameAttr, builder.getStringAttr(info->name()));
  }
  for (auto [index, info] : llvm::enumerate(graph.output())) {
    if (isUnsigned(info))
      func.setResultAttr(index, kUnsignedAbiAttr, builder.getUnitAttr());
    func.setResultAttr(index, kAbiNameAttr, builder.getStringAttr(info.name()));
  }
  func::ReturnOp::create(builder, fileLoc, results);
  if (failed(checkIndexingMaps(*module)) || failed(mlir::verify(*module)))
    return {};
  return module;
}

} // namespace

namespace onnx_importer {
namespace {

// Names a graph (and the graphs nested in its nodes) reads but does not
// define: values of an enclosing scope.
void collectOuterNames(const onnx::GraphProto &graph,
                       const llvm::StringSet<> &defined,
                       llvm::MapVector<StringRef, bool> &outer) {
  llvm::StringSet<> local = defined;
  for (const auto &info : graph.input())
    local.insert(info.name());
  for (const auto &tensor : graph.initializer())
    local.insert(tensor.name());
  for (const auto &node : graph.node()) {
    for (const std::string &name : node.input())
      if (!name.empty() && !local.contains(name))
        outer.insert({name, true});
    for (const auto &attr : node.attribute())
      if (attr.has_g())
        collectOuterNames(attr.g(), local, outer);
    for (const std::string &name : node.output())
      local.insert(name);
  }
  for (const auto &info : graph.output())
    if (!local.contains(info.name()))
      outer.insert({info.name(), true});
}

// The nodes of a graph an error of libonnx's strict inference reports:
// a line per failing node, "(op_type:T, node name: N): ..." (what follows
// on the line is the node's own, such as the errors in its subgraphs). A
// node whose only error is an untyped input fails because of another and
// is typed again when imported (inferIncompleteOutputTypes). None where a
// line names no node (an unnamed node).
std::optional<llvm::StringSet<>> getNodesFailingInference(StringRef error) {
  static constexpr StringRef kEntry = "(op_type:";
  static constexpr StringRef kName = ", node name: ";
  llvm::StringSet<> names;
  SmallVector<StringRef> lines;
  error.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    size_t entry = line.find(kEntry);
    if (entry == StringRef::npos)
      continue;
    StringRef rest = line.substr(entry + kEntry.size());
    size_t name = rest.find(kName), close = rest.find("): ");
    if (name == StringRef::npos || close == StringRef::npos || close < name)
      return std::nullopt;
    StringRef message = rest.substr(close + 3);
    if (message.starts_with("[TypeInferenceError] Input ") &&
        message.ends_with(" expected to have type but instead is null") &&
        !message.contains("(op_type:"))
      continue;
    names.insert(rest.slice(name + kName.size(), close));
  }
  if (names.empty())
    return std::nullopt;
  return names;
}

// A copy of `body` typed for this use: its inputs with the types of the
// values bound to them, the outer values it reads as initializers (small
// integer constants, so shape computations fold) or typed inputs, and the
// types of its values inferred afresh. Inference that fails sets `error`;
// values it cannot type keep the types the whole-model inference gave.
onnx::GraphProto typeSubgraph(const onnx::GraphProto &body,
                              ArrayRef<Value> inputs,
                              ArrayRef<std::optional<DenseElementsAttr>> known,
                              const GraphState &state, std::string &error) {
  onnx::GraphProto typed = body;
  typed.clear_value_info();
  for (auto [i, info] : llvm::enumerate(*typed.mutable_input())) {
    auto type = dyn_cast<RankedTensorType>(inputs[i].getType());
    if (!type)
      return body;
    setTensorType(*info.mutable_type(),
                  getONNXElementType(&info.type(), type.getElementType()),
                  type);
    // Known scalars (a loop's iteration number) fold shape computations.
    if (i < known.size() && known[i])
      addShapeInitializer(typed, info.name(), *known[i]);
  }
  llvm::StringSet<> defined;
  llvm::MapVector<StringRef, bool> outer;
  collectOuterNames(body, defined, outer);
  for (StringRef name : llvm::make_first_range(outer)) {
    auto typeIt = state.types.find(name);
    const onnx::TypeProto *onnxType =
        typeIt == state.types.end() ? nullptr : typeIt->second;
    auto constant = state.constants.find(name);
    if (constant != state.constants.end() &&
        addShapeInitializer(typed, name, constant->second))
      continue;
    RankedTensorType type;
    if (auto value = state.values.find(name); value != state.values.end())
      type = dyn_cast<RankedTensorType>(value->second.getType());
    else if (constant != state.constants.end())
      type = cast<RankedTensorType>(constant->second.getType());
    if (!type)
      continue;
    auto *info = typed.add_input();
    info->set_name(name.str());
    setTensorType(*info->mutable_type(),
                  getONNXElementType(onnxType, type.getElementType()), type);
  }
  // Strict, as for the main graph: a node whose inference fails (an axis
  // or operand rank out of range) is the subgraph's error, not a type left
  // for a lowering to trust.
  if (!inferGraphShapes(typed, state.opset, error, /*strict=*/true)) {
    // What non-strict inference types still serves the nodes the error
    // does not name (importSubgraph decides whether it is fatal).
    std::string ignored;
    inferGraphShapes(typed, state.opset, ignored, /*strict=*/false);
  }
  // What this inference could not type keeps the whole-model type.
  llvm::StringSet<> typedNames;
  for (const auto &info : typed.value_info())
    if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
      typedNames.insert(info.name());
  for (const auto &info : body.value_info())
    if (!typedNames.contains(info.name()))
      *typed.add_value_info() = info;
  return typed;
}

} // namespace

LogicalResult importSubgraph(
    NodeContext &ctx, const onnx::GraphProto &body, ArrayRef<Value> inputs,
    ArrayRef<std::optional<DenseElementsAttr>> known,
    SmallVectorImpl<Value> &results,
    SmallVectorImpl<std::optional<DenseElementsAttr>> *resultConstants) {
  if (body.input_size() != static_cast<int>(inputs.size()))
    return ctx.fail("subgraph '" + body.name() + "' takes " +
                    Twine(body.input_size()) + " inputs, the node gives " +
                    Twine(inputs.size()));
  // The body sees the enclosing scope's values by name; its own names
  // shadow them and do not leak out.
  GraphState inner = ctx.getState();
  if (inner.expandingNode.empty())
    inner.expandingNode =
        "node '" + ctx.getNode().name() + "' (" + ctx.getNode().op_type() + ")";
  // Types for this use of the body (a loop's shapes may change between
  // iterations); the whole-model inference gave only what holds for all.
  std::string inferenceError;
  onnx::GraphProto typed =
      typeSubgraph(body, inputs, known, inner, inferenceError);
  // Strict inference also fails on a body holding an If whose dead branch
  // contradicts this use's types (torch exports `if x.dim() == 3:` as
  // one): the error is the named nodes', and an If whose condition folds
  // imports only its live branch, which is typed again on its own.
  llvm::StringSet<> failedNodes;
  auto failInference = [&] {
    return ctx.fail("subgraph '" + body.name() + "': " + inferenceError);
  };
  if (!inferenceError.empty()) {
    while (!inferenceError.empty() &&
           (inferenceError.back() == '\n' || inferenceError.back() == ' '))
      inferenceError.pop_back();
    std::optional<llvm::StringSet<>> failing =
        getNodesFailingInference(inferenceError);
    if (!failing || failing->contains(""))
      return failInference();
    failedNodes = std::move(*failing);
  }
  for (const auto &info : typed.value_info())
    inner.types[info.name()] = &info.type();
  for (const auto &info : typed.output())
    inner.types[info.name()] = &info.type();
  std::string error;
  for (const auto &tensor : body.initializer()) {
    DenseElementsAttr value =
        convertTensorProto(ctx.getContext(), tensor, ctx.getLimits(), error);
    if (!value)
      return ctx.fail("subgraph initializer '" + tensor.name() + "': " + error);
    inner.values.erase(tensor.name());
    inner.constants[tensor.name()] = value;
  }
  for (auto [i, info] : llvm::enumerate(typed.input())) {
    if (i >= inputs.size())
      break; // outer values added for inference
    inner.types[info.name()] = &info.type();
    inner.values[info.name()] = inputs[i];
    if (i < known.size() && known[i])
      inner.constants[info.name()] = *known[i];
    else
      inner.constants.erase(info.name());
  }
  for (const auto &node : body.node()) {
    bool foldedIf = node.op_type() == "If" && node.input_size() > 0 &&
                    inner.constants.contains(node.input(0));
    if (failedNodes.contains(node.name()) && !foldedIf)
      return failInference();
    if (failed(importNode(node, ctx.getBuilder(), inner)))
      return failure();
  }
  for (const auto &info : body.output()) {
    Value value;
    auto c = inner.constants.find(info.name());
    bool isKnown = c != inner.constants.end();
    if (resultConstants)
      resultConstants->push_back(isKnown ? std::optional(c->second)
                                         : std::nullopt);
    if (auto it = inner.values.find(info.name()); it != inner.values.end())
      value = it->second;
    else if (isKnown)
      value =
          arith::ConstantOp::create(ctx.getBuilder(), ctx.getLoc(), c->second);
    if (!value)
      return ctx.fail("subgraph '" + body.name() + "' output '" + info.name() +
                      "' is not produced by any node");
    results.push_back(value);
  }
  return success();
}

} // namespace onnx_importer

OwningOpRef<ModuleOp> importONNXModel(StringRef path, StringRef contents,
                                      MLIRContext *context,
                                      const ONNXImportOptions &options) {
  std::string error;
  LoadedModel loaded = loadModel(path.str(), contents.str(),
                                 options.targetOpset, options.externalDataRoot,
                                 options.limits.maxNodes, options.pins, error);
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  if (!loaded.model) {
    emitError(fileLoc) << error;
    return {};
  }
  context->loadDialect<arith::ArithDialect, cf::ControlFlowDialect,
                       func::FuncDialect, linalg::LinalgDialect,
                       math::MathDialect, scf::SCFDialect,
                       tensor::TensorDialect, tosa::TosaDialect>();
  GraphImporter importer(context, path, loaded.opset, options.limits);
  return importer.import(loaded.model->graph(), options.functionName);
}

} // namespace strata
