//===- GeneralLowering.h - One node as element operations -------*- C++ -*-===//
//
// The general kernel's operators (GeneralOps.cpp, GeneralLinear.cpp) are
// each a function that places the node's tensor images in the PE memories,
// then records element operations on them. A Lowering holds what they
// share: the request, the element program, the placed images, and the
// kernel's prologue (loads) and epilogue (zeroed padding, store).
//
// A lowering runs twice: once from matches(), with recording off, to learn
// whether the tensors fit and the attributes are supported, and once from
// emit(). Both runs take the same decisions.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GENERALLOWERING_H
#define MNCC_LIB_CODEGEN_KERNELS_GENERALLOWERING_H

#include "GeneralProgram.h"
#include "GeneralTransfer.h"
#include "MathLib.h"

#include "mncc/codegen/Kernel.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mncc::codegen::general {

class Lowering {
public:
  /// `out` null: the dry run of matches().
  Lowering(const KernelRequest &request, VsmWriter *out);

  const KernelRequest &request() const { return Request; }
  ElemProgram &program() { return Program; }
  bool dryRun() const { return Out == nullptr; }
  VsmWriter *writer() { return Out; }

  /// Whether the node's tensors are int32 (else floating point).
  bool integerTensors() const;
  /// The precision the operations compute in: double for double tensors,
  /// single for single and half ones (G12).
  DeviceType computeType() const;
  /// Words one element takes in the images the operations see (2 for a
  /// double, else 1), and element `index` of a dense array at `base`.
  int32_t elementWords() const;
  Slot element(Slot base, int64_t index) const {
    return base.offset(int32_t(index) * elementWords());
  }

  /// What is left of the PE memories, for the messages of requests that
  /// do not fit.
  std::string roomLeft() const;
  /// Records `message` as the reason and returns false.
  bool fail(std::string message);
  const std::string &error() const { return Error; }

  /// Words an input's or output's DRAM image takes in a PE (a half
  /// tensor's widened to singles; its image as loaded takes half as many
  /// more).
  int32_t inputWords(size_t input) const;
  int32_t outputWords(size_t output) const;

  /// Places input `input`'s image in the first memory of `preference`
  /// with room (loaded by loadInputs()); null (after fail()) when none.
  const PeImage *placeInput(size_t input,
                            std::initializer_list<PeMemory> preference);
  /// Places output `output`'s image, which the epilogue stores. Only LM0
  /// and LM1 can be stored.
  const PeImage *placeOutput(size_t output,
                             std::initializer_list<PeMemory> preference);
  /// The output's image is an input's (a reshape that changes nothing in
  /// DRAM): the epilogue stores the input's words.
  void aliasOutput(size_t output, const PeImage &input);
  /// A dense scratch array.
  std::optional<Slot> allocate(std::initializer_list<PeMemory> preference,
                               int32_t words, int32_t align = 8);
  /// Whether sizes (words) fit their memories, given what is allocated.
  bool fits(const std::vector<std::pair<PeMemory, int32_t>> &requests) const;

  const PeImage &input(size_t i) const { return *Inputs[i]; }
  const PeImage &output(size_t o) const { return *Outputs[o]; }

  /// Emits the loads of every placed input. Call once, after placing and
  /// before recording operations.
  void loadInputs();
  /// Ends the kernel: zeroes the words of every output image that hold no
  /// element (row padding, block tails), schedules what is recorded, and
  /// stores the outputs.
  void finish(KernelDescription &description);

  /// Reserves the two scratch blocks (GRF0 and GRF1) that MathLib needs
  /// for `functions`: as much as it can use, at least its minimum. Call
  /// after placing the images.
  bool reserveMath(std::initializer_list<MathFunction> functions);
  /// Schedules what is recorded, then computes `function` over `words`
  /// words (a multiple of 8, long word aligned) of LM blocks from
  /// `sources` into `destination` (MathLib.h; a source may be the
  /// destination).
  bool math(MathFunction function, const std::vector<Slot> &sources,
            Slot destination, int32_t words);

  /// Element helpers shared by the operators.
  /// dst = reduction of `sources` (at least one) by Add or Max/Min, with
  /// the first source copied in and the rest folded in place.
  enum class Fold { Sum, Max, Min };
  void fold(Slot dst, const std::vector<Slot> &sources, Fold kind);
  /// Copies element src[i] -> dst[i] (a word, or a double's long word),
  /// merging runs into long and double long word copies where both sides
  /// are aligned alike.
  void copyWords(const std::vector<std::pair<Slot, Slot>> &dstSrc);

private:
  const KernelRequest &Request;
  VsmWriter *Out;
  ElemProgram Program;
  std::string Error;
  std::vector<std::optional<PeImage>> Inputs, Outputs;
  /// Half tensors: the image as it moves (four halves a long word) beside
  /// the widened one the operations see.
  std::vector<std::optional<PeImage>> RawInputs, RawOutputs;
  std::vector<bool> OutputAliased;
  std::optional<MathScratch> Scratch;
};

/// A lowering: fills `lowering` for its request; false with
/// lowering.error() when the request is not supported.
using LoweringFn = bool (*)(Lowering &lowering);

/// The operators of each file.
LoweringFn findElementLowering(const std::string &opType);
LoweringFn findLinearLowering(const std::string &opType);

/// The window of Conv and the pools over the spatial dimensions of an
/// input: ONNX's kernel_shape, strides, dilations, pads and auto_pad
/// resolved (ceil_mode for the pools).
struct Window {
  std::vector<int64_t> in, out, kernel, stride, dilation, padBegin, padEnd;
  size_t rank() const { return in.size(); }
};
/// Resolves the window for spatial input shape `spatial`; `kernel` is
/// the weights' spatial shape for Conv (empty for the pools).
bool resolveWindow(Lowering &lowering, const std::vector<int64_t> &spatial,
                   const std::vector<int64_t> &kernel, bool ceilMode,
                   Window &window);

/// Checks shared by the operators: the input count (at least `least`
/// present, at most `most` positions) and the output count, with the
/// reason on failure.
bool checkInputs(Lowering &lowering, size_t least, size_t most);
bool checkOutputs(Lowering &lowering, size_t count);

/// Integers of a constant input (axes, k, ...); nullopt at run time.
std::optional<std::vector<int64_t>> constantInts(const KernelTensor &tensor);

/// An element operand: an image read through broadcasting (ONNX's
/// multidirectional rule), or one fixed word (a constant scalar).
struct Operand {
  const PeImage *image = nullptr;
  Slot fixed;
  Slot at(const std::vector<int64_t> &index) const;
};

/// Whether `shape` broadcasts to `to` (aligned on the right).
bool broadcastsTo(const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &to);

/// The axes of a reduction (attribute `axes`, or the constant input
/// `axesInput`; G10 for runtime axes with keepdims) as a flag per input
/// dimension, checked against output 0's shape.
bool resolveAxes(Lowering &lowering, std::optional<size_t> axesInput,
                 std::vector<bool> &reduced);

/// Shape helpers.
void forEachIndex(const std::vector<int64_t> &shape,
                  const std::function<void(const std::vector<int64_t> &)> &fn);
/// The index of a multidirectionally broadcast operand of shape `shape`
/// for output index `index` (ONNX: dimensions aligned on the right).
std::vector<int64_t> broadcastIndex(const std::vector<int64_t> &index,
                                    const std::vector<int64_t> &shape);
/// Row-major index of a linear position.
std::vector<int64_t> unravel(int64_t position,
                             const std::vector<int64_t> &shape);
int64_t elementCount(const std::vector<int64_t> &shape);
std::string shapeText(const std::vector<int64_t> &shape);

} // namespace mncc::codegen::general

#endif // MNCC_LIB_CODEGEN_KERNELS_GENERALLOWERING_H
