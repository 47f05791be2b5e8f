//===- MiscTextTest.cpp - StringNormalizer, TfIdfVectorizer ---------------===//
//
// Inputs and expected outputs of the ONNX backend tests test_strnormalizer_*
// and test_tfidfvectorizer_*.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

using namespace mncc::reference;

namespace {

Value words(std::vector<int64_t> shape, std::vector<std::string> values) {
  return Value(
      Tensor::fromVector<std::string>(DType::String, std::move(shape), values));
}

SimpleKernelContext &withStopwords(SimpleKernelContext &context,
                                   std::vector<std::string> stopwords) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::Strings;
  attribute.strings = std::move(stopwords);
  return context.setAttribute("stopwords", attribute);
}

const std::vector<std::string> kWeek = {"monday", "tuesday", "wednesday",
                                        "thursday"};

TEST(ReferenceMiscText, StringNormalizerCaseSensitive) {
  SimpleKernelContext lower("StringNormalizer", {words({4}, kWeek)}, 1);
  withStopwords(lower, {"monday"})
      .setString("case_change_action", "LOWER")
      .setInt("is_case_sensitive", 1);
  ASSERT_TRUE(lower.run().ok());
  EXPECT_EQ(lower.outputTensor(0).shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(lower.outputTensor(0).strings(),
            (std::vector<std::string>{"tuesday", "wednesday", "thursday"}));
  SimpleKernelContext upper("StringNormalizer", {words({4}, kWeek)}, 1);
  withStopwords(upper, {"monday"})
      .setString("case_change_action", "UPPER")
      .setInt("is_case_sensitive", 1);
  ASSERT_TRUE(upper.run().ok());
  EXPECT_EQ(upper.outputTensor(0).strings(),
            (std::vector<std::string>{"TUESDAY", "WEDNESDAY", "THURSDAY"}));
  // Case-sensitive: "Monday" is not the stopword "monday".
  SimpleKernelContext exact("StringNormalizer",
                            {words({2}, {"Monday", "monday"})}, 1);
  withStopwords(exact, {"monday"}).setInt("is_case_sensitive", 1);
  ASSERT_TRUE(exact.run().ok());
  EXPECT_EQ(exact.outputTensor(0).strings(),
            (std::vector<std::string>{"Monday"}));
}

TEST(ReferenceMiscText, StringNormalizerInsensitiveTwoDimAndEmpty) {
  SimpleKernelContext twoDim(
      "StringNormalizer",
      {words({1, 6}, {"Monday", "tuesday", "wednesday", "Monday", "tuesday",
                      "wednesday"})},
      1);
  withStopwords(twoDim, {"monday"}).setString("case_change_action", "UPPER");
  ASSERT_TRUE(twoDim.run().ok());
  EXPECT_EQ(twoDim.outputTensor(0).shape(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(twoDim.outputTensor(0).strings(),
            (std::vector<std::string>{"TUESDAY", "WEDNESDAY", "TUESDAY",
                                      "WEDNESDAY"}));
  SimpleKernelContext empty("StringNormalizer",
                            {words({2}, {"monday", "monday"})}, 1);
  withStopwords(empty, {"monday"})
      .setString("case_change_action", "UPPER")
      .setInt("is_case_sensitive", 1);
  ASSERT_TRUE(empty.run().ok());
  EXPECT_EQ(empty.outputTensor(0).shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(empty.outputTensor(0).strings(), (std::vector<std::string>{""}));
  SimpleKernelContext none("StringNormalizer",
                           {words({2}, {"monday", "tuesday"})}, 1);
  none.setInt("is_case_sensitive", 1);
  ASSERT_TRUE(none.run().ok());
  EXPECT_EQ(none.outputTensor(0).strings(),
            (std::vector<std::string>{"monday", "tuesday"}));
  SimpleKernelContext batch("StringNormalizer", {words({2, 1}, {"a", "b"})}, 1);
  EXPECT_EQ(batch.run().message(),
            "StringNormalizer: input shape 2x1 must be [C] or [1, C]");
}

/// The backend tests' TfIdfVectorizer: pool unigrams 2 3 5 4, bigrams
/// (5 6) (7 8) (6 7), mapped to outputs 0 .. 6.
std::vector<float> tfIdf(std::vector<int64_t> shape, int64_t minGram,
                         int64_t maxSkip, const std::string &mode = "TF",
                         std::vector<float> weights = {}) {
  std::vector<int32_t> tokens = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  SimpleKernelContext context(
      "TfIdfVectorizer",
      {Value(Tensor::fromVector<int32_t>(DType::Int32, shape, tokens))}, 1);
  context.setInt("max_gram_length", 2)
      .setInt("min_gram_length", minGram)
      .setInt("max_skip_count", maxSkip)
      .setString("mode", mode)
      .setInts("ngram_counts", {0, 4})
      .setInts("ngram_indexes", {0, 1, 2, 3, 4, 5, 6})
      .setInts("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
  if (!weights.empty())
    context.setFloats("weights", weights);
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0).toVector<float>();
}

TEST(ReferenceMiscText, TfIdfVectorizerBackendCases) {
  EXPECT_EQ(tfIdf({12}, 2, 0), (std::vector<float>{0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(tfIdf({12}, 2, 5), (std::vector<float>{0, 0, 0, 0, 1, 3, 1}));
  EXPECT_EQ(tfIdf({12}, 1, 5), (std::vector<float>{0, 3, 1, 0, 1, 3, 1}));
  EXPECT_EQ(tfIdf({2, 6}, 2, 0), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, //
                                                     0, 0, 0, 0, 1, 0, 1}));
  EXPECT_EQ(tfIdf({2, 6}, 2, 5), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, //
                                                     0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(tfIdf({2, 6}, 1, 5), (std::vector<float>{0, 3, 0, 0, 0, 0, 0, //
                                                     0, 0, 1, 0, 1, 1, 1}));
}

TEST(ReferenceMiscText, TfIdfVectorizerWeightsAndLevelEmpty) {
  std::vector<float> weights = {1, 2, 3, 4, 5, 6, 7};
  // IDF caps counts at 1 before weighting; TFIDF weights the counts.
  EXPECT_EQ(tfIdf({12}, 1, 5, "IDF", weights),
            (std::vector<float>{0, 2, 3, 0, 5, 6, 7}));
  EXPECT_EQ(tfIdf({12}, 1, 5, "TFIDF", weights),
            (std::vector<float>{0, 6, 3, 0, 5, 18, 7}));
  // test_tfidfvectorizer_tf_onlybigrams_levelempty: no unigrams in the
  // pool at all.
  SimpleKernelContext context(
      "TfIdfVectorizer",
      {Value(Tensor::fromVector<int32_t>(
          DType::Int32, {12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}))},
      1);
  context.setInt("max_gram_length", 2)
      .setInt("min_gram_length", 2)
      .setInt("max_skip_count", 0)
      .setString("mode", "TF")
      .setInts("ngram_counts", {0, 0})
      .setInts("ngram_indexes", {0, 1, 2})
      .setInts("pool_int64s", {5, 6, 7, 8, 6, 7});
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputTensor(0).toVector<float>(),
            (std::vector<float>{1, 1, 1}));
}

TEST(ReferenceMiscText, TfIdfVectorizerStringsAndErrors) {
  SimpleKernelContext context("TfIdfVectorizer",
                              {words({4}, {"a", "b", "a", "b"})}, 1);
  Attribute pool;
  pool.kind = Attribute::Kind::Strings;
  pool.strings = {"b", "a", "b"};
  context.setAttribute("pool_strings", pool)
      .setInt("max_gram_length", 2)
      .setInt("min_gram_length", 1)
      .setString("mode", "TF")
      .setInts("ngram_counts", {0, 1})
      .setInts("ngram_indexes", {1, 0});
  ASSERT_TRUE(context.run().ok());
  // "b" twice; the bigram "a b" twice.
  EXPECT_EQ(context.outputTensor(0).toVector<float>(),
            (std::vector<float>{2, 2}));
  SimpleKernelContext wrongPool("TfIdfVectorizer", {words({1}, {"a"})}, 1);
  wrongPool.setInts("pool_int64s", {1}).setString("mode", "TF");
  EXPECT_EQ(wrongPool.run().message(),
            "TfIdfVectorizer: a string input needs pool_strings");
}

} // namespace
