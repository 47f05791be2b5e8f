//===- OnnxCanonicalize.cpp - Canonicalization patterns of the onnx ops ---===//
//
// The rewrites the generator declares (OnnxOdsGen.cpp, opHooks), each to a
// value equal to the one it replaces, bit for bit:
//
//   Cast(Cast(x, B), C)          -> Cast(x, C), or x when C is x's type,
//                                   when B holds every value of x's type
//   Reshape(Reshape(x, s1), s2)  -> Reshape(x, s2)
//   Transpose(Transpose(x, p), q) -> Transpose(x, p o q), or x
//   Dropout(x) in inference      -> x (its mask unused)
//
// The passes of passes/pfvm apply them (pfvm-remove-noops); `canonicalize`
// applies them too. A pattern that does not apply leaves the op as it is.
//
//===----------------------------------------------------------------------===//

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mncc::onnx;

namespace {

/// Whether every value of element type `from` is exactly a value of `to`,
/// so that converting through `to` loses nothing.
bool holdsEveryValue(Type from, Type to) {
  if (from == to)
    return true;
  auto bits = [](Type type) { return type.getIntOrFloatBitWidth(); };
  // Significand bits (with the implicit one) of the floating types.
  auto significand = [](Type type) -> unsigned {
    if (type.isF16())
      return 11;
    if (type.isBF16())
      return 8;
    if (type.isF32())
      return 24;
    if (type.isF64())
      return 53;
    return 0;
  };
  auto fromInt = llvm::dyn_cast<IntegerType>(from);
  auto toInt = llvm::dyn_cast<IntegerType>(to);
  auto toFloat = llvm::dyn_cast<FloatType>(to);
  if (fromInt && fromInt.getWidth() == 1)
    return toInt || toFloat; // false and true are 0 and 1 everywhere
  if (fromInt && toInt) {
    if (toInt.getWidth() == 1)
      return false;
    if (fromInt.isUnsigned() == toInt.isUnsigned())
      return toInt.getWidth() >= fromInt.getWidth();
    // Unsigned into a wider signed type.
    return fromInt.isUnsigned() && toInt.getWidth() > fromInt.getWidth();
  }
  if (fromInt && toFloat) {
    unsigned magnitude = fromInt.getWidth() - (fromInt.isUnsigned() ? 0 : 1);
    return significand(to) != 0 && magnitude <= significand(to);
  }
  auto fromFloat = llvm::dyn_cast<FloatType>(from);
  if (fromFloat && toFloat) {
    unsigned f = significand(from), t = significand(to);
    if (!f || !t || t < f)
      return false;
    // bfloat16 has float32's exponent range, half has less than both.
    if (from.isBF16())
      return to.isF32() || to.isF64();
    if (from.isF16())
      return to.isF32() || to.isF64();
    return bits(to) >= bits(from);
  }
  return false;
}

Type elementTypeOf(Value value) {
  auto type = llvm::dyn_cast<ShapedType>(value.getType());
  return type ? type.getElementType() : Type();
}

struct CastOfLosslessCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<CastOp>();
    if (!inner)
      return failure();
    Value source = inner.getInput();
    Type from = elementTypeOf(source), through = elementTypeOf(inner);
    if (!from || !through || llvm::isa<StringType>(from) ||
        llvm::isa<StringType>(through) || !holdsEveryValue(from, through))
      return failure();
    if (source.getType() == op.getType()) {
      rewriter.replaceOp(op, source);
      return success();
    }
    rewriter.replaceOpWithNewOp<CastOp>(op, op.getType(), source,
                                        op.getToAttr());
    return success();
  }
};

struct ReshapeOfReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getData().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    // A 0 in the outer shape copies a dimension of the inner result, which
    // x may not have (allowzero 1 makes it a real 0).
    std::optional<llvm::SmallVector<int64_t>> shape =
        getConstantIntegers(op.getShape());
    if (!shape || (op.getAllowzero() == 0 && llvm::is_contained(*shape, 0)))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getData(),
                                           op.getShape(),
                                           op.getAllowzeroAttr());
    return success();
  }
};

struct TransposeOfTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getData().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    llvm::SmallVector<int64_t> first = inner.getPermutation();
    llvm::SmallVector<int64_t> second = op.getPermutation();
    if (first.empty() || first.size() != second.size())
      return failure();
    // out[i] = inner[second[i]] = x[first[second[i]]].
    llvm::SmallVector<int64_t> composed;
    bool identity = true;
    for (int64_t index = 0; index < (int64_t)second.size(); ++index) {
      if (second[index] < 0 || second[index] >= (int64_t)first.size())
        return failure();
      composed.push_back(first[second[index]]);
      identity &= composed.back() == index;
    }
    Value source = inner.getData();
    if (identity && source.getType() == op.getType()) {
      rewriter.replaceOp(op, source);
      return success();
    }
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, op.getType(), source, rewriter.getI64ArrayAttr(composed));
    return success();
  }
};

struct DropoutInInference : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if ((op.getMask() && !op.getMask().use_empty()) ||
        op.getData().getType() != op.getOutput().getType())
      return failure();
    if (Value training = op.getTrainingMode()) {
      ElementsAttr mode = getConstantValue(training);
      auto dense = llvm::dyn_cast_or_null<DenseElementsAttr>(mode);
      if (!dense || dense.getNumElements() != 1 ||
          !dense.getElementType().isInteger(1) || dense.getValues<bool>()[0])
        return failure();
    }
    // The mask, if any, has no use (checked above).
    rewriter.replaceAllUsesWith(op.getOutput(), op.getData());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<CastOfLosslessCast>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ReshapeOfReshape>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<TransposeOfTranspose>(context);
}

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<DropoutInInference>(context);
}
