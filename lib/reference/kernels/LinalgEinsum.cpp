//===- LinalgEinsum.cpp - Einsum and Det ----------------------------------===//
//
// Einsum of two floating operands that is a (batched) matrix product --
// every label in both operands or in the output, no label repeated within
// an operand, no broadcasting -- is one: the operands are gathered into
// [batch, M, K] and [batch, K, N] and multiplied by the shared GEMM
// (Eigen). Everything else is evaluated directly: every combination of
// label values (output labels, then summed labels) in row-major order, so
// each output is summed in a fixed order; repeated labels within an
// operand take diagonals, and "..." broadcasts like numpy. Det is an LU
// factorization with partial pivoting, in double.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

constexpr int kLetters = 52; // a-z, A-Z; ellipsis dimensions follow

/// The accumulator of an element type: double for floating types, the
/// unsigned type of the same width for integers (wrapping like numpy).
template <typename T, typename = void> struct Accumulator {
  using type = double;
};
template <typename T>
struct Accumulator<T, std::enable_if_t<std::is_integral_v<T>>> {
  using type = std::make_unsigned_t<T>;
};

int labelOf(char c) {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -1;
}

/// One term of the equation: labels, with -1 marking the ellipsis.
Status parseTerm(const KernelContext &context, const std::string &text,
                 std::vector<int> &labels) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ')
      continue;
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0)
        return opError(context, "malformed ellipsis in '" + text + "'");
      for (int l : labels)
        if (l == -1)
          return opError(context, "two ellipses in '" + text + "'");
      labels.push_back(-1);
      i += 2;
      continue;
    }
    int l = labelOf(c);
    if (l < 0)
      return opError(context, std::string("invalid label '") + c + "'");
    labels.push_back(l);
  }
  return Status::success();
}

/// Copies the elements of `src` that `sizes` and `strides` (in elements)
/// describe, in row-major order of `sizes`, to `dst`.
template <typename T>
void gatherStrided(const T *src, const std::vector<int64_t> &sizes,
                   const std::vector<int64_t> &strides, T *dst) {
  int64_t total = 1;
  for (int64_t n : sizes)
    total *= n;
  std::vector<int64_t> index(sizes.size(), 0);
  int64_t offset = 0;
  for (int64_t o = 0; o < total; ++o) {
    dst[o] = src[offset];
    for (size_t k = sizes.size(); k-- > 0;) {
      offset += strides[k];
      if (++index[k] < sizes[k])
        break;
      offset -= strides[k] * sizes[k];
      index[k] = 0;
    }
  }
}

/// Einsum of two floating operands as a batched matrix product, when the
/// equation is one (see the file comment); returns false, with `out`
/// untouched, when it is not.
bool einsumAsMatMul(const std::vector<const Tensor *> &inputs,
                    const std::vector<std::vector<int>> &dimLabels,
                    const std::vector<int> &outLabels,
                    const std::vector<int64_t> &size, Tensor &out) {
  if (inputs.size() != 2 || !isFloatType(inputs[0]->dtype()))
    return false;
  int labelCount = static_cast<int>(size.size());
  // Where each label sits in each operand: its stride, or -1 if absent.
  std::vector<std::vector<int64_t>> strideOf(
      2, std::vector<int64_t>(labelCount, -1));
  for (size_t i = 0; i < 2; ++i) {
    int64_t stride = 1;
    for (int64_t d = inputs[i]->rank() - 1; d >= 0; --d) {
      int l = dimLabels[i][d];
      if (strideOf[i][l] != -1 || inputs[i]->shape()[d] != size[l])
        return false; // a diagonal or a broadcast
      strideOf[i][l] = stride;
      stride *= inputs[i]->shape()[d];
    }
  }
  auto inOutput = [&](int l) {
    return std::find(outLabels.begin(), outLabels.end(), l) != outLabels.end();
  };
  for (size_t j = 0; j < outLabels.size(); ++j)
    if (std::count(outLabels.begin(), outLabels.end(), outLabels[j]) > 1)
      return false; // the loop reports it, as it always has
  std::vector<int> batch, rows, cols, depth;
  for (int l : outLabels) {
    bool inA = strideOf[0][l] != -1, inB = strideOf[1][l] != -1;
    (inA && inB ? batch : inA ? rows : cols).push_back(l);
  }
  for (int l = 0; l < labelCount; ++l) {
    bool inA = strideOf[0][l] != -1, inB = strideOf[1][l] != -1;
    if ((inA || inB) && !inOutput(l)) {
      if (!(inA && inB))
        return false; // summed within one operand
      depth.push_back(l);
    }
  }
  auto extent = [&](const std::vector<int> &labels) {
    int64_t n = 1;
    for (int l : labels)
      n *= size[l];
    return n;
  };
  int64_t batches = extent(batch), m = extent(rows), n = extent(cols),
          k = extent(depth);
  // Gathers operand i with its labels in the order of `groups`.
  auto gather = [&](auto tag, size_t i, const Tensor &operand,
                    std::initializer_list<const std::vector<int> *> groups) {
    using T = decltype(tag);
    std::vector<int64_t> sizes, strides;
    for (const std::vector<int> *group : groups)
      for (int l : *group) {
        sizes.push_back(size[l]);
        strides.push_back(strideOf[i][l]);
      }
    std::vector<T> data(operand.numElements());
    gatherStrided(operand.data<T>(), sizes, strides, data.data());
    return data;
  };
  DType work = computeType(inputs[0]->dtype());
  Tensor a = castFloat(*inputs[0], work), b = castFloat(*inputs[1], work);
  Tensor result(work, out.shape());
  dispatchNumeric(work, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      std::vector<T> lhs = gather(tag, 0, a, {&batch, &rows, &depth});
      std::vector<T> rhs = gather(tag, 1, b, {&batch, &depth, &cols});
      std::vector<T> product(batches * m * n);
      for (int64_t p = 0; p < batches; ++p)
        linalg::gemm(false, false, m, n, k, T(1), lhs.data() + p * m * k, k,
                     rhs.data() + p * k * n, n, T(0),
                     product.data() + p * m * n, n);
      // The product is [batch, rows, cols]; the output wants its labels
      // in the equation's order.
      std::vector<int64_t> productStride(labelCount, 0);
      int64_t stride = 1;
      for (const std::vector<int> *group : {&cols, &rows, &batch})
        for (auto l = group->rbegin(); l != group->rend(); ++l) {
          productStride[*l] = stride;
          stride *= size[*l];
        }
      std::vector<int64_t> sizes, strides;
      for (int l : outLabels) {
        sizes.push_back(size[l]);
        strides.push_back(productStride[l]);
      }
      gatherStrided(product.data(), sizes, strides, result.data<T>());
    }
  });
  out = castFloat(result, out.dtype());
  return true;
}

Status einsumKernel(KernelContext &context) {
  if (!context.hasAttribute("equation"))
    return opError(context, "needs an equation");
  std::string equation = context.getString("equation", "");
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  size_t count = context.numInputs();
  if (terms.size() != count || count == 0)
    return opError(context,
                   "the equation names " + std::to_string(terms.size()) +
                       " operands but there are " + std::to_string(count));
  DType dtype = DType::Undefined;
  std::vector<const Tensor *> inputs;
  for (size_t i = 0; i < count; ++i) {
    const Tensor *t = context.inputTensor(i);
    if (!t)
      return opError(context, "missing input " + std::to_string(i));
    if (i == 0)
      dtype = t->dtype();
    if (t->dtype() != dtype)
      return opError(context, "all inputs must have one type");
    inputs.push_back(t);
  }
  if (dtype == DType::Bool || dtype == DType::String ||
      dtype == DType::Complex64 || dtype == DType::Complex128)
    return opError(context,
                   std::string("unsupported type ") + dtypeName(dtype));

  // Per operand: the label of each dimension (ellipsis dimensions get
  // kLetters + j, aligned on the right across operands).
  std::vector<std::vector<int>> dimLabels(count);
  size_t ellipsisRank = 0;
  std::vector<std::vector<int>> parsed(count);
  for (size_t i = 0; i < count; ++i) {
    if (Status s = parseTerm(context, terms[i], parsed[i]); !s)
      return s;
    size_t explicitCount = 0;
    bool hasEllipsis = false;
    for (int l : parsed[i]) {
      if (l == -1)
        hasEllipsis = true;
      else
        ++explicitCount;
    }
    size_t rank = inputs[i]->rank();
    if ((!hasEllipsis && explicitCount != rank) || explicitCount > rank)
      return opError(context, "term '" + terms[i] + "' does not match rank " +
                                  std::to_string(rank));
    if (hasEllipsis)
      ellipsisRank = std::max(ellipsisRank, rank - explicitCount);
  }
  for (size_t i = 0; i < count; ++i) {
    size_t rank = inputs[i]->rank(), explicitCount = 0;
    for (int l : parsed[i])
      explicitCount += l != -1;
    for (int l : parsed[i]) {
      if (l != -1) {
        dimLabels[i].push_back(l);
        continue;
      }
      size_t e = rank - explicitCount;
      for (size_t j = 0; j < e; ++j)
        dimLabels[i].push_back(kLetters +
                               static_cast<int>(ellipsisRank - e + j));
    }
  }
  int labelCount = kLetters + static_cast<int>(ellipsisRank);
  std::vector<int64_t> size(labelCount, -1);
  std::vector<int> uses(labelCount, 0);
  for (size_t i = 0; i < count; ++i)
    for (size_t d = 0; d < dimLabels[i].size(); ++d) {
      int l = dimLabels[i][d];
      int64_t n = inputs[i]->shape()[d];
      ++uses[l];
      if (size[l] == -1 || size[l] == 1)
        size[l] = n;
      else if (n != size[l] && !(l >= kLetters && n == 1))
        return opError(context,
                       "label sizes differ: " + std::to_string(size[l]) +
                           " and " + std::to_string(n));
    }
  // Output labels: as written, or (implicit mode) the ellipsis then the
  // letters used once, in alphabetical (ASCII) order.
  std::vector<int> outLabels;
  if (arrow != std::string::npos) {
    std::vector<int> parsedOut;
    if (Status s = parseTerm(context, equation.substr(arrow + 2), parsedOut);
        !s)
      return s;
    for (int l : parsedOut) {
      if (l == -1) {
        for (size_t j = 0; j < ellipsisRank; ++j)
          outLabels.push_back(kLetters + static_cast<int>(j));
        continue;
      }
      if (size[l] < 0)
        return opError(context, "output label not in any input");
      outLabels.push_back(l);
    }
  } else {
    for (size_t j = 0; j < ellipsisRank; ++j)
      outLabels.push_back(kLetters + static_cast<int>(j));
    for (int l = 26; l < 52; ++l) // 'A'..'Z' sort before 'a'..'z'
      if (uses[l] == 1)
        outLabels.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (uses[l] == 1)
        outLabels.push_back(l);
  }
  std::vector<int> loopLabels = outLabels;
  for (int l = 0; l < labelCount; ++l)
    if (size[l] >= 0 &&
        std::find(outLabels.begin(), outLabels.end(), l) == outLabels.end())
      loopLabels.push_back(l);
  // Stride of each loop label in each operand (summed over repeated
  // labels: the diagonal), 0 where it broadcasts or is absent.
  size_t loops = loopLabels.size();
  std::vector<std::vector<int64_t>> strides(count,
                                            std::vector<int64_t>(loops, 0));
  for (size_t i = 0; i < count; ++i) {
    int64_t stride = 1;
    for (int64_t d = inputs[i]->rank() - 1; d >= 0; --d) {
      int l = dimLabels[i][d];
      size_t at = std::find(loopLabels.begin(), loopLabels.end(), l) -
                  loopLabels.begin();
      if (inputs[i]->shape()[d] != 1 || size[l] == 1)
        strides[i][at] += stride;
      stride *= inputs[i]->shape()[d];
    }
  }
  std::vector<int64_t> outShape, loopSize(loops);
  for (size_t k = 0; k < loops; ++k)
    loopSize[k] = size[loopLabels[k]];
  for (int l : outLabels)
    outShape.push_back(size[l]);
  int64_t inner = 1;
  for (size_t k = outLabels.size(); k < loops; ++k)
    inner *= loopSize[k];
  Tensor out(dtype, outShape);
  if (einsumAsMatMul(inputs, dimLabels, outLabels, size, out)) {
    context.setOutput(0, out);
    return Status::success();
  }
  dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, Float16> ||
                  std::is_same_v<T, BFloat16>) {
      if constexpr (!std::is_same_v<T, bool>) {
        using Acc = typename Accumulator<T>::type;
        std::vector<int64_t> index(loops, 0), offset(count, 0);
        int64_t total = out.numElements();
        for (int64_t o = 0; o < total; ++o) {
          Acc sum = 0;
          for (int64_t s = 0; s < inner; ++s) {
            Acc product = 1;
            for (size_t i = 0; i < count; ++i) {
              T v = inputs[i]->data<T>()[offset[i]];
              if constexpr (std::is_integral_v<T>)
                product *= static_cast<Acc>(v);
              else
                product *= static_cast<double>(static_cast<float>(v));
            }
            sum += product;
            // Advance the odometer over all loop labels.
            for (size_t k = loops; k-- > 0;) {
              ++index[k];
              for (size_t i = 0; i < count; ++i)
                offset[i] += strides[i][k];
              if (index[k] < loopSize[k])
                break;
              for (size_t i = 0; i < count; ++i)
                offset[i] -= strides[i][k] * loopSize[k];
              index[k] = 0;
            }
          }
          if (inner == 0) {
            // No summation terms: advance over the output labels only.
            for (size_t k = outLabels.size(); k-- > 0;) {
              ++index[k];
              for (size_t i = 0; i < count; ++i)
                offset[i] += strides[i][k];
              if (index[k] < loopSize[k])
                break;
              for (size_t i = 0; i < count; ++i)
                offset[i] -= strides[i][k] * loopSize[k];
              index[k] = 0;
            }
          }
          if constexpr (std::is_same_v<T, Float16> ||
                        std::is_same_v<T, BFloat16>)
            out.data<T>()[o] = T(static_cast<float>(sum));
          else
            out.data<T>()[o] = static_cast<T>(sum);
        }
      }
    }
  });
  context.setOutput(0, out);
  return Status::success();
}

Status detKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  int64_t rank = x->rank();
  if (rank < 2 || x->shape()[rank - 1] != x->shape()[rank - 2])
    return opError(context,
                   "X must be [..., M, M], not " + shapeToString(x->shape()));
  int64_t n = x->shape()[rank - 1];
  std::vector<int64_t> outShape(x->shape().begin(), x->shape().end() - 2);
  Tensor xd = castFloat(*x, DType::Float64);
  Tensor out(DType::Float64, outShape);
  int64_t matrices = out.numElements();
  std::vector<double> a(n * n);
  for (int64_t m = 0; m < matrices; ++m) {
    std::copy(xd.data<double>() + m * n * n,
              xd.data<double>() + (m + 1) * n * n, a.begin());
    double det = 1;
    for (int64_t col = 0; col < n && det != 0; ++col) {
      int64_t pivot = col;
      for (int64_t row = col + 1; row < n; ++row)
        if (std::abs(a[row * n + col]) > std::abs(a[pivot * n + col]))
          pivot = row;
      if (a[pivot * n + col] == 0) {
        det = 0;
        break;
      }
      if (pivot != col) {
        for (int64_t k = 0; k < n; ++k)
          std::swap(a[col * n + k], a[pivot * n + k]);
        det = -det;
      }
      det *= a[col * n + col];
      for (int64_t row = col + 1; row < n; ++row) {
        double factor = a[row * n + col] / a[col * n + col];
        for (int64_t k = col; k < n; ++k)
          a[row * n + k] -= factor * a[col * n + k];
      }
    }
    out.data<double>()[m] = det;
  }
  context.setOutput(0, castFloat(out, x->dtype()));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", Einsum, einsumKernel);
MNCC_REFERENCE_KERNEL("", Det, detKernel);
