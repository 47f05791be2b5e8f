//===- Kernel.cpp - The kernel registry and attribute access --------------===//

#include "mncc/reference/Kernel.h"
#include "mncc/reference/Broadcast.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>

using namespace mncc::reference;

namespace {

using Registry = std::map<std::pair<std::string, std::string>, KernelFn>;

Registry &registry() {
  static Registry kernels;
  return kernels;
}

std::mutex &registryMutex() {
  static std::mutex mutex;
  return mutex;
}

} // namespace

void mncc::reference::registerKernel(std::string_view domain,
                                     std::string_view opType,
                                     KernelFn kernel) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().emplace(std::make_pair(std::string(domain), std::string(opType)),
                     kernel);
}

KernelFn mncc::reference::lookupKernel(std::string_view domain,
                                       std::string_view opType) {
  std::lock_guard<std::mutex> lock(registryMutex());
  std::string normalized = domain == "ai.onnx" ? "" : std::string(domain);
  auto found = registry().find({normalized, std::string(opType)});
  return found == registry().end() ? nullptr : found->second;
}

std::vector<std::pair<std::string, std::string>>
mncc::reference::registeredKernels() {
  std::lock_guard<std::mutex> lock(registryMutex());
  std::vector<std::pair<std::string, std::string>> names;
  for (const auto &entry : registry())
    names.push_back(entry.first);
  return names;
}

Status mncc::reference::runKernel(KernelFn kernel, KernelContext &context) {
  return runKernelFunction(kernel, context);
}

Status mncc::reference::runKernelFunction(const KernelFunction &kernel,
                                          KernelContext &context) {
  detail::KernelScope scope;
  // LLVM's tools install a new-handler that ends the process ("LLVM ERROR:
  // out of memory"); inside a kernel a failed std::vector growth is the
  // node's error, as a tensor's is. Nested kernels (a Loop's body) restore
  // what they found.
  std::new_handler previous = std::set_new_handler(nullptr);
  Status status;
  try {
    status = kernel(context);
  } catch (const AllocationError &error) {
    status = Status::error(error.message);
  } catch (const std::bad_alloc &) {
    status = Status::error("out of memory");
  } catch (const std::length_error &) {
    status = Status::error("a buffer larger than memory can hold");
  }
  std::set_new_handler(previous);
  return status;
}

int64_t KernelContext::getInt(std::string_view name, int64_t fallback) const {
  const Attribute *value = attribute(name);
  return value && value->kind == Attribute::Kind::Int ? value->i : fallback;
}

float KernelContext::getFloat(std::string_view name, float fallback) const {
  const Attribute *value = attribute(name);
  return value && value->kind == Attribute::Kind::Float ? value->f : fallback;
}

std::string KernelContext::getString(std::string_view name,
                                     std::string_view fallback) const {
  const Attribute *value = attribute(name);
  return value && value->kind == Attribute::Kind::String
             ? value->s
             : std::string(fallback);
}

std::vector<int64_t>
KernelContext::getInts(std::string_view name,
                       std::vector<int64_t> fallback) const {
  const Attribute *value = attribute(name);
  return value && value->kind == Attribute::Kind::Ints ? value->ints
                                                       : fallback;
}

std::vector<float>
KernelContext::getFloats(std::string_view name,
                         std::vector<float> fallback) const {
  const Attribute *value = attribute(name);
  return value && value->kind == Attribute::Kind::Floats ? value->floats
                                                         : fallback;
}

std::vector<std::string>
KernelContext::getStrings(std::string_view name,
                          std::vector<std::string> fallback) const {
  const Attribute *value = attribute(name);
  return value && value->kind == Attribute::Kind::Strings ? value->strings
                                                          : fallback;
}

std::optional<std::vector<int64_t>> mncc::reference::broadcastShapes(
    const std::vector<std::vector<int64_t>> &shapes) {
  size_t rank = 0;
  for (const auto &shape : shapes)
    rank = std::max(rank, shape.size());
  std::vector<int64_t> result(rank, 1);
  for (const auto &shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &dim = result[offset + i];
      if (shape[i] == dim || shape[i] == 1)
        continue;
      if (dim != 1)
        return std::nullopt;
      dim = shape[i];
    }
  }
  return result;
}

std::vector<int64_t>
mncc::reference::broadcastStrides(const std::vector<int64_t> &inputShape,
                                  const std::vector<int64_t> &outputShape) {
  std::vector<int64_t> strides(outputShape.size(), 0);
  size_t offset = outputShape.size() - inputShape.size();
  int64_t stride = 1;
  for (size_t i = inputShape.size(); i-- > 0;) {
    strides[offset + i] = inputShape[i] == 1 ? 0 : stride;
    stride *= inputShape[i];
  }
  return strides;
}

std::string mncc::reference::shapeToString(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}
