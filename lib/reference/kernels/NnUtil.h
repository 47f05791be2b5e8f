//===- NnUtil.h - Helpers shared by the Nn/Linalg/Quant kernels -*- C++ -*-===//
//
// Private to those kernel files: element conversion and the float casts
// that let float16/bfloat16 run through the float code paths (ONNX's own
// reference computes those types through float too).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_NNUTIL_H
#define MNCC_LIB_REFERENCE_KERNELS_NNUTIL_H

#include "TensorUtil.h"

#include "mncc/reference/Kernel.h"

#include <string>
#include <type_traits>

namespace mncc::reference::nn {

inline bool isFloatType(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 ||
         dtype == DType::Float16 || dtype == DType::BFloat16;
}

/// A copy of a floating-point tensor as `to` (float16/bfloat16 round to
/// nearest even); the same tensor when it already has that type.
inline Tensor castFloat(const Tensor &from, DType to) {
  if (from.dtype() == to)
    return from;
  Tensor result(to, from.shape());
  int64_t count = from.numElements();
  dispatchNumeric(from.dtype(), [&](auto fromTag) {
    using From = decltype(fromTag);
    dispatchNumeric(to, [&](auto toTag) {
      using To = decltype(toTag);
      if constexpr (std::is_floating_point_v<From> ||
                    std::is_same_v<From, Float16> ||
                    std::is_same_v<From, BFloat16>) {
        if constexpr (std::is_same_v<To, float> || std::is_same_v<To, double>) {
          const From *in = from.data<From>();
          To *out = result.data<To>();
          for (int64_t i = 0; i < count; ++i) {
            if constexpr (std::is_floating_point_v<From>)
              out[i] = static_cast<To>(in[i]);
            else
              out[i] = static_cast<To>(static_cast<float>(in[i]));
          }
        } else if constexpr (std::is_same_v<To, Float16> ||
                             std::is_same_v<To, BFloat16>) {
          const From *in = from.data<From>();
          To *out = result.data<To>();
          for (int64_t i = 0; i < count; ++i)
            out[i] = To(static_cast<float>(in[i]));
        }
      }
    });
  });
  return result;
}

/// The type a floating kernel computes in: double for double, else float.
inline DType computeType(DType dtype) {
  return dtype == DType::Float64 ? DType::Float64 : DType::Float32;
}

/// "Conv: " + message, the form of every error of these kernels.
inline Status opError(const KernelContext &context, const std::string &text) {
  return Status::error(std::string(context.opType()) + ": " + text);
}

/// Fails unless input `index` is a present tensor of a floating type.
inline Status requireFloatInput(const KernelContext &context, size_t index,
                                const char *what) {
  const Tensor *tensor = context.inputTensor(index);
  if (!tensor)
    return opError(context, std::string("missing input ") + what);
  if (!isFloatType(tensor->dtype()))
    return opError(context, std::string("input ") + what +
                                " must be float16, bfloat16, float or "
                                "double, not " +
                                dtypeName(tensor->dtype()));
  return Status::success();
}

} // namespace mncc::reference::nn

#endif // MNCC_LIB_REFERENCE_KERNELS_NNUTIL_H
