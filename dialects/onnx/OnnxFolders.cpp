//===- OnnxFolders.cpp - Folders of the onnx ops
//---------------------------===//
//
// The folds the generator declares (OnnxOdsGen.cpp, opHooks): an op that
// changes nothing is its operand. Each fold needs the result's type to be
// the operand's, static, so no use sees a different type; otherwise the op
// stays. None computes a new value: constant folding, which runs the
// pfvm:cpu kernels under a size limit, is the pfvm-fold-constants pass.
//
//===----------------------------------------------------------------------===//

#include "mncc/dialects/onnx/OnnxOps.h"

using namespace mlir;
using namespace mncc::onnx;

namespace {

/// `operand` when the op's result has exactly its type and that type is a
/// static tensor, so replacing the result changes nothing for any use.
OpFoldResult unchanged(Value operand, Value result) {
  auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
  if (operand.getType() != result.getType() || !type || !type.hasStaticShape())
    return {};
  return operand;
}

} // namespace

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  // Identity passes any value on (sequences and optionals too).
  if (getInput().getType() == getOutput().getType())
    return getInput();
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  return unchanged(getInput(), getOutput());
}

OpFoldResult FlattenOp::fold(FoldAdaptor) {
  return unchanged(getInput(), getOutput());
}

OpFoldResult SqueezeOp::fold(FoldAdaptor) {
  return unchanged(getData(), getSqueezed());
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  return unchanged(getInput(), getOutput());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  return unchanged(getData(), getReshaped());
}

llvm::SmallVector<int64_t> TransposeOp::getPermutation() {
  auto type = llvm::dyn_cast<RankedTensorType>(getData().getType());
  if (!type)
    return {};
  llvm::SmallVector<int64_t> permutation;
  if (std::optional<ArrayAttr> perm = getPerm()) {
    for (Attribute element : *perm)
      permutation.push_back(llvm::cast<IntegerAttr>(element).getInt());
    return permutation;
  }
  for (int64_t d = type.getRank() - 1; d >= 0; --d)
    permutation.push_back(d);
  return permutation;
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  llvm::SmallVector<int64_t> permutation = getPermutation();
  for (auto [index, dim] : llvm::enumerate(permutation))
    if (dim != static_cast<int64_t>(index))
      return {};
  return unchanged(getData(), getTransposed());
}
