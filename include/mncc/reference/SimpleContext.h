//===- SimpleContext.h - A KernelContext over plain values ----*- C++ -*-===//
//
// Runs one kernel on given inputs and attributes: for unit tests of
// kernels, and for folding a single node at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_SIMPLECONTEXT_H
#define MNCC_REFERENCE_SIMPLECONTEXT_H

#include "mncc/reference/Kernel.h"

#include <map>

namespace mncc::reference {

class SimpleKernelContext : public KernelContext {
public:
  SimpleKernelContext(std::string opType, std::vector<Value> inputs,
                      size_t numOutputs)
      : opType_(std::move(opType)), inputs_(std::move(inputs)),
        present_(inputs_.size(), true), outputs_(numOutputs) {}

  /// Marks input `index` as omitted (an empty name in ONNX).
  SimpleKernelContext &omitInput(size_t index) {
    present_[index] = false;
    return *this;
  }
  /// Declares input `index` constant across runs, with `cache` as the
  /// node's cache (the interpreter does this for initializers).
  SimpleKernelContext &setConstantInputCache(size_t index, NodeCache *cache) {
    constantInput_ = index;
    cache_ = cache;
    return *this;
  }
  SimpleKernelContext &setAttribute(std::string name, Attribute value) {
    attributes_[std::move(name)] = std::move(value);
    return *this;
  }
  SimpleKernelContext &setInt(std::string name, int64_t value) {
    Attribute attribute;
    attribute.kind = Attribute::Kind::Int;
    attribute.i = value;
    return setAttribute(std::move(name), attribute);
  }
  SimpleKernelContext &setFloat(std::string name, float value) {
    Attribute attribute;
    attribute.kind = Attribute::Kind::Float;
    attribute.f = value;
    return setAttribute(std::move(name), attribute);
  }
  SimpleKernelContext &setString(std::string name, std::string value) {
    Attribute attribute;
    attribute.kind = Attribute::Kind::String;
    attribute.s = std::move(value);
    return setAttribute(std::move(name), attribute);
  }
  SimpleKernelContext &setInts(std::string name, std::vector<int64_t> value) {
    Attribute attribute;
    attribute.kind = Attribute::Kind::Ints;
    attribute.ints = std::move(value);
    return setAttribute(std::move(name), attribute);
  }
  SimpleKernelContext &setFloats(std::string name, std::vector<float> value) {
    Attribute attribute;
    attribute.kind = Attribute::Kind::Floats;
    attribute.floats = std::move(value);
    return setAttribute(std::move(name), attribute);
  }

  /// Runs the registered kernel of the op type ("" domain).
  Status run() {
    KernelFn kernel = lookupKernel("", opType_);
    if (!kernel)
      return Status::error("no kernel for " + opType_);
    return runKernel(kernel, *this);
  }

  std::vector<Value> &outputs() { return outputs_; }
  Tensor &outputTensor(size_t index) { return outputs_[index].tensor; }

  std::string_view opType() const override { return opType_; }
  size_t numInputs() const override { return inputs_.size(); }
  const Value *input(size_t index) const override {
    return index < inputs_.size() && present_[index] ? &inputs_[index]
                                                     : nullptr;
  }
  size_t numOutputs() const override { return outputs_.size(); }
  bool wantsOutput(size_t index) const override {
    return index < outputs_.size();
  }
  void setOutput(size_t index, Value value) override {
    if (index < outputs_.size())
      outputs_[index] = std::move(value);
  }
  const Attribute *attribute(std::string_view name) const override {
    auto found = attributes_.find(std::string(name));
    return found == attributes_.end() ? nullptr : &found->second;
  }
  Status runGraph(std::string_view name, const std::vector<Value> &,
                  std::vector<Value> &) override {
    return Status::error("no subgraph '" + std::string(name) +
                         "' outside the interpreter");
  }
  uint64_t defaultSeed() const override { return 0; }
  NodeCache *cacheForConstantInput(size_t index) const override {
    return cache_ && index == constantInput_ ? cache_ : nullptr;
  }

private:
  std::string opType_;
  std::vector<Value> inputs_;
  std::vector<bool> present_;
  std::vector<Value> outputs_;
  std::map<std::string, Attribute> attributes_;
  size_t constantInput_ = 0;
  NodeCache *cache_ = nullptr;
};

} // namespace mncc::reference

#endif // MNCC_REFERENCE_SIMPLECONTEXT_H
