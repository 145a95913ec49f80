//===- ControlFlowOps.cpp - If, Scan, Loop --------------------------------===//
//
// - If with a compile-time condition imports the taken branch only; with a
//   run-time condition it is an scf.if, each branch imported into its
//   region, whose results have the dims the branches agree on and dynamic
//   ones elsewhere; only the taken branch runs (OutlineConditionals makes
//   each branch a function the host program calls). A branch that cannot
//   be imported for the model's shapes fails the call when taken.
// Loops are flattened at import:
// - Scan is unrolled over its (static) sequence length; each iteration
//   imports the body on slices of the scan inputs and the scan outputs are
//   stacked.
// - Loop is unrolled over its trip count: a compile-time constant, else the
//   first dimension of a scan output's static shape. When the trip count or
//   the condition is known only at run time, each iteration's carried values
//   are kept only while the loop is still running (i < M and cond), so the
//   final values are right for any trip count up to the bound.
// Bodies are imported through importSubgraph: each iteration sees its
// iteration number as a compile-time value, so shape computations on it
// fold as in straight-line code.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

constexpr const char *kUnboundedLoop =
    "the number of iterations must be known at compile time (a constant "
    "trip count, or a scan output of static shape)";

// A loop with neither a trip count nor a scan output of static shape runs
// until its condition, known at compile time in each iteration, turns
// false: while-loops over a counter. Each iteration is imported (and its
// body's types inferred) before the next condition is known, so this bounds
// the time spent on a condition that never turns false well below what the
// node budget would allow.
constexpr int64_t kMaxWhileIterations = 1024;

const onnx::GraphProto *getGraphAttr(NodeContext &ctx, StringRef name) {
  const onnx::AttributeProto *attr = ctx.findAttr(name);
  if (!attr || !attr->has_g())
    return nullptr;
  return &attr->g();
}

// Unrolling multiplies the body: a loop whose iterations would pass what is
// left of the import's node budget is refused before any is imported.
LogicalResult checkUnrollSize(NodeContext &ctx, const onnx::GraphProto &body,
                              int64_t iterations) {
  const ImportBudget &budget = *ctx.getState().budget;
  int64_t nodes = 0;
  if (!__builtin_mul_overflow(iterations,
                              std::max<int64_t>(body.node_size(), 1), &nodes) &&
      nodes <= budget.limits.maxNodes - budget.nodes)
    return success();
  return ctx.fail(Twine(iterations) + " iterations of a " +
                  Twine(body.node_size()) +
                  "-node body are too many to unroll: the model would expand "
                  "to more than " +
                  Twine(budget.limits.maxNodes) + " nodes (--max-onnx-nodes)");
}

// A tensor<i1> of one element as a rank-0 tensor.
Value toScalarTensor(OpBuilder &b, Location loc, Value value) {
  return createReshape(b, loc, value, {});
}

// The slice of `x` at `index` along `axis`, that axis dropped.
Value sliceAt(OpBuilder &b, Location loc, Value x, int64_t axis,
              int64_t index) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
      strides(type.getRank(), 1);
  offsets[axis] = index;
  sizes[axis] = 1;
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), x,
      ValueRange{}, ValueRange{}, ValueRange{}, b.getDenseI64ArrayAttr(offsets),
      b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(strides));
}

// The values stacked along a new dimension `axis`; all of one type.
FailureOr<Value> stack(NodeContext &ctx, ArrayRef<Value> parts, int64_t axis,
                       StringRef what) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  auto type = cast<RankedTensorType>(parts.front().getType());
  if (axis < -(type.getRank() + 1) || axis > type.getRank())
    return ctx.fail(what + " axis " + Twine(axis) + " is out of range");
  axis = normalizeAxis(axis, type.getRank() + 1);
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + axis, 1);
  SmallVector<Value> expanded;
  for (Value part : parts) {
    if (part.getType() != type)
      return ctx.fail(what + " changes type between iterations");
    expanded.push_back(createReshape(b, loc, part, shape));
  }
  if (expanded.size() == 1)
    return expanded.front();
  return tensor::ConcatOp::create(b, loc, axis, expanded).getResult();
}

LogicalResult setOutputs(NodeContext &ctx, ArrayRef<Value> values,
                         ArrayRef<std::optional<DenseElementsAttr>> known) {
  for (auto [i, value] : llvm::enumerate(values)) {
    LogicalResult result = i < known.size() && known[i]
                               ? ctx.setConstantOutput(i, *known[i])
                               : ctx.setOutput(i, value);
    if (failed(result))
      return failure();
  }
  return success();
}

std::optional<bool> getKnownBool(std::optional<DenseElementsAttr> attr) {
  if (!attr || attr->getNumElements() != 1)
    return std::nullopt;
  if (attr->getElementType().isInteger(1))
    return *attr->getValues<bool>().begin();
  if (isa<IntegerType>(attr->getElementType()))
    return !(*attr->getValues<APInt>().begin()).isZero();
  return std::nullopt;
}

// The type that holds an output of either branch of a run-time If: their
// element type and rank, each dim where they agree and dynamic where not.
FailureOr<RankedTensorType> joinBranchTypes(NodeContext &ctx, unsigned index,
                                            Type thenType, Type elseType) {
  auto thenTensor = dyn_cast<RankedTensorType>(thenType);
  auto elseTensor = dyn_cast<RankedTensorType>(elseType);
  if (!thenTensor || !elseTensor ||
      thenTensor.getElementType() != elseTensor.getElementType() ||
      thenTensor.getRank() != elseTensor.getRank()) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "output " << index << ": the branches give " << thenType << " and "
       << elseType
       << "; with a condition known only at run time both must have one "
          "element type and rank";
    return ctx.fail(message);
  }
  SmallVector<int64_t> shape;
  for (auto [thenDim, elseDim] :
       llvm::zip(thenTensor.getShape(), elseTensor.getShape()))
    shape.push_back(thenDim == elseDim ? thenDim : ShapedType::kDynamic);
  return thenTensor.clone(shape);
}

// Imports `graph` at the builder's insertion point, its import errors
// captured into `error` (the first) rather than reported.
LogicalResult importBranch(NodeContext &ctx, const onnx::GraphProto &graph,
                           SmallVectorImpl<Value> &results,
                           std::string &error) {
  ScopedDiagnosticHandler capture(ctx.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    if (error.empty())
      error = diag.str();
    return success();
  });
  return importSubgraph(ctx, graph, {}, {}, results);
}

// Erases what a failed import left in a branch, up to its terminator.
void clearBranch(Block &block) {
  Operation *terminator = block.getTerminator();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    if (&op == terminator)
      continue;
    op.dropAllUses();
    op.erase();
  }
}

// A branch that fails the call when taken, with the error its import gave
// (a warning says so at compile time); its results are placeholders of the
// other branch's types.
void failWhenTaken(NodeContext &ctx, StringRef branch, StringRef error,
                   ArrayRef<Type> types, SmallVectorImpl<Value> &results) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  mlir::emitWarning(loc) << "node '" << ctx.getNode().name() << "' (If): its "
                         << branch
                         << " cannot run for these shapes; taking it fails "
                            "the call: "
                         << error;
  Value never = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  cf::AssertOp::create(b, loc, never,
                       ("If '" + ctx.getNode().name() + "': its " + branch +
                        " cannot run for these shapes: " + error)
                           .str());
  results.clear();
  for (Type type : types) {
    auto tensorType = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensorType.getShape());
    for (int64_t &dim : shape)
      if (ShapedType::isDynamic(dim))
        dim = 1;
    auto placeholderType = tensorType.clone(shape);
    Value placeholder = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(placeholderType,
                               b.getZeroAttr(tensorType.getElementType())));
    results.push_back(placeholder);
  }
}

LogicalResult lowerIf(NodeContext &ctx) {
  const onnx::GraphProto *thenBranch = getGraphAttr(ctx, "then_branch");
  const onnx::GraphProto *elseBranch = getGraphAttr(ctx, "else_branch");
  if (!thenBranch || !elseBranch)
    return ctx.fail("needs then_branch and else_branch graphs");
  RankedTensorType condType = ctx.getInputType(0);
  if (!condType || condType.getNumElements() != 1)
    return ctx.fail("the condition must be a tensor of one element");
  unsigned numOutputs = ctx.getNumOutputs();
  for (const onnx::GraphProto *branch : {thenBranch, elseBranch})
    if (branch->output_size() != static_cast<int>(numOutputs))
      return ctx.fail("branch '" + branch->name() + "' has " +
                      Twine(branch->output_size()) + " outputs, the node " +
                      Twine(numOutputs));

  if (std::optional<bool> taken = getKnownBool(ctx.getConstantInput(0))) {
    SmallVector<Value> results;
    SmallVector<std::optional<DenseElementsAttr>> known;
    if (failed(importSubgraph(ctx, *taken ? *thenBranch : *elseBranch, {}, {},
                              results, &known)))
      return failure();
    return setOutputs(ctx, results, known);
  }

  if (!condType.getElementType().isInteger(1))
    return ctx.fail("the condition must be bool");
  // Each branch is imported into its region of a conditional without
  // results, then moved into one whose results hold either branch's.
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value cond = tensor::ExtractOp::create(
      b, loc, toScalarTensor(b, loc, ctx.getInput(0)), ValueRange{});
  auto imported = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                    /*withElseRegion=*/true);
  SmallVector<Value> thenResults, elseResults;
  // A branch that cannot be imported for the model's shapes (a shape
  // contradiction, as a branch meant for other inputs may hold) fails the
  // call only if it is taken, as in the frameworks: its error, else empty.
  std::string thenError, elseError;
  for (auto [region, graph, results, error] :
       {std::tuple(&imported.getThenRegion(), thenBranch, &thenResults,
                   &thenError),
        std::tuple(&imported.getElseRegion(), elseBranch, &elseResults,
                   &elseError)}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(region->front().getTerminator());
    if (succeeded(importBranch(ctx, *graph, *results, *error)))
      continue;
    if (error->empty())
      return failure();
    clearBranch(region->front());
  }
  if (!thenError.empty() && !elseError.empty())
    return ctx.fail("neither branch can be imported; then_branch: " +
                    thenError + "; else_branch: " + elseError);
  SmallVector<Type> resultTypes;
  for (unsigned i = 0; i < numOutputs; ++i) {
    if (!thenError.empty() || !elseError.empty()) {
      resultTypes.push_back(
          (thenError.empty() ? thenResults : elseResults)[i].getType());
      continue;
    }
    FailureOr<RankedTensorType> type = joinBranchTypes(
        ctx, i, thenResults[i].getType(), elseResults[i].getType());
    if (failed(type))
      return failure();
    resultTypes.push_back(*type);
  }
  for (auto [region, results, error, name] :
       {std::tuple(&imported.getThenRegion(), &thenResults, &thenError,
                   "then_branch"),
        std::tuple(&imported.getElseRegion(), &elseResults, &elseError,
                   "else_branch")}) {
    if (error->empty())
      continue;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(region->front().getTerminator());
    failWhenTaken(ctx, name, *error, resultTypes, *results);
  }
  auto conditional = scf::IfOp::create(b, loc, resultTypes, cond,
                                       /*withElseRegion=*/true);
  for (auto [from, to, results] :
       {std::tuple(&imported.getThenRegion(), &conditional.getThenRegion(),
                   &thenResults),
        std::tuple(&imported.getElseRegion(), &conditional.getElseRegion(),
                   &elseResults)}) {
    to->takeBody(*from);
    Operation *terminator = to->front().getTerminator();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(terminator);
    SmallVector<Value> yielded;
    for (auto [value, type] : llvm::zip(*results, resultTypes))
      yielded.push_back(value.getType() == type
                            ? value
                            : tensor::CastOp::create(b, loc, type, value));
    scf::YieldOp::create(b, loc, yielded);
    terminator->erase();
  }
  imported.erase();
  for (unsigned i = 0; i < numOutputs; ++i)
    if (failed(ctx.setOutput(i, conditional.getResult(i))))
      return failure();
  return success();
}

// The scan inputs and states of one (unbatched) Scan, unrolled.
struct ScanSpec {
  const onnx::GraphProto *body;
  SmallVector<int64_t> inputAxes, inputReversed, outputAxes, outputReversed;
  unsigned numStates, numScanOutputs;
};

LogicalResult runScan(NodeContext &ctx, const ScanSpec &spec,
                      ArrayRef<Value> initialStates, ArrayRef<Value> scanInputs,
                      SmallVectorImpl<Value> &results) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t length = -1;
  SmallVector<int64_t> axes;
  for (auto [j, input] : llvm::enumerate(scanInputs)) {
    auto type = cast<RankedTensorType>(input.getType());
    int64_t axis = spec.inputAxes[j];
    if (axis < -type.getRank() || axis >= type.getRank())
      return ctx.fail("scan input " + Twine(j) + " axis " + Twine(axis) +
                      " is out of range");
    axis = normalizeAxis(axis, type.getRank());
    axes.push_back(axis);
    if (length >= 0 && type.getDimSize(axis) != length)
      return ctx.fail("scan inputs differ in sequence length");
    length = type.getDimSize(axis);
  }
  if (length <= 0)
    return ctx.fail("a scan over an empty sequence is not supported");
  if (failed(checkUnrollSize(ctx, *spec.body, length)))
    return failure();

  SmallVector<Value> states(initialStates);
  SmallVector<SmallVector<Value>> outputs(spec.numScanOutputs);
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> inputs(states);
    for (auto [j, input] : llvm::enumerate(scanInputs))
      inputs.push_back(sliceAt(b, loc, input, axes[j],
                               spec.inputReversed[j] ? length - 1 - t : t));
    SmallVector<Value> bodyResults;
    if (failed(importSubgraph(ctx, *spec.body, inputs, {}, bodyResults)))
      return failure();
    if (bodyResults.size() != spec.numStates + spec.numScanOutputs)
      return ctx.fail("the body has " + Twine(bodyResults.size()) +
                      " outputs, the node " +
                      Twine(spec.numStates + spec.numScanOutputs));
    for (unsigned i = 0; i < spec.numStates; ++i) {
      if (bodyResults[i].getType() != states[i].getType())
        return ctx.fail("state " + Twine(i) + " changes type in the body");
      states[i] = bodyResults[i];
    }
    for (unsigned k = 0; k < spec.numScanOutputs; ++k)
      outputs[k].push_back(bodyResults[spec.numStates + k]);
  }
  llvm::append_range(results, states);
  for (unsigned k = 0; k < spec.numScanOutputs; ++k) {
    if (spec.outputReversed[k])
      std::reverse(outputs[k].begin(), outputs[k].end());
    FailureOr<Value> stacked = stack(ctx, outputs[k], spec.outputAxes[k],
                                     "scan output " + std::to_string(k));
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return success();
}

SmallVector<int64_t> getIntsOr(NodeContext &ctx, StringRef name, size_t size) {
  SmallVector<int64_t> values = ctx.getIntsAttr(name);
  if (values.empty())
    values.assign(size, 0);
  return values;
}

// Scan: opset 9 form (states, then scan inputs; per-input axes and
// directions) and opset 8 form (optional sequence_lens first, then a
// leading batch dimension on everything; `directions`).
LogicalResult lowerScan(NodeContext &ctx) {
  ScanSpec spec;
  spec.body = getGraphAttr(ctx, "body");
  if (!spec.body)
    return ctx.fail("needs a body graph");
  int64_t numScanInputs = ctx.getIntAttr("num_scan_inputs", -1);
  bool batched = ctx.getOpset() < 9;
  unsigned first = batched ? 1 : 0;
  int64_t numInputs = ctx.getNumInputs();
  if (numScanInputs < 1 || numScanInputs > numInputs - first)
    return ctx.fail("num_scan_inputs " + Twine(numScanInputs) +
                    " does not fit the node's inputs");
  spec.numStates = numInputs - first - numScanInputs;
  if (ctx.getNumOutputs() < spec.numStates)
    return ctx.fail("fewer outputs than states");
  spec.numScanOutputs = ctx.getNumOutputs() - spec.numStates;
  spec.inputAxes = getIntsOr(ctx, "scan_input_axes", numScanInputs);
  spec.inputReversed = getIntsOr(
      ctx, batched ? "directions" : "scan_input_directions", numScanInputs);
  spec.outputAxes = getIntsOr(ctx, "scan_output_axes", spec.numScanOutputs);
  spec.outputReversed =
      getIntsOr(ctx, "scan_output_directions", spec.numScanOutputs);
  if (spec.inputAxes.size() != static_cast<size_t>(numScanInputs) ||
      spec.inputReversed.size() != static_cast<size_t>(numScanInputs) ||
      spec.outputAxes.size() != spec.numScanOutputs ||
      spec.outputReversed.size() != spec.numScanOutputs)
    return ctx.fail("an axes or directions attribute has the wrong length");

  SmallVector<Value> states, scanInputs;
  for (unsigned i = 0; i < spec.numStates; ++i)
    states.push_back(ctx.getInput(first + i));
  for (int64_t j = 0; j < numScanInputs; ++j)
    scanInputs.push_back(ctx.getInput(first + spec.numStates + j));

  SmallVector<Value> results;
  if (!batched) {
    if (failed(runScan(ctx, spec, states, scanInputs, results)))
      return failure();
    return setOutputs(ctx, results, {});
  }

  // Opset 8: every input has a leading batch dimension and scans along
  // dimension 1; each batch row is an independent scan.
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t batch = -1;
  for (Value v : llvm::concat<Value>(states, scanInputs)) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() < 1 || (batch >= 0 && type.getDimSize(0) != batch))
      return ctx.fail("inputs must share the leading batch dimension");
    batch = type.getDimSize(0);
  }
  auto firstScanType = cast<RankedTensorType>(scanInputs.front().getType());
  if (firstScanType.getRank() < 2)
    return ctx.fail("scan inputs must be [batch, sequence, ...]");
  int64_t length = firstScanType.getDimSize(1);
  if (ctx.hasInput(0)) {
    auto lengths = ctx.getConstantInts(0);
    if (failed(lengths))
      return failure();
    if (llvm::any_of(*lengths, [&](int64_t l) { return l != length; }))
      return ctx.fail("sequence_lens shorter than the scan inputs are not "
                      "supported");
  }
  if (batch <= 0)
    return ctx.fail("an empty batch is not supported");
  if (failed(checkUnrollSize(ctx, *spec.body, batch * length)))
    return failure();
  SmallVector<SmallVector<Value>> perOutput(ctx.getNumOutputs());
  for (int64_t row = 0; row < batch; ++row) {
    SmallVector<Value> rowStates, rowInputs, rowResults;
    for (Value v : states)
      rowStates.push_back(sliceAt(b, loc, v, 0, row));
    for (Value v : scanInputs)
      rowInputs.push_back(sliceAt(b, loc, v, 0, row));
    if (failed(runScan(ctx, spec, rowStates, rowInputs, rowResults)))
      return failure();
    for (auto [i, value] : llvm::enumerate(rowResults))
      perOutput[i].push_back(value);
  }
  for (auto [i, parts] : llvm::enumerate(perOutput)) {
    FailureOr<Value> stacked =
        stack(ctx, parts, 0, "output " + std::to_string(i));
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return setOutputs(ctx, results, {});
}

// The rank-0 i1 tensor `iteration < tripCount` (tripCount a one-element
// integer tensor known at run time).
Value createBelowTripCount(OpBuilder &b, Location loc, Value tripCount,
                           int64_t iteration) {
  Value trip = toScalarTensor(b, loc, tripCount);
  return createElementwise(
      b, loc, {trip}, RankedTensorType::get({}, b.getI1Type()),
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value i = createScalar(nb, nl, args[0].getType(), iteration);
        return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i,
                                     args[0]);
      });
}

Value createAnd(OpBuilder &b, Location loc, Value x, Value y) {
  return createElementwise(
      b, loc, {x, y}, cast<RankedTensorType>(x.getType()),
      [](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::AndIOp::create(nb, nl, args[0], args[1]).getResult();
      });
}

LogicalResult lowerLoop(NodeContext &ctx) {
  const onnx::GraphProto *body = getGraphAttr(ctx, "body");
  if (!body)
    return ctx.fail("needs a body graph");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  unsigned numCarried = ctx.getNumInputs() < 2 ? 0 : ctx.getNumInputs() - 2;
  if (ctx.getNumOutputs() < numCarried)
    return ctx.fail("fewer outputs than loop-carried values");
  unsigned numScanOutputs = ctx.getNumOutputs() - numCarried;

  // The trip count M and the condition: known now, at run time, or absent.
  std::optional<int64_t> knownTrip;
  Value runtimeTrip;
  if (ctx.hasInput(0)) {
    RankedTensorType t = ctx.getInputType(0);
    if (!t || t.getNumElements() != 1 || !isa<IntegerType>(t.getElementType()))
      return ctx.fail("the trip count must be an integer of one element");
    if (std::optional<DenseElementsAttr> c = ctx.getConstantInput(0))
      knownTrip = (*c->getValues<APInt>().begin()).getSExtValue();
    else
      runtimeTrip = ctx.getInput(0);
  }
  std::optional<bool> knownCond = true;
  Value cond; // rank-0 i1 when the condition is known only at run time
  if (ctx.hasInput(1)) {
    RankedTensorType t = ctx.getInputType(1);
    if (!t || t.getNumElements() != 1 || !t.getElementType().isInteger(1))
      return ctx.fail("the condition must be a bool of one element");
    knownCond = getKnownBool(ctx.getConstantInput(1));
    if (!knownCond)
      cond = toScalarTensor(b, loc, ctx.getInput(1));
  }

  // How many iterations to unroll: the trip count when known, else the
  // number of rows of a scan output's static shape.
  std::optional<int64_t> bound = knownTrip;
  if (!bound && numScanOutputs > 0 && ctx.hasInferredOutputType(numCarried)) {
    FailureOr<RankedTensorType> t = ctx.getOutputType(numCarried);
    if (succeeded(t) && t->getRank() >= 1)
      bound = t->getDimSize(0);
  }
  if (!bound && (runtimeTrip || !knownCond))
    return ctx.fail(kUnboundedLoop);
  if (bound && *bound < 0)
    return ctx.fail("negative trip count " + Twine(*bound));
  if (bound && failed(checkUnrollSize(ctx, *body, *bound)))
    return failure();
  // A compile-time true condition the body hands back unchanged never
  // turns false.
  if (!bound && knownCond && *knownCond && body->input_size() >= 2 &&
      body->output_size() >= 1 && !body->input(1).name().empty() &&
      body->output(0).name() == body->input(1).name())
    return ctx.fail("with no trip count, a condition that is true and that "
                    "the body passes through unchanged never ends the loop");

  SmallVector<Value> carried;
  SmallVector<std::optional<DenseElementsAttr>> carriedKnown;
  for (unsigned i = 0; i < numCarried; ++i) {
    carried.push_back(ctx.getInput(2 + i));
    carriedKnown.push_back(ctx.getConstantInput(2 + i));
  }
  SmallVector<SmallVector<Value>> scanParts(numScanOutputs);
  auto i1Scalar = RankedTensorType::get({}, b.getI1Type());
  auto i64Scalar = RankedTensorType::get({}, b.getI64Type());
  for (int64_t iteration = 0;; ++iteration) {
    if (bound && iteration >= *bound)
      break;
    if (knownCond && !*knownCond)
      break;
    // Without a trip count, a compile-time condition must turn false in
    // time.
    if (!bound && iteration == kMaxWhileIterations)
      return ctx.fail("the condition is still true after " +
                      Twine(kMaxWhileIterations) +
                      " iterations; a loop with no trip count (and no scan "
                      "output of static shape) is unrolled at most " +
                      Twine(kMaxWhileIterations) + " times");
    if (!bound && failed(checkUnrollSize(ctx, *body, iteration + 1)))
      return failure();

    // Whether this iteration runs, when only the run time knows.
    Value active = cond;
    if (runtimeTrip) {
      Value below = createBelowTripCount(b, loc, runtimeTrip, iteration);
      active = active ? createAnd(b, loc, active, below) : below;
    }

    auto iterAttr = DenseElementsAttr::get(i64Scalar, iteration);
    SmallVector<Value> inputs{arith::ConstantOp::create(b, loc, iterAttr)};
    SmallVector<std::optional<DenseElementsAttr>> known{iterAttr};
    if (knownCond) {
      auto condAttr = DenseElementsAttr::get(i1Scalar, true);
      inputs.push_back(arith::ConstantOp::create(b, loc, condAttr));
      known.push_back(condAttr);
    } else {
      inputs.push_back(cond);
      known.push_back(std::nullopt);
    }
    llvm::append_range(inputs, carried);
    llvm::append_range(known, carriedKnown);
    // The body's iteration number and condition are declared however the
    // model chose (rank 0 or [1]); reshape ours to match.
    for (unsigned i = 0; i < 2 && i < static_cast<unsigned>(body->input_size());
         ++i) {
      const auto &info = body->input(i);
      if (info.type().tensor_type().has_shape() &&
          info.type().tensor_type().shape().dim_size() == 1) {
        inputs[i] = createReshape(b, loc, inputs[i], {1});
        if (known[i])
          known[i] = known[i]->reshape(cast<ShapedType>(inputs[i].getType()));
      }
    }

    SmallVector<Value> results;
    SmallVector<std::optional<DenseElementsAttr>> resultKnown;
    if (failed(
            importSubgraph(ctx, *body, inputs, known, results, &resultKnown)))
      return failure();
    if (results.size() != 1 + numCarried + numScanOutputs)
      return ctx.fail("the body has " + Twine(results.size()) +
                      " outputs, the loop needs " +
                      Twine(1 + numCarried + numScanOutputs));
    for (unsigned i = 0; i < numCarried; ++i) {
      Value next = results[1 + i];
      if (active) {
        if (next.getType() != carried[i].getType())
          return ctx.fail("loop-carried value " + Twine(i) +
                          " changes type while the trip count is known only "
                          "at run time");
        next = createSelect(b, loc, active, next, carried[i]);
        carriedKnown[i] = std::nullopt;
      } else {
        carriedKnown[i] = resultKnown[1 + i];
      }
      carried[i] = next;
    }
    for (unsigned k = 0; k < numScanOutputs; ++k)
      scanParts[k].push_back(results[1 + numCarried + k]);

    // The condition for the next iteration.
    std::optional<bool> nextKnown = getKnownBool(resultKnown[0]);
    Value nextCond = nextKnown ? Value() : toScalarTensor(b, loc, results[0]);
    if (active) {
      // Once stopped, stays stopped.
      if (nextKnown && !*nextKnown) {
        knownCond = false;
      } else {
        knownCond = std::nullopt;
        cond = nextCond ? createAnd(b, loc, active, nextCond) : active;
      }
    } else {
      knownCond = nextKnown;
      cond = nextCond;
    }
    if (!knownCond && !bound)
      return ctx.fail(kUnboundedLoop);
  }

  SmallVector<Value> outputs(carried);
  SmallVector<std::optional<DenseElementsAttr>> outputKnown(carriedKnown);
  for (unsigned k = 0; k < numScanOutputs; ++k) {
    if (scanParts[k].empty()) {
      FailureOr<RankedTensorType> t = ctx.getOutputType(numCarried + k);
      if (failed(t))
        return failure();
      outputs.push_back(createZeroElements(b, loc, *t));
      continue;
    }
    FailureOr<Value> stacked =
        stack(ctx, scanParts[k], 0, "scan output " + std::to_string(k));
    if (failed(stacked))
      return failure();
    outputs.push_back(*stacked);
  }
  return setOutputs(ctx, outputs, outputKnown);
}

} // namespace

void addControlFlowLowerings(LoweringTable &t) {
  t["If"] = lowerIf;
  t["Scan"] = lowerScan;
  t["Loop"] = lowerLoop;
}

} // namespace strata::onnx_importer
