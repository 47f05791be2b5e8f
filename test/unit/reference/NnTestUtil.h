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

/// A float32 tensor of the first values numpy's RandomState(0).randn
/// gives (the inputs of many ONNX backend test cases), at most 120.
inline Tensor standardNormals(std::vector<int64_t> shape) {
  static const std::vector<double> kValues = {
      1.76405239,   0.400157213,  0.97873801,   2.24089313,   1.867558,
      -0.977277875, 0.950088441,  -0.151357204, -0.103218853, 0.410598516,
      0.144043565,  1.45427346,   0.761037707,  0.121675014,  0.443863243,
      0.333674341,  1.49407911,   -0.205158263, 0.313067704,  -0.854095757,
      -2.55298972,  0.653618574,  0.864436209,  -0.742165029, 2.26975465,
      -1.45436573,  0.0457585156, -0.187183857, 1.53277922,   1.4693588,
      0.15494743,   0.378162533,  -0.887785733, -1.98079646,  -0.347912163,
      0.156348974,  1.23029065,   1.20237982,   -0.387326807, -0.302302748,
      -1.04855299,  -1.42001796,  -1.70627022,  1.95077538,   -0.509652197,
      -0.438074291, -1.25279534,  0.777490377,  -1.6138978,   -0.212740287,
      -0.895466566, 0.386902511,  -0.51080513,  -1.18063223,  -0.028182229,
      0.428331882,  0.0665172189, 0.302471906,  -0.634322107, -0.362741172,
      -0.672460437, -0.359553158, -0.813146293, -1.7262826,   0.177426144,
      -0.401780933, -1.63019836,  0.462782264,  -0.907298386, 0.0519453958,
      0.729090571,  0.128982916,  1.13940072,   -1.23482585,  0.402341634,
      -0.684810102, -0.870797157, -0.578849673, -0.311552525, 0.0561653413,
      -1.16514981,  0.900826514,  0.46566245,   -1.53624368,  1.48825216,
      1.89588916,   1.1787796,    -0.179924831, -1.07075262,  1.0544517,
      -0.403176934, 1.22244501,   0.208274975,  0.976639032,  0.356366396,
      0.706573188,  0.0105000203, 1.78587055,   0.126912087,  0.401989371,
      1.8831507,    -1.34775901,  -1.27048504,  0.96939671,   -1.17312336,
      1.94362116,   -0.413618982, -0.747454822, 1.92294204,   1.48051476,
      1.86755896,   0.906044662,  -0.861225665, 1.91006494,   -0.268003374,
      0.802456379,  0.947251976,  -0.155010089, 0.614079356,  0.9222067};
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  EXPECT_LE(count, static_cast<int64_t>(kValues.size()));
  return make(DType::Float32, std::move(shape),
              std::vector<double>(kValues.begin(), kValues.begin() + count));
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
