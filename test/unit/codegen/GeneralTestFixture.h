//===- GeneralTestFixture.h - The general kernel tests' helpers -*- C++ -*-===//
//
// GeneralTest.cpp and GeneralMoreTest.cpp build their cases alike:
// attributes by kind, random single tensors, tensors rounded as the
// device's half holds them, and the pfvm:cpu reference of one node.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TEST_UNIT_CODEGEN_GENERALTESTFIXTURE_H
#define MNCC_TEST_UNIT_CODEGEN_GENERALTESTFIXTURE_H

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include <map>
#include <string>
#include <vector>

namespace mncc::codegen::testing::general_tests {

inline reference::Attribute intAttr(int64_t value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Int;
  a.i = value;
  return a;
}
inline reference::Attribute floatAttr(float value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Float;
  a.f = value;
  return a;
}
inline reference::Attribute intsAttr(std::vector<int64_t> values) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Ints;
  a.ints = std::move(values);
  return a;
}
inline reference::Attribute stringAttr(std::string value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::String;
  a.s = std::move(value);
  return a;
}

/// A single tensor of uniform values in [low, high).
inline reference::Tensor rnd(std::vector<int64_t> shape, uint64_t seed,
                             float low = -1, float high = 1) {
  return randomTensor(std::move(shape), seed, low, high);
}

/// The tensor as the device's half holds it, so that the reference sees
/// the values the kernel does.
inline reference::Tensor roundedToHalf(const reference::Tensor &tensor) {
  if (tensor.dtype() != reference::DType::Float32)
    return tensor;
  std::vector<uint16_t> bits(size_t(tensor.numElements()));
  reference::Tensor result(reference::DType::Float32, tensor.shape());
  hostToDevice(reference::DType::Float32, tensor.raw(), DeviceType::Half,
               bits.data(), tensor.numElements());
  deviceToHost(DeviceType::Half, bits.data(), reference::DType::Float32,
               result.raw(), tensor.numElements());
  return result;
}

/// The outputs pfvm:cpu gives for one node, or why it refused.
struct ReferenceRun {
  std::vector<reference::Tensor> outputs;
  bool ok = false;
  std::string message;
};

inline ReferenceRun
runReference(const std::string &opType,
             const std::vector<reference::Tensor> &inputs,
             const std::map<std::string, reference::Attribute> &attributes,
             const std::vector<bool> &omitted, size_t outputs) {
  std::vector<reference::Value> values;
  for (const reference::Tensor &tensor : inputs)
    values.push_back(reference::Value(tensor));
  reference::SimpleKernelContext context(opType, values, outputs);
  for (size_t i = 0; i < omitted.size(); ++i)
    if (omitted[i])
      context.omitInput(i);
  for (const auto &[name, value] : attributes)
    context.setAttribute(name, value);
  reference::Status status = context.run();
  ReferenceRun result;
  result.ok = status.ok();
  result.message = status.message();
  if (result.ok)
    for (size_t o = 0; o < outputs; ++o)
      result.outputs.push_back(context.outputTensor(o));
  return result;
}

} // namespace mncc::codegen::testing::general_tests

#endif // MNCC_TEST_UNIT_CODEGEN_GENERALTESTFIXTURE_H
