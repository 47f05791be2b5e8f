//===- QuantLinear.cpp - Linear quantization operators --------------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv. The integer products run the
// MatMul/Conv kernels in double on zero-point-shifted operands: 8-bit
// products summed in double are exact integers (far below 2^53), so the
// result is exact and independent of the summation order, and the fast
// GEMM path is reused.
//
//===----------------------------------------------------------------------===//

#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/SimpleContext.h"

#include <cmath>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

bool is8Bit(DType dtype) {
  return dtype == DType::Int8 || dtype == DType::UInt8;
}

/// Rounds half to even (the default rounding mode), saturating to `dtype`.
double saturateRound(double value, DType dtype) {
  double lo = dtype == DType::Int8    ? -128
              : dtype == DType::UInt8 ? 0
              : dtype == DType::Int32 ? -2147483648.0
                                      : -32768;
  double hi = dtype == DType::Int8    ? 127
              : dtype == DType::UInt8 ? 255
              : dtype == DType::Int32 ? 2147483647.0
                                      : 32767;
  if (std::isnan(value))
    return 0;
  return std::min(hi, std::max(lo, std::nearbyint(value)));
}

/// A per-tensor (one element) or per-axis (1-D, shape[axis] elements)
/// quantization parameter, read as the value for each axis index.
struct QuantParam {
  std::vector<double> values;
  double at(int64_t index) const {
    return values.size() == 1 ? values[0] : values[index];
  }
};

Status readParam(const KernelContext &context, const Tensor *tensor,
                 const char *name, int64_t axisLength, QuantParam &param,
                 double fallback) {
  if (!tensor) {
    param.values = {fallback};
    return Status::success();
  }
  int64_t count = tensor->numElements();
  if (count != 1 && (tensor->rank() != 1 || count != axisLength))
    return opError(context, std::string(name) + " must be a scalar or have " +
                                std::to_string(axisLength) +
                                " elements, not shape " +
                                shapeToString(tensor->shape()));
  param.values.resize(count);
  for (int64_t i = 0; i < count; ++i)
    param.values[i] = tensor->elementAsDouble(i);
  return Status::success();
}

/// Writes double `value` into element i of an integer or float tensor.
void store(Tensor &tensor, int64_t i, double value) {
  dispatchNumeric(tensor.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
      tensor.data<T>()[i] = T(static_cast<float>(value));
    else if constexpr (std::is_arithmetic_v<T>)
      tensor.data<T>()[i] = static_cast<T>(value);
  });
}

/// For each element, the index along `axis` (the per-axis parameter).
int64_t axisIndex(const std::vector<int64_t> &shape, int64_t axis,
                  int64_t element) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return (element / inner) % shape[axis];
}

Status quantizeLinearKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *scale = context.inputTensor(1);
  const Tensor *zero = context.inputTensor(2);
  if (!x || !scale)
    return opError(context, "needs x and y_scale");
  if (!isFloatType(x->dtype()) && x->dtype() != DType::Int32)
    return opError(context, std::string("x must be float or int32, not ") +
                                dtypeName(x->dtype()));
  DType outType = zero ? zero->dtype() : DType::UInt8;
  if (!is8Bit(outType))
    return opError(context, "y_zero_point must be int8 or uint8");
  int64_t axis = context.getInt("axis", 1);
  bool perAxis = scale->numElements() != 1;
  if (perAxis && !normalizeAxis(axis, x->rank()))
    return opError(context, "axis is out of range");
  int64_t length = perAxis ? x->shape()[axis] : 1;
  QuantParam s, z;
  if (Status st = readParam(context, scale, "y_scale", length, s, 1); !st)
    return st;
  if (Status st = readParam(context, zero, "y_zero_point", length, z, 0); !st)
    return st;
  Tensor y(outType, x->shape());
  for (int64_t i = 0; i < x->numElements(); ++i) {
    int64_t a = perAxis ? axisIndex(x->shape(), axis, i) : 0;
    // ONNX divides in float (the scale's type).
    float q =
        static_cast<float>(x->elementAsDouble(i)) / static_cast<float>(s.at(a));
    store(y, i, saturateRound(std::nearbyint(q) + z.at(a), outType));
  }
  context.setOutput(0, y);
  return Status::success();
}

Status dequantizeLinearKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *scale = context.inputTensor(1);
  const Tensor *zero = context.inputTensor(2);
  if (!x || !scale)
    return opError(context, "needs x and x_scale");
  if (!is8Bit(x->dtype()) && x->dtype() != DType::Int32)
    return opError(context, std::string("x must be int8, uint8 or int32, "
                                        "not ") +
                                dtypeName(x->dtype()));
  if (!isFloatType(scale->dtype()))
    return opError(context, "x_scale must be a float tensor");
  if (zero && zero->dtype() != x->dtype())
    return opError(context, "x_zero_point must have the type of x");
  int64_t axis = context.getInt("axis", 1);
  bool perAxis = scale->numElements() != 1;
  if (perAxis && !normalizeAxis(axis, x->rank()))
    return opError(context, "axis is out of range");
  int64_t length = perAxis ? x->shape()[axis] : 1;
  QuantParam s, z;
  if (Status st = readParam(context, scale, "x_scale", length, s, 1); !st)
    return st;
  if (Status st = readParam(context, zero, "x_zero_point", length, z, 0); !st)
    return st;
  Tensor y(scale->dtype(), x->shape());
  for (int64_t i = 0; i < x->numElements(); ++i) {
    int64_t a = perAxis ? axisIndex(x->shape(), axis, i) : 0;
    // (x - zero_point) * scale, in float as ONNX does.
    store(y, i,
          static_cast<float>(x->elementAsDouble(i) - z.at(a)) *
              static_cast<float>(s.at(a)));
  }
  context.setOutput(0, y);
  return Status::success();
}

Status dynamicQuantizeLinearKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  if (!x || x->dtype() != DType::Float32)
    return opError(context, "x must be a float tensor");
  // The range always includes 0, so that 0 is exactly representable.
  float lo = 0, hi = 0;
  const float *data = x->data<float>();
  for (int64_t i = 0; i < x->numElements(); ++i) {
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  float scale = (hi - lo) / 255.0f;
  // An all-zero input has no range: quantize everything to zero point 0.
  float zero = scale == 0 ? 0 : saturateRound(0 - lo / scale, DType::UInt8);
  Tensor y(DType::UInt8, x->shape());
  for (int64_t i = 0; i < x->numElements(); ++i)
    y.data<uint8_t>()[i] = static_cast<uint8_t>(
        scale == 0 ? 0
                   : saturateRound(std::nearbyint(data[i] / scale) + zero,
                                   DType::UInt8));
  context.setOutput(0, y);
  if (context.numOutputs() > 1 && context.wantsOutput(1))
    context.setOutput(1,
                      Tensor::fromVector<float>(DType::Float32, {}, {scale}));
  if (context.numOutputs() > 2 && context.wantsOutput(2))
    context.setOutput(2, Tensor::fromVector<uint8_t>(
                             DType::UInt8, {}, {static_cast<uint8_t>(zero)}));
  return Status::success();
}

/// `x` as double minus its zero point: per tensor, or per index along
/// `axis` (a negative axis: per tensor only).
Status shifted(const KernelContext &context, const Tensor &x,
               const Tensor *zero, const char *name, int64_t axis,
               Tensor &result) {
  if (zero && zero->dtype() != x.dtype())
    return opError(context, std::string(name) + " must have the type of " +
                                "its operand");
  int64_t length = axis >= 0 && axis < x.rank() ? x.shape()[axis] : 1;
  if (zero && zero->numElements() != 1 && axis < 0)
    return opError(context, std::string(name) + " must be a scalar");
  QuantParam z;
  if (Status s = readParam(context, zero, name, length, z, 0); !s)
    return s;
  result = Tensor(DType::Float64, x.shape());
  double *out = result.data<double>();
  for (int64_t i = 0; i < x.numElements(); ++i)
    out[i] = x.elementAsDouble(i) - (z.values.size() == 1
                                         ? z.values[0]
                                         : z.at(axisIndex(x.shape(), axis, i)));
  return Status::success();
}

/// Runs another registered kernel (MatMul, Conv) in double, copying the
/// window attributes of this node.
Status runDouble(const KernelContext &context, const char *op,
                 std::vector<Value> inputs, Tensor &out) {
  SimpleKernelContext inner(op, std::move(inputs), 1);
  for (const char *name :
       {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    if (const Attribute *attr = context.attribute(name))
      inner.setAttribute(name, *attr);
  Status status = inner.run();
  if (!status)
    return opError(context, status.message());
  out = inner.outputTensor(0);
  return Status::success();
}

Tensor toInt32(const Tensor &exact) {
  Tensor out(DType::Int32, exact.shape());
  for (int64_t i = 0; i < exact.numElements(); ++i)
    out.data<int32_t>()[i] = static_cast<int32_t>(exact.data<double>()[i]);
  return out;
}

Status matMulIntegerKernel(KernelContext &context) {
  const Tensor *a = context.inputTensor(0);
  const Tensor *b = context.inputTensor(1);
  if (!a || !b || !is8Bit(a->dtype()) || !is8Bit(b->dtype()))
    return opError(context, "A and B must be int8 or uint8 tensors");
  if (a->rank() < 1 || b->rank() < 1)
    return opError(context, "A and B must have rank >= 1");
  // a_zero_point may be per row of A (axis -2), b_zero_point per column
  // of B (axis -1).
  Tensor sa, sb, product;
  if (Status s = shifted(context, *a, context.inputTensor(2), "a_zero_point",
                         a->rank() >= 2 ? a->rank() - 2 : -1, sa);
      !s)
    return s;
  if (Status s = shifted(context, *b, context.inputTensor(3), "b_zero_point",
                         b->rank() >= 2 ? b->rank() - 1 : -1, sb);
      !s)
    return s;
  if (Status s = runDouble(context, "MatMul", {Value(sa), Value(sb)}, product);
      !s)
    return s;
  context.setOutput(0, toInt32(product));
  return Status::success();
}

Status convIntegerKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *w = context.inputTensor(1);
  if (!x || !w || !is8Bit(x->dtype()) || !is8Bit(w->dtype()))
    return opError(context, "x and w must be int8 or uint8 tensors");
  Tensor sx, sw, out;
  if (Status s =
          shifted(context, *x, context.inputTensor(2), "x_zero_point", -1, sx);
      !s)
    return s;
  // w_zero_point may be per output channel.
  if (Status s =
          shifted(context, *w, context.inputTensor(3), "w_zero_point", 0, sw);
      !s)
    return s;
  if (Status s = runDouble(context, "Conv", {Value(sx), Value(sw)}, out); !s)
    return s;
  context.setOutput(0, toInt32(out));
  return Status::success();
}

/// y = saturate(round(acc * inScale[a] / yScale) + yZero), per `axis`
/// index a of the accumulator (or per tensor).
Status requantize(const KernelContext &context, const Tensor &acc,
                  const QuantParam &inScale, int64_t axis, const Tensor *yScale,
                  const Tensor *yZero, Tensor &y) {
  if (!yScale)
    return opError(context, "needs y_scale");
  if (yScale->numElements() != 1 || (yZero && yZero->numElements() != 1))
    return opError(context, "y_scale and y_zero_point must be scalars");
  DType outType = yZero ? yZero->dtype() : DType::UInt8;
  if (!is8Bit(outType))
    return opError(context, "y_zero_point must be int8 or uint8");
  float ys = static_cast<float>(yScale->elementAsDouble(0));
  double yz = yZero ? yZero->elementAsDouble(0) : 0;
  y = Tensor(outType, acc.shape());
  const double *data = acc.data<double>();
  for (int64_t i = 0; i < acc.numElements(); ++i) {
    int64_t a =
        inScale.values.size() == 1 ? 0 : axisIndex(acc.shape(), axis, i);
    // The combined multiplier is formed in float, as ONNX's reference.
    float multiplier = static_cast<float>(inScale.at(a)) / ys;
    store(y, i,
          saturateRound(std::nearbyint(data[i] * multiplier) + yz, outType));
  }
  return Status::success();
}

QuantParam scaleProduct(const QuantParam &a, const QuantParam &b) {
  QuantParam product;
  size_t count = std::max(a.values.size(), b.values.size());
  for (size_t i = 0; i < count; ++i)
    product.values.push_back(static_cast<float>(a.at(i)) *
                             static_cast<float>(b.at(i)));
  return product;
}

Status qLinearMatMulKernel(KernelContext &context) {
  const Tensor *a = context.inputTensor(0);
  const Tensor *b = context.inputTensor(3);
  if (!a || !b || !is8Bit(a->dtype()) || !is8Bit(b->dtype()))
    return opError(context, "a and b must be int8 or uint8 tensors");
  if (!context.inputTensor(1) || !context.inputTensor(4))
    return opError(context, "needs a_scale and b_scale");
  if (context.inputTensor(1)->numElements() != 1 ||
      context.inputTensor(4)->numElements() != 1)
    return opError(context, "a_scale and b_scale must be scalars");
  QuantParam as, bs;
  readParam(context, context.inputTensor(1), "a_scale", 1, as, 1);
  readParam(context, context.inputTensor(4), "b_scale", 1, bs, 1);
  Tensor sa, sb, acc, y;
  if (Status s =
          shifted(context, *a, context.inputTensor(2), "a_zero_point", -1, sa);
      !s)
    return s;
  if (Status s =
          shifted(context, *b, context.inputTensor(5), "b_zero_point", -1, sb);
      !s)
    return s;
  if (Status s = runDouble(context, "MatMul", {Value(sa), Value(sb)}, acc); !s)
    return s;
  if (Status s = requantize(context, acc, scaleProduct(as, bs), -1,
                            context.inputTensor(6), context.inputTensor(7), y);
      !s)
    return s;
  context.setOutput(0, y);
  return Status::success();
}

Status qLinearConvKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *w = context.inputTensor(3);
  const Tensor *bias = context.inputTensor(8);
  if (!x || !w || !is8Bit(x->dtype()) || !is8Bit(w->dtype()))
    return opError(context, "x and w must be int8 or uint8 tensors");
  if (!context.inputTensor(1) || !context.inputTensor(4))
    return opError(context, "needs x_scale and w_scale");
  if (bias && bias->dtype() != DType::Int32)
    return opError(context, "B must be int32");
  if (w->rank() < 1)
    return opError(context, "w must be M x C x kernel...");
  int64_t outChannels = w->shape()[0];
  QuantParam xs, ws;
  if (Status s =
          readParam(context, context.inputTensor(1), "x_scale", 1, xs, 1);
      !s)
    return s;
  if (Status s = readParam(context, context.inputTensor(4), "w_scale",
                           outChannels, ws, 1);
      !s)
    return s;
  Tensor sx, sw, acc, y;
  if (Status s =
          shifted(context, *x, context.inputTensor(2), "x_zero_point", -1, sx);
      !s)
    return s;
  if (Status s =
          shifted(context, *w, context.inputTensor(5), "w_zero_point", 0, sw);
      !s)
    return s;
  std::vector<Value> inputs = {Value(sx), Value(sw)};
  if (bias) {
    Tensor b(DType::Float64, bias->shape());
    for (int64_t i = 0; i < bias->numElements(); ++i)
      b.data<double>()[i] = bias->data<int32_t>()[i];
    inputs.push_back(Value(b));
  }
  if (Status s = runDouble(context, "Conv", inputs, acc); !s)
    return s;
  // Per output channel scales apply along axis 1 of the output.
  if (Status s = requantize(context, acc, scaleProduct(xs, ws), 1,
                            context.inputTensor(6), context.inputTensor(7), y);
      !s)
    return s;
  context.setOutput(0, y);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", QuantizeLinear, quantizeLinearKernel);
MNCC_REFERENCE_KERNEL("", DequantizeLinear, dequantizeLinearKernel);
MNCC_REFERENCE_KERNEL("", DynamicQuantizeLinear, dynamicQuantizeLinearKernel);
MNCC_REFERENCE_KERNEL("", MatMulInteger, matMulIntegerKernel);
MNCC_REFERENCE_KERNEL("", ConvInteger, convIntegerKernel);
MNCC_REFERENCE_KERNEL("", QLinearMatMul, qLinearMatMulKernel);
MNCC_REFERENCE_KERNEL("", QLinearConv, qLinearConvKernel);
