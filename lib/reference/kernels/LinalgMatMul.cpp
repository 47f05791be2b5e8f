//===- LinalgMatMul.cpp - MatMul and Gemm ---------------------------------===//
//
// Floating types go through the shared GEMM (Eigen, LinalgGemm.cpp;
// float16/bfloat16 via float, rounded once at the end); integer types,
// which ONNX allows for both, through Eigen's product of the unsigned type
// of the same width, whose wrap-around is two's-complement arithmetic.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <type_traits>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

bool isMatMulType(DType dtype) {
  return isFloatType(dtype) || dtype == DType::Int32 || dtype == DType::Int64 ||
         dtype == DType::UInt32 || dtype == DType::UInt64;
}

/// C = op(A) * op(B) for integers (C dense, m x n), wrapping on overflow
/// like the two's-complement arithmetic numpy does: the product of the
/// unsigned type of the same width.
template <typename T>
void integerGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 const T *a, int64_t lda, const T *b, int64_t ldb, T *c) {
  using U = std::make_unsigned_t<T>;
  linalg::integerGemm<U>(
      transA, transB, m, n, k, reinterpret_cast<const U *>(a), lda,
      reinterpret_cast<const U *>(b), ldb, reinterpret_cast<U *>(c));
}

Status matMulKernel(KernelContext &context) {
  const Tensor *aIn = context.inputTensor(0);
  const Tensor *bIn = context.inputTensor(1);
  if (!aIn || !bIn)
    return opError(context, "needs inputs A and B");
  if (aIn->dtype() != bIn->dtype())
    return opError(context, "A and B must have the same type");
  DType dtype = aIn->dtype();
  if (!isMatMulType(dtype))
    return opError(context,
                   std::string("unsupported type ") + dtypeName(dtype));
  if (aIn->rank() == 0 || bIn->rank() == 0)
    return opError(context, "operands must have rank >= 1");
  // numpy.matmul: a 1-D A is a row vector and a 1-D B a column vector; the
  // added dimension is removed from the result.
  std::vector<int64_t> aShape = aIn->shape(), bShape = bIn->shape();
  bool aVector = aShape.size() == 1, bVector = bShape.size() == 1;
  if (aVector)
    aShape.insert(aShape.begin(), 1);
  if (bVector)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back();
  int64_t n = bShape.back();
  if (bShape[bShape.size() - 2] != k)
    return opError(context,
                   "inner dimensions differ: " + shapeToString(aIn->shape()) +
                       " and " + shapeToString(bIn->shape()));
  std::vector<int64_t> aBatch(aShape.begin(), aShape.end() - 2);
  std::vector<int64_t> bBatch(bShape.begin(), bShape.end() - 2);
  auto batch = broadcastShapes({aBatch, bBatch});
  if (!batch)
    return opError(context, "batch dimensions do not broadcast: " +
                                shapeToString(aIn->shape()) + " and " +
                                shapeToString(bIn->shape()));
  std::vector<int64_t> outShape = *batch;
  if (!aVector)
    outShape.push_back(m);
  if (!bVector)
    outShape.push_back(n);
  std::array<std::vector<int64_t>, 2> strides = {
      broadcastStrides(aBatch, *batch), broadcastStrides(bBatch, *batch)};

  if (isFloatType(dtype)) {
    DType work = computeType(dtype);
    Tensor a = castFloat(*aIn, work), b = castFloat(*bIn, work);
    Tensor out(work, outShape);
    dispatchNumeric(work, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        const T *aData = a.data<T>();
        const T *bData = b.data<T>();
        T *outData = out.data<T>();
        std::vector<std::array<int64_t, 2>> pairs;
        forEachBroadcast<2>(
            *batch, strides,
            [&](int64_t, const std::array<int64_t, 2> &offsets) {
              pairs.push_back(offsets);
            });
        auto multiply = [&](int64_t index, bool parallel) {
          linalg::gemm(false, false, m, n, k, T(1),
                       aData + pairs[index][0] * m * k, k,
                       bData + pairs[index][1] * k * n, n, T(0),
                       outData + index * m * n, n, parallel);
        };
        int64_t count = static_cast<int64_t>(pairs.size());
        int64_t work = m * n * std::max<int64_t>(k, 1);
        if (count > 1 && work < (int64_t(1) << 18)) {
          // Many small products (attention heads): one thread each.
          int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / work);
          linalg::parallelFor(count, grain, [&](int64_t begin, int64_t end) {
            for (int64_t index = begin; index < end; ++index)
              multiply(index, false);
          });
        } else {
          for (int64_t index = 0; index < count; ++index)
            multiply(index, true);
        }
      }
    });
    context.setOutput(0, castFloat(out, dtype));
    return Status::success();
  }
  Tensor out(dtype, outShape);
  dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    // isMatMulType admits 32- and 64-bit integers only.
    if constexpr (std::is_integral_v<T> && sizeof(T) >= 4) {
      forEachBroadcast<2>(
          *batch, strides,
          [&](int64_t index, const std::array<int64_t, 2> &offsets) {
            integerGemm<T>(false, false, m, n, k,
                           aIn->data<T>() + offsets[0] * m * k, k,
                           bIn->data<T>() + offsets[1] * k * n, n,
                           out.data<T>() + index * m * n);
          });
    }
  });
  context.setOutput(0, out);
  return Status::success();
}

Status gemmKernel(KernelContext &context) {
  const Tensor *aIn = context.inputTensor(0);
  const Tensor *bIn = context.inputTensor(1);
  const Tensor *cIn = context.inputTensor(2);
  if (!aIn || !bIn)
    return opError(context, "needs inputs A and B");
  DType dtype = aIn->dtype();
  if (bIn->dtype() != dtype || (cIn && cIn->dtype() != dtype))
    return opError(context, "A, B and C must have the same type");
  if (!isMatMulType(dtype))
    return opError(context,
                   std::string("unsupported type ") + dtypeName(dtype));
  if (aIn->rank() != 2 || bIn->rank() != 2)
    return opError(context, "A and B must be 2-D, not " +
                                shapeToString(aIn->shape()) + " and " +
                                shapeToString(bIn->shape()));
  bool transA = context.getInt("transA", 0) != 0;
  bool transB = context.getInt("transB", 0) != 0;
  double alpha = context.getFloat("alpha", 1.0f);
  double beta = context.getFloat("beta", 1.0f);
  int64_t m = transA ? aIn->shape()[1] : aIn->shape()[0];
  int64_t k = transA ? aIn->shape()[0] : aIn->shape()[1];
  int64_t kB = transB ? bIn->shape()[1] : bIn->shape()[0];
  int64_t n = transB ? bIn->shape()[0] : bIn->shape()[1];
  if (k != kB)
    return opError(context,
                   "inner dimensions differ: " + shapeToString(aIn->shape()) +
                       " and " + shapeToString(bIn->shape()));
  std::vector<int64_t> outShape = {m, n};
  std::vector<int64_t> cStrides;
  if (cIn) {
    // C broadcasts one way, to M x N.
    auto shape = broadcastShapes({cIn->shape(), outShape});
    if (cIn->rank() > 2 || !shape || *shape != outShape)
      return opError(context, "C of shape " + shapeToString(cIn->shape()) +
                                  " does not broadcast to " +
                                  shapeToString(outShape));
    cStrides = broadcastStrides(cIn->shape(), outShape);
  }
  // Even with beta == 0, C takes part (0 * NaN is NaN), as in ONNX's
  // formula and its numpy reference.
  bool useC = cIn != nullptr;

  if (isFloatType(dtype)) {
    DType work = computeType(dtype);
    Tensor a = castFloat(*aIn, work), b = castFloat(*bIn, work);
    Tensor out(work, outShape);
    dispatchNumeric(work, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        T *outData = out.data<T>();
        if (useC) {
          Tensor c = castFloat(*cIn, work);
          const T *cData = c.data<T>();
          forEachBroadcast<1>(
              outShape, {cStrides},
              [&](int64_t index, const std::array<int64_t, 1> &offsets) {
                outData[index] = T(beta) * cData[offsets[0]];
              });
        }
        linalg::gemm(transA, transB, m, n, k, T(alpha), a.data<T>(),
                     aIn->shape()[1], b.data<T>(), bIn->shape()[1],
                     useC ? T(1) : T(0), outData, n);
      }
    });
    context.setOutput(0, castFloat(out, dtype));
    return Status::success();
  }
  // Integer Gemm: ONNX computes alpha * A'B' + beta * C and casts back.
  Tensor out(dtype, outShape);
  dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && sizeof(T) >= 4) {
      std::vector<T> product(m * n);
      int64_t lda = aIn->shape()[1], ldb = bIn->shape()[1];
      integerGemm<T>(transA, transB, m, n, k, aIn->data<T>(), lda,
                     bIn->data<T>(), ldb, product.data());
      T *outData = out.data<T>();
      for (int64_t i = 0; i < m * n; ++i)
        outData[i] = static_cast<T>(alpha * static_cast<double>(product[i]));
      if (useC) {
        const T *cData = cIn->data<T>();
        forEachBroadcast<1>(
            outShape, {cStrides},
            [&](int64_t index, const std::array<int64_t, 1> &offsets) {
              outData[index] =
                  static_cast<T>(static_cast<double>(outData[index]) +
                                 beta * static_cast<double>(cData[offsets[0]]));
            });
      }
    }
  });
  context.setOutput(0, out);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", MatMul, matMulKernel);
MNCC_REFERENCE_KERNEL("", Gemm, gemmKernel);
