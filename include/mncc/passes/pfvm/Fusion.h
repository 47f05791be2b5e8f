//===- Fusion.h - What pfvm:cpu can fuse, for the passes and itself -*- C++
//-*-===//
//
// The conditions pfvm-fuse-activations and pfvm-concat-in-place decide by,
// shared with the interpreter, which checks the marks those passes leave
// before it acts on them (a graph changed after the passes ran keeps
// running correctly, unfused).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PASSES_PFVM_FUSION_H
#define MNCC_PASSES_PFVM_FUSION_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mncc::pfvm {

/// The clamp an activation applies: v < lo ? lo : v, then v > hi ? hi : v.
struct ActivationBounds {
  float lo, hi;
};

/// The clamp of `op` when it is an activation pfvm:cpu can fuse: Relu
/// (0, +infinity), or Clip whose bounds are absent (the float limits, as
/// the Clip kernel takes them) or float32 scalar constants.
std::optional<ActivationBounds> fusableActivation(mlir::Operation *op);

/// The activation `producer` can run as it stores its output: `producer`
/// is a float32 Conv or Add with one result, used only as input 0 of a
/// fusable activation (fusableActivation) of the same block with a float32
/// result. nullptr otherwise.
mlir::Operation *fusableActivationUser(mlir::Operation *producer);

/// For an onnx.Concat whose output has a static shape and every dimension
/// before the axis 1, so that each input fills one contiguous block of the
/// output: the offset, in elements, of each input's block, for the inputs
/// up to the first whose shape is not static or whose element type is not
/// the output's (the places after it are unknown). Empty otherwise.
llvm::SmallVector<int64_t> concatBlockOffsets(mlir::Operation *concat);

} // namespace mncc::pfvm

#endif // MNCC_PASSES_PFVM_FUSION_H
