//===- OnnxOps.h - The ops of the onnx dialect ----------------*- C++ -*-===//
//
// The ops generated from libonnx's schemas and the hand-written ones.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_ONNX_ONNXOPS_H
#define MNCC_DIALECTS_ONNX_ONNXOPS_H

#include "mncc/dialects/onnx/OnnxDialect.h"

#define GET_OP_CLASSES
#include "mncc/dialects/onnx/OnnxOps.h.inc"

#endif // MNCC_DIALECTS_ONNX_ONNXOPS_H
