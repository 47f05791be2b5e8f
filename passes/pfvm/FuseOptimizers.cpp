//===- FuseOptimizers.cpp - One optimizer node per parameter update -------===//
//
// Two things become one node of ai.onnx.preview.training per parameter:
//
// - The element-wise chains frameworks write for an optimizer step
//   (operands of Add and Mul in either order; Gr is G, or G + nc * X):
//
//     Momentum  V' = alpha V + beta Gr            X' = X - R V'
//     Nesterov  V' = alpha V + beta Gr            X' = X - R (Gr + alpha V')
//     Adam      V' = alpha V + (1 - alpha) Gr
//               H' = beta H + (1 - beta) Gr Gr    X' = X - R V' / (sqrt(H') +
//               eps)
//     Adagrad   H' = H + Gr Gr                    X' = X - R Gr / (sqrt(H') +
//     eps)
//
//   Each is the training operator's formula with T = 1 (Momentum: beta is
//   used from the second step on) or T = 0 (Adam without bias correction,
//   Adagrad without decay), which the fused node gets as a constant.
// - A training operator that updates several tensors, split per tensor.
//
// The coefficients must be float32 values (the operators' attributes are).
// Every intermediate value of a chain must be used only inside it, except
// the new state (V', H'), which the fused node returns.
//
//===----------------------------------------------------------------------===//

#include "ConstantUtils.h"

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace mncc::pfvm {
#define GEN_PASS_DEF_FUSEOPTIMIZERS
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// A float32-representable scalar constant.
std::optional<float> scalarCoefficient(Value value) {
  auto elements = llvm::dyn_cast_or_null<DenseFPElementsAttr>(
      onnx::getConstantValue(value));
  if (!elements || elements.getNumElements() != 1)
    return std::nullopt;
  double coefficient =
      (*elements.getValues<APFloat>().begin()).convertToDouble();
  float narrow = static_cast<float>(coefficient);
  if (static_cast<double>(narrow) != coefficient)
    return std::nullopt;
  return narrow;
}

/// Whether `value` is a tensor of one element of a float type (R).
bool isScalarTensor(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1 &&
         llvm::isa<FloatType>(type.getElementType());
}

/// What a chain was made of, to check and erase.
struct Chain {
  llvm::SetVector<Operation *> ops;
  /// Values of the chain that may have uses outside it (the new state).
  llvm::SmallVector<Value> outputs;

  /// The defining op of `value` when it is a `Op`; recorded.
  template <typename Op> Op take(Value value) {
    auto op = value.getDefiningOp<Op>();
    if (op)
      ops.insert(op);
    return op;
  }
};

/// c * x or x * c, c a float32 scalar constant.
bool matchScaled(Value value, Chain &chain, float &coefficient, Value &x) {
  auto mul = value.getDefiningOp<onnx::MulOp>();
  if (!mul)
    return false;
  for (auto [c, other] :
       {std::pair{mul.getA(), mul.getB()}, std::pair{mul.getB(), mul.getA()}})
    if (std::optional<float> scalar = scalarCoefficient(c)) {
      if (other.getType() == c.getType() && isScalarTensor(other) &&
          scalarCoefficient(other))
        continue; // both constants: not a scaled tensor
      chain.ops.insert(mul);
      coefficient = *scalar;
      x = other;
      return true;
    }
  return false;
}

/// Gr = G, or G + nc * X (either order); sets `gradient` and `norm`.
void matchRegularized(Value value, Value param, Chain &chain, Value &gradient,
                      float &norm) {
  gradient = value;
  norm = 0.0f;
  auto add = value.getDefiningOp<onnx::AddOp>();
  if (!add)
    return;
  for (auto [term, other] :
       {std::pair{add.getA(), add.getB()}, std::pair{add.getB(), add.getA()}}) {
    Chain inner;
    float coefficient;
    Value x;
    if (matchScaled(term, inner, coefficient, x) && x == param &&
        other.getType() == param.getType()) {
      chain.ops.insert(add);
      chain.ops.insert(inner.ops.begin(), inner.ops.end());
      gradient = other;
      norm = coefficient;
      return;
    }
  }
}

/// a * P + b * Q (b may be 1: Q alone), either order; with `gradientHint`,
/// Q must be it.
struct Blend {
  float alpha, beta;
  Value state, gradient;
};

std::optional<Blend> matchBlend(Value value, Value gradientHint, Chain &chain) {
  auto add = value.getDefiningOp<onnx::AddOp>();
  if (!add)
    return std::nullopt;
  std::optional<Blend> found;
  for (auto [stateTerm, gradientTerm] :
       {std::pair{add.getA(), add.getB()}, std::pair{add.getB(), add.getA()}}) {
    Chain inner;
    Blend blend;
    if (!matchScaled(stateTerm, inner, blend.alpha, blend.state))
      continue;
    if (!matchScaled(gradientTerm, inner, blend.beta, blend.gradient)) {
      blend.beta = 1.0f;
      blend.gradient = gradientTerm;
    }
    if (gradientHint && blend.gradient != gradientHint)
      continue;
    // The state is the tensor the model keeps: prefer a graph input or an
    // initializer as the state when both readings fit (they compute the
    // same: a V + b G is symmetric).
    bool stateIsKept = llvm::isa<BlockArgument>(blend.state) ||
                       blend.state.getDefiningOp<onnx::InitializerOp>();
    if (!found || stateIsKept) {
      found = blend;
      chain.ops.insert(add);
      chain.ops.insert(inner.ops.begin(), inner.ops.end());
      if (stateIsKept)
        break;
    }
  }
  return found;
}

/// Sqrt(H') + eps (either order).
bool matchSqrtPlusEpsilon(Value value, Chain &chain, Value &squared,
                          float &epsilon) {
  auto add = value.getDefiningOp<onnx::AddOp>();
  if (!add)
    return false;
  for (auto [root, other] :
       {std::pair{add.getA(), add.getB()}, std::pair{add.getB(), add.getA()}}) {
    auto sqrt = root.getDefiningOp<onnx::SqrtOp>();
    std::optional<float> constant = scalarCoefficient(other);
    if (sqrt && constant) {
      chain.ops.insert(add);
      chain.ops.insert(sqrt);
      squared = sqrt.getX();
      epsilon = *constant;
      return true;
    }
  }
  return false;
}

/// Gr * Gr.
bool matchSquare(Value value, Chain &chain, Value &gradient) {
  auto mul = value.getDefiningOp<onnx::MulOp>();
  if (!mul || mul.getA() != mul.getB())
    return false;
  chain.ops.insert(mul);
  gradient = mul.getA();
  return true;
}

/// c * (Gr * Gr), (Gr * Gr) * c, or (c * Gr) * Gr in any order.
bool matchScaledSquare(Value value, Chain &chain, float &coefficient,
                       Value &gradient) {
  Chain inner;
  Value squared;
  if (matchScaled(value, inner, coefficient, squared) &&
      matchSquare(squared, inner, gradient)) {
    chain.ops.insert(inner.ops.begin(), inner.ops.end());
    return true;
  }
  auto mul = value.getDefiningOp<onnx::MulOp>();
  if (!mul)
    return false;
  for (auto [scaled, other] :
       {std::pair{mul.getA(), mul.getB()}, std::pair{mul.getB(), mul.getA()}}) {
    Chain part;
    Value x;
    if (matchScaled(scaled, part, coefficient, x) && x == other) {
      chain.ops.insert(mul);
      chain.ops.insert(part.ops.begin(), part.ops.end());
      gradient = x;
      return true;
    }
  }
  return false;
}

/// Whether `value` is 1 - `coefficient` up to the rounding of 1 in
/// float32 (2^-22): a framework writes both constants rounded from its own
/// doubles (0.999 and 0.001), and 0.001f is not 1 - 0.999f. The fused node
/// takes 1 - coefficient, which then differs from the chain's constant by
/// that rounding (relative 1.3e-5 for 0.001).
bool isOneMinus(float value, float coefficient) {
  double expected = 1.0 - static_cast<double>(coefficient);
  return std::abs(static_cast<double>(value) - expected) <= 0x1p-22;
}

/// A tensor the model keeps across steps: a graph input or an initializer
/// of the function's body.
bool isKept(Value value) {
  if (auto argument = llvm::dyn_cast<BlockArgument>(value))
    return llvm::isa<func::FuncOp>(argument.getOwner()->getParentOp());
  return static_cast<bool>(value.getDefiningOp<onnx::InitializerOp>());
}

/// Whether `value` has a use outside `chain`: a new optimizer state is
/// returned or kept, an intermediate of an ordinary expression is not.
bool usedOutside(Value value, const llvm::SetVector<Operation *> &ops) {
  return llvm::any_of(value.getUsers(),
                      [&](Operation *user) { return !ops.contains(user); });
}

class FuseOptimizersPass
    : public pfvm::impl::FuseOptimizersBase<FuseOptimizersPass> {
public:
  void runOnOperation() override {
    counts.clear();
    llvm::SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (llvm::isa<onnx::SubOp, onnx::MomentumOp, onnx::AdamOp,
                    onnx::AdagradOp>(op))
        candidates.push_back(op);
    });
    for (Operation *op : candidates) {
      if (auto sub = llvm::dyn_cast<onnx::SubOp>(op))
        fuseChain(sub);
      else
        split(op);
    }
  }

private:
  /// Splits a training operator over n tensors into n operators.
  void split(Operation *op) {
    unsigned inGroups = llvm::isa<onnx::AdamOp>(op) ? 4 : 3;
    unsigned outGroups = inGroups - 1;
    if (op->getNumOperands() < 2 + inGroups ||
        (op->getNumOperands() - 2) % inGroups)
      return;
    unsigned n = (op->getNumOperands() - 2) / inGroups;
    if (n < 2 || op->getNumResults() != n * outGroups)
      return;
    OpBuilder builder(op);
    llvm::SmallVector<Value> replacements(op->getNumResults());
    for (unsigned k = 0; k < n; ++k) {
      llvm::SmallVector<Value> operands = {op->getOperand(0),
                                           op->getOperand(1)};
      for (unsigned g = 0; g < inGroups; ++g)
        operands.push_back(op->getOperand(2 + g * n + k));
      llvm::SmallVector<Type> types;
      for (unsigned g = 0; g < outGroups; ++g)
        types.push_back(op->getResult(g * n + k).getType());
      OperationState state(op->getLoc(), op->getName());
      state.addOperands(operands);
      state.addTypes(types);
      state.addAttributes(op->getAttrs());
      Operation *part = builder.create(state);
      for (unsigned g = 0; g < outGroups; ++g)
        replacements[g * n + k] = part->getResult(g);
    }
    op->replaceAllUsesWith(replacements);
    op->erase();
  }

  /// Whether every value the chain computes is used only inside it, but
  /// `root` and the chain's outputs.
  static bool selfContained(const Chain &chain, Operation *root) {
    for (Operation *op : chain.ops) {
      if (op == root)
        continue;
      for (Value result : op->getResults()) {
        if (llvm::is_contained(chain.outputs, result))
          continue;
        for (Operation *user : result.getUsers())
          if (user != root && !chain.ops.contains(user))
            return false;
      }
    }
    return true;
  }

  void fuseChain(onnx::SubOp sub) {
    Value param = sub.getA();
    auto type = llvm::dyn_cast<RankedTensorType>(param.getType());
    if (!type || !type.hasStaticShape() || sub.getType() != type ||
        !llvm::isa<FloatType>(type.getElementType()) ||
        !(type.getElementType().isF32() || type.getElementType().isF64()))
      return;
    auto step = sub.getB().getDefiningOp<onnx::MulOp>();
    if (!step)
      return;
    // R * U: R a one-element float tensor, U of the parameter's type.
    for (auto [rate, update] : {std::pair{step.getA(), step.getB()},
                                std::pair{step.getB(), step.getA()}}) {
      if (!isScalarTensor(rate) || update.getType() != type ||
          llvm::cast<ShapedType>(rate.getType()).getElementType() !=
              type.getElementType())
        continue;
      if (tryMomentum(sub, step, rate, update, param) ||
          tryAdaptive(sub, step, rate, update, param))
        return;
    }
  }

  /// The constant T of the fused nodes, one per block and value, at the
  /// start of the block.
  Value createCount(OpBuilder &builder, Location loc, int64_t count) {
    Block *block = builder.getInsertionBlock();
    Value &constant = counts[{block, count}];
    if (!constant) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(block);
      constant = pfvm::createIntegerConstant(builder, loc, {count},
                                             builder.getI64Type(), {});
    }
    return constant;
  }

  llvm::DenseMap<std::pair<Block *, int64_t>, Value> counts;

  /// Replaces `sub` (X') and the chain's outputs by the fused node's
  /// results and erases the chain.
  void replace(Chain &chain, onnx::SubOp sub, Operation *fused) {
    sub.getResult().replaceAllUsesWith(fused->getResult(0));
    for (auto [index, output] : llvm::enumerate(chain.outputs))
      output.replaceAllUsesWith(fused->getResult(index + 1));
    chain.ops.insert(sub);
    // Users first: erase in reverse order of the block.
    llvm::SmallVector<Operation *> ops(chain.ops.begin(), chain.ops.end());
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
    // The chain's coefficients go with it when nothing else reads them.
    llvm::SetVector<Operation *> constants;
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp();
            producer && llvm::isa<onnx::ConstantOp>(producer))
          constants.insert(producer);
    for (Operation *op : ops)
      if (op->use_empty())
        op->erase();
    for (Operation *constant : constants)
      if (constant->use_empty())
        constant->erase();
  }

  bool sameBlock(const Chain &chain, onnx::SubOp sub) {
    return llvm::all_of(chain.ops, [&](Operation *op) {
      return op->getBlock() == sub->getBlock();
    });
  }

  bool tryMomentum(onnx::SubOp sub, onnx::MulOp step, Value rate, Value update,
                   Value param) {
    Type type = param.getType();
    Chain chain;
    chain.ops.insert(step);
    // Nesterov: U = Gr + alpha V'.
    bool nesterov = false;
    Value newState = update, nesterovGradient;
    float nesterovAlpha = 0;
    if (auto add = update.getDefiningOp<onnx::AddOp>()) {
      for (auto [gradientTerm, stateTerm] :
           {std::pair{add.getA(), add.getB()},
            std::pair{add.getB(), add.getA()}}) {
        Chain inner;
        Value scaled;
        if (matchScaled(stateTerm, inner, nesterovAlpha, scaled) &&
            scaled.getDefiningOp<onnx::AddOp>() && scaled.getType() == type &&
            gradientTerm.getType() == type) {
          Chain probe;
          if (!matchBlend(scaled, gradientTerm, probe))
            continue;
          nesterov = true;
          newState = scaled;
          nesterovGradient = gradientTerm;
          chain.ops.insert(add);
          chain.ops.insert(inner.ops.begin(), inner.ops.end());
          break;
        }
      }
    }
    std::optional<Blend> blend =
        matchBlend(newState, nesterov ? nesterovGradient : Value(), chain);
    if (!blend || blend->state.getType() != type ||
        blend->gradient.getType() != type)
      return false;
    if (nesterov && nesterovAlpha != blend->alpha)
      return false;
    Value gradient;
    float norm;
    matchRegularized(blend->gradient, param, chain, gradient, norm);
    if (gradient.getType() != type || blend->state == param ||
        gradient == param || !isKept(param) || !isKept(blend->state) ||
        !usedOutside(newState, chain.ops))
      return false;
    chain.outputs.push_back(newState);
    if (!sameBlock(chain, sub) || !selfContained(chain, sub))
      return false;

    OpBuilder builder(sub);
    Location loc = sub.getLoc();
    OperationState state(loc, onnx::MomentumOp::getOperationName());
    state.addOperands(
        {rate, createCount(builder, loc, 1), param, gradient, blend->state});
    state.addTypes({type, type});
    state.addAttribute("alpha", builder.getF32FloatAttr(blend->alpha));
    state.addAttribute("beta", builder.getF32FloatAttr(blend->beta));
    state.addAttribute(
        "mode", builder.getStringAttr(nesterov ? "nesterov" : "standard"));
    state.addAttribute("norm_coefficient", builder.getF32FloatAttr(norm));
    replace(chain, sub, builder.create(state));
    return true;
  }

  /// Adam and Adagrad: U = N / (sqrt(H') + eps).
  bool tryAdaptive(onnx::SubOp sub, onnx::MulOp step, Value rate, Value update,
                   Value param) {
    Type type = param.getType();
    Chain chain;
    chain.ops.insert(step);
    auto div = chain.take<onnx::DivOp>(update);
    if (!div)
      return false;
    Value squared;
    float epsilon;
    if (!matchSqrtPlusEpsilon(div.getB(), chain, squared, epsilon) ||
        squared.getType() != type)
      return false;
    auto accumulate = squared.getDefiningOp<onnx::AddOp>();
    if (!accumulate)
      return false;
    chain.ops.insert(accumulate);

    // Adagrad: H' = H + Gr Gr, N = Gr.
    for (auto [state, term] :
         {std::pair{accumulate.getA(), accumulate.getB()},
          std::pair{accumulate.getB(), accumulate.getA()}}) {
      Chain adagrad = chain;
      Value regularized;
      if (!matchSquare(term, adagrad, regularized) ||
          regularized != div.getA() || state.getType() != type)
        continue;
      Value gradient;
      float norm;
      matchRegularized(regularized, param, adagrad, gradient, norm);
      if (gradient.getType() != type || state == param || gradient == param ||
          !isKept(param) || !isKept(state) ||
          !usedOutside(squared, adagrad.ops))
        continue;
      adagrad.outputs.push_back(squared);
      if (!sameBlock(adagrad, sub) || !selfContained(adagrad, sub))
        continue;
      OpBuilder builder(sub);
      Location loc = sub.getLoc();
      OperationState fused(loc, onnx::AdagradOp::getOperationName());
      fused.addOperands(
          {rate, createCount(builder, loc, 0), param, gradient, state});
      fused.addTypes({type, type});
      fused.addAttribute("decay_factor", builder.getF32FloatAttr(0.0f));
      fused.addAttribute("epsilon", builder.getF32FloatAttr(epsilon));
      fused.addAttribute("norm_coefficient", builder.getF32FloatAttr(norm));
      replace(adagrad, sub, builder.create(fused));
      return true;
    }

    // Adam: H' = beta H + (1 - beta) Gr Gr, N = V' = alpha V + (1 - alpha) Gr.
    for (auto [stateTerm, term] :
         {std::pair{accumulate.getA(), accumulate.getB()},
          std::pair{accumulate.getB(), accumulate.getA()}}) {
      Chain adam = chain;
      float beta, oneMinusBeta;
      Value squaredState, regularized;
      if (!matchScaled(stateTerm, adam, beta, squaredState) ||
          !matchScaledSquare(term, adam, oneMinusBeta, regularized) ||
          !isOneMinus(oneMinusBeta, beta) || squaredState.getType() != type)
        continue;
      std::optional<Blend> blend = matchBlend(div.getA(), regularized, adam);
      if (!blend || blend->state.getType() != type ||
          !isOneMinus(blend->beta, blend->alpha))
        continue;
      Value gradient;
      float norm;
      matchRegularized(regularized, param, adam, gradient, norm);
      if (gradient.getType() != type || gradient == param ||
          blend->state == param || squaredState == param || !isKept(param) ||
          !isKept(blend->state) || !isKept(squaredState) ||
          !usedOutside(div.getA(), adam.ops) || !usedOutside(squared, adam.ops))
        continue;
      adam.outputs.push_back(div.getA());
      adam.outputs.push_back(squared);
      if (!sameBlock(adam, sub) || !selfContained(adam, sub))
        continue;
      OpBuilder builder(sub);
      Location loc = sub.getLoc();
      OperationState fused(loc, onnx::AdamOp::getOperationName());
      fused.addOperands({rate, createCount(builder, loc, 0), param, gradient,
                         blend->state, squaredState});
      fused.addTypes({type, type, type});
      fused.addAttribute("alpha", builder.getF32FloatAttr(blend->alpha));
      fused.addAttribute("beta", builder.getF32FloatAttr(beta));
      fused.addAttribute("epsilon", builder.getF32FloatAttr(epsilon));
      fused.addAttribute("norm_coefficient", builder.getF32FloatAttr(norm));
      fused.addAttribute("norm_coefficient_post",
                         builder.getF32FloatAttr(0.0f));
      replace(adam, sub, builder.create(fused));
      return true;
    }
    return false;
  }
};

} // namespace
