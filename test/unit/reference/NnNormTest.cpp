//===- NnNormTest.cpp - Normalization operators ---------------------------===//
//
// ONNX backend test cases (expected values from ONNX's test data) plus
// hand-derived cases: LRN's channel window, LpNormalization, the Mean and
// InvStdDev outputs of LayerNormalization, float16, and errors.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

TEST(ReferenceNorm, LrnWindowIsFloorBeforeAndCeilAfter) {
  // alpha / size = 1, beta = 1, bias = 1: y = x / (1 + sum of squares).
  Tensor x = make(DType::Float32, {1, 3, 1, 1}, {1, 2, 3});
  SimpleKernelContext three("LRN", {Value(x)}, 1);
  three.setInt("size", 3);
  three.setFloat("alpha", 3);
  three.setFloat("beta", 1);
  ASSERT_TRUE(three.run().ok());
  expectTensorNear(three.outputTensor(0), make(DType::Float32, {1, 3, 1, 1},
                                               {1.0 / 6, 2.0 / 15, 3.0 / 14}));
  // size 2: the window is [c, c + 1].
  SimpleKernelContext two("LRN", {Value(x)}, 1);
  two.setInt("size", 2);
  two.setFloat("alpha", 2);
  two.setFloat("beta", 1);
  ASSERT_TRUE(two.run().ok());
  expectTensorNear(two.outputTensor(0), make(DType::Float32, {1, 3, 1, 1},
                                             {1.0 / 6, 2.0 / 14, 3.0 / 10}));
  SimpleKernelContext noSize("LRN", {Value(x)}, 1);
  EXPECT_FALSE(noSize.run().ok());
}

TEST(ReferenceNorm, LpNormalization) {
  Tensor x = make(DType::Float64, {2, 2}, {3, 4, 0, 5});
  SimpleKernelContext l2("LpNormalization", {Value(x)}, 1);
  ASSERT_TRUE(l2.run().ok());
  expectTensorNear(l2.outputTensor(0),
                   make(DType::Float64, {2, 2}, {0.6, 0.8, 0, 1}));
  SimpleKernelContext l1("LpNormalization", {Value(x)}, 1);
  l1.setInt("p", 1);
  l1.setInt("axis", 0);
  ASSERT_TRUE(l1.run().ok());
  expectTensorNear(l1.outputTensor(0),
                   make(DType::Float64, {2, 2}, {1, 4.0 / 9, 0, 5.0 / 9}));
  SimpleKernelContext p3("LpNormalization", {Value(x)}, 1);
  p3.setInt("p", 3);
  EXPECT_FALSE(p3.run().ok());
}

TEST(ReferenceNorm, LayerNormalizationStatisticsOutputs) {
  Tensor x = make(DType::Float32, {2, 2}, {1, 3, 0, 4});
  Tensor scale = make(DType::Float32, {2}, {2, 3});
  Tensor bias = make(DType::Float32, {2}, {1, 0});
  SimpleKernelContext context("LayerNormalization",
                              {Value(x), Value(scale), Value(bias)}, 3);
  context.setFloat("epsilon", 0);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 2}, {-1, 3, -1, 3}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Float32, {2, 1}, {2, 2}));
  expectTensorNear(context.outputTensor(2),
                   make(DType::Float32, {2, 1}, {1, 0.5}));
  // A Scale that does not broadcast to the normalized shape.
  SimpleKernelContext bad(
      "LayerNormalization",
      {Value(x), Value(make(DType::Float32, {3}, {1, 1, 1}))}, 1);
  Status status = bad.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("LayerNormalization: ", 0), 0u);
}

TEST(ReferenceNorm, BatchNormalizationFloat16AndMixedParameterTypes) {
  // y = (x - mean) / sqrt(var + eps) * scale + B with float parameters on
  // a float16 input (ONNX lets T, T1 and T2 differ).
  Tensor x = make(DType::Float16, {1, 2, 1, 2}, {1, 3, 4, 8});
  SimpleKernelContext context("BatchNormalization",
                              {Value(x),
                               Value(make(DType::Float32, {2}, {1, 2})),
                               Value(make(DType::Float32, {2}, {0, 1})),
                               Value(make(DType::Float64, {2}, {1, 4})),
                               Value(make(DType::Float64, {2}, {4, 16}))},
                              1);
  context.setFloat("epsilon", 0);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float16, {1, 2, 1, 2}, {0, 1, 1, 3}));
  SimpleKernelContext bad("BatchNormalization",
                          {Value(x),
                           Value(make(DType::Float32, {3}, {1, 2, 3})),
                           Value(make(DType::Float32, {2}, {0, 1})),
                           Value(make(DType::Float32, {2}, {1, 4})),
                           Value(make(DType::Float32, {2}, {4, 16}))},
                          1);
  Status status = bad.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "BatchNormalization: scale must have shape [2], not 3");
}

// ONNX backend test test_batchnorm_example_training_mode.
TEST(ReferenceNormOnnx, BatchnormExampleTrainingMode) {
  SimpleKernelContext context(
      "BatchNormalization",
      {Value(standardNormals({2, 3, 4, 5})),
       Value(
           make(DType::Float32, {3}, {0.376425534, -1.09940076, 0.298238188})),
       Value(
           make(DType::Float32, {3}, {1.32638586, -0.694567859, -0.14963454})),
       Value(
           make(DType::Float32, {3}, {-0.435153544, 1.84926379, 0.672294736})),
       Value(
           make(DType::Float32, {3}, {0.975521505, 0.85580337, 0.0117140841}))},
      3);
  context.setInt("training_mode", 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {2, 3, 4, 5},
           {2.00452924,   1.44582617,    1.68283474,    2.19986129,
            2.04692912,   0.881576657,   1.67109883,    1.21990502,
            1.23962426,   1.45010328,    1.34091234,    1.87763214,
            1.59365654,   1.33174932,    1.46372986,    1.41859233,
            1.89393806,   1.19786608,    1.410151,      0.932036638,
            2.13997626,   -1.11611259,   -1.33018327,   0.301209092,
            -2.75718689,  1.02439952,    -0.498872757,  -0.262335896,
            -2.00883937,  -1.94444036,   -0.609746516,  -0.836406052,
            0.449076831,  1.55895352,    -0.0991274714, -0.611169696,
            -1.70168304,  -1.67334163,   -0.0591045618, -0.145440638,
            -0.443827301, -0.54323566,   -0.619840145,  0.358828247,
            -0.299611092, -0.280456007,  -0.498484939,  0.0448433906,
            -0.595120192, -0.220153987,  -0.402859569,  -0.0596825182,
            -0.299919635, -0.479173243,  -0.170764074,  -0.0485955328,
            -0.145421386, -0.0822771341, -0.332974225,  -0.260295987,
            1.00644135,   1.13462007,    0.948811173,   0.574755967,
            1.35458708,   1.11732197,    0.614115715,   1.47147977,
            0.910242856,  1.30318546,    1.58056974,    1.3347429,
            1.74864829,   0.776075184,   1.44672096,    1.00138247,
            0.925195158,  1.04478788,    1.15428293,    1.30491412,
            0.730720818,  -1.36713505,   -0.925256133,  1.10754108,
            -1.96362519,  -2.37755251,   -1.64937711,   -0.269706935,
            0.634866893,  -1.52313089,   -0.0430099368, -1.69371641,
            -0.663896978, -1.44411755,   -0.814273536,  -1.16988432,
            -0.463070154, -2.26583624,   -0.581278563,  -0.860600531,
            0.340731055,  -0.523898363,  -0.503218889,  0.0961997658,
            -0.477163792, 0.356913686,   -0.273911476,  -0.363249868,
            0.351379693,  0.232980967,   0.336558521,   0.0792460293,
            -0.393696308, 0.34793365,    -0.234943032,  0.0515245944,
            0.090273574,  -0.204704702,  0.00111268461, 0.0835711807}));
  expectTensorNear(
      context.outputTensor(1),
      make(DType::Float32, {3}, {-0.380780011, 1.68818533, 0.610142589}));
  expectTensorNear(
      context.outputTensor(2),
      make(DType::Float32, {3}, {0.962410212, 0.887444615, 0.134740114}));
}

// ONNX backend test test_batchnorm_epsilon.
TEST(ReferenceNormOnnx, BatchnormEpsilon) {
  SimpleKernelContext context(
      "BatchNormalization",
      {Value(make(DType::Float32, {2, 3, 4, 5},
                  {0.407461822,   1.34395444,   -0.818220973,  0.0827099383,
                   -1.29105842,   -0.661104202, -1.18019104,   0.197642639,
                   0.413899988,   1.19732201,   1.88335383,    0.714223802,
                   2.28433347,    1.56410253,   0.611103714,   -0.877363324,
                   -1.62108755,   -0.581673026, -0.537833929,  -1.55602372,
                   -0.0544648431, -1.81127882,  -0.63117522,   -0.928159177,
                   1.49072194,    0.195499331,  -0.471604347,  1.81235468,
                   -2.29413748,   0.651209354,  -1.1304965,    -0.777346671,
                   1.11593843,    1.33945298,   -1.76743364,   0.424412459,
                   1.0893091,     -0.384185672, 0.632201433,   -0.549655914,
                   0.521125734,   0.108349547,  0.261668473,   -0.914755344,
                   0.858237803,   0.0943342894, -1.48590386,   -1.90058422,
                   -1.1375792,    -1.76203883,  -0.288623214,  1.04798222,
                   0.249957547,   0.0469044633, -1.03224301,   0.403185695,
                   -0.684059262,  1.26232219,   -2.00555658,   -0.332030386,
                   -0.296100408,  -2.21836066,  -0.183502883,  0.392308056,
                   0.241634801,   0.103935912,  -0.829571187,  0.492759377,
                   0.0901127905,  -0.997567534, -0.800038218,  0.207075581,
                   0.523463011,   -0.699394822, 0.913705826,   -0.672784805,
                   0.133324504,   0.426896006,  -0.0128493914, -0.352248311,
                   0.819466591,   0.521987736,  1.1972599,     -0.382486224,
                   0.691661894,   0.353885025,  1.04758537,    -0.423896223,
                   -3.51476812,   -1.3431567,   1.42550611,    0.22858201,
                   -0.257663757,  0.0503707156, -1.38021088,   -0.26167208,
                   -0.179379687,  -0.6927706,   1.13782692,    -0.169157252,
                   -0.763913691,  -0.498073101, -0.362891108,  0.263960302,
                   -0.629641891,  -0.472258419, -1.5133611,    1.10762465,
                   0.176238745,   -0.940353513, 0.929594338,   -1.06279492,
                   -0.886406243,  1.9213469,    -0.459780514,  -1.08903444,
                   0.98411727,    -1.15920627,  -0.436537087,  1.00924456})),
       Value(
           make(DType::Float32, {3}, {0.713389575, -0.728057742, 0.839516461})),
       Value(
           make(DType::Float32, {3}, {1.23902094, -1.78480387, -0.796185851})),
       Value(
           make(DType::Float32, {3}, {-1.40054131, -0.18435058, -1.39119315})),
       Value(make(DType::Float32, {3},
                  {0.0446122997, 0.799795866, 0.0769564435}))},
      1);
  context.setFloat("epsilon", 0.009999999776482582f);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {2, 3, 4, 5},
           {6.75827932,    9.61709404,   3.0166595,    5.76691484,
            1.57323742,    3.49628687,   1.91168022,   6.11776781,
            6.77793264,    9.16947079,   11.2637072,   7.69472551,
            12.487771,     10.2891359,   7.37993288,   2.83611679,
            0.565763474,   3.73876524,   3.87259197,   0.764382601,
            -1.88988853,   -0.468529463, -1.42329812,  -1.18302178,
            -3.14002967,   -2.09212327,  -1.55239975,  -3.40024829,
            -0.0778702497, -2.46081781,  -1.01931977,  -1.30503738,
            -2.83680916,   -3.01764488,  -0.50400269,  -2.27732658,
            -2.8152647,    -1.62312627,  -2.44543934,  -1.48925173,
            4.64807129,    3.47292185,   3.90941191,   0.560204029,
            5.60780907,    3.43302155,   -1.06582153,  -2.24639177,
            -0.0741621852, -1.85196126,  2.34276485,   6.14799976,
            3.87607193,    3.29799175,   0.225723624,  4.31230307,
            1.21698177,    6.75821257,   -2.54524183,  2.21918678,
            4.61052752,    -1.25752127,  4.95425177,   6.71201897,
            6.25206184,    5.83171129,   2.98201084,   7.01866484,
            5.78951311,    2.46917152,   3.07216573,   6.14656353,
            7.11239386,    3.37939787,   8.30368042,   3.46062994,
            5.92142487,    6.81760502,   5.47520208,   4.43912554,
            -2.59694719,   -2.35627031,  -2.90260267,  -1.62450123,
            -2.49354601,   -2.2202661,   -2.78150773,  -1.59099829,
            0.909687042,   -0.847266018, -3.08726645,  -2.11888909,
            -1.7254895,    -1.97470629,  -0.817287207, -1.72224653,
            -1.78882563,   -1.37346411,  -2.85451818,  -1.79709613,
            0.98964119,    1.74647343,   2.13132858,   3.91593695,
            1.37190473,    1.8199662,    -1.14399064,  6.31779909,
            3.66619873,    0.487327576,  5.81095648,   0.138744175,
            0.640912175,   8.63441753,   1.85549009,   0.064041853,
            5.96618032,    -0.135733128, 1.92166269,   6.03771639}));
}

// ONNX backend test test_instancenorm_example.
TEST(ReferenceNormOnnx, InstancenormExample) {
  SimpleKernelContext context(
      "InstanceNormalization",
      {Value(make(DType::Float32, {1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4})),
       Value(make(DType::Float32, {2}, {1, 1.5})),
       Value(make(DType::Float32, {2}, {0, 1}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 2, 1, 3},
           {-1.22473562, 0, 1.22473562, -0.837103486, 1, 2.83710337}));
}

// ONNX backend test test_layer_normalization_3d_axis1_epsilon.
TEST(ReferenceNormOnnx, LayerNormalization3dAxis1Epsilon) {
  SimpleKernelContext context(
      "LayerNormalization",
      {Value(standardNormals({2, 3, 5})),
       Value(make(DType::Float32, {3, 5},
                  {-0.0682416037, 1.71334267, -0.744754851, -0.826438546,
                   -0.0984525234, -0.663478315, 1.12663591, -1.0799315,
                   -1.14746869, -0.437820047, -0.498032451, 1.92953205,
                   0.94942081, 0.0875512436, -1.2254355})),
       Value(make(DType::Float32, {3, 5},
                  {0.844362974, -1.00021529, -1.54477108, 1.18802977,
                   0.316942602, 0.9208588, 0.318727642, 0.856830597,
                   -0.651025593, -1.03424287, 0.681594491, -0.803409636,
                   -0.689549804, -0.455532491, 0.0174791589}))},
      3);
  context.setInt("axis", 1);
  context.setFloat("epsilon", 0.10000000149011612f);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 3, 5},
                        {0.762684226,  -1.5463841,   -1.78621721, -0.23907423,
                         0.187779829,  2.14796162,   0.648108244, 1.86296451,
                         0.356646001,  -0.899757445, 0.982102096, 0.841809452,
                         -0.611442864, -0.510536313, 0.348596573, 0.837108016,
                         0.747974277,  -1.30785406,  1.11358309,  0.398586154,
                         2.35891509,   0.722430468,  0.290533543, 0.19936657,
                         -1.74846816,  1.33007646,   -1.03586483, -0.97813195,
                         -0.363531739, -1.20901859}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Float32, {2, 1, 1}, {0.687008262, 0.198704585}));
  expectTensorNear(context.outputTensor(2),
                   make(DType::Float32, {2, 1, 1}, {1.111287, 0.787678421}));
}

// ONNX backend test test_layer_normalization_2d_axis0.
TEST(ReferenceNormOnnx, LayerNormalization2dAxis0) {
  SimpleKernelContext context(
      "LayerNormalization",
      {Value(standardNormals({3, 4})),
       Value(make(DType::Float32, {3, 4},
                  {0.761037707, 0.121675014, 0.443863243, 0.333674341,
                   1.49407911, -0.205158263, 0.313067704, -0.854095757,
                   -2.55298972, 0.653618574, 0.864436209, -0.742165029})),
       Value(make(DType::Float32, {3, 4},
                  {2.26975465, -1.45436573, 0.0457585156, -0.187183857,
                   1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733,
                   -1.98079646, -0.347912163, 0.156348974}))},
      3);
  context.setInt("axis", 0);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {3, 4},
                        {3.10758829, -1.50026178, 0.156649113, 0.35259527,
                         3.34522152, 1.85300231, 0.223440945, 1.21082258,
                         1.46794152, -2.21994686, -0.913913727, -0.411547393}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Float32, {1, 1}, {0.748212397}));
  expectTensorNear(context.outputTensor(2),
                   make(DType::Float32, {1, 1}, {1.0837431}));
}

// ONNX backend test test_mvn.
TEST(ReferenceNormOnnx, Mvn) {
  SimpleKernelContext context(
      "MeanVarianceNormalization",
      {Value(make(DType::Float32, {3, 3, 3, 1},
                  {0.843968272, 0.566514373,  0.0583673492, 0.0291636698,
                   0.129642725, 0.506019711,  0.795383036,  0.941134572,
                   0.954657316, 0.177309424,  0.461920947,  0.264804482,
                   0.674684227, 0.0166525692, 0.624730766,  0.924084425,
                   0.97223407,  0.119656987,  0.413561553,  0.912937284,
                   0.59330076,  0.81929934,   0.786260426,  0.117997989,
                   0.692484438, 0.541194141,  0.0751322284}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {3, 3, 3, 1},
           {1.35464227,   0.330534965,  -1.54508138,   -1.21067643,
            -0.892595172, 0.298881352,  0.380830884,   0.818087935,
            0.858656347,  -1.1060555,   -0.0555287711, -0.783103347,
            0.832813561,  -1.25028205,  0.674678564,   0.766937196,
            0.911386907,  -1.64635849,  -0.234027639,  1.60921311,
            0.429405928,  1.29061389,   1.18602443,    -0.929458261,
            0.0721333995, -0.381740004, -1.77993333}));
}

} // namespace
