//===- TensorSizeTest.cpp - The size check of every tensor allocation -----===//

#include "mncc/reference/Kernel.h"
#include "mncc/reference/SimpleContext.h"
#include "mncc/reference/Tensor.h"

#include <gtest/gtest.h>

using namespace mncc::reference;

namespace {

/// Restores the default limit after each test.
class TensorSizeTest : public ::testing::Test {
protected:
  void TearDown() override { setMemoryLimit(0); }
};

TEST_F(TensorSizeTest, CountsAndBytes) {
  TensorSize size = checkTensorSize(DType::Float32, {2, 3});
  ASSERT_TRUE(size.ok()) << size.error;
  EXPECT_EQ(size.elements, 6);
  EXPECT_EQ(size.bytes, 24u);
  EXPECT_TRUE(checkTensorSize(DType::Float32, {}).ok());
}

TEST_F(TensorSizeTest, OverflowIsAnErrorNotAWrap) {
  // 2^32 * 2^32 wraps to 0 in 64 bits.
  TensorSize size = checkTensorSize(DType::Float32, {1ll << 32, 1ll << 32});
  EXPECT_FALSE(size.ok());
  EXPECT_NE(size.error.find("more than 2^63 elements"), std::string::npos);
  // The count fits, the bytes do not.
  size = checkTensorSize(DType::Float64, {1ll << 61});
  EXPECT_FALSE(size.ok());
  EXPECT_NE(size.error.find("more than 2^63 bytes"), std::string::npos);
}

TEST_F(TensorSizeTest, AZeroDimensionIsEmptyWhateverTheRest) {
  TensorSize size =
      checkTensorSize(DType::Float32, {1ll << 40, 0, 1ll << 40});
  ASSERT_TRUE(size.ok()) << size.error;
  EXPECT_EQ(size.elements, 0);
}

TEST_F(TensorSizeTest, NegativeDimension) {
  EXPECT_FALSE(checkTensorSize(DType::Int8, {3, -1}).ok());
}

TEST_F(TensorSizeTest, LimitCountsLiveTensors) {
  setMemoryLimit(1000);
  EXPECT_EQ(memoryLimit(), 1000u);
  uint64_t before = liveTensorBytes();
  {
    Tensor a(DType::Float32, {100}); // 400 bytes
    EXPECT_EQ(liveTensorBytes(), before + 400);
    Tensor shared = a; // a copy shares the storage
    EXPECT_EQ(liveTensorBytes(), before + 400);
    TensorSize size = checkTensorSize(DType::Float32, {200}); // 800 more
    EXPECT_FALSE(size.ok());
    EXPECT_NE(size.error.find("over the memory limit of 1000 bytes"),
              std::string::npos)
        << size.error;
    std::string error;
    EXPECT_FALSE(Tensor::tryAllocate(DType::Float32, {200}, error));
    EXPECT_FALSE(error.empty());
  }
  EXPECT_EQ(liveTensorBytes(), before);
  EXPECT_TRUE(checkTensorSize(DType::Float32, {200}).ok());
}

TEST_F(TensorSizeTest, DefaultLimitComesFromTheMachine) {
  setMemoryLimit(0);
  EXPECT_EQ(memoryLimit(), defaultMemoryLimit());
  EXPECT_GT(defaultMemoryLimit(), uint64_t(1) << 20);
}

TEST_F(TensorSizeTest, ParseMemorySize) {
  uint64_t bytes = 0;
  EXPECT_TRUE(parseMemorySize("512", bytes));
  EXPECT_EQ(bytes, 512u);
  EXPECT_TRUE(parseMemorySize("16G", bytes));
  EXPECT_EQ(bytes, uint64_t(16) << 30);
  EXPECT_TRUE(parseMemorySize("3m", bytes));
  EXPECT_EQ(bytes, uint64_t(3) << 20);
  EXPECT_FALSE(parseMemorySize("", bytes));
  EXPECT_FALSE(parseMemorySize("0", bytes));
  EXPECT_FALSE(parseMemorySize("12Q", bytes));
  EXPECT_FALSE(parseMemorySize("-1", bytes));
  EXPECT_FALSE(parseMemorySize("99999999999999999999T", bytes));
  EXPECT_FALSE(parseMemorySize("16777216T", bytes)); // 2^64 bytes
}

TEST_F(TensorSizeTest, AKernelsFailedAllocationIsItsError) {
  // ConstantOfShape of a shape past the limit: the kernel allocates, the
  // allocation throws, runKernel returns the message.
  setMemoryLimit(1 << 20);
  SimpleKernelContext context(
      "ConstantOfShape",
      {Value(Tensor::fromVector<int64_t>(DType::Int64, {2},
                                         {1000000, 1000000}))},
      1);
  Status status = context.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("float 1000000x1000000 needs"),
            std::string::npos)
      << status.message();
  // And a wrapped count is refused the same way.
  SimpleKernelContext wrapped(
      "ConstantOfShape",
      {Value(Tensor::fromVector<int64_t>(DType::Int64, {2},
                                         {1ll << 32, 1ll << 32}))},
      1);
  status = wrapped.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("more than 2^63 elements"),
            std::string::npos)
      << status.message();
}

} // namespace
