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

namespace mncc::reference {

Status blockedConv(KernelContext &context, int64_t block);
/// alphaInB: B already carries alpha (the matrix unit's B is alpha B
/// rounded), so alpha is not applied again.
Status blockedGemm(KernelContext &context, int64_t block, bool alphaInB);
Status blockedMatMul(KernelContext &context, int64_t block);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_BLOCKEDPRODUCTS_H
