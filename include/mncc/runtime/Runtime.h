//===- Runtime.h - Devices that run models ---------------------*- C++ -*-===//
//
// The runtime runs a model on a device and hands back its outputs. Devices
// are entries of one registry (listDevices): `pfvm:cpu`, the host reference
// executor, runs an ONNX model directly; `emu2` runs a codegen_dir (the
// compiler's output: program.vsm, manifest.json, constants.bin) on mncc-sim,
// in process, staging inputs into the emulated DRAM and reading the outputs
// back. `mncc run` and the conformance runner are thin layers over this.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_RUNTIME_RUNTIME_H
#define MNCC_RUNTIME_RUNTIME_H

#include "mncc/reference/Tensor.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mncc::runtime {

/// What a graph input or output is: its name, host element type and
/// static shape.
struct TensorInfo {
  std::string name;
  reference::DType type = reference::DType::Float32;
  std::vector<int64_t> shape;
  /// The value's MLIR type as text ("!onnx.seq<tensor<?xf32>>") when it is
  /// not a ranked tensor: a sequence, an optional or an unranked tensor,
  /// which only a whole graph on pfvm:cpu takes (Executable::runValues).
  /// Empty for a ranked tensor, which `type` and `shape` describe.
  std::string valueType;
};

/// Cycles of one node on the device, from the emulator's timing model.
struct NodeProfile {
  std::string node;
  std::string opType;
  std::string generator;
  std::string variant;
  uint64_t cycles = 0;
  int64_t flops = 0;
};

struct RunProfile {
  /// Emulated cycles of the whole program and per node (emu2 only).
  uint64_t cycles = 0;
  std::vector<NodeProfile> nodes;
  /// Busy cycles of the MV unit (transfers) and the MAU (compute).
  uint64_t transferCycles = 0;
  uint64_t mauCycles = 0;
  int64_t modelFlops = 0;
  /// Host time of the run, seconds.
  double hostSeconds = 0;
  /// emu2: PE steps with work once per group, and those the emulator left
  /// out (emu::Machine::setSkipIdleGroups).
  uint64_t groupSteps = 0;
  uint64_t groupStepsLeftOut = 0;
};

struct RunOptions {
  /// emu2: memory starts as random bytes from this seed (as `gpfn3-smi
  /// clear` leaves a board); 0 starts from zeros.
  uint64_t fillSeed = 1;
  /// emu2: collect cycles per node (costs a trace of the run).
  bool profile = false;
  /// emu2: run every group's PE steps, also in the kernels whose transfers
  /// leave a group out (emu::Machine::setSkipIdleGroups); the results are
  /// the same, the run slower.
  bool allGroups = false;
};

class Executable {
public:
  virtual ~Executable();
  virtual const std::vector<TensorInfo> &inputs() const = 0;
  virtual const std::vector<TensorInfo> &outputs() const = 0;
  /// The float_dtype the program was compiled with ("" for a model run on
  /// the host).
  virtual std::string floatDtype() const { return ""; }
  /// Runs on `inputs` (in graph order, host types and shapes as inputs()
  /// says) and fills `outputs` (graph order). On failure returns false
  /// with a message naming the problem.
  virtual bool run(const std::vector<reference::Tensor> &inputs,
                   std::vector<reference::Tensor> &outputs,
                   const RunOptions &options, RunProfile *profile,
                   std::string &error) = 0;
  /// As run, for graphs whose inputs or outputs may be sequences or
  /// optionals (TensorInfo::valueType). The default passes tensors to run
  /// and refuses any other value.
  virtual bool runValues(const std::vector<reference::Value> &inputs,
                         std::vector<reference::Value> &outputs,
                         const RunOptions &options, RunProfile *profile,
                         std::string &error);
};

struct DeviceInfo {
  const char *name;
  const char *summary;
  /// What the device loads: "model" (.onnx / ONNX text) or "codegen_dir".
  const char *loads;
};

/// Every device, in the order `mncc run --help` lists them.
const std::vector<DeviceInfo> &listDevices();
const DeviceInfo *findDevice(const std::string &name);

/// pfvm:cpu: a model for the host reference executor. Diagnostics go to
/// the context's handler.
std::unique_ptr<Executable>
loadModelOnHost(mlir::MLIRContext &context, const std::string &modelPath,
                const std::vector<std::pair<std::string, std::vector<int64_t>>>
                    &inputShapes,
                std::string &error);

/// pfvm:cpu in a codegen_dir's number formats: the model run on the host,
/// every node the program runs on the device reading and writing its
/// values in the formats the program holds them in, and the operands of
/// each product on the matrix unit block-floated as the unit does
/// (docs/codegen.md "Tolerances"). What `mncc run --verify` compares with
/// when the result differs from loadModelOnHost's by more than the
/// float_dtype's tolerance. Null with a message when the codegen_dir does
/// not say which formats its kernels use.
std::unique_ptr<Executable> loadModelFollowingDevice(
    mlir::MLIRContext &context, const std::string &modelPath,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>
        &inputShapes,
    const std::string &codegenDir, std::string &error);
/// A codegen_dir's host.mlir when the whole graph runs on pfvm:cpu (its
/// manifest's "whole_graph_on_host": docs/codegen.md, H4).
std::unique_ptr<Executable>
loadWholeGraphOnHost(const std::string &hostMlirPath, std::string &error);

/// emu2: a codegen_dir the compiler wrote.
std::unique_ptr<Executable> loadCodegenDir(const std::string &codegenDir,
                                           std::string &error);

/// The model a codegen_dir was compiled from (manifest.json "model"), or
/// "" when it does not say.
std::string modelOfCodegenDir(const std::string &codegenDir);

/// The nodes a codegen_dir runs on the host ("TopK#2 (TopK)"), from its
/// partitions.json.
std::vector<std::string> hostNodesOfCodegenDir(const std::string &codegenDir);

/// The tolerance `--verify` allows a device result, by the float_dtype of
/// the compile and the element type pfvm:cpu computed the output in
/// (docs/codegen.md, "Tolerances"): |a - b| <= atol + rtol |b|,
/// atol = absoluteScale * max |b| over the output.
struct Tolerance {
  double rtol;
  double absoluteScale;
};
Tolerance toleranceFor(const std::string &floatDtype,
                       reference::DType referenceType);

/// The tolerance against loadModelFollowingDevice's reference, which
/// computes in the program's formats: what is left is the order and
/// rounding of sums and the few format roundings they flip, carried
/// through the network (docs/codegen.md "Tolerances").
Tolerance followingToleranceFor(const std::string &floatDtype,
                                reference::DType referenceType);
struct Comparison {
  double maxAbs = 0;
  double maxRel = 0;
  bool passed = true;
  /// "element 17: 0.5 vs 0.25" for the first element outside the bound.
  std::string firstFailure;
};
Comparison compare(const reference::Tensor &actual,
                   const reference::Tensor &expected,
                   const Tolerance &tolerance);

} // namespace mncc::runtime

#endif // MNCC_RUNTIME_RUNTIME_H
