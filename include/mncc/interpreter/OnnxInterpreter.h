//===- OnnxInterpreter.h - pfvm:cpu over the onnx dialect -----*- C++ -*-===//
//
// Runs a model of the onnx dialect on the host with the reference kernels.
// prepare() does everything that does not depend on the inputs once
// (kernel lookup, attribute conversion, loading initializers, liveness), so
// that run() is a loop over kernel calls.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_INTERPRETER_ONNXINTERPRETER_H
#define MNCC_INTERPRETER_ONNXINTERPRETER_H

#include "mncc/reference/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <map>
#include <string_view>
#include <memory>
#include <string>
#include <vector>

namespace mncc {

/// What a graph input or output is.
struct ProgramValueInfo {
  std::string name;
  mlir::Type type;
};

/// Time spent per operator type over runs, for `mncc run --profile`.
struct RunProfile {
  struct Entry {
    double milliseconds = 0;
    int64_t calls = 0;
  };
  std::map<std::string, Entry> perOperator;
};

/// A node of the top-level graph as a NodeRounding sees it.
struct NodeView {
  /// Which node of the model it is: its name, or "node (index 3, Add)"
  /// for a node without one (onnxNodeIdentity).
  std::string_view name;
  std::string_view opType;
  /// Its ONNX attributes (those it sets; defaults are not filled in).
  const std::map<std::string, reference::Attribute, std::less<>> *attributes;
  /// The element types the model gives its outputs (Undefined where it
  /// does not say): a hook that widened the inputs narrows the outputs
  /// back to these.
  const std::vector<reference::DType> *outputTypes;
};

/// Changes what the nodes of the top-level graph read and write, for a
/// reference that follows another executor's number formats (the device
/// reference of `mncc run --verify`: runtime/DeviceReference.cpp). A hook
/// replaces values, never the data of the ones it is given: those may be
/// initializers, shared with other readers, or views of other values.
class NodeRounding {
public:
  virtual ~NodeRounding();
  /// Before the node runs. `replacements` holds one empty Value per input;
  /// a non-empty one is what the node reads instead (this node only: other
  /// readers of the value still see the original).
  virtual reference::Status
  roundInputs(const NodeView &node,
              const std::vector<const reference::Value *> &inputs,
              std::vector<reference::Value> &replacements) const = 0;
  /// After the node ran: `outputs` (null where not wanted) may be replaced,
  /// for every later reader.
  virtual reference::Status
  roundOutputs(const NodeView &node,
               const std::vector<reference::Value *> &outputs) const = 0;
  /// What computes the node instead of pfvm:cpu's kernel (on the inputs
  /// roundInputs gave); empty for pfvm:cpu's own.
  virtual reference::KernelFunction kernelFor(const NodeView &) const {
    return {};
  }
};

/// How prepare() may rearrange the work; the results are the same either
/// way, bit for bit. What is fused is decided by the pfvm passes
/// (passes/pfvm: pfvm-fuse-activations, pfvm-concat-in-place), whose marks
/// prepare() follows after checking that they still hold.
struct PrepareOptions {
  /// Run a Relu or a constant-bound Clip inside the Conv or Add that feeds
  /// it, where onnx.fused_activation marks it.
  bool fuseActivations = true;
  /// Let a Conv whose only use is a Concat write straight into its part of
  /// the Concat's output (top-level graph, static shapes, each input one
  /// contiguous block of the output), so the Concat copies nothing, where
  /// onnx.in_place_inputs marks it.
  bool concatInPlace = true;
  /// Run those two passes first, on a copy of the function, for a graph
  /// that has not been through the pfvm phase (the marks it carries are
  /// decided again). Off: only the marks the graph carries count.
  bool runFusionPasses = true;
  /// Called around every node of the top-level graph (not inside the
  /// bodies of If, Loop or Scan). Fusions change which values exist, so
  /// with a hook the caller should turn fuseActivations and concatInPlace
  /// off.
  std::shared_ptr<const NodeRounding> rounding;
};

class OnnxProgram {
public:
  ~OnnxProgram();

  /// Prepares the graph of `function`. Nodes without a kernel are listed in
  /// `unsupported` ("domain.OpType" or "OpType") and make preparation fail
  /// with a diagnostic on each.
  static mlir::FailureOr<std::unique_ptr<OnnxProgram>>
  prepare(mlir::func::FuncOp function,
          std::vector<std::string> *unsupported = nullptr,
          const PrepareOptions &options = {});

  const std::vector<ProgramValueInfo> &inputs() const;
  const std::vector<ProgramValueInfo> &outputs() const;

  /// Runs on `inputs` (in graph order). The message of a failure names the
  /// node. The program can run any number of times.
  reference::Status run(const std::vector<reference::Value> &inputs,
                        std::vector<reference::Value> &outputs,
                        RunProfile *profile = nullptr) const;

  /// The prepared graphs; opaque outside the interpreter.
  struct Impl;

private:
  explicit OnnxProgram(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace mncc

#endif // MNCC_INTERPRETER_ONNXINTERPRETER_H
