//===- Control.cpp - If, Loop, Scan ---------------------------------------===//
//
// The control-flow operators run their graph attributes through
// KernelContext::runGraph. Loop-carried values pass from one iteration to
// the next as Values, which share their storage, so nothing is copied per
// iteration; per-iteration scan outputs are kept as handles and copied once,
// into the stacked result, when the loop ends.
//
//===----------------------------------------------------------------------===//

#include "ControlUtil.h"

#include <algorithm>

using namespace mncc::reference;
using namespace mncc::reference::control;

namespace {

/// Reads a scalar bool condition (If's cond, Loop's cond, a body's cond).
Status readCondition(const Value *value, const char *opName, const char *what,
                     bool &result) {
  if (!value || !value->isTensor())
    return Status::error(std::string(opName) + ": " + what +
                         " must be a tensor");
  const Tensor &tensor = value->tensor;
  if (tensor.dtype() != DType::Bool || tensor.numElements() != 1)
    return Status::error(
        std::string(opName) + ": " + what + " must be a single bool, not " +
        dtypeName(tensor.dtype()) + " " + shapeToString(tensor.shape()));
  result = tensor.data<bool>()[0];
  return Status::success();
}

Tensor boolScalar(bool value) {
  Tensor tensor(DType::Bool, {});
  tensor.data<bool>()[0] = value;
  return tensor;
}

Tensor int64Scalar(int64_t value) {
  Tensor tensor(DType::Int64, {});
  tensor.data<int64_t>()[0] = value;
  return tensor;
}

/// Stacks per-iteration scan outputs along a new axis `axis` (reversed
/// first for a reverse scan direction). With no iteration the element
/// type and shape of a slice are unknown here, so the result is an empty
/// float tensor of shape 0.
Status stackScanOutput(std::vector<Tensor> &slices, int64_t axis, bool reverse,
                       const char *opName, Tensor &result) {
  if (slices.empty()) {
    result = Tensor(DType::Float32, {0});
    return Status::success();
  }
  if (reverse)
    std::reverse(slices.begin(), slices.end());
  int64_t rank = slices.front().rank() + 1;
  std::optional<int64_t> normalized = normalizedAxis(axis, rank);
  if (!normalized)
    return Status::error(std::string(opName) + ": scan output axis " +
                         std::to_string(axis) + " is out of range for rank " +
                         std::to_string(rank));
  return joinAxis(slices, *normalized, /*newAxis=*/true, opName, result);
}

/// If: runs then_branch or else_branch; their outputs are If's outputs.
Status ifKernel(KernelContext &context) {
  bool condition = false;
  if (Status status = readCondition(context.input(0), "If", "cond", condition);
      !status)
    return status;
  const char *branch = condition ? "then_branch" : "else_branch";
  std::vector<Value> outputs;
  if (Status status = context.runGraph(branch, {}, outputs); !status)
    return status;
  if (outputs.size() < context.numOutputs())
    return Status::error("If: " + std::string(branch) + " gives " +
                         std::to_string(outputs.size()) +
                         " outputs, the node has " +
                         std::to_string(context.numOutputs()));
  for (size_t i = 0; i < context.numOutputs(); ++i)
    if (context.wantsOutput(i))
      context.setOutput(i, std::move(outputs[i]));
  return Status::success();
}

/// Loop: `for (i = 0; i < M && cond; ++i)`, where an omitted M or cond
/// drops its half of the test. The body maps (i, cond, carried...) to
/// (cond, carried..., scan...).
Status loopKernel(KernelContext &context) {
  std::optional<int64_t> tripCount;
  if (context.input(0)) {
    const Tensor *m = context.inputTensor(0);
    if (!m || m->dtype() != DType::Int64 || m->numElements() != 1)
      return Status::error("Loop: M must be a single int64");
    tripCount = m->data<int64_t>()[0];
  }
  bool condition = true;
  bool hasCondition = context.numInputs() > 1 && context.input(1);
  if (hasCondition) {
    if (Status status =
            readCondition(context.input(1), "Loop", "cond", condition);
        !status)
      return status;
  }
  size_t numCarried = context.numInputs() > 2 ? context.numInputs() - 2 : 0;
  // The body's inputs: slot 0 and 1 are rewritten each iteration, the
  // carried values are moved in from the previous iteration's outputs.
  std::vector<Value> bodyInputs(2 + numCarried);
  for (size_t i = 0; i < numCarried; ++i) {
    const Value *initial = context.input(2 + i);
    if (!initial)
      return Status::error("Loop: loop-carried input " + std::to_string(i) +
                           " is missing");
    bodyInputs[2 + i] = *initial;
  }
  std::vector<std::vector<Tensor>> scans;
  bool haveScanCount = false;
  std::vector<Value> bodyOutputs;
  for (int64_t i = 0; (!tripCount || i < *tripCount) && condition; ++i) {
    bodyInputs[0] = Value(int64Scalar(i));
    bodyInputs[1] = Value(boolScalar(condition));
    bodyOutputs.clear();
    if (Status status = context.runGraph("body", bodyInputs, bodyOutputs);
        !status)
      return status;
    if (bodyOutputs.size() < 1 + numCarried)
      return Status::error(
          "Loop: the body gives " + std::to_string(bodyOutputs.size()) +
          " outputs, it needs at least " + std::to_string(1 + numCarried));
    size_t numScans = bodyOutputs.size() - 1 - numCarried;
    if (!haveScanCount) {
      scans.resize(numScans);
      haveScanCount = true;
    }
    // An omitted cond input means the body's cond is ignored.
    if (hasCondition) {
      if (Status status = readCondition(&bodyOutputs[0], "Loop",
                                        "the body's cond output", condition);
          !status)
        return status;
    }
    for (size_t k = 0; k < numCarried; ++k)
      bodyInputs[2 + k] = std::move(bodyOutputs[1 + k]);
    for (size_t k = 0; k < numScans; ++k) {
      Value &scan = bodyOutputs[1 + numCarried + k];
      if (!scan.isTensor())
        return Status::error("Loop: scan output " + std::to_string(k) +
                             " must be a tensor");
      scans[k].push_back(std::move(scan.tensor));
    }
  }
  for (size_t k = 0; k < numCarried; ++k)
    if (context.wantsOutput(k))
      context.setOutput(k, std::move(bodyInputs[2 + k]));
  if (!haveScanCount && context.numOutputs() > numCarried)
    scans.resize(context.numOutputs() - numCarried);
  for (size_t k = 0; k < scans.size(); ++k) {
    if (!context.wantsOutput(numCarried + k))
      continue;
    Tensor stacked;
    if (Status status =
            stackScanOutput(scans[k], 0, /*reverse=*/false, "Loop", stacked);
        !status)
      return status;
    context.setOutput(numCarried + k, Value(std::move(stacked)));
  }
  return Status::success();
}

/// One Scan over given values, shared by the opset 9 form and, per batch
/// entry, the opset 8 form. `axes` are already non-negative.
struct ScanRun {
  std::vector<Value> states;
  std::vector<Tensor> inputs;
  std::vector<int64_t> axes, directions;
  std::vector<int64_t> outputAxes, outputDirections; // empty: all 0
  size_t numOutputs = 0; // of the node, for the no-iteration case
};

/// Runs the body once per position along the scan axes; leaves the final
/// states in run.states and the stacked scan outputs in `scanOutputs`.
Status runScan(KernelContext &context, ScanRun &run,
               std::vector<Tensor> &scanOutputs) {
  size_t numStates = run.states.size();
  int64_t length = -1;
  for (size_t j = 0; j < run.inputs.size(); ++j) {
    int64_t dim = run.inputs[j].shape()[run.axes[j]];
    if (length >= 0 && dim != length)
      return Status::error("Scan: scan inputs have lengths " +
                           std::to_string(length) + " and " +
                           std::to_string(dim));
    length = dim;
  }
  std::vector<Value> bodyInputs(numStates + run.inputs.size());
  for (size_t i = 0; i < numStates; ++i)
    bodyInputs[i] = std::move(run.states[i]);
  std::vector<std::vector<Tensor>> scans;
  bool haveScanCount = false;
  std::vector<Value> bodyOutputs;
  for (int64_t t = 0; t < length; ++t) {
    for (size_t j = 0; j < run.inputs.size(); ++j) {
      const Tensor &input = run.inputs[j];
      int64_t position = run.directions[j] ? length - 1 - t : t;
      std::vector<int64_t> sliceShape = input.shape();
      sliceShape.erase(sliceShape.begin() + run.axes[j]);
      bodyInputs[numStates + j] = Value(
          sliceAxis(input, run.axes[j], position, 1).reshaped(sliceShape));
    }
    bodyOutputs.clear();
    if (Status status = context.runGraph("body", bodyInputs, bodyOutputs);
        !status)
      return status;
    if (bodyOutputs.size() < numStates)
      return Status::error(
          "Scan: the body gives " + std::to_string(bodyOutputs.size()) +
          " outputs, it needs at least " + std::to_string(numStates));
    size_t numScans = bodyOutputs.size() - numStates;
    if (!haveScanCount) {
      scans.resize(numScans);
      haveScanCount = true;
    }
    for (size_t k = 0; k < numStates; ++k)
      bodyInputs[k] = std::move(bodyOutputs[k]);
    for (size_t k = 0; k < numScans; ++k) {
      Value &scan = bodyOutputs[numStates + k];
      if (!scan.isTensor())
        return Status::error("Scan: scan output " + std::to_string(k) +
                             " must be a tensor");
      scans[k].push_back(std::move(scan.tensor));
    }
  }
  for (size_t k = 0; k < numStates; ++k)
    run.states[k] = std::move(bodyInputs[k]);
  if (!haveScanCount && run.numOutputs > numStates)
    scans.resize(run.numOutputs - numStates);
  if (run.outputAxes.empty())
    run.outputAxes.assign(scans.size(), 0);
  if (run.outputDirections.empty())
    run.outputDirections.assign(scans.size(), 0);
  if (run.outputAxes.size() != scans.size() ||
      run.outputDirections.size() != scans.size())
    return Status::error("Scan: scan_output_axes and scan_output_directions "
                         "need one entry per scan output");
  scanOutputs.resize(scans.size());
  for (size_t k = 0; k < scans.size(); ++k)
    if (Status status = stackScanOutput(scans[k], run.outputAxes[k],
                                        run.outputDirections[k] != 0, "Scan",
                                        scanOutputs[k]);
        !status)
      return status;
  return Status::success();
}

/// Checks and normalizes one axis per scan input.
Status normalizeScanAxes(const std::vector<Tensor> &inputs, const char *name,
                         std::vector<int64_t> &axes) {
  if (axes.size() != inputs.size())
    return Status::error(std::string("Scan: ") + name +
                         " needs one entry per scan input");
  for (size_t j = 0; j < inputs.size(); ++j) {
    std::optional<int64_t> axis = normalizedAxis(axes[j], inputs[j].rank());
    if (!axis)
      return Status::error(
          std::string("Scan: ") + name + "[" + std::to_string(j) +
          "] = " + std::to_string(axes[j]) + " is out of range for rank " +
          std::to_string(inputs[j].rank()));
    axes[j] = *axis;
  }
  return Status::success();
}

/// Scan in its opset 8 form: input 0 is the optional sequence_lens, and
/// every state and scan input has a leading batch axis, scanned along axis
/// 1. Each batch entry is an opset 9 scan; the results are stacked back.
/// Only full-length sequences are supported (the padding semantics of
/// shorter ones were dropped from ONNX in opset 9).
Status scan8(KernelContext &context, int64_t numScanInputs) {
  size_t numInputs = context.numInputs();
  if (numScanInputs < 1 || static_cast<size_t>(numScanInputs) + 1 > numInputs)
    return Status::error("Scan: num_scan_inputs " +
                         std::to_string(numScanInputs) + " does not fit " +
                         std::to_string(numInputs) +
                         " inputs (opset 8 form, with sequence_lens)");
  size_t numStates = numInputs - 1 - numScanInputs;
  std::vector<Tensor> all;
  for (size_t i = 1; i < numInputs; ++i) {
    const Tensor *tensor = context.inputTensor(i);
    if (!tensor || tensor->rank() < 1)
      return Status::error("Scan: input " + std::to_string(i) +
                           " must be a tensor with a batch axis");
    if (!all.empty() && tensor->shape()[0] != all.front().shape()[0])
      return Status::error("Scan: inputs have batch sizes " +
                           std::to_string(all.front().shape()[0]) + " and " +
                           std::to_string(tensor->shape()[0]));
    all.push_back(*tensor);
  }
  int64_t batch = all.empty() ? 0 : all.front().shape()[0];
  for (size_t j = numStates; j < all.size(); ++j)
    if (all[j].rank() < 2)
      return Status::error("Scan: scan input " + std::to_string(j - numStates) +
                           " needs batch and sequence axes");
  if (const Tensor *lengths = context.inputTensor(0)) {
    int64_t full = all[numStates].shape()[1];
    for (int64_t b = 0; b < lengths->numElements(); ++b)
      if (lengths->elementAsInt64(b) != full)
        return Status::error("Scan: sequence_lens shorter than the sequence "
                             "axis are not supported");
  }
  std::vector<int64_t> directions =
      context.getInts("directions", std::vector<int64_t>(numScanInputs, 0));
  if (static_cast<int64_t>(directions.size()) != numScanInputs)
    return Status::error("Scan: directions needs one entry per scan input");
  std::vector<std::vector<Value>> finalStates(numStates);
  std::vector<std::vector<Tensor>> scanParts;
  for (int64_t b = 0; b < batch; ++b) {
    ScanRun run;
    run.numOutputs = context.numOutputs();
    for (size_t j = 0; j < all.size(); ++j) {
      std::vector<int64_t> shape = all[j].shape();
      shape.erase(shape.begin());
      Tensor entry = sliceAxis(all[j], 0, b, 1).reshaped(shape);
      if (j < numStates)
        run.states.push_back(Value(std::move(entry)));
      else
        run.inputs.push_back(std::move(entry));
    }
    run.axes.assign(numScanInputs, 0);
    run.directions = directions;
    std::vector<Tensor> scanOutputs;
    if (Status status = runScan(context, run, scanOutputs); !status)
      return status;
    for (size_t k = 0; k < numStates; ++k)
      finalStates[k].push_back(std::move(run.states[k]));
    scanParts.resize(scanOutputs.size());
    for (size_t k = 0; k < scanOutputs.size(); ++k)
      scanParts[k].push_back(std::move(scanOutputs[k]));
  }
  for (size_t k = 0; k < numStates; ++k) {
    std::vector<Tensor> parts;
    for (Value &value : finalStates[k]) {
      if (!value.isTensor())
        return Status::error("Scan: state " + std::to_string(k) +
                             " must stay a tensor");
      parts.push_back(std::move(value.tensor));
    }
    Tensor stacked;
    if (Status status = stackScanOutput(parts, 0, false, "Scan", stacked);
        !status)
      return status;
    if (context.wantsOutput(k))
      context.setOutput(k, Value(std::move(stacked)));
  }
  for (size_t k = 0; k < scanParts.size(); ++k) {
    Tensor stacked;
    if (Status status =
            stackScanOutput(scanParts[k], 0, false, "Scan", stacked);
        !status)
      return status;
    if (context.wantsOutput(numStates + k))
      context.setOutput(numStates + k, Value(std::move(stacked)));
  }
  return Status::success();
}

/// Scan: the body maps (state..., scan slices...) to (state..., scan
/// outputs...), once per position along the scan axes. The operator
/// registry does not know the opset, so the opset 8 form is recognized by
/// what only it can have: an omitted first input (sequence_lens) or the
/// `directions` attribute.
Status scanKernel(KernelContext &context) {
  const Attribute *numScanAttr = context.attribute("num_scan_inputs");
  if (!numScanAttr || numScanAttr->kind != Attribute::Kind::Int)
    return Status::error("Scan: the num_scan_inputs attribute is required");
  int64_t numScanInputs = numScanAttr->i;
  if (context.numInputs() > 0 &&
      (!context.input(0) || context.hasAttribute("directions")))
    return scan8(context, numScanInputs);
  int64_t numInputs = static_cast<int64_t>(context.numInputs());
  if (numScanInputs < 1 || numScanInputs > numInputs)
    return Status::error("Scan: num_scan_inputs " +
                         std::to_string(numScanInputs) + " does not fit " +
                         std::to_string(numInputs) + " inputs");
  size_t numStates = static_cast<size_t>(numInputs - numScanInputs);
  ScanRun run;
  run.numOutputs = context.numOutputs();
  for (size_t i = 0; i < numStates; ++i) {
    if (!context.input(i))
      return Status::error("Scan: state input " + std::to_string(i) +
                           " is missing");
    run.states.push_back(*context.input(i));
  }
  for (int64_t j = 0; j < numScanInputs; ++j) {
    const Tensor *input = context.inputTensor(numStates + j);
    if (!input)
      return Status::error("Scan: scan input " + std::to_string(j) +
                           " must be a tensor");
    run.inputs.push_back(*input);
  }
  run.axes = context.getInts("scan_input_axes",
                             std::vector<int64_t>(numScanInputs, 0));
  run.directions = context.getInts("scan_input_directions",
                                   std::vector<int64_t>(numScanInputs, 0));
  if (Status status =
          normalizeScanAxes(run.inputs, "scan_input_axes", run.axes);
      !status)
    return status;
  if (static_cast<int64_t>(run.directions.size()) != numScanInputs)
    return Status::error("Scan: scan_input_directions needs one entry per "
                         "scan input");
  run.outputAxes = context.getInts("scan_output_axes");
  run.outputDirections = context.getInts("scan_output_directions");
  std::vector<Tensor> scanOutputs;
  if (Status status = runScan(context, run, scanOutputs); !status)
    return status;
  for (size_t k = 0; k < numStates; ++k)
    if (context.wantsOutput(k))
      context.setOutput(k, std::move(run.states[k]));
  for (size_t k = 0; k < scanOutputs.size(); ++k)
    if (context.wantsOutput(numStates + k))
      context.setOutput(numStates + k, Value(std::move(scanOutputs[k])));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", If, ifKernel);
MNCC_REFERENCE_KERNEL("", Loop, loopKernel);
MNCC_REFERENCE_KERNEL("", Scan, scanKernel);
