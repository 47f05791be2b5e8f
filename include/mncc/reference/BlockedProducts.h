//===- BlockedProducts.h - Products summed block by block ------*- C++ -*-===//
//
// Conv, Gemm and MatMul as a matrix unit sums them: K cut into blocks of
// `block` elements (Gemm and MatMul: K from 0; Conv: K tap-major, each
// tap's channels in blocks counted from the first channel of the dense
// product over every channel, so a grouped convolution's row starts at its
// group's first channel), each block's products summed exactly and added
// to a single-precision accumulator that starts at the bias (Conv's B,
// Gemm's beta C), rounding once per block. The inputs may be float or
// double; the output is double holding single values. For the device
// reference (runtime/DeviceReference.cpp), which block-floats the operands
// first; not ONNX's kernels.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_BLOCKEDPRODUCTS_H
#define MNCC_REFERENCE_BLOCKEDPRODUCTS_H

#include "mncc/reference/Kernel.h"

#include <functional>

namespace mncc::reference {

Status blockedConv(KernelContext &context, int64_t block);
/// alphaInB: B already carries alpha (the matrix unit's B is alpha B
/// rounded), so alpha is not applied again.
Status blockedGemm(KernelContext &context, int64_t block, bool alphaInB);
Status blockedMatMul(KernelContext &context, int64_t block);
/// A 2-D Conv over packed taps (docs/codegen.md X9, the codegen's Conv
/// with X in N, H, C, W): `pixels` output pixels along W share a row of
/// blocks; block (kh, c, q), in that order, is the block of X's row
/// (c, kh's input row) from element perLongWord x (the long word holding
/// the group's first tap) + q block, zeros outside X (perLongWord = block
/// / 4), and W's values at the elements of each pixel's taps. Both are
/// block-floated here, by `blockFloat` (one block of n values in place),
/// as the matrix unit's image and tiles are: X and W arrive only rounded
/// to the operands' format.
Status
blockedPackedConv(KernelContext &context, int64_t block, int64_t pixels,
                  int64_t quads,
                  const std::function<void(double *, unsigned)> &blockFloat);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_BLOCKEDPRODUCTS_H
