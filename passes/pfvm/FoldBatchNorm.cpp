//===- FoldBatchNorm.cpp - BatchNormalization into the Conv or Gemm -------===//
//
// Y = scale * (X - mean) / sqrt(var + epsilon) + bias is an affine map per
// channel, y = s x + t, which the Conv or Gemm before it can apply to its
// weights and bias instead. The new weights and bias are computed in
// double and rounded once to the element type.
//
//===----------------------------------------------------------------------===//

#include "ConstantUtils.h"

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include <cmath>

namespace mncc::pfvm {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;
using reference::DType;
using reference::Tensor;

namespace {

bool onlyUsedBy(Value value, Operation *user) {
  return llvm::all_of(value.getUsers(),
                      [&](Operation *other) { return other == user; });
}

/// A constant float or double vector of `size` elements (any shape).
std::optional<std::vector<double>> constantVector(Value value, int64_t size,
                                                  DType dtype) {
  if (!value)
    return std::nullopt;
  std::optional<Tensor> tensor = pfvm::readConstant(value);
  if (!tensor || tensor->dtype() != dtype || tensor->numElements() != size)
    return std::nullopt;
  std::vector<double> values(size);
  for (int64_t i = 0; i < size; ++i)
    values[i] = tensor->elementAsDouble(i);
  return values;
}

/// A tensor of `dtype` and `shape` from doubles, rounded once.
Tensor tensorOf(DType dtype, const std::vector<int64_t> &shape,
                const std::vector<double> &values) {
  Tensor tensor(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::Float32)
      tensor.data<float>()[i] = static_cast<float>(values[i]);
    else
      tensor.data<double>()[i] = values[i];
  }
  return tensor;
}

/// `weights` with each element multiplied by its channel's factor, in
/// double and rounded once to the weights' type. The weights are read as
/// [outer, channels, inner] with channels = s.size(): a Conv's W is
/// [1, M, C/group x kernel], a Gemm's B [1, N, K] with transB and [K, N, 1]
/// without. Typed loops without a division per element: ResNet-50's 25
/// million weights go through here.
Tensor scaledWeights(const Tensor &weights, const std::vector<double> &s,
                     int64_t inner) {
  int64_t channels = static_cast<int64_t>(s.size());
  int64_t outer =
      channels && inner ? weights.numElements() / (channels * inner) : 0;
  Tensor scaled = Tensor::uninitialized(weights.dtype(), weights.shape());
  auto scale = [&](auto zero) {
    using Element = decltype(zero);
    const Element *in = weights.data<Element>();
    Element *out = scaled.data<Element>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c) {
        double factor = s[c];
        for (int64_t i = 0; i < inner; ++i, ++in, ++out)
          *out = static_cast<Element>(static_cast<double>(*in) * factor);
      }
  };
  if (weights.dtype() == DType::Float32)
    scale(0.0f);
  else
    scale(0.0);
  return scaled;
}

/// The name of a new weight: the initializer's it replaces, if any.
std::string nameFor(Value replaced, llvm::StringRef fallback) {
  if (auto initializer = replaced.getDefiningOp<onnx::InitializerOp>())
    return initializer.getName().str();
  return fallback.str();
}

/// A weight of the folded node: an initializer, as the model's were.
Value createWeight(OpBuilder &builder, Location loc, const Tensor &tensor,
                   std::string name) {
  std::vector<int64_t> shape = tensor.shape();
  Type element = tensor.dtype() == DType::Float32 ? builder.getF32Type()
                                                  : builder.getF64Type();
  auto type = RankedTensorType::get(shape, element);
  ElementsAttr value = pfvm::elementsFromTensor(tensor, type, name);
  return builder.create<onnx::InitializerOp>(loc, name, value);
}

struct FoldBatchNormPass
    : public pfvm::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    llvm::SmallVector<onnx::BatchNormalizationOp> norms;
    getOperation().walk(
        [&](onnx::BatchNormalizationOp op) { norms.push_back(op); });
    for (onnx::BatchNormalizationOp norm : norms)
      fold(norm);
  }

  /// s and t of y = s x + t, per channel.
  struct Affine {
    std::vector<double> s, t;
  };

  std::optional<Affine> affineOf(onnx::BatchNormalizationOp norm,
                                 int64_t channels, DType dtype) {
    if (norm.getTrainingMode() != 0 ||
        (norm.getRunningMean() && !norm.getRunningMean().use_empty()) ||
        (norm.getRunningVar() && !norm.getRunningVar().use_empty()))
      return std::nullopt;
    auto scale = constantVector(norm.getScale(), channels, dtype);
    auto bias = constantVector(norm.getB(), channels, dtype);
    auto mean = constantVector(norm.getInputMean(), channels, dtype);
    auto var = constantVector(norm.getInputVar(), channels, dtype);
    if (!scale || !bias || !mean || !var)
      return std::nullopt;
    double epsilon = norm.getEpsilon().convertToFloat();
    Affine affine{std::vector<double>(channels), std::vector<double>(channels)};
    for (int64_t c = 0; c < channels; ++c) {
      affine.s[c] = (*scale)[c] / std::sqrt((*var)[c] + epsilon);
      affine.t[c] = (*bias)[c] - (*mean)[c] * affine.s[c];
    }
    return affine;
  }

  static DType dtypeOf(Value value) {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return DType::Undefined;
    if (type.getElementType().isF32())
      return DType::Float32;
    if (type.getElementType().isF64())
      return DType::Float64;
    return DType::Undefined;
  }

  void fold(onnx::BatchNormalizationOp norm) {
    Operation *producer = norm.getX().getDefiningOp();
    if (!producer || !norm.getX().hasOneUse() ||
        norm.getY().getType() != norm.getX().getType())
      return;
    if (auto conv = llvm::dyn_cast<onnx::ConvOp>(producer))
      foldIntoConv(norm, conv);
    else if (auto gemm = llvm::dyn_cast<onnx::GemmOp>(producer))
      foldIntoGemm(norm, gemm);
  }

  void foldIntoConv(onnx::BatchNormalizationOp norm, onnx::ConvOp conv) {
    DType dtype = dtypeOf(conv.getY());
    if (dtype == DType::Undefined || !pfvm::isConstant(conv.getW()) ||
        !onlyUsedBy(conv.getW(), conv) ||
        (conv.getB() &&
         (!pfvm::isConstant(conv.getB()) || !onlyUsedBy(conv.getB(), conv))))
      return;
    std::optional<Tensor> weights = pfvm::readConstant(conv.getW());
    if (!weights || weights->dtype() != dtype || weights->rank() < 1)
      return;
    int64_t channels = weights->shape()[0];
    std::optional<Affine> affine = affineOf(norm, channels, dtype);
    if (!affine)
      return;
    std::vector<double> bias(channels, 0.0);
    if (conv.getB()) {
      auto given = constantVector(conv.getB(), channels, dtype);
      if (!given)
        return;
      bias = *given;
    }
    int64_t perChannel = channels ? weights->numElements() / channels : 0;
    Tensor scaled = scaledWeights(*weights, affine->s, perChannel);
    std::vector<double> shifted(channels);
    for (int64_t m = 0; m < channels; ++m)
      shifted[m] = bias[m] * affine->s[m] + affine->t[m];

    OpBuilder builder(conv);
    std::string weightName = nameFor(conv.getW(), "conv.weight");
    Value newWeights =
        createWeight(builder, conv.getW().getLoc(), scaled, weightName);
    Value newBias = createWeight(
        builder, norm.getB().getLoc(), tensorOf(dtype, {channels}, shifted),
        conv.getB() ? nameFor(conv.getB(), weightName + "_bias")
                    : weightName + "_bias");
    Operation *folded = builder.clone(*conv);
    folded->setLoc(
        FusedLoc::get(&getContext(), {conv.getLoc(), norm.getLoc()}));
    folded->setOperand(1, newWeights);
    if (conv.getB())
      folded->setOperand(2, newBias);
    else
      folded->insertOperands(2, newBias);
    finish(norm, conv, folded);
  }

  void foldIntoGemm(onnx::BatchNormalizationOp norm, onnx::GemmOp gemm) {
    DType dtype = dtypeOf(gemm.getY());
    auto outType = llvm::dyn_cast<RankedTensorType>(gemm.getY().getType());
    if (dtype == DType::Undefined || !outType || outType.getRank() != 2 ||
        outType.isDynamicDim(1) || !pfvm::isConstant(gemm.getB()) ||
        !onlyUsedBy(gemm.getB(), gemm) ||
        (gemm.getC() &&
         (!pfvm::isConstant(gemm.getC()) || !onlyUsedBy(gemm.getC(), gemm))))
      return;
    int64_t columns = outType.getDimSize(1);
    std::optional<Tensor> weights = pfvm::readConstant(gemm.getB());
    if (!weights || weights->dtype() != dtype || weights->rank() != 2)
      return;
    bool transposed = gemm.getTransB() != 0;
    int64_t rows = weights->shape()[0], cols = weights->shape()[1];
    if ((transposed ? rows : cols) != columns)
      return;
    std::optional<Affine> affine = affineOf(norm, columns, dtype);
    if (!affine)
      return;
    // C broadcast to one row: a scalar, [J] or [1, J].
    std::vector<double> bias(columns, 0.0);
    if (gemm.getC()) {
      std::optional<Tensor> given = pfvm::readConstant(gemm.getC());
      if (!given || given->dtype() != dtype)
        return;
      bool scalar = given->numElements() == 1;
      bool row = given->numElements() == columns &&
                 (given->rank() == 1 ||
                  (given->rank() == 2 && given->shape()[0] == 1));
      if (!scalar && !row)
        return;
      for (int64_t j = 0; j < columns; ++j)
        bias[j] = given->elementAsDouble(scalar ? 0 : j);
    }
    double beta = gemm.getBeta().convertToFloat();
    Tensor scaled = scaledWeights(*weights, affine->s, transposed ? cols : 1);
    std::vector<double> shifted(columns);
    for (int64_t j = 0; j < columns; ++j)
      shifted[j] = beta * bias[j] * affine->s[j] + affine->t[j];

    OpBuilder builder(gemm);
    std::string weightName = nameFor(gemm.getB(), "gemm.weight");
    Value newWeights =
        createWeight(builder, gemm.getB().getLoc(), scaled, weightName);
    Value newBias = createWeight(
        builder, norm.getB().getLoc(), tensorOf(dtype, {columns}, shifted),
        gemm.getC() ? nameFor(gemm.getC(), weightName + "_bias")
                    : weightName + "_bias");
    Operation *folded = builder.clone(*gemm);
    folded->setLoc(
        FusedLoc::get(&getContext(), {gemm.getLoc(), norm.getLoc()}));
    folded->setOperand(1, newWeights);
    if (gemm.getC())
      folded->setOperand(2, newBias);
    else
      folded->insertOperands(2, newBias);
    folded->setAttr("beta", builder.getF32FloatAttr(1.0f));
    finish(norm, gemm, folded);
  }

  void finish(onnx::BatchNormalizationOp norm, Operation *producer,
              Operation *folded) {
    llvm::SmallVector<Value> replaced(producer->getOperands().drop_front());
    norm.getY().replaceAllUsesWith(folded->getResult(0));
    norm.erase();
    producer->erase();
    // The old weights and bias had no other user: they go, and the new
    // ones carry their names.
    for (Value old : replaced)
      if (Operation *constant = old.getDefiningOp();
          constant && old.use_empty() &&
          llvm::isa<onnx::InitializerOp, onnx::ConstantOp>(constant))
        constant->erase();
  }
};

} // namespace
