//===- DeviceReference.cpp - pfvm:cpu in the device's number formats ------===//
//
// The second reference of `mncc run --verify`: the model again on pfvm:cpu,
// but every node the compiled program runs reads and writes its values in
// the formats the program holds them in (manifest.json kernels:
// input_types, output_types), and the operands of a product on the matrix
// unit are block floats as the unit's (matrix_unit). What is left between
// this reference and the device is the order and rounding of the sums, not
// the formats, so a deep network whose half block floats alone move its
// outputs by more than the float_dtype's tolerance is still held to a
// bound (docs/codegen.md "Tolerances").
//
//===----------------------------------------------------------------------===//

#include "HostDevice.h"

#include "mncc/codegen/DeviceType.h"
#include "mncc/emu/Numerics.h"
#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/reference/BlockedProducts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

using namespace mlir;
using namespace mncc;
using namespace mncc::runtime;
using codegen::DeviceType;
using reference::DType;
using reference::Status;

namespace {

/// The formats of one node's kernel.
struct NodeFormats {
  std::string opType;
  std::vector<std::optional<DeviceType>> inputs, outputs;
  /// "half", "pseudo-single", "double" or empty.
  std::string matrixUnit;
  /// A Conv over packed taps (manifest "packed_taps": pixels x quads, the
  /// kernel's variant; docs/codegen.md X9): its blocks are cut along X's
  /// rows, not its channels. 0 for the im2col product.
  int64_t packedPixels = 0, packedQuads = 0;
};

bool isHostFloat(DType type) {
  return type == DType::Float32 || type == DType::Float64;
}

/// `tensor` (float32 or float64) through the device's `type` and back
/// into `hostType` (its own by default), as staging a value into the
/// program and reading it out would.
reference::Tensor roundThrough(const reference::Tensor &tensor, DeviceType type,
                               DType hostType = DType::Undefined) {
  reference::Tensor result = reference::Tensor::uninitialized(
      hostType == DType::Undefined ? tensor.dtype() : hostType, tensor.shape());
  int64_t count = tensor.numElements();
  std::vector<uint64_t> bits(count);
  codegen::hostToDevice(tensor.dtype(), tensor.raw(), type, bits.data(), count);
  codegen::deviceToHost(type, bits.data(), result.dtype(), result.raw(), count);
  return result;
}

/// The value a block-float element stands for, read at the block's
/// exponent field `blockExponent` as the MAU reads it (docs/target/
/// mncore2.md "Block floats": M * 2^(E - bias - (mantissa bits - 1)), the
/// leading bit explicit). `ignoredBits` low mantissa bits are dropped
/// (pseudo-single's five).
template <typename F>
double blockFloatValue(typename F::Storage element, uint32_t blockExponent,
                       unsigned ignoredBits = 0) {
  auto mantissa =
      F::mantissa(element) & ~((typename F::Storage(1) << ignoredBits) - 1);
  double sign = F::sign(element) ? -1.0 : 1.0;
  if (blockExponent == F::MaxExp)
    return mantissa ? sign * HUGE_VAL : 0.0;
  return sign * std::ldexp(double(mantissa),
                           int(blockExponent) - F::Bias - int(F::ManBits - 1));
}

/// One block of `n` (at most Size) values through a block-float format
/// of F: the ALU's conversion `convert` (hbfn, gbfn) on the values' device
/// bits (`type`), then each element as the MAU multiplies it.
template <typename F, unsigned Size, typename Convert>
void blockFloatIn(DeviceType type, Convert convert, unsigned ignoredBits,
                  double *values, unsigned n) {
  typename F::Storage in[Size] = {}, out[Size] = {};
  for (unsigned j = 0; j < n; ++j)
    codegen::hostToDevice(DType::Float64, &values[j], type, &in[j], 1);
  convert(in, out, n);
  uint32_t top = 0;
  for (unsigned j = 0; j < n; ++j)
    top = std::max(top, F::exponent(out[j]));
  for (unsigned j = 0; j < n; ++j)
    values[j] = blockFloatValue<F>(out[j], top, ignoredBits);
}

/// One block of `n` values through the matrix unit's format `unit`.
void blockFloat(const std::string &unit, double *values, unsigned n) {
  if (unit == "half")
    blockFloatIn<emu::Half, emu::HalfBlockSize>(
        DeviceType::Half,
        [](const uint16_t *in, uint16_t *out, unsigned count) {
          emu::toBlockFloatHalf(in, out, count);
        },
        0, values, n);
  else
    blockFloatIn<emu::Single, emu::PseudoSingleBlockSize>(
        DeviceType::Single, emu::toBlockFloatPseudoSingle,
        emu::PseudoSingleIgnoredBits, values, n);
}

unsigned blockSizeOf(const std::string &unit) {
  return unit == "half" ? emu::HalfBlockSize : emu::PseudoSingleBlockSize;
}

/// `tensor` block-floated along `axis`: every line along it is cut into
/// blocks of the unit's size, counted from index -origin(line) (a grouped
/// Conv's W: its rows' channels start at the group's first channel of the
/// product's K), as the kernels cut K into K-chunks (docs/codegen.md X1,
/// X9).
template <typename Origin>
reference::Tensor blockFloatAlong(const reference::Tensor &tensor, int64_t axis,
                                  const std::string &unit, Origin origin) {
  const std::vector<int64_t> &shape = tensor.shape();
  int64_t outer = 1, inner = 1, length = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  reference::Tensor result = tensor.clone();
  unsigned size = blockSizeOf(unit);
  std::vector<double> line(length);
  auto get = [&](int64_t i) { return result.elementAsDouble(i); };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * length * inner + in;
      for (int64_t k = 0; k < length; ++k)
        line[k] = get(base + k * inner);
      int64_t start = origin(o);
      for (int64_t k = 0; k < length;) {
        int64_t end = std::min(length, ((start + k) / size + 1) * size - start);
        blockFloat(unit, &line[k], unsigned(end - k));
        k = end;
      }
      for (int64_t k = 0; k < length; ++k) {
        int64_t index = base + k * inner;
        if (result.dtype() == DType::Float32)
          result.data<float>()[index] = float(line[k]);
        else
          result.data<double>()[index] = line[k];
      }
    }
  return result;
}

int64_t intAttribute(const NodeView &node, std::string_view name,
                     int64_t fallback) {
  auto found = node.attributes->find(name);
  return found == node.attributes->end() ? fallback : found->second.i;
}

class DeviceFormats : public NodeRounding {
public:
  explicit DeviceFormats(std::map<std::string, NodeFormats> nodes)
      : nodes(std::move(nodes)) {}

  Status
  roundInputs(const NodeView &node,
              const std::vector<const reference::Value *> &inputs,
              std::vector<reference::Value> &replacements) const override {
    const NodeFormats *formats = find(node);
    if (!formats)
      return Status::success();
    auto current = [&](size_t i) -> const reference::Tensor * {
      if (!replacements[i].isEmpty())
        return &replacements[i].tensor;
      return inputs[i] && inputs[i]->isTensor() ? &inputs[i]->tensor : nullptr;
    };
    for (size_t i = 0; i < inputs.size() && i < formats->inputs.size(); ++i) {
      const reference::Tensor *tensor = current(i);
      if (tensor && isHostFloat(tensor->dtype()) && formats->inputs[i] &&
          codegen::isFloatingDeviceType(*formats->inputs[i]))
        replacements[i] = roundThrough(*tensor, *formats->inputs[i]);
    }
    const std::string &unit = formats->matrixUnit;
    // A double product keeps every bit of a float32 model's values.
    if (unit != "half" && unit != "pseudo-single")
      return Status::success();
    auto quantize = [&](size_t i, int64_t axis, auto origin) {
      const reference::Tensor *tensor = current(i);
      if (!tensor || !isHostFloat(tensor->dtype()) || axis < 0 ||
          axis >= tensor->rank())
        return;
      replacements[i] = blockFloatAlong(*tensor, axis, unit, origin);
    };
    auto fromZero = [](int64_t) { return int64_t(0); };
    if (node.opType == "Gemm") {
      // The matrix unit's B is alpha B in its own format (docs/codegen.md
      // X1, X10); blockedGemm then leaves alpha out.
      auto alpha = node.attributes->find("alpha");
      if (alpha != node.attributes->end() && alpha->second.f != 1.0f &&
          current(1)) {
        reference::Tensor scaled = current(1)->clone();
        for (int64_t k = 0; k < scaled.numElements(); ++k) {
          if (scaled.dtype() == DType::Float32)
            scaled.data<float>()[k] *= alpha->second.f;
          else if (scaled.dtype() == DType::Float64)
            scaled.data<double>()[k] *= double(alpha->second.f);
        }
        replacements[1] = roundThrough(
            scaled, unit == "half" ? DeviceType::Half : DeviceType::Single);
      }
      quantize(0, intAttribute(node, "transA", 0) ? 0 : 1, fromZero);
      quantize(1, intAttribute(node, "transB", 0) ? 1 : 0, fromZero);
    } else if (node.opType == "MatMul") {
      const reference::Tensor *a = current(0), *b = current(1);
      if (a && b) {
        quantize(0, a->rank() - 1, fromZero);
        quantize(1, b->rank() == 1 ? 0 : b->rank() - 2, fromZero);
      }
    } else if (node.opType == "Conv" && formats->packedPixels > 0) {
      // blockedPackedConv block-floats X's rows and W's taps itself.
    } else if (node.opType == "Conv") {
      const reference::Tensor *w = current(1);
      int64_t groups = intAttribute(node, "group", 1);
      if (w && w->rank() >= 2 && groups > 0 && w->shape()[0] % groups == 0) {
        // Grouped and depthwise convolutions are one dense product over
        // every channel (X9): row m of W starts at its group's channels.
        int64_t rowsPerGroup = w->shape()[0] / groups;
        int64_t channels = w->shape()[1];
        quantize(0, 1, fromZero);
        quantize(1, 1,
                 [&](int64_t row) { return row / rowsPerGroup * channels; });
      }
    }
    return Status::success();
  }

  Status
  roundOutputs(const NodeView &node,
               const std::vector<reference::Value *> &outputs) const override {
    const NodeFormats *formats = find(node);
    if (!formats)
      return Status::success();
    for (size_t i = 0; i < outputs.size() && i < formats->outputs.size(); ++i) {
      reference::Value *value = outputs[i];
      if (!value || !value->isTensor() || !isHostFloat(value->tensor.dtype()))
        continue;
      DType declared = i < node.outputTypes->size() ? (*node.outputTypes)[i]
                                                    : DType::Undefined;
      reference::Tensor result = value->tensor;
      // A blocked product (kernelFor) gives its single accumulators in
      // double.
      if (result.dtype() == DType::Float64 && declared == DType::Float32)
        result = roundThrough(result, DeviceType::Single, DType::Float32);
      if (formats->outputs[i] &&
          codegen::isFloatingDeviceType(*formats->outputs[i]))
        result = roundThrough(result, *formats->outputs[i]);
      *value = reference::Value(result);
    }
    return Status::success();
  }

  reference::KernelFunction kernelFor(const NodeView &node) const override {
    const NodeFormats *formats = find(node);
    if (!formats || (formats->matrixUnit != "half" &&
                     formats->matrixUnit != "pseudo-single"))
      return {};
    int64_t block = blockSizeOf(formats->matrixUnit);
    if (node.opType == "Conv" && formats->packedPixels > 0)
      return [block, unit = formats->matrixUnit, pixels = formats->packedPixels,
              quads = formats->packedQuads](reference::KernelContext &context) {
        return reference::blockedPackedConv(
            context, block, pixels, quads, [&unit](double *values, unsigned n) {
              blockFloat(unit, values, n);
            });
      };
    if (node.opType == "Conv")
      return [block](reference::KernelContext &context) {
        return reference::blockedConv(context, block);
      };
    if (node.opType == "Gemm")
      return [block](reference::KernelContext &context) {
        return reference::blockedGemm(context, block, /*alphaInB=*/true);
      };
    if (node.opType == "MatMul")
      return [block](reference::KernelContext &context) {
        return reference::blockedMatMul(context, block);
      };
    return {};
  }

private:
  const NodeFormats *find(const NodeView &node) const {
    if (node.name.empty())
      return nullptr;
    auto found =
        nodes.find(std::string(node.name) + "\n" + std::string(node.opType));
    if (found == nodes.end())
      return nullptr;
    return &found->second;
  }

  std::map<std::string, NodeFormats> nodes;
};

/// The device kernels of a codegen_dir by node, from manifest.json.
bool readNodeFormats(const std::string &codegenDir,
                     std::map<std::string, NodeFormats> &nodes,
                     std::string &error) {
  llvm::SmallString<256> path(codegenDir);
  llvm::sys::path::append(path, "manifest.json");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = std::string(path) + ": " + buffer.getError().message();
    return false;
  }
  nlohmann::json manifest =
      nlohmann::json::parse((*buffer)->getBuffer().begin(),
                            (*buffer)->getBuffer().end(), nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object()) {
    error = std::string(path) + ": not JSON";
    return false;
  }
  auto types = [](const nlohmann::json &list) {
    std::vector<std::optional<DeviceType>> result;
    if (list.is_array())
      for (const nlohmann::json &type : list)
        result.push_back(type.is_string() ? codegen::parseDeviceTypeName(
                                                type.get<std::string>())
                                          : std::nullopt);
    return result;
  };
  auto text = [](const nlohmann::json &entry, const char *key) {
    auto found = entry.find(key);
    return found != entry.end() && found->is_string()
               ? found->get<std::string>()
               : std::string();
  };
  auto kernels = manifest.find("kernels");
  if (kernels == manifest.end() || !kernels->is_array()) {
    error = std::string(path) + ": no kernels";
    return false;
  }
  for (const nlohmann::json &kernel : *kernels) {
    // Host kernels too: pfvm:cpu computes them in float32 between the
    // device's buffers, so their values are rounded the same way.
    if (!kernel.is_object() || !kernel.contains("input_types"))
      continue;
    NodeFormats formats;
    formats.opType = text(kernel, "op_type");
    formats.inputs = types(kernel["input_types"]);
    formats.outputs = types(kernel.value("output_types", nlohmann::json()));
    formats.matrixUnit = text(kernel, "matrix_unit");
    std::string packed = text(kernel, "packed_taps");
    long long pixels = 0, quads = 0;
    if (!packed.empty() &&
        std::sscanf(packed.c_str(), "%lldx%lld", &pixels, &quads) == 2 &&
        pixels > 0 && quads > 0) {
      formats.packedPixels = pixels;
      formats.packedQuads = quads;
    }
    // Keyed by node and operator: the Casts the compiler puts before a
    // node carry its location too. A node some pass split into several
    // kernels keeps its first.
    std::string node = text(kernel, "onnx_node");
    if (!node.empty())
      nodes.emplace(node + "\n" + formats.opType, std::move(formats));
  }
  if (nodes.empty()) {
    error = std::string(path) +
            ": no kernel says which formats it reads (compiled by an older "
            "mncc?)";
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Executable> runtime::loadModelFollowingDevice(
    MLIRContext &context, const std::string &modelPath,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>
        &inputShapes,
    const std::string &codegenDir, std::string &error) {
  std::map<std::string, NodeFormats> nodes;
  if (!readNodeFormats(codegenDir, nodes, error))
    return nullptr;
  PrepareOptions options;
  // Fusion would hide the values the device rounds between two nodes.
  options.fuseActivations = false;
  options.concatInPlace = false;
  options.runFusionPasses = false;
  options.rounding = std::make_shared<DeviceFormats>(std::move(nodes));
  return loadModelOnHostWith(context, modelPath, inputShapes, options, error);
}
