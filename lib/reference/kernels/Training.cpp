//===- Training.cpp - Adagrad, Momentum, Adam (ai.onnx.preview.training) -===//
//
// One optimizer step, following the pseudo code of each schema. Every
// operator takes R (learning rate) and T (update count), then groups of n
// tensors (X..., G..., and the optimizer's state), and returns X_new...
// followed by the new state groups. Arithmetic is in double, rounded once
// to the element type at the end.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <cmath>
#include <type_traits>

using namespace mncc::reference;

namespace {

constexpr const char *kDomain = "ai.onnx.preview.training";

/// The inputs shared by the three optimizers, checked.
struct Step {
  double rate = 0;
  int64_t count = 0;
  size_t numTensors = 0; // n, the tensors optimized
  DType dtype = DType::Undefined;
  std::vector<const Tensor *> inputs; // the groups, in input order
};

/// Reads R, T and `groups` groups of n tensors of one shape and element
/// type (float or double).
Status readStep(const KernelContext &context, const char *opName, size_t groups,
                Step &step) {
  std::string op(opName);
  size_t numInputs = context.numInputs();
  if (numInputs < 2 + groups || (numInputs - 2) % groups != 0)
    return Status::error(op + ": " + std::to_string(numInputs) +
                         " inputs do not make R, T and " +
                         std::to_string(groups) + " equal groups");
  const Tensor *rate = context.inputTensor(0);
  if (!rate || rate->numElements() != 1 ||
      (rate->dtype() != DType::Float32 && rate->dtype() != DType::Float64))
    return Status::error(op + ": R must be a single float or double");
  const Tensor *count = context.inputTensor(1);
  if (!count || count->numElements() != 1 || count->dtype() != DType::Int64)
    return Status::error(op + ": T must be a single int64");
  step.rate = rate->elementAsDouble(0);
  step.count = count->data<int64_t>()[0];
  step.numTensors = (numInputs - 2) / groups;
  for (size_t i = 2; i < numInputs; ++i) {
    const Tensor *tensor = context.inputTensor(i);
    if (!tensor)
      return Status::error(op + ": input " + std::to_string(i) +
                           " must be a tensor");
    if (tensor->dtype() != DType::Float32 && tensor->dtype() != DType::Float64)
      return Status::error(op + ": input " + std::to_string(i) + " is " +
                           dtypeName(tensor->dtype()) +
                           ", not float or double");
    // Tensor i belongs with the X at the same position within its group.
    const Tensor *x = step.inputs.size() >= step.numTensors
                          ? step.inputs[(i - 2) % step.numTensors]
                          : tensor;
    if (tensor->shape() != x->shape() || tensor->dtype() != x->dtype())
      return Status::error(op + ": input " + std::to_string(i) + " (" +
                           dtypeName(tensor->dtype()) + " " +
                           shapeToString(tensor->shape()) +
                           ") does not match its X (" + dtypeName(x->dtype()) +
                           " " + shapeToString(x->shape()) + ")");
    step.inputs.push_back(tensor);
  }
  return Status::success();
}

/// Runs update(in, out) for every element of tensor k of the step, where
/// in[g] is the element of group g and out[g] receives output group g.
template <typename Update>
void forEachElement(KernelContext &context, const Step &step, size_t k,
                    size_t numOutputGroups, Update &&update) {
  const Tensor &x = *step.inputs[k];
  size_t groups = step.inputs.size() / step.numTensors;
  std::vector<Tensor> outputs;
  for (size_t g = 0; g < numOutputGroups; ++g)
    outputs.emplace_back(x.dtype(), x.shape());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::vector<double> in(groups), out(numOutputGroups);
    for (int64_t e = 0, n = x.numElements(); e < n; ++e) {
      for (size_t g = 0; g < groups; ++g)
        in[g] = step.inputs[g * step.numTensors + k]->data<T>()[e];
      update(in, out);
      for (size_t g = 0; g < numOutputGroups; ++g)
        outputs[g].data<T>()[e] = static_cast<T>(out[g]);
    }
  };
  if (x.dtype() == DType::Float32)
    run(float{});
  else
    run(double{});
  for (size_t g = 0; g < numOutputGroups; ++g) {
    size_t index = g * step.numTensors + k;
    if (context.wantsOutput(index))
      context.setOutput(index, Value(std::move(outputs[g])));
  }
}

/// Adagrad: inputs R, T, X..., G..., H...; outputs X_new..., H_new....
Status adagradKernel(KernelContext &context) {
  Step step;
  if (Status status = readStep(context, "Adagrad", 3, step); !status)
    return status;
  double decay = context.getFloat("decay_factor", 0.0f);
  double epsilon = context.getFloat("epsilon", 1e-6f);
  double norm = context.getFloat("norm_coefficient", 0.0f);
  double r = step.rate / (1 + step.count * decay);
  for (size_t k = 0; k < step.numTensors; ++k)
    forEachElement(context, step, k, 2, [&](const auto &in, auto &out) {
      double x = in[0], g = in[1], h = in[2];
      double regularized = norm * x + g;
      double hNew = h + regularized * regularized;
      out[0] = x - r * regularized / (std::sqrt(hNew) + epsilon);
      out[1] = hNew;
    });
  return Status::success();
}

/// Momentum: inputs R, T, X..., G..., V...; outputs X_new..., V_new....
Status momentumKernel(KernelContext &context) {
  Step step;
  if (Status status = readStep(context, "Momentum", 3, step); !status)
    return status;
  for (const char *name : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!context.hasAttribute(name))
      return Status::error(std::string("Momentum: the ") + name +
                           " attribute is required");
  double alpha = context.getFloat("alpha", 0.0f);
  double beta = context.getFloat("beta", 0.0f);
  double norm = context.getFloat("norm_coefficient", 0.0f);
  std::string mode = context.getString("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return Status::error("Momentum: mode '" + mode +
                         "' is neither 'standard' nor 'nesterov'");
  bool nesterov = mode == "nesterov";
  // The first step (T == 0) takes the whole gradient.
  double betaAdjusted = step.count > 0 ? beta : 1.0;
  double rate = step.rate;
  for (size_t k = 0; k < step.numTensors; ++k)
    forEachElement(context, step, k, 2, [&](const auto &in, auto &out) {
      double x = in[0], g = in[1], v = in[2];
      double regularized = norm * x + g;
      double vNew = alpha * v + betaAdjusted * regularized;
      out[0] =
          nesterov ? x - rate * (regularized + alpha * vNew) : x - rate * vNew;
      out[1] = vNew;
    });
  return Status::success();
}

/// Adam: inputs R, T, X..., G..., V..., H...; outputs X_new..., V_new...,
/// H_new....
Status adamKernel(KernelContext &context) {
  Step step;
  if (Status status = readStep(context, "Adam", 4, step); !status)
    return status;
  double alpha = context.getFloat("alpha", 0.9f);
  double beta = context.getFloat("beta", 0.999f);
  double epsilon = context.getFloat("epsilon", 1e-6f);
  double norm = context.getFloat("norm_coefficient", 0.0f);
  double normPost = context.getFloat("norm_coefficient_post", 0.0f);
  double t = static_cast<double>(step.count);
  // Bias correction of the two moving averages, from the second step on.
  double rate = step.count > 0 ? step.rate * std::sqrt(1 - std::pow(beta, t)) /
                                     (1 - std::pow(alpha, t))
                               : step.rate;
  for (size_t k = 0; k < step.numTensors; ++k)
    forEachElement(context, step, k, 3, [&](const auto &in, auto &out) {
      double x = in[0], g = in[1], v = in[2], h = in[3];
      double regularized = norm * x + g;
      double vNew = alpha * v + (1 - alpha) * regularized;
      double hNew = beta * h + (1 - beta) * regularized * regularized;
      double xNew = x - rate * (vNew / (std::sqrt(hNew) + epsilon));
      out[0] = (1 - normPost) * xNew;
      out[1] = vNew;
      out[2] = hNew;
    });
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL(kDomain, Adagrad, adagradKernel);
MNCC_REFERENCE_KERNEL(kDomain, Momentum, momentumKernel);
MNCC_REFERENCE_KERNEL(kDomain, Adam, adamKernel);
