//===- GeneralTrig.cpp - Trigonometric and hyperbolic functions ----------===//
//
// The general kernel's Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
// Acosh, Atanh, Softsign and Celu, in single precision (half tensors
// widened, G12), from the element program's operations and MathLib's
// functions over whole LM blocks (docs/codegen.md G19):
//
//  * Sin, Cos, Tan: x = n pi/2 + r with n = round(x 2/pi) (the MAU rounds
//    x 2/pi + 1.5 x 2^23 at its last place, 1, and n mod 4 is in the sum's
//    low bits), r by three fmas of a three-part pi/2 (exact products while
//    |n| < 2^16), then polynomials for sin r and cos r on [-pi/4, pi/4],
//    chosen and negated by the quadrant; Tan is MathLib's division of the
//    two;
//  * Atan, Asin, Acos: an angle atan(lo / hi) of a pair (num, den) >= 0,
//    lo and hi their minimum and maximum (MathLib's reciprocal of hi), an
//    odd polynomial on [0, 1], pi/2 - it where num > den: Atan takes
//    (|x|, 1), Asin (|x|, sqrt((1 - |x|)(1 + |x|))), Acos the other way
//    round, pi - it for x < 0;
//  * the hyperbolic functions from MathLib's exp, log, sqrt and division
//    (sinh = (e^x - e^-x) / 2, asinh = log(|x| + sqrt(x^2 + 1)), ...), with
//    Taylor polynomials where those lose digits near 0.
//
//===----------------------------------------------------------------------===//

#include "GeneralMore.h"

#include <cmath>
#include <vector>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;
using namespace mncc::codegen::general::more;

namespace {

constexpr auto LM0 = PeMemory::LM0;
constexpr auto LM1 = PeMemory::LM1;

constexpr double kPi = 3.14159265358979323846;
/// 1.5 x 2^23: a single whose last place is 1, so adding it rounds to an
/// integer, and whose low mantissa bits then hold that integer.
constexpr double kRoundingMagic = 12582912.0;
/// pi/2 in three parts: the first two with few enough bits that their
/// products with n (|n| < 2^16) are exact.
constexpr double kHalfPi1 = 1.5703125;
constexpr double kHalfPi2 = 4.837512969970703125e-4;
constexpr double kHalfPi3 = 7.549789954891882e-8;
/// sin r = r + r^3 (S0 + S1 r^2 + S2 r^4) and cos r = 1 - r^2 / 2 + r^4
/// (C0 + C1 r^2 + C2 r^4) on [-pi/4, pi/4]: least-squares fits at Chebyshev
/// nodes, 4e-9 and 1e-10 from the functions (below single's rounding).
constexpr double kSin[] = {-0.16666655138547784, 0.00833218642913345,
                           -0.00019518136817735};
constexpr double kCos[] = {4.1666646794616430e-02, -1.3887364914117288e-03,
                           2.4438218294327434e-05};
/// atan z = z (A0 + A1 z^2 + ... + A8 z^16) on [0, 1], a relative
/// least-squares fit at Chebyshev nodes: 1.7e-8 relative.
constexpr double kAtan[] = {
    0.9999999929666922,  -0.33333120614061507, 0.19993291054962656,
    -0.1420773859690555, 0.10653950378745423,  -0.0752762038005159,
    0.04292909520827949, -0.016197015387131,   0.00287848402989755};
/// Below these |x| the Taylor polynomials of sinh (through x^11), asinh
/// (x^13) and atanh (x^15) replace the logarithmic and exponential forms,
/// which lose digits to cancellation there.
constexpr double kSinhSmall = 1.0;
constexpr double kInverseSmall = 0.25;
/// Above this |x|, asinh and acosh take log(2 |x|): sqrt(x^2 + 1) rounds
/// to |x| already, and x^2 would overflow beyond 1.8e19.
constexpr double kInverseLarge = 4096.0;

/// The operator's unary float placement (X in LM0, Y in LM1) and its
/// dense LM blocks, each as long as Y's image and addressed by the offset
/// of an element's word in it.
struct Unary {
  Lowering &l;
  ElemProgram &p;
  const PeImage *x = nullptr, *y = nullptr;
  Ring ring;
  std::vector<Slot> blocks;

  explicit Unary(Lowering &lowering) : l(lowering), p(lowering.program()) {}

  /// Places X and Y, a block in each of `memories` (LM0 or LM1), MathLib's
  /// scratch for `functions`, and loads X. MathLib's division does not run
  /// in place: its dividend and divisor go to different memories, the
  /// quotient to Y's image.
  bool place(std::initializer_list<PeMemory> memories,
             std::initializer_list<MathFunction> functions) {
    if (!placeFloatUnary(l, x, y, ring))
      return false;
    for (PeMemory memory : memories) {
      std::optional<Slot> block = l.allocate({memory}, y->words());
      if (!block)
        return l.fail("the blocks of " + l.request().opType +
                      " do not fit the PE memories left (" + l.roomLeft() +
                      ")");
      blocks.push_back(*block);
    }
    if (functions.size() && !l.reserveMath(functions))
      return false;
    l.loadInputs();
    return true;
  }

  Slot image() const { return {y->memory, y->word}; }
  int32_t words() const { return y->words(); }
  Slot at(unsigned block, int32_t offset) const {
    return blocks[block].offset(offset);
  }

  /// fn(output word, input word, offset of the element in Y's image).
  void each(const std::function<void(Slot, Slot, int32_t)> &fn) {
    forEachIndex(y->form.shape, [&](const std::vector<int64_t> &index) {
      int32_t word = y->wordOf(index);
      fn({y->memory, word}, {x->memory, x->wordOf(index)}, word - y->word);
    });
  }

  Slot constant(double value) { return p.constant(value); }
  Slot temp() { return ring.take(); }

  Slot abs(Slot v) {
    Slot t = temp();
    p.integer(ElemOpcode::IAnd, t, v, p.constantBits(~kSignBit));
    return t;
  }
  Slot signOf(Slot v) {
    Slot t = temp();
    p.integer(ElemOpcode::IAnd, t, v, p.constantBits(kSignBit));
    return t;
  }
  /// dst = v with its sign bit flipped where `sign` (a sign pattern) has it.
  void withSign(Slot dst, Slot v, Slot sign) {
    p.integer(ElemOpcode::IXor, dst, v, sign);
  }
  /// A value whose sign is set exactly where v < bound.
  Slot below(Slot v, double bound) {
    Slot t = temp();
    p.add(t, v, constant(bound), true);
    return t;
  }
  /// c[0] + c[1] w + ... + c[n-1] w^(n-1) by Horner's rule on the MAU.
  Slot horner(Slot w, const double *c, size_t n) {
    Slot acc = temp();
    p.fma(acc, w, constant(c[n - 1]), constant(c[n - 2]));
    for (size_t k = n - 2; k-- > 0;)
      p.fma(acc, w, acc, constant(c[k]));
    return acc;
  }
  /// v + v w (c[0] + c[1] w + ...): an odd Taylor-like polynomial whose
  /// first term is v.
  Slot oddSeries(Slot v, Slot w, const double *c, size_t n) {
    Slot poly = horner(w, c, n), vw = temp(), out = temp();
    p.mul(vw, v, w);
    p.fma(out, vw, poly, v);
    return out;
  }
};

//===----------------------------------------------------------------------===//
// Sin, Cos, Tan
//===----------------------------------------------------------------------===//

/// r = x - n pi/2 and the bits of n + 1.5 x 2^23 (n mod 4 in the low two).
void reduceQuadrant(Unary &u, Slot x, Slot &r, Slot &quadrant) {
  ElemProgram &p = u.p;
  Slot t = u.temp(), n = u.temp();
  p.fma(t, x, u.constant(2 / kPi), u.constant(kRoundingMagic));
  p.add(n, t, u.constant(kRoundingMagic), true);
  r = u.temp();
  p.fma(r, n, u.constant(kHalfPi1), x, 1);
  p.fma(r, n, u.constant(kHalfPi2), r, 1);
  p.fma(r, n, u.constant(kHalfPi3), r, 1);
  quadrant = t;
}

/// dst = sin(x) of the reduced r and quadrant q (cos: q + 1): sin r or
/// cos r by q's bit 0, negated by its bit 1.
void quadrantValue(Unary &u, Slot dst, Slot r, Slot quadrant, bool cosine) {
  ElemProgram &p = u.p;
  Slot q = quadrant;
  if (cosine) {
    q = u.temp();
    p.integer(ElemOpcode::IAdd, q, quadrant, p.constantBits(1));
  }
  Slot w = u.temp();
  p.mul(w, r, r);
  Slot s = u.oddSeries(r, w, kSin, 3);
  Slot poly = u.horner(w, kCos, 3), w2 = u.temp(), half = u.temp(),
       c = u.temp();
  p.mul(w2, w, w);
  p.fma(half, w, u.constant(-0.5), u.constant(1.0));
  p.fma(c, w2, poly, half);
  Slot odd = u.temp(), flip = u.temp(), chosen = u.temp();
  p.integer(ElemOpcode::ILsl, odd, q, p.constantBits(31));
  selectBySign(u.l, u.ring, chosen, odd, s, c);
  p.integer(ElemOpcode::ILsl, flip, q, p.constantBits(30));
  p.integer(ElemOpcode::IAnd, flip, flip, p.constantBits(kSignBit));
  u.withSign(dst, chosen, flip);
}

bool lowerSinCos(Lowering &l) {
  const std::string &op = l.request().opType;
  Unary u(l);
  bool tangent = op == "Tan";
  // Tan: sin x in block 0, cos x in block 1, their quotient in Y.
  bool placed =
      tangent ? u.place({LM0, LM1}, {MathFunction::Divide}) : u.place({}, {});
  if (!placed)
    return false;
  u.each([&](Slot d, Slot s, int32_t offset) {
    Slot r, q;
    reduceQuadrant(u, s, r, q);
    quadrantValue(u, tangent ? u.at(0, offset) : d, r, q, op == "Cos");
    if (tangent)
      quadrantValue(u, u.at(1, offset), r, q, true);
  });
  if (tangent)
    return l.math(MathFunction::Divide, {u.at(0, 0), u.at(1, 0)}, u.image(),
                  u.words());
  return true;
}

//===----------------------------------------------------------------------===//
// Atan, Asin, Acos
//===----------------------------------------------------------------------===//

bool lowerInverseTrig(Lowering &l) {
  const std::string &op = l.request().opType;
  bool tangent = op == "Atan";
  Unary u(l);
  // Block 0: sqrt((1 - |x|)(1 + |x|)) (Asin, Acos); block 1: 1 / max(num,
  // den).
  if (!u.place({LM0, LM1}, {MathFunction::Sqrt, MathFunction::Reciprocal}))
    return false;
  ElemProgram &p = u.p;
  if (!tangent) {
    u.each([&](Slot, Slot s, int32_t offset) {
      Slot a = u.abs(s), low = u.temp(), high = u.temp();
      p.add(low, u.constant(1.0), a, true);
      p.add(high, u.constant(1.0), a);
      p.mul(u.at(0, offset), low, high);
    });
    if (!l.math(MathFunction::Sqrt, {u.at(0, 0)}, u.at(0, 0), u.words()))
      return false;
  }
  // The pair whose angle atan(num / den) is wanted.
  auto pair = [&](Slot s, int32_t offset, Slot &num, Slot &den) {
    Slot a = u.abs(s);
    if (tangent) {
      num = a;
      den = u.constant(1.0);
    } else if (op == "Asin") {
      num = a;
      den = u.at(0, offset);
    } else {
      num = u.at(0, offset);
      den = a;
    }
  };
  u.each([&](Slot, Slot s, int32_t offset) {
    Slot num, den;
    pair(s, offset, num, den);
    p.max(u.at(1, offset), num, den);
  });
  if (!l.math(MathFunction::Reciprocal, {u.at(1, 0)}, u.at(1, 0), u.words()))
    return false;
  u.each([&](Slot d, Slot s, int32_t offset) {
    Slot num, den;
    pair(s, offset, num, den);
    Slot lo = u.temp(), z = u.temp(), w = u.temp();
    p.min(lo, num, den);
    p.mul(z, lo, u.at(1, offset));
    p.mul(w, z, z);
    Slot poly = u.horner(w, kAtan, 9), angle = u.temp(), rest = u.temp(),
         steep = u.temp(), theta = u.temp();
    p.mul(angle, z, poly);
    p.add(rest, u.constant(kPi / 2), angle, true);
    // den - num < 0 where the angle is above pi/4: pi/2 - atan(den / num).
    p.add(steep, den, num, true);
    selectBySign(l, u.ring, theta, steep, angle, rest);
    if (op == "Acos") {
      Slot reflected = u.temp();
      p.add(reflected, u.constant(kPi), theta, true);
      selectBySign(l, u.ring, d, s, theta, reflected);
    } else {
      u.withSign(d, theta, u.signOf(s));
    }
  });
  return true;
}

//===----------------------------------------------------------------------===//
// Sinh, Cosh, Asinh, Acosh, Atanh
//===----------------------------------------------------------------------===//

/// sinh x = x + x^3 / 3! + ... + x^11 / 11! as x + x w (1/3! + w/5! ...).
constexpr double kSinhSeries[] = {1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880,
                                  1.0 / 39916800};
/// asinh x = x - x^3 / 6 + 3 x^5 / 40 - 5 x^7 / 112 + 35 x^9 / 1152 -
/// 63 x^11 / 2816 + 231 x^13 / 13312 (the next term is 1e-11 x at 1/4).
constexpr double kAsinhSeries[] = {-1.0 / 6,    3.0 / 40,     -5.0 / 112,
                                   35.0 / 1152, -63.0 / 2816, 231.0 / 13312};
/// atanh x = x + x^3 / 3 + x^5 / 5 + ... + x^15 / 15 (the next term is
/// 2e-10 x at 1/4).
constexpr double kAtanhSeries[] = {1.0 / 3,  1.0 / 5,  1.0 / 7, 1.0 / 9,
                                   1.0 / 11, 1.0 / 13, 1.0 / 15};

bool lowerSinhCosh(Lowering &l) {
  bool sine = l.request().opType == "Sinh";
  Unary u(l);
  // Y's image: e^x; block 0: e^-x.
  if (!u.place({LM0}, {MathFunction::Exp}))
    return false;
  ElemProgram &p = u.p;
  u.each([&](Slot d, Slot s, int32_t offset) {
    p.copy(d, s);
    p.integer(ElemOpcode::IXor, u.at(0, offset), s, p.constantBits(kSignBit));
  });
  if (!l.math(MathFunction::Exp, {u.image()}, u.image(), u.words()) ||
      !l.math(MathFunction::Exp, {u.at(0, 0)}, u.at(0, 0), u.words()))
    return false;
  u.each([&](Slot d, Slot s, int32_t offset) {
    Slot both = u.temp();
    p.add(both, d, u.at(0, offset), sine);
    if (!sine) {
      p.mul(d, both, u.constant(0.5));
      return;
    }
    Slot half = u.temp(), w = u.temp();
    p.mul(half, both, u.constant(0.5));
    p.mul(w, s, s);
    Slot series = u.oddSeries(s, w, kSinhSeries, 5);
    selectBySign(l, u.ring, d, u.below(u.abs(s), kSinhSmall), half, series);
  });
  return true;
}

/// Asinh and Acosh: log(v + sqrt(v^2 +- 1)), or log(2 v) for large v.
bool lowerInverseHyperbolic(Lowering &l) {
  bool sine = l.request().opType == "Asinh";
  Unary u(l);
  // Block 0: the square root; Y's image: its logarithm.
  if (!u.place({LM0}, {MathFunction::Sqrt, MathFunction::Log}))
    return false;
  ElemProgram &p = u.p;
  u.each([&](Slot, Slot s, int32_t offset) {
    if (sine) {
      Slot a = u.abs(s);
      p.fma(u.at(0, offset), a, a, u.constant(1.0));
      return;
    }
    // (x - 1)(x + 1): exact near 1, where x^2 - 1 loses digits.
    Slot low = u.temp(), high = u.temp();
    p.add(low, s, u.constant(1.0), true);
    p.add(high, s, u.constant(1.0));
    p.mul(u.at(0, offset), low, high);
  });
  if (!l.math(MathFunction::Sqrt, {u.at(0, 0)}, u.at(0, 0), u.words()))
    return false;
  u.each([&](Slot d, Slot s, int32_t offset) {
    Slot v = sine ? u.abs(s) : s;
    Slot sum = u.temp(), twice = u.temp();
    p.add(sum, v, u.at(0, offset));
    p.add(twice, v, v);
    selectBySign(l, u.ring, d, u.below(v, kInverseLarge), twice, sum);
  });
  if (!l.math(MathFunction::Log, {u.image()}, u.image(), u.words()))
    return false;
  if (!sine)
    return true;
  u.each([&](Slot d, Slot s, int32_t) {
    Slot a = u.abs(s), w = u.temp(), magnitude = u.temp();
    p.mul(w, a, a);
    Slot series = u.oddSeries(a, w, kAsinhSeries, 6);
    selectBySign(l, u.ring, magnitude, u.below(a, kInverseSmall), d, series);
    u.withSign(d, magnitude, u.signOf(s));
  });
  return true;
}

/// atanh x = log((1 + |x|) / (1 - |x|)) / 2 with x's sign.
bool lowerAtanh(Lowering &l) {
  Unary u(l);
  // Block 0: 1 + |x|; block 1: 1 - |x|; Y's image: the quotient, its
  // logarithm.
  if (!u.place({LM0, LM1}, {MathFunction::Divide, MathFunction::Log}))
    return false;
  ElemProgram &p = u.p;
  u.each([&](Slot, Slot s, int32_t offset) {
    Slot a = u.abs(s);
    p.add(u.at(0, offset), u.constant(1.0), a);
    p.add(u.at(1, offset), u.constant(1.0), a, true);
  });
  if (!l.math(MathFunction::Divide, {u.at(0, 0), u.at(1, 0)}, u.image(),
              u.words()) ||
      !l.math(MathFunction::Log, {u.image()}, u.image(), u.words()))
    return false;
  u.each([&](Slot d, Slot s, int32_t) {
    Slot a = u.abs(s), w = u.temp(), half = u.temp(), magnitude = u.temp();
    p.mul(half, d, u.constant(0.5));
    p.mul(w, a, a);
    Slot series = u.oddSeries(a, w, kAtanhSeries, 7);
    selectBySign(l, u.ring, magnitude, u.below(a, kInverseSmall), half, series);
    u.withSign(d, magnitude, u.signOf(s));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// Softsign, Celu
//===----------------------------------------------------------------------===//

/// x / (1 + |x|) by MathLib's division: X's image (laid out as Y's) by
/// block 0.
bool lowerSoftsign(Lowering &l) {
  Unary u(l);
  if (!u.place({LM1}, {MathFunction::Divide}))
    return false;
  ElemProgram &p = u.p;
  u.each([&](Slot, Slot s, int32_t offset) {
    p.add(u.at(0, offset), u.constant(1.0), u.abs(s));
  });
  return l.math(MathFunction::Divide, {{u.x->memory, u.x->word}, u.at(0, 0)},
                u.image(), u.words());
}

/// max(0, x) + min(0, alpha (exp(x / alpha) - 1)): x where x >= 0, else
/// alpha e^(x / alpha) - alpha (both pieces are 0 at 0).
bool lowerCelu(Lowering &l) {
  double alpha = l.request().getFloat("alpha", 1.0f);
  if (alpha == 0)
    return l.fail("Celu's alpha must not be 0");
  Unary u(l);
  if (!u.place({}, {MathFunction::Exp}))
    return false;
  ElemProgram &p = u.p;
  u.each([&](Slot d, Slot s, int32_t) { p.mul(d, s, u.constant(1 / alpha)); });
  if (!l.math(MathFunction::Exp, {u.image()}, u.image(), u.words()))
    return false;
  u.each([&](Slot d, Slot s, int32_t) {
    Slot negative = u.temp();
    p.fma(negative, d, u.constant(alpha), u.constant(-alpha));
    selectBySign(l, u.ring, d, s, s, negative);
  });
  return true;
}

struct TrigOp {
  const char *opType;
  LoweringFn lower;
};

const TrigOp kTrigOps[] = {
    {"Sin", lowerSinCos},
    {"Cos", lowerSinCos},
    {"Tan", lowerSinCos},
    {"Atan", lowerInverseTrig},
    {"Asin", lowerInverseTrig},
    {"Acos", lowerInverseTrig},
    {"Sinh", lowerSinhCosh},
    {"Cosh", lowerSinhCosh},
    {"Asinh", lowerInverseHyperbolic},
    {"Acosh", lowerInverseHyperbolic},
    {"Atanh", lowerAtanh},
    {"Softsign", lowerSoftsign},
    {"Celu", lowerCelu},
};

} // namespace

LoweringFn general::findTrigLowering(const std::string &opType) {
  for (const TrigOp &op : kTrigOps)
    if (opType == op.opType)
      return op.lower;
  return nullptr;
}
