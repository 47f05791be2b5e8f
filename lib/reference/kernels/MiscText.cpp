//===- MiscText.cpp - StringNormalizer, TfIdfVectorizer -------------------===//
//
// Text preprocessing. Case changes and case-insensitive comparisons are
// ASCII only: the locale attribute is accepted but not used, so letters
// outside ASCII pass through unchanged (onnxruntime would convert them
// under the given locale).
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

using namespace mncc::reference;

namespace {

std::string asciiLower(std::string text) {
  for (char &c : text)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return text;
}

std::string asciiUpper(std::string text) {
  for (char &c : text)
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  return text;
}

/// StringNormalizer: drops the stopwords, then changes the case. A [C] or
/// [1, C] input keeps its rank; when every word goes, the result is a
/// single empty string, as ONNX specifies.
Status stringNormalizerKernel(KernelContext &context) {
  const Tensor *input = context.inputTensor(0);
  if (!input || input->dtype() != DType::String)
    return Status::error("StringNormalizer: input 0 must be a string tensor");
  if (!(input->rank() == 1 || (input->rank() == 2 && input->shape()[0] == 1)))
    return Status::error("StringNormalizer: input shape " +
                         shapeToString(input->shape()) +
                         " must be [C] or [1, C]");
  std::string action = context.getString("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return Status::error("StringNormalizer: case_change_action '" + action +
                         "' is not NONE, LOWER or UPPER");
  bool caseSensitive = context.getInt("is_case_sensitive", 0) != 0;
  std::set<std::string> stopwords;
  for (const std::string &word : context.getStrings("stopwords"))
    stopwords.insert(caseSensitive ? word : asciiLower(word));
  std::vector<std::string> kept;
  for (const std::string &word : input->strings()) {
    if (stopwords.count(caseSensitive ? word : asciiLower(word)))
      continue;
    kept.push_back(action == "LOWER"   ? asciiLower(word)
                   : action == "UPPER" ? asciiUpper(word)
                                       : word);
  }
  if (kept.empty())
    kept.push_back("");
  int64_t count = static_cast<int64_t>(kept.size());
  std::vector<int64_t> shape = input->rank() == 1
                                   ? std::vector<int64_t>{count}
                                   : std::vector<int64_t>{1, count};
  context.setOutput(
      0, Value(Tensor::fromVector<std::string>(DType::String, shape, kept)));
  return Status::success();
}

/// TfIdfVectorizer over tokens of type Token (int64 or string).
template <typename Token> class NgramCounter {
public:
  /// Registers the pool: ngramCounts[n - 1] is where the n-grams start.
  Status build(const std::vector<Token> &pool,
               const std::vector<int64_t> &ngramCounts) {
    int64_t poolSize = static_cast<int64_t>(pool.size());
    int64_t index = 0;
    for (size_t n = 1; n <= ngramCounts.size(); ++n) {
      int64_t begin = ngramCounts[n - 1];
      int64_t end = n < ngramCounts.size() ? ngramCounts[n] : poolSize;
      if (begin < 0 || end < begin || end > poolSize ||
          (end - begin) % static_cast<int64_t>(n) != 0)
        return Status::error("TfIdfVectorizer: ngram_counts do not split "
                             "the pool into whole " +
                             std::to_string(n) + "-grams");
      for (int64_t at = begin; at < end; at += n)
        grams_[std::vector<Token>(pool.begin() + at, pool.begin() + at + n)] =
            index++;
    }
    numGrams_ = index;
    return Status::success();
  }
  int64_t numGrams() const { return numGrams_; }

  /// Adds to counts[g] the occurrences in `row` of pool gram g: n-grams of
  /// min..max tokens, taken every d tokens for d = 1 .. maxSkip + 1.
  /// Unigrams do not depend on d and count once.
  void count(const std::vector<Token> &row, int64_t minGram, int64_t maxGram,
             int64_t maxSkip, std::vector<double> &counts) const {
    int64_t length = static_cast<int64_t>(row.size());
    std::vector<Token> gram;
    for (int64_t distance = 1; distance <= maxSkip + 1; ++distance)
      for (int64_t start = 0; start < length; ++start) {
        gram.clear();
        for (int64_t n = 1; n <= maxGram; ++n) {
          int64_t at = start + (n - 1) * distance;
          if (at >= length)
            break;
          gram.push_back(row[at]);
          if (n < minGram || (n == 1 && distance > 1))
            continue;
          auto found = grams_.find(gram);
          if (found != grams_.end())
            counts[found->second] += 1;
        }
      }
  }

private:
  std::map<std::vector<Token>, int64_t> grams_;
  int64_t numGrams_ = 0;
};

template <typename Token>
Status tfIdf(KernelContext &context, const Tensor &input,
             const std::vector<Token> &pool, std::vector<double> &output,
             int64_t &width) {
  NgramCounter<Token> counter;
  if (Status status = counter.build(pool, context.getInts("ngram_counts"));
      !status)
    return status;
  std::vector<int64_t> indexes = context.getInts("ngram_indexes");
  if (static_cast<int64_t>(indexes.size()) != counter.numGrams())
    return Status::error("TfIdfVectorizer: " + std::to_string(indexes.size()) +
                         " ngram_indexes for " +
                         std::to_string(counter.numGrams()) + " pool n-grams");
  width = 0;
  for (int64_t index : indexes) {
    if (index < 0)
      return Status::error("TfIdfVectorizer: ngram_indexes must not be "
                           "negative");
    width = std::max(width, index + 1);
  }
  std::vector<float> weights = context.getFloats("weights");
  if (!weights.empty() && weights.size() != indexes.size())
    return Status::error("TfIdfVectorizer: " + std::to_string(weights.size()) +
                         " weights for " + std::to_string(indexes.size()) +
                         " pool n-grams");
  std::string mode = context.getString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return Status::error("TfIdfVectorizer: mode '" + mode +
                         "' is not TF, IDF or TFIDF");
  int64_t minGram = context.getInt("min_gram_length", 1);
  int64_t maxGram = context.getInt("max_gram_length", 1);
  int64_t maxSkip = context.getInt("max_skip_count", 0);
  if (minGram < 1 || maxGram < minGram || maxSkip < 0)
    return Status::error("TfIdfVectorizer: need 1 <= min_gram_length <= "
                         "max_gram_length and max_skip_count >= 0");
  int64_t rows = input.rank() == 2 ? input.shape()[0] : 1;
  int64_t columns = input.rank() == 0 ? 1 : input.shape().back();
  output.assign(rows * width, 0.0);
  std::vector<Token> row(columns);
  std::vector<double> counts(indexes.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      if constexpr (std::is_same_v<Token, std::string>)
        row[c] = input.strings()[r * columns + c];
      else
        row[c] = input.elementAsInt64(r * columns + c);
    }
    std::fill(counts.begin(), counts.end(), 0.0);
    counter.count(row, minGram, maxGram, maxSkip, counts);
    for (size_t g = 0; g < indexes.size(); ++g) {
      double weight = weights.empty() ? 1.0 : weights[g];
      double value = mode == "TF"    ? counts[g]
                     : mode == "IDF" ? std::min(counts[g], 1.0) * weight
                                     : counts[g] * weight;
      output[r * width + indexes[g]] = value;
    }
  }
  return Status::success();
}

/// TfIdfVectorizer: counts of pool n-grams (with skips) per input row,
/// scaled by mode.
Status tfIdfVectorizerKernel(KernelContext &context) {
  const Tensor *input = context.inputTensor(0);
  if (!input || input->rank() < 1 || input->rank() > 2)
    return Status::error("TfIdfVectorizer: input 0 must be a 1-D or 2-D "
                         "tensor");
  bool strings = input->dtype() == DType::String;
  if (!strings && input->dtype() != DType::Int32 &&
      input->dtype() != DType::Int64)
    return Status::error("TfIdfVectorizer: input type " +
                         std::string(dtypeName(input->dtype())) +
                         " must be string, int32 or int64");
  bool hasStringPool = context.hasAttribute("pool_strings");
  bool hasIntPool = context.hasAttribute("pool_int64s");
  if (hasStringPool == hasIntPool)
    return Status::error("TfIdfVectorizer: exactly one of pool_strings and "
                         "pool_int64s must be set");
  if (hasStringPool != strings)
    return Status::error(
        "TfIdfVectorizer: a " + std::string(dtypeName(input->dtype())) +
        " input needs " + (strings ? "pool_strings" : "pool_int64s"));
  std::vector<double> output;
  int64_t width = 0;
  Status status =
      strings ? tfIdf<std::string>(context, *input,
                                   context.getStrings("pool_strings"), output,
                                   width)
              : tfIdf<int64_t>(context, *input, context.getInts("pool_int64s"),
                               output, width);
  if (!status)
    return status;
  std::vector<int64_t> shape =
      input->rank() == 2 ? std::vector<int64_t>{input->shape()[0], width}
                         : std::vector<int64_t>{width};
  Tensor result(DType::Float32, shape);
  for (size_t i = 0; i < output.size(); ++i)
    result.data<float>()[i] = static_cast<float>(output[i]);
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", StringNormalizer, stringNormalizerKernel);
MNCC_REFERENCE_KERNEL("", TfIdfVectorizer, tfIdfVectorizerKernel);
