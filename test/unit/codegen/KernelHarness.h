//===- KernelHarness.h - Runs one kernel on the emulator --------*- C++ -*-===//
//
// For the kernel unit tests: places a request's tensors in DRAM, emits the
// kernel, checks the program against mncc-sim's hazard rules, stages the
// inputs into a board whose memory starts as random bytes (or zeros), runs
// it and reads the outputs back as host tensors.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TEST_UNIT_CODEGEN_KERNELHARNESS_H
#define MNCC_TEST_UNIT_CODEGEN_KERNELHARNESS_H

#include "mncc/codegen/Kernel.h"
#include "mncc/emu/Timing.h"
#include "mncc/reference/Tensor.h"

#include <string>
#include <vector>

namespace mncc::codegen::testing {

struct HarnessOptions {
  /// Seed of the random memory fill; 0 starts from zeros.
  uint64_t fillSeed = 1;
  /// Keep the program text in the result.
  bool keepProgram = true;
  /// Give the tensors the DRAM orders the kernel prefers (as the planner
  /// does when producer and consumers agree); off, every tensor stays in
  /// the identity order, as where they do not.
  bool followPreferredOrders = true;
  /// Run this generator (by name) instead of the first that matches, for
  /// testing a kernel that a more specialised one would otherwise take.
  std::string generator;
  /// Host types of the outputs, by position, overriding runKernel's
  /// outputType (MaxPool's float values beside its integer indices).
  std::vector<reference::DType> outputTypes;
};

struct KernelRun {
  std::vector<reference::Tensor> outputs;
  /// The outputs as they lie in DRAM, padding included (C2).
  std::vector<DramImage> outputImages;
  /// Their forms, with the DRAM orders the kernel chose.
  std::vector<DramForm> outputForms;
  emu::TimingStats stats;
  std::string program;
  KernelDescription description;
  /// "line:column: hazard: ..." for every hazard found (the run goes on).
  std::vector<std::string> hazards;
};

/// A request for `opType` on tensors of the given host values (inputs) and
/// shapes (outputs), each in its canonical DRAM form of `type`. Inputs
/// flagged constant carry their host value for the kernel.
KernelRequest makeRequest(std::string opType,
                          const std::vector<reference::Tensor> &inputs,
                          const std::vector<std::vector<int64_t>> &outputShapes,
                          DeviceType type,
                          std::vector<bool> constantInputs = {});

/// Runs the request with `inputs` as host values. Returns false with a
/// message when no generator takes it, emission fails, the program does
/// not parse or the emulator stops.
bool runKernel(KernelRequest request,
               const std::vector<reference::Tensor> &inputs,
               reference::DType outputType, KernelRun &result,
               std::string &error, const HarnessOptions &options = {});

/// Largest |a - b| over the elements, and whether every element satisfies
/// |a - b| <= atol + rtol * |b| (infinities must match exactly).
struct Comparison {
  double maxAbs = 0;
  double maxRel = 0;
  bool within = true;
  std::string firstMismatch;
};
Comparison compareTensors(const reference::Tensor &actual,
                          const reference::Tensor &expected, double atol,
                          double rtol);

/// A float tensor of uniform values in [low, high) from a seed.
reference::Tensor randomTensor(std::vector<int64_t> shape, uint64_t seed,
                               float low = -1, float high = 1);
/// The same in float64, every bit of the significand random.
reference::Tensor randomDoubleTensor(std::vector<int64_t> shape, uint64_t seed,
                                     double low = -1, double high = 1);

/// Distance in units in the last place between two values of `type`
/// (doubles for the host's views of any format): 0 for equal values, the
/// two zeros equal, values under the format's smallest normal zero (the
/// device has no subnormals); a huge value when one is infinite and the
/// other not.
double ulpDistance(double a, double b, DeviceType type);

/// Every element within `bound` ulps of the reference (ulpDistance).
struct UlpComparison {
  double worst = 0;
  int64_t worstElement = 0;
  bool within = true;
  std::string firstMismatch;
};
UlpComparison compareUlps(const reference::Tensor &actual,
                          const reference::Tensor &expected, DeviceType type,
                          double bound);

/// Whether every element slot of the image's rows that holds no element
/// of the form (the row padding, C2) is zero; `where` names the first that
/// is not.
bool paddingIsZero(const DramForm &form, const DramImage &image,
                   std::string &where);

} // namespace mncc::codegen::testing

#endif // MNCC_TEST_UNIT_CODEGEN_KERNELHARNESS_H
