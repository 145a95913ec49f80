//===- TfIdfOps.cpp - TfIdfVectorizer (integer tokens) --------------------===//
//
// The n-gram pool is known at compile time: it becomes constant tables
// (tokens, lengths, output column of each n-gram). The counts are one
// linalg.generic over the result [batch?, columns] with reduction loops over
// the n-grams, the start positions and the skips; the body compares up to
// the longest n-gram's tokens (masked by each n-gram's own length).
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

LogicalResult lowerTfIdfVectorizer(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  if (!isa<IntegerType>(xt.getElementType()))
    return ctx.fail("only integer tokens are supported (not strings)");
  if (xt.getRank() < 1 || xt.getRank() > 2 || type->getRank() != xt.getRank())
    return ctx.fail("input must be [C] or [N, C]");
  int64_t minN = ctx.getIntAttr("min_gram_length", 0);
  int64_t maxN = ctx.getIntAttr("max_gram_length", 0);
  int64_t maxSkip = ctx.getIntAttr("max_skip_count", 0);
  std::string mode = ctx.getStringAttr("mode", "TF");
  SmallVector<int64_t> counts = ctx.getIntsAttr("ngram_counts");
  SmallVector<int64_t> columns = ctx.getIntsAttr("ngram_indexes");
  SmallVector<int64_t> pool = ctx.getIntsAttr("pool_int64s");
  SmallVector<float> weights = ctx.getFloatsAttr("weights");
  if (ctx.hasAttr("pool_strings"))
    return ctx.fail("string pools are not supported");
  if (minN < 1 || maxN < minN || maxSkip < 0 ||
      static_cast<int64_t>(counts.size()) != maxN)
    return ctx.fail("bad gram lengths, skip count or ngram_counts");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.fail("unknown mode '" + mode + "'");
  // The n-grams of the pool: section i (from counts[i]) holds (i+1)-grams.
  SmallVector<int64_t> tokens, lengths;
  for (int64_t i = 0; i < maxN; ++i) {
    int64_t begin = counts[i];
    int64_t end = i + 1 < maxN ? counts[i + 1] : pool.size();
    int64_t n = i + 1;
    if (begin < 0 || end > static_cast<int64_t>(pool.size()) || begin > end ||
        (end - begin) % n != 0)
      return ctx.fail("ngram_counts do not split the pool");
    for (int64_t at = begin; at < end; at += n) {
      lengths.push_back(n);
      for (int64_t t = 0; t < maxN; ++t)
        tokens.push_back(t < n ? pool[at + t] : 0);
    }
  }
  int64_t numGrams = lengths.size();
  int64_t numColumns = type->getDimSize(type->getRank() - 1);
  if (static_cast<int64_t>(columns.size()) != numGrams ||
      llvm::any_of(columns,
                   [&](int64_t c) { return c < 0 || c >= numColumns; }))
    return ctx.fail("ngram_indexes do not match the pool and the result");
  if (mode != "TF" && static_cast<int64_t>(weights.size()) != numGrams &&
      !weights.empty())
    return ctx.fail("weights do not match the pool");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Type et = type->getElementType();
  if (numGrams == 0)
    return ctx.setOutput(
        0, createFilled(b, loc, *type, createScalar(b, loc, et, 0)));
  Type i64 = b.getI64Type();
  auto table = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return arith::ConstantOp::create(
               b, loc,
               DenseElementsAttr::get(RankedTensorType::get(shape, i64),
                                      values))
        .getResult();
  };
  Value tokenTable = table({numGrams, maxN}, tokens);
  Value lengthTable = table({numGrams}, lengths);
  Value columnTable = table({numGrams}, columns);
  SmallVector<float> gramWeights(numGrams, 1.0f);
  if (!weights.empty())
    gramWeights.assign(weights.begin(), weights.end());
  Value x = ctx.getInput(0);
  int64_t rank = type->getRank();
  int64_t length = xt.getDimSize(rank - 1);
  // Loops: result dims, then g (n-gram), s (start), k (skip).
  int64_t loops = rank + 3;
  auto dummy = [&](int64_t size) {
    return createEmpty(b, loc, RankedTensorType::get({size}, b.getI1Type()));
  };
  SmallVector<AffineMap> maps{
      AffineMap::get(loops, 0, b.getAffineDimExpr(rank)),
      AffineMap::get(loops, 0, b.getAffineDimExpr(rank + 1)),
      AffineMap::get(loops, 0, b.getAffineDimExpr(rank + 2)),
      b.getMultiDimIdentityMap(loops).getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  // Counts per (row, n-gram) would need a second pass for IDF's min(., 1);
  // counting into the n-gram's column directly works as columns are one
  // per n-gram: IDF then clamps the column's count.
  auto countType = RankedTensorType::get(type->getShape(), i64);
  Value init = createFilled(b, loc, countType, createScalar(b, loc, i64, 0));
  Value countsValue =
      linalg::GenericOp::create(
          b, loc, TypeRange{countType},
          ValueRange{dummy(numGrams), dummy(length), dummy(maxSkip + 1)},
          ValueRange{init}, maps, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            auto index = [&](int64_t d) -> Value {
              return linalg::IndexOp::create(nb, nl, d);
            };
            auto toI64 = [&](Value v) -> Value {
              return arith::IndexCastOp::create(nb, nl, i64, v);
            };
            auto ci = [&](int64_t v) { return createScalar(nb, nl, i64, v); };
            using P = arith::CmpIPredicate;
            Value g = index(rank), s = toI64(index(rank + 1)),
                  k = toI64(index(rank + 2));
            Value n =
                tensor::ExtractOp::create(nb, nl, lengthTable, ValueRange{g});
            Value column =
                tensor::ExtractOp::create(nb, nl, columnTable, ValueRange{g});
            Value stride = arith::AddIOp::create(nb, nl, k, ci(1));
            // This column, a gram length in range, and unigrams counted
            // once (skips only apply between tokens).
            Value ok = arith::CmpIOp::create(nb, nl, P::eq, column,
                                             toI64(index(rank - 1)));
            ok = arith::AndIOp::create(
                nb, nl, ok, arith::CmpIOp::create(nb, nl, P::sge, n, ci(minN)));
            Value unigramSkip = arith::AndIOp::create(
                nb, nl, arith::CmpIOp::create(nb, nl, P::eq, n, ci(1)),
                arith::CmpIOp::create(nb, nl, P::sgt, k, ci(0)));
            ok = arith::AndIOp::create(
                nb, nl, ok,
                arith::XOrIOp::create(nb, nl, unigramSkip,
                                      createScalar(nb, nl, nb.getI1Type(), 1)));
            for (int64_t t = 0; t < maxN; ++t) {
              Value pos = arith::AddIOp::create(
                  nb, nl, s, arith::MulIOp::create(nb, nl, ci(t), stride));
              Value used = arith::CmpIOp::create(nb, nl, P::slt, ci(t), n);
              Value inside =
                  arith::CmpIOp::create(nb, nl, P::slt, pos, ci(length));
              Value at = arith::IndexCastOp::create(
                  nb, nl, nb.getIndexType(),
                  arith::MinSIOp::create(nb, nl, pos, ci(length - 1)));
              SmallVector<Value> coords;
              if (rank == 2)
                coords.push_back(index(0));
              coords.push_back(at);
              Value token = createScalarCast(
                  nb, nl, tensor::ExtractOp::create(nb, nl, x, coords), i64,
                  false, false);
              Value want = tensor::ExtractOp::create(
                  nb, nl, tokenTable,
                  ValueRange{g, arith::ConstantIndexOp::create(nb, nl, t)});
              Value match = arith::AndIOp::create(
                  nb, nl, inside,
                  arith::CmpIOp::create(nb, nl, P::eq, token, want));
              // Tokens past the gram's length do not matter.
              Value fine = arith::OrIOp::create(
                  nb, nl,
                  arith::XOrIOp::create(
                      nb, nl, used, createScalar(nb, nl, nb.getI1Type(), 1)),
                  match);
              ok = arith::AndIOp::create(nb, nl, ok, fine);
            }
            Value add = arith::ExtUIOp::create(nb, nl, i64, ok);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::AddIOp::create(nb, nl, a.back(), add).getResult()});
          })
          .getResult(0);
  // The weight of each column (of the n-gram mapped to it): TF counts, IDF
  // min(count, 1) * w, TFIDF count * w.
  SmallVector<float> columnWeights(numColumns, 1.0f);
  for (int64_t gi = 0; gi < numGrams; ++gi)
    columnWeights[columns[gi]] = gramWeights[gi];
  Value columnWeightTable = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({numColumns}, b.getF32Type()),
          ArrayRef<float>(columnWeights)));
  Value result = createElementwise(
      b, loc, {countsValue, columnWeightTable}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value count = a[0];
        if (mode == "IDF")
          count = arith::MinSIOp::create(nb, nl, count,
                                         createScalar(nb, nl, i64, 1));
        Value f =
            createScalarCast(nb, nl, count, nb.getF32Type(), false, false);
        if (mode != "TF")
          f = arith::MulFOp::create(nb, nl, f, a[1]);
        return createScalarCast(nb, nl, f, et, false, false);
      });
  return ctx.setOutput(0, result);
}

} // namespace

void addTfIdfLowerings(LoweringTable &t) {
  t["TfIdfVectorizer"] = lowerTfIdfVectorizer;
}

} // namespace strata::onnx_importer
