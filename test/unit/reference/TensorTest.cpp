//===- TensorTest.cpp - Host tensors and broadcasting ---------------------===//

#include "mncc/reference/Tensor.h"
#include "mncc/reference/Broadcast.h"
#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mncc::reference;

namespace {

TEST(ReferenceTensor, ZeroFilledAlignedAndShaped) {
  Tensor tensor(DType::Float32, {2, 3});
  EXPECT_EQ(tensor.numElements(), 6);
  EXPECT_EQ(tensor.byteSize(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.raw()) % 64, 0u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(tensor.data<float>()[i], 0.0f);
  Tensor empty(DType::Int64, {0, 4});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_NE(empty.raw(), nullptr);
}

TEST(ReferenceTensor, CopiesShareAndClonesDoNot) {
  Tensor a = Tensor::fromVector<int32_t>(DType::Int32, {3}, {1, 2, 3});
  Tensor shared = a;
  Tensor copy = a.clone();
  a.data<int32_t>()[0] = 7;
  EXPECT_EQ(shared.data<int32_t>()[0], 7);
  EXPECT_EQ(copy.data<int32_t>()[0], 1);
  EXPECT_EQ(a.reshaped({1, 3}).shape(), (std::vector<int64_t>{1, 3}));
}

TEST(ReferenceTensor, HalfConversionRoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to even (1.0).
  EXPECT_EQ(Float16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: to 1 + 2^-9.
  EXPECT_EQ(Float16(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_EQ(Float16(65504.0f).bits, 0x7bff);              // largest half
  EXPECT_EQ(Float16(65520.0f).bits, 0x7c00);              // rounds to infinity
  EXPECT_EQ(Float16(std::ldexp(1.0f, -24)).bits, 0x0001); // smallest
  EXPECT_EQ(float(Float16(-2.5f)), -2.5f);
  EXPECT_EQ(BFloat16(1.00390625f).bits, 0x3f80); // tie to even
  EXPECT_EQ(float(BFloat16(-3.0f)), -3.0f);
}

TEST(ReferenceBroadcast, ShapesAndStrides) {
  EXPECT_EQ(*broadcastShapes({{3, 1, 5}, {4, 1}}),
            (std::vector<int64_t>{3, 4, 5}));
  EXPECT_FALSE(broadcastShapes({{3}, {4}}));
  EXPECT_EQ(broadcastStrides({4, 1}, {3, 4, 5}),
            (std::vector<int64_t>{0, 1, 0}));
  // Walk a 2x3 output from a 2x1 and a 3 input.
  std::vector<std::array<int64_t, 2>> seen;
  forEachBroadcast<2>(
      {2, 3}, {broadcastStrides({2, 1}, {2, 3}), broadcastStrides({3}, {2, 3})},
      [&](int64_t, const std::array<int64_t, 2> &offsets) {
        seen.push_back(offsets);
      });
  std::vector<std::array<int64_t, 2>> expected = {{0, 0}, {0, 1}, {0, 2},
                                                  {1, 0}, {1, 1}, {1, 2}};
  EXPECT_EQ(seen, expected);
}

TEST(ReferenceKernel, IdentitySharesItsInput) {
  Tensor input = Tensor::fromVector<float>(DType::Float32, {2}, {1.5f, -2});
  SimpleKernelContext context("Identity", {Value(input)}, 1);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputTensor(0).data<float>(), input.data<float>());
  SimpleKernelContext missing("Identity", {Value(input)}, 1);
  missing.omitInput(0);
  Status status = missing.run();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "Identity needs an input");
}

} // namespace

/// A view is a tensor over part of another's storage: writes through it
/// land in the whole, it outlives the whole's handle, and a part that
/// does not fit is refused.
TEST(ReferenceTensor, ViewSharesStorageAndRefusesWhatDoesNotFit) {
  Tensor whole =
      Tensor::fromVector<float>(DType::Float32, {2, 3}, {0, 1, 2, 3, 4, 5});
  std::optional<Tensor> part =
      Tensor::view(whole, 3 * sizeof(float), DType::Float32, {1, 3});
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->toVector<float>(), (std::vector<float>{3, 4, 5}));
  part->data<float>()[1] = 40;
  EXPECT_EQ(whole.data<float>()[4], 40);
  std::optional<Tensor> inner =
      Tensor::view(*part, sizeof(float), DType::Float32, {2});
  ASSERT_TRUE(inner.has_value());
  EXPECT_EQ(inner->toVector<float>(), (std::vector<float>{40, 5}));
  whole = Tensor();
  EXPECT_EQ(inner->toVector<float>(), (std::vector<float>{40, 5}));
  EXPECT_FALSE(
      Tensor::view(*part, sizeof(float), DType::Float32, {3}).has_value());
  EXPECT_FALSE(Tensor::view(*part, 0, DType::String, {1}).has_value());
}
