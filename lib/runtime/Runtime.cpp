//===- Runtime.cpp - The device registry, tolerances, comparison ----------===//

#include "mncc/runtime/Runtime.h"

#include <cmath>
#include <sstream>

using namespace mncc;
using namespace mncc::runtime;

Executable::~Executable() = default;

bool Executable::runValues(const std::vector<reference::Value> &inputs,
                           std::vector<reference::Value> &outputs,
                           const RunOptions &options, RunProfile *profile,
                           std::string &error) {
  std::vector<reference::Tensor> tensors, results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isTensor()) {
      error = "input " + std::to_string(i) +
              " is a sequence or optional; the device takes tensors only";
      return false;
    }
    tensors.push_back(inputs[i].tensor);
  }
  if (!run(tensors, results, options, profile, error))
    return false;
  outputs.clear();
  for (reference::Tensor &tensor : results)
    outputs.push_back(reference::Value(std::move(tensor)));
  return true;
}

const std::vector<DeviceInfo> &runtime::listDevices() {
  static const std::vector<DeviceInfo> devices = {
      {"pfvm:cpu", "the host reference executor (pfvm:cpu kernels)", "model"},
      {"emu2", "MN-Core 2 on the emulator (mncc-sim, in process)",
       "codegen_dir"},
  };
  return devices;
}

const DeviceInfo *runtime::findDevice(const std::string &name) {
  for (const DeviceInfo &device : listDevices())
    if (name == device.name)
      return &device;
  return nullptr;
}

Tolerance runtime::toleranceFor(const std::string &floatDtype,
                                reference::DType referenceType) {
  // docs/codegen.md, "Tolerances": the rounding of the device formats the
  // float_dtype puts into the computation, with room for its accumulation
  // through a network's layers.
  Tolerance device = floatDtype == "double"  ? Tolerance{1e-9, 1e-9}
                     : floatDtype == "float" ? Tolerance{1e-4, 1e-4}
                     : floatDtype == "half"  ? Tolerance{6e-2, 6e-2}
                                             : Tolerance{3e-2, 3e-2};
  // pfvm:cpu computes in the model's own types: a float32 output carries
  // single roundings however precisely the device computed it.
  bool referenceCoarser = referenceType != reference::DType::Float64 &&
                          reference::isFloatingPoint(referenceType);
  if (referenceCoarser && device.rtol < 1e-4)
    return {1e-4, 1e-4};
  return device;
}

Tolerance runtime::followingToleranceFor(const std::string &floatDtype,
                                         reference::DType referenceType) {
  // docs/codegen.md, "Tolerances": the reference rounds as the program
  // does and sums the matrix unit's blocks in its order, so ResNet-18/50,
  // MobileNetV2 and SqueezeNet agree to the bit. What is left are sums
  // in another order (the split plan's partial sums, the general kernel's
  // reductions, MathLib's few ulps) and the roundings they flip: a unit in
  // the last place of a half or single, which the next product's block
  // floats may turn into a step of the block's grid (half: 2^-8 of the
  // block's largest; pseudo-single: 2^-17). Two such steps for half, four
  // for pseudo-single.
  if (floatDtype == "mixed" || floatDtype == "half" || floatDtype.empty())
    return {0x1p-7, 0x1p-7};
  if (floatDtype == "float")
    return {0x1p-15, 0x1p-15};
  // double: no block floats to follow; pfvm:cpu's own roundings remain.
  return toleranceFor(floatDtype, referenceType);
}

Comparison runtime::compare(const reference::Tensor &actual,
                            const reference::Tensor &expected,
                            const Tolerance &tolerance) {
  Comparison result;
  if (actual.shape() != expected.shape() ||
      actual.dtype() != expected.dtype()) {
    result.passed = false;
    result.firstFailure = "the shapes or element types differ";
    return result;
  }
  int64_t count = expected.numElements();
  double scale = 0;
  for (int64_t i = 0; i < count; ++i) {
    double b = expected.elementAsDouble(i);
    if (std::isfinite(b))
      scale = std::max(scale, std::fabs(b));
  }
  double atol = tolerance.absoluteScale * scale;
  for (int64_t i = 0; i < count; ++i) {
    double a = actual.elementAsDouble(i), b = expected.elementAsDouble(i);
    bool ok;
    if (!std::isfinite(b) || !std::isfinite(a)) {
      // MN-Core has no NaN: a NaN of the host is an infinity on the device.
      ok = (std::isnan(b) && std::isinf(a)) || a == b ||
           (std::isnan(a) && std::isnan(b));
    } else {
      double diff = std::fabs(a - b);
      result.maxAbs = std::max(result.maxAbs, diff);
      if (b != 0)
        result.maxRel = std::max(result.maxRel, diff / std::fabs(b));
      ok = diff <= atol + tolerance.rtol * std::fabs(b);
    }
    if (!ok && result.passed) {
      result.passed = false;
      std::ostringstream os;
      os << "element " << i << ": " << a << " vs " << b;
      result.firstFailure = os.str();
    }
  }
  return result;
}
