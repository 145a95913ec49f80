//===- EinsumOps.cpp - Einsum ---------------------------------------------===//
//
// Einsum is one linalg.generic: a loop per distinct label (the output's
// labels parallel, the others reductions), each operand read through the
// map of its labels (a repeated label reads a diagonal), the body the
// product of the operands added to the accumulator. An ellipsis stands for
// the same leading dims in every operand that has one. Sizes known only at
// run time size the result from the operands' dims.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Labels are letters; ellipsis dims get the labels '0', '1', ... (at most
// 10), which cannot clash with letters.
FailureOr<std::string> expandTerm(NodeContext &ctx, StringRef term,
                                  int64_t rank, int64_t &ellipsisRank) {
  std::string labels;
  size_t dots = term.find("...");
  StringRef before = dots == StringRef::npos ? term : term.substr(0, dots);
  StringRef after = dots == StringRef::npos ? "" : term.substr(dots + 3);
  for (StringRef part : {before, after})
    for (char c : part)
      if (!llvm::isAlpha(c))
        return ctx.fail("bad character '" + Twine(c) + "' in the equation");
  if (dots == StringRef::npos)
    return term.str();
  int64_t n = rank - static_cast<int64_t>(before.size() + after.size());
  if (n < 0 || n > 10 || (ellipsisRank >= 0 && ellipsisRank != n))
    return ctx.fail("ellipsis dims differ between operands");
  ellipsisRank = n;
  labels = before.str();
  for (int64_t i = 0; i < n; ++i)
    labels.push_back(static_cast<char>('0' + i));
  labels += after.str();
  return labels;
}

LogicalResult lowerEinsum(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  std::string equation;
  for (char c : ctx.getStringAttr("equation", ""))
    if (c != ' ')
      equation.push_back(c);
  StringRef eq(equation);
  size_t arrow = eq.find("->");
  StringRef lhs = eq.substr(0, arrow);
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  unsigned numInputs = ctx.getNumInputs();
  if (terms.size() != numInputs)
    return ctx.fail("the equation names " + Twine(terms.size()) +
                    " operands but the node has " + Twine(numInputs));
  int64_t ellipsisRank = -1;
  SmallVector<std::string> inputLabels;
  for (unsigned i = 0; i < numInputs; ++i) {
    RankedTensorType t = ctx.getInputType(i);
    FailureOr<std::string> labels =
        expandTerm(ctx, terms[i], t.getRank(), ellipsisRank);
    if (failed(labels))
      return failure();
    if (static_cast<int64_t>(labels->size()) != t.getRank())
      return ctx.fail("term '" + terms[i] + "' does not match operand rank " +
                      Twine(t.getRank()));
    inputLabels.push_back(*labels);
  }
  std::string outputLabels;
  if (arrow != StringRef::npos) {
    FailureOr<std::string> labels =
        expandTerm(ctx, eq.substr(arrow + 2), type->getRank(), ellipsisRank);
    if (failed(labels))
      return failure();
    outputLabels = *labels;
  } else {
    // Implicit output: the ellipsis dims, then the labels used once, in
    // alphabetical order.
    std::map<char, int> uses;
    for (const std::string &labels : inputLabels)
      for (char c : labels)
        ++uses[c];
    for (auto [c, n] : uses)
      if (llvm::isDigit(c))
        outputLabels.push_back(c);
    for (auto [c, n] : uses)
      if (llvm::isAlpha(c) && n == 1)
        outputLabels.push_back(c);
  }
  if (static_cast<int64_t>(outputLabels.size()) != type->getRank())
    return ctx.fail("the equation's output does not match the result rank");

  // Loops: output labels first, then the remaining ones; each with its size
  // (a value where it is known only at run time). A dim of 1 broadcasts
  // against the others; two sizes of one label that are known only at run
  // time are checked equal at the call.
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  std::string loops = outputLabels;
  llvm::StringMap<OpFoldResult> sizes;
  for (unsigned i = 0; i < numInputs; ++i) {
    SmallVector<OpFoldResult> dims = getDimSizes(b, loc, ctx.getInput(i));
    for (auto [d, c] : llvm::enumerate(inputLabels[i])) {
      if (loops.find(c) == std::string::npos)
        loops.push_back(c);
      OpFoldResult size = dims[d];
      auto [it, inserted] = sizes.try_emplace(StringRef(&c, 1), size);
      if (inserted)
        continue;
      std::optional<int64_t> known = getConstantIntValue(it->second),
                             now = getConstantIntValue(size);
      if (known && now) {
        if (*known != *now && *known != 1 && *now != 1)
          return ctx.fail("label '" + Twine(c) + "' has sizes " +
                          Twine(*known) + " and " + Twine(*now));
        it->second = b.getIndexAttr(std::max(*known, *now));
      } else if (known && *known == 1) {
        it->second = size;
      } else if (!(now && *now == 1)) {
        if (failed(
                ctx.checkSizes(it->second, size,
                               "the sizes of label '" + Twine(c) + "' differ")))
          return failure();
        if (now)
          it->second = size;
      }
    }
  }
  for (auto [d, c] : llvm::enumerate(outputLabels))
    if (loops.find(c) == std::string::npos ||
        outputLabels.find(c) != outputLabels.rfind(c))
      return ctx.fail("output label '" + Twine(c) +
                      "' is repeated or not an input label");
  SmallVector<OpFoldResult> resultSizes;
  for (char c : outputLabels)
    resultSizes.push_back(sizes.lookup(StringRef(&c, 1)));
  *type = RankedTensorType::get(getStaticShape(resultSizes),
                                type->getElementType());
  int64_t numLoops = loops.size();
  auto mapOf = [&](StringRef labels, RankedTensorType t) {
    SmallVector<AffineExpr> exprs;
    for (auto [d, c] : llvm::enumerate(labels)) {
      // A broadcast (size-1) dim reads index 0.
      bool broadcast =
          t && t.getDimSize(d) == 1 &&
          getConstantIntValue(sizes.lookup(StringRef(&labels.data()[d], 1))) !=
              std::optional<int64_t>(1);
      exprs.push_back(broadcast ? b.getAffineConstantExpr(0)
                                : b.getAffineDimExpr(loops.find(c)));
    }
    return AffineMap::get(numLoops, 0, exprs, b.getContext());
  };
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < numInputs; ++i) {
    maps.push_back(mapOf(inputLabels[i], ctx.getInputType(i)));
    inputs.push_back(ctx.getInput(i));
  }
  maps.push_back(mapOf(outputLabels, RankedTensorType()));
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  for (size_t i = 0; i < outputLabels.size(); ++i)
    iterators[i] = utils::IteratorType::parallel;
  Type et = type->getElementType();
  bool isFloat = isa<FloatType>(et);
  Value init = createFilled(b, loc, resultSizes, createScalar(b, loc, et, 0));
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{*type}, inputs, ValueRange{init}, maps, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value product = a[0];
            for (Value v : a.drop_front().drop_back())
              product =
                  isFloat
                      ? arith::MulFOp::create(nb, nl, product, v).getResult()
                      : arith::MulIOp::create(nb, nl, product, v).getResult();
            Value sum = isFloat
                            ? arith::AddFOp::create(nb, nl, a.back(), product)
                                  .getResult()
                            : arith::AddIOp::create(nb, nl, a.back(), product)
                                  .getResult();
            linalg::YieldOp::create(nb, nl, ValueRange{sum});
          })
          .getResult(0);
  return ctx.setOutput(0, result);
}

} // namespace

void addEinsumLowerings(LoweringTable &t) { t["Einsum"] = lowerEinsum; }

} // namespace strata::onnx_importer
