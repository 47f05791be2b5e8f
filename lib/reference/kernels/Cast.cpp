//===- Cast.cpp - Cast and CastLike ---------------------------------------===//
//
// Every pair of Cast's types (numbers, bool, string, float16, bfloat16).
// Conversions the C++ language leaves undefined are pinned down here:
// float to integer truncates toward zero, saturates out of range and maps
// NaN to 0; integer to narrower integer wraps; nothing rounds twice.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

using namespace mncc::reference;
using namespace mncc::reference::elementwise;

namespace {

template <typename T>
constexpr bool isHalf =
    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

/// `value` rounded to float with round-to-odd. Rounding that again to
/// float16 or bfloat16 (which keep at most 11 of float's 24 bits) gives
/// the correctly rounded result, where a plain double -> float -> half
/// path could round twice.
float toFloatRoundToOdd(double value) {
  float rounded = static_cast<float>(value);
  if (static_cast<double>(rounded) == value || std::isnan(value))
    return rounded;
  uint32_t bits;
  std::memcpy(&bits, &rounded, sizeof(bits));
  if (bits & 1)
    return rounded;
  // The odd neighbour lies on the other side of `value`.
  float toward = static_cast<double>(rounded) < value
                     ? std::numeric_limits<float>::infinity()
                     : -std::numeric_limits<float>::infinity();
  return std::nextafter(rounded, toward);
}

/// One number (bool included) converted to another number type.
template <typename To, typename From> To convertNumber(const From &value) {
  auto v = load(value); // float for float16/bfloat16
  using V = std::decay_t<decltype(v)>;
  if constexpr (std::is_same_v<To, bool>)
    return v != V(0);
  else if constexpr (isHalf<To> && std::is_same_v<V, float>)
    return To(v);
  else if constexpr (isHalf<To>)
    return To(toFloatRoundToOdd(static_cast<double>(v)));
  else if constexpr (std::is_floating_point_v<To>)
    return static_cast<To>(v);
  else if constexpr (std::is_floating_point_v<V>)
    return floatToInt<To>(v);
  else
    return static_cast<To>(v);
}

/// Numbers as text: integers in decimal, bool as 1/0, floating values in
/// the shortest plain form that reads back to the same value ("0.1", not
/// "0.100000001"), and ONNX's reserved literals INF, -INF and NaN.
template <typename From> std::string toText(const From &value) {
  if constexpr (std::is_same_v<From, bool>) {
    return value ? "1" : "0";
  } else if constexpr (std::is_integral_v<From>) {
    return std::to_string(value);
  } else {
    double v = static_cast<double>(load(value));
    if (std::isnan(v))
      return "NaN";
    if (std::isinf(v))
      return v > 0 ? "INF" : "-INF";
    // The fewest significant digits that read back to the same value...
    char buffer[48];
    int digits = 1;
    for (; digits < 17; ++digits) {
      std::snprintf(buffer, sizeof(buffer), "%.*e", digits - 1, v);
      From back = convertNumber<From>(std::strtod(buffer, nullptr));
      if (load(back) == load(value))
        break;
    }
    std::snprintf(buffer, sizeof(buffer), "%.*e", digits - 1, v);
    // ...written plainly ("314.15926") where numpy would, within
    // [1e-4, 1e16), and in scientific form ("1e-05") outside.
    int exponent = std::atoi(std::strchr(buffer, 'e') + 1);
    if (exponent >= -4 && exponent < 16)
      std::snprintf(buffer, sizeof(buffer), "%.*f",
                    std::max(digits - 1 - exponent, 0), v);
    return buffer;
  }
}

/// Parses `text` as ONNX describes: plain or scientific decimal numbers,
/// and INF, +INF, -INF, NaN in any case. Integers accept a fractional
/// number and truncate it ("100.5" -> 100); bool also accepts true/false.
template <typename To> bool parseText(const std::string &text, To &out) {
  const char *begin = text.c_str();
  char *end = nullptr;
  if constexpr (std::is_same_v<To, bool>) {
    if (!strcasecmp(begin, "true") || !strcasecmp(begin, "false")) {
      out = !strcasecmp(begin, "true");
      return true;
    }
  } else if constexpr (std::is_integral_v<To>) {
    // Integers first, so that int64 values beyond 2^53 stay exact.
    errno = 0;
    if constexpr (std::is_signed_v<To>) {
      long long parsed = std::strtoll(begin, &end, 10);
      if (end != begin && *end == 0 && errno == 0) {
        out = static_cast<To>(parsed);
        return true;
      }
    } else {
      unsigned long long parsed = std::strtoull(begin, &end, 10);
      if (end != begin && *end == 0 && errno == 0) {
        out = static_cast<To>(parsed);
        return true;
      }
    }
  }
  double parsed = std::strtod(begin, &end);
  if (end == begin || *end != 0)
    return false;
  if constexpr (std::is_same_v<To, float>)
    out = std::strtof(begin, nullptr); // rounds the text once, not twice
  else
    out = convertNumber<To>(parsed);
  return true;
}

/// Casts `x` to `to`, shared when it already has that type.
Status castTo(KernelContext &context, const Tensor &x, DType to) {
  if (x.dtype() == to && (kCastable & bit(to))) {
    context.setOutput(0, Value(x));
    return Status::success();
  }
  Tensor y(to, x.shape());
  Status status = Status::success();
  bool toOk = true;
  bool fromOk = dispatchIn<kCastable>(x.dtype(), [&](auto fromTag) {
    using From = decltype(fromTag);
    toOk = dispatchIn<kCastable>(to, [&](auto toTag) {
      using To = decltype(toTag);
      const From *in = elements<From>(x);
      To *out = elements<To>(y);
      int64_t count = x.numElements();
      if constexpr (std::is_same_v<From, To>) {
        std::copy(in, in + count, out);
      } else if constexpr (std::is_same_v<From, std::string>) {
        for (int64_t i = 0; i < count; ++i)
          if (!parseText(in[i], out[i])) {
            status = fail(context,
                          "cannot read '" + in[i] + "' as " + dtypeName(to));
            return;
          }
      } else if constexpr (std::is_same_v<To, std::string>) {
        for (int64_t i = 0; i < count; ++i)
          out[i] = toText(in[i]);
      } else {
        for (int64_t i = 0; i < count; ++i)
          out[i] = convertNumber<To>(in[i]);
      }
    });
  });
  if (!fromOk)
    return unsupportedType(context, x.dtype());
  if (!toOk)
    return fail(context, std::string("cannot cast to ") + dtypeName(to));
  if (!status)
    return status;
  context.setOutput(0, Value(std::move(y)));
  return Status::success();
}

Status castKernel(KernelContext &context) {
  const Tensor *x;
  if (Status s = requireTensor(context, 0, x); !s)
    return s;
  if (!context.hasAttribute("to"))
    return fail(context, "attribute 'to' is required");
  int64_t to = context.getInt("to", 0);
  // Range-checked before it becomes a DType (and a bit position).
  if (to <= 0 || to > static_cast<int64_t>(DType::BFloat16))
    return fail(context, "'to' = " + std::to_string(to) +
                             " is not an ONNX element type");
  return castTo(context, *x, static_cast<DType>(to));
}

/// CastLike: Cast to the element type of the second input.
Status castLikeKernel(KernelContext &context) {
  const Tensor *x, *target;
  if (Status s = requireTensor(context, 0, x); !s)
    return s;
  if (Status s = requireTensor(context, 1, target); !s)
    return s;
  return castTo(context, *x, target->dtype());
}

} // namespace

MNCC_REFERENCE_KERNEL("", Cast, castKernel);
MNCC_REFERENCE_KERNEL("", CastLike, castLikeKernel);
