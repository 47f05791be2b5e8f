//===- NnTestUtil.h - Helpers of the Nn/Linalg/Quant kernel tests -*- C++
//-*-===//

#ifndef MNCC_TEST_UNIT_REFERENCE_NNTESTUTIL_H
#define MNCC_TEST_UNIT_REFERENCE_NNTESTUTIL_H

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>
#include <vector>

namespace mncc::reference::nntest {

/// A tensor of any numeric type from values written as doubles.
inline Tensor make(DType dtype, std::vector<int64_t> shape,
                   const std::vector<double> &values) {
  Tensor tensor(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), tensor.numElements());
  dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    T *data = tensor.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
        data[i] = T(static_cast<float>(values[i]));
      else if constexpr (std::is_arithmetic_v<T>)
        data[i] = static_cast<T>(values[i]);
    }
  });
  return tensor;
}

/// Same type and shape, and every element within `tolerance` (relative to
/// 1 + |expected|); NaN matches NaN.
inline void expectTensorNear(const Tensor &actual, const Tensor &expected,
                             double tolerance = 1e-5) {
  ASSERT_EQ(dtypeName(actual.dtype()),
            std::string(dtypeName(expected.dtype())));
  ASSERT_EQ(shapeToString(actual.shape()), shapeToString(expected.shape()));
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double got = actual.elementAsDouble(i), want = expected.elementAsDouble(i);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got, want, tolerance * (1 + std::fabs(want)))
        << "element " << i;
  }
}

} // namespace mncc::reference::nntest

#endif // MNCC_TEST_UNIT_REFERENCE_NNTESTUTIL_H
