//===- CompareTest.cpp - Device results against pfvm:cpu -------------------===//
//
// The tolerance --verify allows by float_dtype and by the reference's type,
// and the bound compare() applies (docs/codegen.md, "Tolerances").
//
//===----------------------------------------------------------------------===//

#include "mncc/runtime/Runtime.h"

#include <gtest/gtest.h>

using mncc::reference::DType;
using mncc::reference::Tensor;
using mncc::runtime::compare;
using mncc::runtime::Tolerance;
using mncc::runtime::toleranceFor;

namespace {

Tensor vectorOf(std::vector<float> values) {
  Tensor t(DType::Float32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t.data<float>()[i] = values[i];
  return t;
}

TEST(ToleranceTest, FollowsTheFloatDtype) {
  EXPECT_EQ(toleranceFor("float", DType::Float32).rtol, 1e-4);
  EXPECT_EQ(toleranceFor("mixed", DType::Float32).rtol, 3e-2);
  EXPECT_EQ(toleranceFor("half", DType::Float32).rtol, 6e-2);
  EXPECT_EQ(toleranceFor("double", DType::Float64).rtol, 1e-9);
}

TEST(ToleranceTest, ASingleReferenceBoundsDoubleFromBelow) {
  // The device computed in double; pfvm:cpu's float32 result carries single
  // roundings, so the comparison cannot be tighter than float's.
  Tolerance t = toleranceFor("double", DType::Float32);
  EXPECT_EQ(t.rtol, 1e-4);
  EXPECT_EQ(t.absoluteScale, 1e-4);
}

TEST(CompareTest, PassesWithinAndFailsOutsideTheBound) {
  Tolerance t{1e-3, 0};
  Tensor reference = vectorOf({1.0f, -2.0f, 4.0f});
  EXPECT_TRUE(compare(vectorOf({1.0005f, -2.001f, 4.0f}), reference, t).passed);
  mncc::runtime::Comparison bad =
      compare(vectorOf({1.0f, -2.01f, 4.0f}), reference, t);
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.firstFailure.find("element 1"), std::string::npos)
      << bad.firstFailure;
}

TEST(CompareTest, AbsoluteScaleFollowsTheLargestReference) {
  // atol = 1e-2 * max|ref| = 1e-1: the small element may be off by 0.05.
  Tolerance t{0, 1e-2};
  EXPECT_TRUE(compare(vectorOf({0.05f, 10.0f}), vectorOf({0.0f, 10.0f}), t)
                  .passed);
  EXPECT_FALSE(compare(vectorOf({0.2f, 10.0f}), vectorOf({0.0f, 10.0f}), t)
                   .passed);
}

} // namespace
