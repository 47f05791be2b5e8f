//===- Kernel.h - Kernel generators: one graph node to VSM ------*- C++ -*-===//
//
// A kernel generator turns one operator, with its tensors placed in DRAM,
// into MN-Core 2 assembly. Under the always_from_dram schedule every kernel
// is self-contained (docs/codegen.md, "Execution model"): it reads its
// inputs from their DRAM forms, computes with the PEs, writes its outputs
// back in their DRAM forms, and ends with every transfer waited for and
// every write landed, so kernels concatenate in any order. A kernel may use
// every PE memory, the L1BMs, the L2BMs, the matrix registers, the mask
// registers and MV tags freely; it touches DRAM only at its own tensors.
//
// Generators are tried in registration order; the first whose matches()
// accepts the request emits it. Specialised kernels come first, the
// general small-tensor kernel last.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_CODEGEN_KERNEL_H
#define MNCC_CODEGEN_KERNEL_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/VsmWriter.h"
#include "mncc/reference/Kernel.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mncc::codegen {

/// A tensor as a kernel sees it.
struct KernelTensor {
  std::string name;
  DramForm form;
  /// The host value, for inputs known at compile time (initializers).
  const reference::Tensor *constant = nullptr;
  /// An omitted optional input (ONNX's empty name).
  bool omitted = false;
};

/// A Relu or Clip the kernel applies to its result as it stores it
/// (mncc-fuse-epilogues): min(max(y, lo), hi) on the result and the bounds
/// rounded to the result's format, which is the rounding of the clamped
/// value (rounding is monotone), bit for bit what running the activation
/// after the kernel gives.
struct KernelActivation {
  /// "Relu" or "Clip", for descriptions.
  std::string opType;
  reference::FusedActivation bounds;
};

struct KernelRequest {
  /// The ONNX operator ("Gemm", "Relu", ...) or an mncc one ("Cast" between
  /// device formats uses ONNX's name too).
  std::string opType;
  /// The graph node, for messages and the comment before the kernel.
  std::string nodeName;
  std::map<std::string, reference::Attribute> attributes;
  std::vector<KernelTensor> inputs;
  std::vector<KernelTensor> outputs;
  /// An activation fused into the kernel (only for a generator whose
  /// fusesActivation accepts it).
  std::optional<KernelActivation> activation;

  /// Attribute accessors with ONNX's defaults.
  int64_t getInt(const std::string &name, int64_t fallback) const;
  float getFloat(const std::string &name, float fallback) const;
  std::vector<int64_t> getInts(const std::string &name,
                               std::vector<int64_t> fallback = {}) const;
  std::string getString(const std::string &name,
                        std::string fallback = "") const;
  bool hasAttribute(const std::string &name) const {
    return attributes.count(name) != 0;
  }
  /// Whether input i exists (present and not omitted).
  bool hasInput(size_t i) const {
    return i < inputs.size() && !inputs[i].omitted;
  }
};

/// What the schedule and the L3IR record about a kernel.
struct KernelDescription {
  /// The generator's name and the variant it chose, e.g. "gemm" /
  /// "half, 32 N-tiles x 1 M-tile".
  std::string generator;
  std::string variant;
  /// The matrix unit's operand format the kernel multiplies in
  /// ("half", "pseudo-single", "double"); empty when it does not use the
  /// matrix unit. The device reference of `mncc run --verify` block-floats
  /// the node's operands the same way (docs/codegen.md "Tolerances").
  std::string matrixUnit;
  /// Parameters worth printing (tiles, layouts of the operands in the
  /// MLSDK notation, passes).
  std::vector<std::pair<std::string, std::string>> parameters;
};

class KernelGenerator {
public:
  virtual ~KernelGenerator();
  virtual const char *name() const = 0;
  /// Whether the request is one this generator emits; when not, a short
  /// reason ("Conv with groups 3 is not supported").
  virtual bool matches(const KernelRequest &request,
                       std::string &whyNot) const = 0;
  /// Whether the generator applies request.activation itself when it emits
  /// the request (mncc-fuse-epilogues folds a Relu or Clip into the kernel
  /// before it only then).
  virtual bool fusesActivation(const KernelRequest &request) const;
  /// Whether the generator, given a request with one output more than the
  /// operator has, writes that last output as the operator's result cast
  /// to its (narrower) format: mncc-fuse-epilogues folds the Cast after a
  /// kernel into it only then. A generator that says no may ignore extra
  /// outputs, so the pass asks first.
  virtual bool writesNarrowedCopy(const KernelRequest &request) const;
  /// The DRAM order the generator prefers for input or output `operand`
  /// (inputs first, then outputs); empty for the identity. The planner
  /// follows it when the producer and every consumer agree.
  virtual std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                               size_t operand) const;
  /// For a constant input the kernel reads in its own arrangement: the long
  /// words per group the arrangement needs; nullopt for the canonical form.
  virtual std::optional<int64_t>
  constantLongWords(const KernelRequest &request, size_t input) const;
  /// Packs such a constant (request.inputs[input].constant) into its image.
  virtual bool packConstant(const KernelRequest &request, size_t input,
                            DramImage &image, std::string &error) const;
  /// Emits the kernel; on failure a message naming what is wrong.
  virtual bool emit(const KernelRequest &request, VsmWriter &out,
                    KernelDescription &description,
                    std::string &error) const = 0;
};

/// The registered generators, most specialised first.
const std::vector<std::unique_ptr<KernelGenerator>> &kernelGenerators();
/// The first generator that matches; null with every generator's reason
/// joined in whyNot when none does.
const KernelGenerator *findKernelGenerator(const KernelRequest &request,
                                           std::string &whyNot);
/// The first generator that matches and emits the request (its program is
/// thrown away): a generator whose plan fails only while emitting gives way
/// to the next, and its error joins whyNot.
const KernelGenerator *findEmittingKernelGenerator(const KernelRequest &request,
                                                   std::string &whyNot);

} // namespace mncc::codegen

#endif // MNCC_CODEGEN_KERNEL_H
