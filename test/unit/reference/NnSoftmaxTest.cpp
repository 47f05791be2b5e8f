//===- NnSoftmaxTest.cpp - Softmax, LogSoftmax, Hardmax and Dropout -------===//
//
// ONNX backend test cases (expected values from ONNX's test data) plus
// hand-derived cases: opset-13 single-axis semantics, Hardmax ties,
// Dropout's training mode (scaling, mask and determinism) and errors.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

TEST(ReferenceSoftmax, SingleAxisNotFlattened) {
  // axis 1 of a 2x2x2 tensor: each pair (x[i, 0, k], x[i, 1, k]).
  Tensor x = make(DType::Float32, {2, 2, 2}, {0, 0, 0, 0, 1, 0, 1, 0});
  SimpleKernelContext context("Softmax", {Value(x)}, 1);
  context.setInt("axis", 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 2, 2},
                        {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}));
  SimpleKernelContext log("LogSoftmax", {Value(x)}, 1);
  ASSERT_TRUE(log.run().ok());
  double l = std::log(1 + std::exp(1.0));
  expectTensorNear(log.outputTensor(0),
                   make(DType::Float32, {2, 2, 2},
                        {-std::log(2.0), -std::log(2.0), -std::log(2.0),
                         -std::log(2.0), 1 - l, -l, 1 - l, -l}));
  SimpleKernelContext bad("Softmax", {Value(x)}, 1);
  bad.setInt("axis", 3);
  EXPECT_FALSE(bad.run().ok());
}

TEST(ReferenceSoftmax, HardmaxPicksTheFirstMaximum) {
  Tensor x = make(DType::Float16, {2, 3}, {1, 3, 3, -1, -1, -2});
  SimpleKernelContext context("Hardmax", {Value(x)}, 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float16, {2, 3}, {0, 1, 0, 1, 0, 0}), 0);
  // numpy's argmax: the first NaN is the maximum.
  SimpleKernelContext nan(
      "Hardmax", {Value(make(DType::Float32, {4}, {1, NAN, 5, NAN}))}, 1);
  ASSERT_TRUE(nan.run().ok());
  expectTensorNear(nan.outputTensor(0), make(DType::Float32, {4}, {0, 1, 0, 0}),
                   0);
}

TEST(ReferenceDropout, InferenceIsTheIdentity) {
  Tensor x = make(DType::Float32, {3}, {1, 2, 3});
  SimpleKernelContext context(
      "Dropout", {Value(x), Value(make(DType::Float32, {}, {0.9}))}, 2);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputTensor(0).data<float>(), x.data<float>());
  expectTensorNear(context.outputTensor(1), make(DType::Bool, {3}, {1, 1, 1}),
                   0);
}

TEST(ReferenceDropout, TrainingScalesKeptElementsAndIsDeterministic) {
  std::vector<double> ones(1000, 1.0);
  Tensor x = make(DType::Float32, {1000}, ones);
  Tensor ratio = make(DType::Float32, {}, {0.25});
  Tensor training = make(DType::Bool, {}, {1});
  auto runOnce = [&](int64_t seed, Tensor &output, Tensor &mask) {
    SimpleKernelContext context("Dropout",
                                {Value(x), Value(ratio), Value(training)}, 2);
    context.setInt("seed", seed);
    ASSERT_TRUE(context.run().ok());
    output = context.outputTensor(0);
    mask = context.outputTensor(1);
  };
  Tensor out1, mask1, out2, mask2, out3, mask3;
  runOnce(7, out1, mask1);
  runOnce(7, out2, mask2);
  runOnce(8, out3, mask3);
  int64_t kept = 0, differs = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    bool keep = mask1.data<bool>()[i];
    kept += keep;
    EXPECT_FLOAT_EQ(out1.data<float>()[i], keep ? 1 / 0.75f : 0.0f);
    EXPECT_EQ(keep, mask2.data<bool>()[i]);
    differs += keep != mask3.data<bool>()[i];
  }
  // About 750 kept; the bound is loose (binomial sd ~ 14).
  EXPECT_GT(kept, 650);
  EXPECT_LT(kept, 850);
  EXPECT_GT(differs, 0);
  SimpleKernelContext bad(
      "Dropout",
      {Value(x), Value(make(DType::Float32, {}, {1.0})), Value(training)}, 1);
  EXPECT_FALSE(bad.run().ok());
}

// ONNX backend test test_softmax_example.
TEST(ReferenceSoftmaxOnnx, SoftmaxExample) {
  SimpleKernelContext context(
      "Softmax", {Value(make(DType::Float32, {1, 3}, {-1, 0, 1}))}, 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 3}, {0.0900305733, 0.244728461, 0.665240943}));
}

// ONNX backend test test_softmax_large_number.
TEST(ReferenceSoftmaxOnnx, SoftmaxLargeNumber) {
  SimpleKernelContext context(
      "Softmax",
      {Value(make(DType::Float32, {2, 4},
                  {0, 1, 2, 3, 10000, 10001, 10002, 10003}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {2, 4},
           {0.0320586041, 0.0871443227, 0.236882806, 0.643914282, 0.0320586041,
            0.0871443227, 0.236882806, 0.643914282}));
}

// ONNX backend test test_logsoftmax_large_number.
TEST(ReferenceSoftmaxOnnx, LogsoftmaxLargeNumber) {
  SimpleKernelContext context(
      "LogSoftmax",
      {Value(make(DType::Float32, {2, 4},
                  {0, 1, 2, 3, 10000, 10001, 10002, 10003}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 4},
                        {-3.4401896, -2.4401896, -1.4401896, -0.44018966,
                         -3.4401896, -2.4401896, -1.4401896, -0.44018966}));
}

// ONNX backend test test_hardmax_example.
TEST(ReferenceSoftmaxOnnx, HardmaxExample) {
  SimpleKernelContext context(
      "Hardmax",
      {Value(make(DType::Float32, {4, 4},
                  {3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {4, 4},
                        {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
}

// ONNX backend test test_hardmax_one_hot.
TEST(ReferenceSoftmaxOnnx, HardmaxOneHot) {
  SimpleKernelContext context(
      "Hardmax", {Value(make(DType::Float32, {1, 4}, {3, 3, 3, 1}))}, 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 4}, {1, 0, 0, 0}));
}

// ONNX backend test test_softmax_axis_0.
TEST(ReferenceSoftmaxOnnx, SoftmaxAxis0) {
  SimpleKernelContext context(
      "Softmax",
      {Value(make(
          DType::Float32, {3, 4, 5},
          {1.76405239,  0.400157213,  0.97873801,  2.24089313,  1.867558,
           0.977277875, 0.950088441,  0.151357204, 0.103218853, 0.410598516,
           0.144043565, 1.45427346,   0.761037707, 0.121675014, 0.443863243,
           0.333674341, 1.49407911,   0.205158263, 0.313067704, 0.854095757,
           2.55298972,  0.653618574,  0.864436209, 0.742165029, 2.26975465,
           1.45436573,  0.0457585156, 0.187183857, 1.53277922,  1.4693588,
           0.15494743,  0.378162533,  0.887785733, 1.98079646,  0.347912163,
           0.156348974, 1.23029065,   1.20237982,  0.387326807, 0.302302748,
           1.04855299,  1.42001796,   1.70627022,  1.95077538,  0.509652197,
           0.438074291, 1.25279534,   0.777490377, 1.6138978,   0.212740287,
           0.895466566, 0.386902511,  0.51080513,  1.18063223,  0.028182229,
           0.428331882, 0.0665172189, 0.302471906, 0.634322107, 0.362741172}))},
      1);
  context.setInt("axis", 0);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {3, 4, 5},
           {0.271002412, 0.197578207, 0.252400666, 0.50720495,   0.363331944,
            0.313029438, 0.362538099, 0.255961299, 0.10302195,   0.212617531,
            0.242073417, 0.593531609, 0.343200266, 0.0970736369, 0.389347553,
            0.340507865, 0.498000711, 0.207772955, 0.289356679,  0.457098275,
            0.596491575, 0.254575133, 0.225138545, 0.113316759,  0.543219507,
            0.504407823, 0.146760166, 0.2652978,   0.43030861,   0.612932742,
            0.244727373, 0.202346087, 0.38957724,  0.623027861,  0.353725553,
            0.285177827, 0.382532299, 0.563218474, 0.311661988,  0.263250351,
            0.132506058, 0.547846615, 0.522460818, 0.379478306,  0.0934485495,
            0.182562709, 0.490701795, 0.478740901, 0.46666944,   0.174449757,
            0.513199151, 0.204122335, 0.267222494, 0.279898494,  0.256926835,
            0.374314308, 0.119466931, 0.2290086,   0.398981333,  0.279651403}));
}

// ONNX backend test test_logsoftmax_axis_1.
TEST(ReferenceSoftmaxOnnx, LogsoftmaxAxis1) {
  SimpleKernelContext context(
      "LogSoftmax",
      {Value(make(
          DType::Float32, {3, 4, 5},
          {1.76405239,  0.400157213,  0.97873801,  2.24089313,  1.867558,
           0.977277875, 0.950088441,  0.151357204, 0.103218853, 0.410598516,
           0.144043565, 1.45427346,   0.761037707, 0.121675014, 0.443863243,
           0.333674341, 1.49407911,   0.205158263, 0.313067704, 0.854095757,
           2.55298972,  0.653618574,  0.864436209, 0.742165029, 2.26975465,
           1.45436573,  0.0457585156, 0.187183857, 1.53277922,  1.4693588,
           0.15494743,  0.378162533,  0.887785733, 1.98079646,  0.347912163,
           0.156348974, 1.23029065,   1.20237982,  0.387326807, 0.302302748,
           1.04855299,  1.42001796,   1.70627022,  1.95077538,  0.509652197,
           0.438074291, 1.25279534,   0.777490377, 1.6138978,   0.212740287,
           0.895466566, 0.386902511,  0.51080513,  1.18063223,  0.028182229,
           0.428331882, 0.0665172189, 0.302471906, 0.634322107, 0.362741172}))},
      1);
  context.setInt("axis", 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {3, 4, 5},
           {-0.637859881, -2.15042806,  -0.994331956, -0.324629873,
            -0.607984722, -1.42463446,  -1.60049677,  -1.82171273,
            -2.46230412,  -2.06494427,  -2.25786877,  -1.09631181,
            -1.21203232,  -2.44384789,  -2.03167939,  -2.06823802,
            -1.05650616,  -1.76791167,  -2.25245523,  -1.62144709,
            -0.415579408, -1.40703893,  -1.36957955,  -1.99564219,
            -0.55118072,  -1.51420343,  -2.01489902,  -2.04683208,
            -1.20502782,  -1.35157657,  -2.81362152,  -1.68249512,
            -1.34623003,  -0.757010639, -2.47302318,  -2.8122201,
            -0.83036691,  -1.031636,    -2.35048032,  -2.51863265,
            -1.07805991,  -0.900259733, -0.664367318, -0.894056439,
            -1.17073286,  -1.68853855,  -1.06748235,  -1.59314716,
            -1.23093402,  -1.46764469,  -1.23114634,  -1.93337512,
            -1.85983241,  -1.66419959,  -1.65220284,  -1.69828105,
            -2.25376034,  -2.06816578,  -2.21050978,  -1.31764388}));
}

// ONNX backend test test_hardmax_axis_1.
TEST(ReferenceSoftmaxOnnx, HardmaxAxis1) {
  SimpleKernelContext context("Hardmax", {Value(standardNormals({3, 4, 5}))},
                              1);
  context.setInt("axis", 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {3, 4, 5},
           {1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
            0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0,
            0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0}));
}

// ONNX backend test test_training_dropout_zero_ratio_mask.
TEST(ReferenceSoftmaxOnnx, TrainingDropoutZeroRatioMask) {
  SimpleKernelContext context("Dropout",
                              {Value(standardNormals({3, 4, 5})),
                               Value(make(DType::Float32, {}, {0})),
                               Value(make(DType::Bool, {}, {1}))},
                              2);
  context.setInt("seed", 0);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), standardNormals({3, 4, 5}));
  expectTensorNear(
      context.outputTensor(1),
      make(DType::Bool, {3, 4, 5},
           {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

// ONNX backend test test_dropout_default_mask_ratio.
TEST(ReferenceSoftmaxOnnx, DropoutDefaultMaskRatio) {
  SimpleKernelContext context("Dropout",
                              {Value(standardNormals({3, 4, 5})),
                               Value(make(DType::Float32, {}, {0.100000001}))},
                              2);
  context.setInt("seed", 0);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), standardNormals({3, 4, 5}));
  expectTensorNear(
      context.outputTensor(1),
      make(DType::Bool, {3, 4, 5},
           {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

} // namespace
