//===- ExecutePe.cpp - PE instruction steps of mncc-sim -------------------===//
//
// One PE statement is one step of four cycles (manual 3.6). Every expression
// of the step reads its operands before any of them writes, then the
// results are written through the write masks and the forwarding latches
// are updated. Each cycle carries one 128-bit value per PE; an operand
// narrower than that is read into and written from the most significant
// end (docs/target/mncore2.md decision S1).
//
// All loops run over the 4096 PEs of the board at once.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"

#include "mncc/emu/Numerics.h"

#include "HostTarget.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace mncc::emu {

namespace {

unsigned widthWords(Width width) { return unsigned(width); }

/// Whether every PE accesses the same word address: then an access is whole
/// rows of the structure-of-arrays memory, which plain loops vectorise.
bool sameForAllPes(const uint32_t *addresses, PeRange range) {
  uint32_t differs = 0;
  for (unsigned pe = range.Begin; pe < range.End; ++pe)
    differs |= addresses[pe] ^ addresses[range.Begin];
  return differs == 0;
}

bool isAlu(Opcode op) { return op >= Opcode::Zero && op < Opcode::VFma; }
bool isMauVector(Opcode op) {
  return op >= Opcode::VFma && op <= Opcode::VPassa;
}

/// Lane width in bits of an ALU precision.
unsigned laneBits(Precision prec) {
  switch (prec) {
  case Precision::D:
  case Precision::L:
    return 64;
  case Precision::F:
  case Precision::I:
  case Precision::G:
    return 32;
  case Precision::H:
  case Precision::S:
    return 16;
  default:
    return 64;
  }
}

/// The mask flag bits of lane i of a given width: a long word result sets
/// all four bits, a word result two, a half word result one (manual 3.6.9,
/// ALU mask flags).
uint8_t laneFlagBits(unsigned bits, unsigned lane) {
  switch (bits) {
  case 64:
    return 0xf;
  case 32:
    return uint8_t(lane == 0 ? 0xc : 0x3);
  default:
    return uint8_t(8u >> lane);
  }
}

uint64_t laneMask(unsigned bits) {
  return bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
}

int64_t signExtend(uint64_t value, unsigned bits) {
  if (bits == 64)
    return int64_t(value);
  uint64_t sign = uint64_t(1) << (bits - 1);
  return int64_t((value ^ sign) - sign);
}

/// Applies fn(x, y, flag) to each lane of the most significant long word;
/// the least significant long word is x's (manual 3.6.9: instructions that
/// do not work on double long words keep the first input's low long word).
template <typename Fn>
void forEachLane(unsigned bits, const WideLanes &x, const WideLanes *y,
                 WideLanes &out, uint8_t *flags, PeRange range, Fn fn) {
  unsigned lanes = 64 / bits;
  uint64_t mask = laneMask(bits);
  for (unsigned pe = range.Begin; pe < range.End; ++pe) {
    uint64_t result = 0;
    uint8_t flag = 0;
    for (unsigned lane = 0; lane < lanes; ++lane) {
      unsigned shift = 64 - bits * (lane + 1);
      uint64_t xl = x.High[pe] >> shift & mask;
      uint64_t yl = y ? (y->High[pe] >> shift & mask) : 0;
      bool laneFlag = false;
      uint64_t r = fn(xl, yl, laneFlag) & mask;
      result |= r << shift;
      if (laneFlag)
        flag |= laneFlagBits(bits, lane);
    }
    out.High[pe] = result;
    out.Low[pe] = x.Low[pe];
    flags[pe] = flag;
  }
}

/// Copies the long words of the PEs of range into out.
void copyLanes(const uint64_t *high, const uint64_t *low, WideLanes &out,
               PeRange range) {
  std::memcpy(out.High + range.Begin, high + range.Begin,
              range.size() * sizeof *high);
  std::memcpy(out.Low + range.Begin, low + range.Begin,
              range.size() * sizeof *low);
}

/// Floating point ALU operations, per format.
template <typename F> struct FloatAlu {
  using S = typename F::Storage;

  static uint64_t maxOf(uint64_t x, uint64_t y, bool &flag) {
    AluSelect<S> r = aluMax<F>(S(x), S(y));
    flag = r.Flag;
    return r.Result;
  }
  static uint64_t minOf(uint64_t x, uint64_t y, bool &flag) {
    AluSelect<S> r = aluMin<F>(S(x), S(y));
    flag = r.Flag;
    return r.Result;
  }
  /// Adds delta to the exponent field (lrelud -1, lreluo -3, ilrelud +1):
  /// zero and infinity stay, an exponent leaving the range becomes zero or
  /// infinity (docs/target/mncore2.md decision S7).
  static uint64_t scaleExponent(uint64_t y, int delta) {
    S bits = S(y);
    uint32_t exp = F::exponent(bits);
    if (exp == 0 || exp == F::MaxExp)
      return bits;
    int64_t next = int64_t(exp) + delta;
    if (next <= 0)
      return F::pack(F::sign(bits), 0, 0);
    if (next >= int64_t(F::MaxExp))
      return F::pack(F::sign(bits), F::MaxExp, 0);
    return F::pack(F::sign(bits), uint32_t(next), F::mantissa(bits));
  }
  /// rsqrt: 1 / sqrt(|x|) (the sign is not used, manual 3.6.9), rounded
  /// once into F from a 64-bit significand. The hardware's approximation
  /// (about 5 bits) is not public, so this is not bit-exact
  /// (docs/target/mncore2.md decision S31). A zero gives +infinity, an
  /// infinity +0.
  static uint64_t rsqrtOf(uint64_t x) {
    ExactValue v = decode<F>(S(x));
    ExactValue r;
    if (v.Infinite)
      return 0;
    if (v.isZero()) {
      r.Infinite = true;
      return roundToFormat<F>(r);
    }
    long double magnitude =
        std::ldexp(static_cast<long double>(uint64_t(v.Magnitude)), v.Scale);
    int exp = 0;
    long double fraction = std::frexp(1.0L / std::sqrt(magnitude), &exp);
    r.Magnitude = UInt128(uint64_t(std::ldexp(fraction, 64)));
    r.Scale = exp - 64;
    return roundToFormat<F>(r);
  }
  /// floor towards -infinity; zero and infinity pass unchanged, a zero
  /// result is +0 (manual 3.6.9, floor).
  static uint64_t floorOf(uint64_t x) {
    S bits = S(x);
    uint32_t exp = F::exponent(bits);
    if (exp == 0 || exp == F::MaxExp)
      return bits;
    ExactValue value = decode<F>(bits);
    if (value.Scale >= 0)
      return bits; // already an integer
    unsigned drop = unsigned(-value.Scale);
    UInt128 integer = drop >= 128 ? 0 : value.Magnitude >> drop;
    bool inexact = drop >= 128 ? true : (integer << drop) != value.Magnitude;
    if (value.Negative && inexact)
      ++integer;
    if (integer == 0)
      return 0;
    ExactValue result;
    result.Negative = value.Negative;
    result.Magnitude = integer;
    return roundToFormat<F>(result);
  }
  /// ftoi: truncation towards zero, clipped to the integer range; unsigned
  /// converts the absolute value (manual 3.6.9, ftoi).
  static uint64_t toInteger(uint64_t x, bool isUnsigned) {
    constexpr unsigned Bits = F::TotalBits;
    S bits = S(x);
    ExactValue value = decode<F>(bits);
    UInt128 limit = isUnsigned
                        ? (UInt128(1) << Bits) - 1
                        : (UInt128(1) << (Bits - 1)) - (value.Negative ? 0 : 1);
    UInt128 magnitude;
    if (value.Infinite) {
      magnitude = limit;
    } else if (value.Magnitude == 0) {
      magnitude = 0;
    } else if (value.Scale >= 0) {
      int top = detail::highestBit(value.Magnitude) + value.Scale;
      magnitude = top >= int(Bits) ? limit : value.Magnitude << value.Scale;
    } else {
      unsigned drop = unsigned(-value.Scale);
      magnitude = drop >= 128 ? 0 : value.Magnitude >> drop;
    }
    if (magnitude > limit)
      magnitude = limit;
    uint64_t result = uint64_t(magnitude);
    if (!isUnsigned && value.Negative)
      result = uint64_t(0) - result;
    return result & laneMask(Bits);
  }
};

/// MAU element formats.
enum class Fmt : uint8_t { Half, Single, Double };

unsigned fmtBits(Fmt f) {
  return f == Fmt::Half ? 16 : f == Fmt::Single ? 32 : 64;
}

uint64_t convertFormat(uint64_t bits, Fmt from, Fmt to) {
  if (from == to)
    return bits;
  if (from == Fmt::Half && to == Fmt::Single)
    return halfToSingle(uint16_t(bits));
  if (from == Fmt::Single && to == Fmt::Double)
    return singleToDouble(uint32_t(bits));
  if (from == Fmt::Single && to == Fmt::Half)
    return singleToHalf(uint32_t(bits));
  if (from == Fmt::Double && to == Fmt::Single)
    return doubleToSingle(bits);
  if (from == Fmt::Half && to == Fmt::Double)
    return singleToDouble(halfToSingle(uint16_t(bits)));
  return reduceFormat<Double, Half>(bits);
}

/// Bits [offset, offset + width) counted from the most significant end of
/// a 128-bit value.
uint64_t extractTop(uint64_t high, uint64_t low, unsigned offset,
                    unsigned width) {
  if (offset + width > 128)
    return 0;
  UInt128 value = UInt128(high) << 64 | low;
  return uint64_t(value >> (128 - offset - width)) & laneMask(width);
}

/// The input precision reduction "r" of a half input (manual 3.6.9): the
/// 128 bits as four singles, rounded to four halves in the most
/// significant long word; the least significant long word becomes 0. `in`
/// and `out` may be the same.
void reduceSinglesToHalves(const WideLanes &in, WideLanes &out, PeRange range) {
  for (unsigned pe = range.Begin; pe < range.End; ++pe) {
    uint64_t h = 0;
    for (unsigned j = 0; j < 4; ++j)
      h |= uint64_t(singleToHalf(
               uint32_t(extractTop(in.High[pe], in.Low[pe], 32 * j, 32))))
           << (48 - 16 * j);
    out.High[pe] = h;
    out.Low[pe] = 0;
  }
}

/// Element i of a MAU source operand in format target: the operand stores
/// one format lower with "e", one higher with "r" (manual 3.6.6, operand
/// options), and "-" flips the sign after conversion.
uint64_t mauElement(const Operand &op, const WideLanes &value, unsigned pe,
                    unsigned i, Fmt target) {
  Fmt stored = target;
  if (op.Extend)
    stored = target == Fmt::Double ? Fmt::Single : Fmt::Half;
  else if (op.Reduce)
    stored = target == Fmt::Half ? Fmt::Single : Fmt::Double;
  unsigned width = fmtBits(stored);
  uint64_t bits = extractTop(value.High[pe], value.Low[pe], i * width, width);
  bits = convertFormat(bits, stored, target);
  if (op.Negate)
    bits ^= uint64_t(1) << (fmtBits(target) - 1);
  return bits;
}

template <typename In, typename Acc, typename Out>
void mauKernel(const Expression &expr, const WideLanes *const *sources,
               WideLanes &result, uint8_t *flags, PeRange range, unsigned lanes,
               Fmt in, Fmt acc, Fmt out) {
  using InS = typename In::Storage;
  using AccS = typename Acc::Storage;
  unsigned outBits = fmtBits(out);
  // Without "e" or "r" on any source every element is stored in the
  // format it is read in, at a multiple of its width from the top: then a
  // shift of one long word reads it, with no 128-bit shifts and no format
  // conversion (mauElement's general path).
  bool plain = true;
  for (const Operand &source : expr.Sources)
    plain = plain && !source.Extend && !source.Reduce;
  auto element = [&](unsigned s, unsigned pe, unsigned i, Fmt target) {
    if (!plain)
      return mauElement(expr.Sources[s], *sources[s], pe, i, target);
    unsigned width = fmtBits(target), offset = i * width;
    uint64_t word = offset < 64 ? sources[s]->High[pe] : sources[s]->Low[pe];
    uint64_t bits = (word >> (64 - offset % 64 - width)) & laneMask(width);
    if (expr.Sources[s].Negate)
      bits ^= uint64_t(1) << (width - 1);
    return bits;
  };
  for (unsigned pe = range.Begin; pe < range.End; ++pe) {
    uint64_t high = 0, low = 0;
    uint8_t flag = 0;
    unsigned subpe = pe % PesPerMab;
    // dvfma/dvmul: "u" computes on PEs 0 and 1, "d" on PEs 2 and 3; the
    // other pair passes c through the output tail (manual 3.6.6).
    bool active =
        expr.DoubleHalf == 0 || (expr.DoubleHalf == 1 ? subpe < 2 : subpe >= 2);
    for (unsigned i = 0; i < lanes; ++i) {
      uint64_t r = 0;
      switch (expr.Op) {
      case Opcode::VFma: {
        InS a = InS(element(0, pe, i, in));
        InS b = InS(element(1, pe, i, in));
        AccS c = AccS(element(2, pe, i, acc));
        if (!active)
          r = roundToFormat<Out>(decode<Acc>(c));
        else if constexpr (std::is_same_v<In, Half> &&
                           std::is_same_v<Acc, Single>)
          r = mauVectorFmaHalf<Out>(a, b, c);
        else
          r = mauVectorFma<In, Acc, Out>(a, b, c);
        break;
      }
      case Opcode::VMul: {
        InS a = InS(element(0, pe, i, in));
        InS b = InS(element(1, pe, i, in));
        r = active ? mauVectorMul<In, Out>(a, b) : 0;
        break;
      }
      case Opcode::VAdd: {
        InS a = InS(element(0, pe, i, in));
        AccS c = AccS(element(1, pe, i, acc));
        // vadd is the FMA with the second factor 1.0 (mauVectorAdd).
        if constexpr (std::is_same_v<In, Half> && std::is_same_v<Acc, Single>)
          r = mauVectorFmaHalf<Out>(
              a, Half::pack(false, uint32_t(Half::Bias), 0), c);
        else
          r = mauVectorAdd<In, Acc, Out>(a, c);
        break;
      }
      default: {
        InS a = InS(element(0, pe, i, in));
        r = mauVectorPass<In, Out>(a);
        break;
      }
      }
      unsigned offset = i * outBits;
      if (offset < 64)
        high |= (r & laneMask(outBits)) << (64 - offset - outBits);
      else
        low |= (r & laneMask(outBits)) << (128 - offset - outBits);
      // The MAU flag is the inverted sign of each output (manual 3.6.6).
      if (!(r >> (outBits - 1) & 1))
        flag |= laneFlagBits(64 / lanes, i);
    }
    result.High[pe] = high;
    result.Low[pe] = low;
    flags[pe] = flag;
  }
}

/// Expands a 4-bit mask into bit masks over the 128-bit value: with the
/// normal mask length the bits cover the 16-bit quarters of each long word,
/// with the double-long length the 32-bit words of the double long word
/// (docs/target/mncore2.md decision S2).
void expandMask(uint8_t bits, bool doubleLong, uint64_t &high, uint64_t &low) {
  if (doubleLong) {
    high = (bits & 8 ? 0xffffffff00000000ull : 0) |
           (bits & 4 ? 0x00000000ffffffffull : 0);
    low = (bits & 2 ? 0xffffffff00000000ull : 0) |
          (bits & 1 ? 0x00000000ffffffffull : 0);
    return;
  }
  uint64_t m = 0;
  for (unsigned q = 0; q < 4; ++q)
    if (bits & (8u >> q))
      m |= uint64_t(0xffff) << (48 - 16 * q);
  high = low = m;
}

} // namespace

MNCC_EMU_HOST_VARIANTS
void Machine::computeWordAddresses(const Operand &op, unsigned cycle,
                                   uint32_t *addresses, PeRange range) const {
  unsigned width = widthWords(op.Size);
  uint32_t base =
      op.Flat ? op.Address[cycle] : op.Address[0] + op.Stride * cycle;
  // The sizes are powers of two: wrapping is a mask, not a division per PE.
  static_assert((LmWords & (LmWords - 1)) == 0 &&
                    (GrfWords & (GrfWords - 1)) == 0,
                "local memory sizes wrap with a mask");
  uint32_t wrap = wordCount(op.Where) - 1;
  uint32_t align = ~(width - 1);
  const uint16_t *bar = op.Where == Space::LM0   ? Bar0.data()
                        : op.Where == Space::LM1 ? Bar1.data()
                                                 : nullptr;
  // LM0 address (manual 3.3.3): BAR + T[c] + ADDR + stride*c + (WL if
  // j<madpe> and PE <= madpe), wrapped, then aligned down. The stride is
  // in words (decision S22).
  for (unsigned pe = range.Begin; pe < range.End; ++pe) {
    uint32_t address = base;
    if (bar)
      address += bar[pe];
    if (op.ThroughT)
      address += uint32_t(TReg[size_t(cycle * 2) * NumPes + pe]);
    if (op.MabAdjust && pe % PesPerMab <= op.MaPe)
      address += width;
    addresses[pe] = address & wrap & align;
  }
}

bool Machine::uniformWordAddress(const Operand &op, unsigned cycle,
                                 uint32_t &address) const {
  // computeWordAddresses with every per-PE term zero: no T, no MAB
  // adjustment, and the base registers (of LM0 / LM1) all 0.
  if (op.ThroughT || op.MabAdjust)
    return false;
  if ((op.Where == Space::LM0 && !Bar0Zero) ||
      (op.Where == Space::LM1 && !Bar1Zero))
    return false;
  unsigned width = widthWords(op.Size);
  uint32_t base =
      op.Flat ? op.Address[cycle] : op.Address[0] + op.Stride * cycle;
  address = base & (wordCount(op.Where) - 1) & ~(width - 1);
  return true;
}

bool Machine::resolveWordAddresses(const Operand &op, unsigned cycle,
                                   uint32_t *addresses, PeRange range,
                                   uint32_t &uniform) const {
  if (uniformWordAddress(op, cycle, uniform))
    return true;
  computeWordAddresses(op, cycle, addresses, range);
  uniform = addresses[range.Begin];
  return sameForAllPes(addresses, range);
}

MNCC_EMU_HOST_VARIANTS
void Machine::readOperand(const Operand &op, unsigned cycle,
                          const Expression &expr, WideLanes &out, PeRange range,
                          bool highOnly) const {
  switch (op.Where) {
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1: {
    // On the stack: a thread_local array in a shared library costs a
    // __tls_get_addr call per access in these per-PE loops.
    uint32_t addresses[NumPes];
    uint32_t uniform = 0;
    bool same = resolveWordAddresses(op, cycle, addresses, range, uniform);
    const uint32_t *mem = words(op.Where);
    unsigned width = widthWords(op.Size);
    if (same) {
      // Rows a .. a + width - 1 of the memory, word 0 most significant.
      // A pointer per row: indices like NumPes + pe are 32-bit sums that
      // might wrap, which keeps the compiler from vectorising the loops.
      const uint32_t *row0 = mem + size_t(uniform) * NumPes;
      const uint32_t *row1 = row0 + NumPes, *row2 = row1 + NumPes,
                     *row3 = row2 + NumPes;
      if (width > 1) {
        for (unsigned pe = range.Begin; pe < range.End; ++pe)
          out.High[pe] = uint64_t(row0[pe]) << 32 | row1[pe];
      } else {
        for (unsigned pe = range.Begin; pe < range.End; ++pe)
          out.High[pe] = uint64_t(row0[pe]) << 32;
      }
      if (width > 2) {
        for (unsigned pe = range.Begin; pe < range.End; ++pe)
          out.Low[pe] = uint64_t(row2[pe]) << 32 | row3[pe];
      } else if (!highOnly) {
        std::memset(out.Low + range.Begin, 0, range.size() * sizeof *out.Low);
      }
      return;
    }
    // Addresses through T or the base registers often agree over a few
    // MABs: such a chunk reads row by row (contiguous, vectorised), the
    // others PE by PE; both give each PE the same long words.
    constexpr unsigned Chunk = 16;
    for (unsigned pe0 = range.Begin; pe0 < range.End; pe0 += Chunk) {
      uint32_t differs = 0;
      for (unsigned k = 1; k < Chunk; ++k)
        differs |= addresses[pe0 + k] ^ addresses[pe0];
      if (differs == 0) {
        const uint32_t *row0 = mem + size_t(addresses[pe0]) * NumPes;
        const uint32_t *row1 = row0 + NumPes, *row2 = row1 + NumPes,
                       *row3 = row2 + NumPes;
        for (unsigned pe = pe0; pe < pe0 + Chunk; ++pe) {
          uint32_t w1 = width > 1 ? row1[pe] : 0;
          out.High[pe] = uint64_t(row0[pe]) << 32 | w1;
        }
        for (unsigned pe = pe0; pe < pe0 + Chunk; ++pe)
          out.Low[pe] = width > 2 ? uint64_t(row2[pe]) << 32 | row3[pe] : 0;
        continue;
      }
      // PE by PE, a loop for each width (words past it read as 0).
      auto gather = [&](auto widthWords) {
        constexpr unsigned W = decltype(widthWords)::value;
        for (unsigned pe = pe0; pe < pe0 + Chunk; ++pe) {
          const uint32_t *column = mem + size_t(addresses[pe]) * NumPes + pe;
          uint32_t w1 = W > 1 ? column[NumPes] : 0;
          out.High[pe] = uint64_t(column[0]) << 32 | w1;
          out.Low[pe] =
              W > 2 ? uint64_t(column[2 * NumPes]) << 32 | column[3 * NumPes]
                    : 0;
        }
      };
      if (width == 1)
        gather(std::integral_constant<unsigned, 1>());
      else if (width == 2)
        gather(std::integral_constant<unsigned, 2>());
      else
        gather(std::integral_constant<unsigned, 4>());
    }
    return;
  }
  case Space::T:
    copyLanes(&TReg[size_t(cycle * 2) * NumPes],
              &TReg[size_t(cycle * 2 + 1) * NumPes], out, range);
    return;
  case Space::ForwardAlu:
    copyLanes(AluForward[cycle].High, AluForward[cycle].Low, out, range);
    return;
  case Space::ForwardMau:
    copyLanes(MauForward[cycle].High, MauForward[cycle].Low, out, range);
    return;
  case Space::ForwardLb:
    copyLanes(LbForward[cycle].High, LbForward[cycle].Low, out, range);
    return;
  case Space::ForwardMread:
    copyLanes(MreadForward[cycle].High, MreadForward[cycle].Low, out, range);
    return;
  default:
    break;
  }
  // Fixed inputs (manual 3.6.1): the value repeated in every lane of the
  // instruction's precision over the double long word (decision S5).
  unsigned bits = laneBits(expr.Prec);
  for (unsigned pe = range.Begin; pe < range.End; ++pe) {
    uint64_t value = 0;
    unsigned subpe = pe % PesPerMab;
    unsigned mab = pe / PesPerMab % MabsPerL1b;
    unsigned l1b = pe / (PesPerMab * MabsPerL1b) % L1bsPerL2b;
    unsigned l2bid = pe / (PesPerMab * MabsPerL1b * L1bsPerL2b);
    switch (op.Where) {
    case Space::FixedL2bId:
      value = l2bid;
      break;
    case Space::FixedL1bId:
      value = l1b;
      break;
    case Space::FixedMabId:
      value = mab;
      break;
    case Space::FixedPeId:
      value = mab * PesPerMab + subpe;
      break;
    case Space::FixedSubPeId:
      value = subpe;
      break;
    case Space::FixedMsb1:
      value = uint64_t(1) << (bits - 1);
      break;
    default:
      break;
    }
    uint64_t word = 0;
    for (unsigned lane = 0; lane < 64 / bits; ++lane)
      word |= value << (bits * lane);
    out.High[pe] = word;
    out.Low[pe] = word;
  }
}

MNCC_EMU_HOST_VARIANTS
void Machine::cycleMask(const MaskSpec &mask, unsigned cycle, uint8_t *bits,
                        PeRange range) const {
  if (mask.MaskKind == MaskSpec::Pattern) {
    uint8_t value = (mask.CyclePattern >> (3 - cycle) & 1) ? 0xf : 0;
    std::memset(bits + range.Begin, value, range.size());
    return;
  }
  unsigned shift = 12 - 4 * cycle;
  if (mask.Entry == 0 || mask.Entry >= MaskEntries) {
    // All ones, or a fixed pattern: the same for every PE.
    std::memset(bits + range.Begin, maskEntry(0, mask.Entry) >> shift & 0xf,
                range.size());
    return;
  }
  const uint16_t *entry = &Masks[size_t(mask.Entry) * NumPes];
  for (unsigned pe = range.Begin; pe < range.End; ++pe)
    bits[pe] = uint8_t(entry[pe] >> shift & 0xf);
}

MNCC_EMU_HOST_VARIANTS
void Machine::writeDestination(const Operand &op, unsigned cycle,
                               const WideLanes &value, const uint8_t *flags,
                               PeRange range) {
  if (op.Where == Space::NoWrite)
    return;
  // The write mask: the destination's own, else the multi-line default if
  // it covers this kind of destination and no destination of the step has
  // a mask of its own (manual 3.6.2.1, decision S33).
  MaskSpec mask = op.WriteMask;
  if (mask.MaskKind == MaskSpec::Default && !DefaultMaskCancelled) {
    uint8_t kind =
        op.Where == Space::GRF0                               ? MaskGrf0
        : op.Where == Space::GRF1                             ? MaskGrf1
        : op.Where == Space::T                                ? MaskT
        : op.Where == Space::LM0 || op.Where == Space::BarLM0 ? MaskLm0
        : op.Where == Space::LM1 || op.Where == Space::BarLM1 ? MaskLm1
        : op.Where == Space::MaskReg                          ? MaskMaskReg
                                                              : 0;
    if (DefaultMask.Entry != 0 && (DefaultMask.Targets & kind)) {
      mask.MaskKind = MaskSpec::Register;
      mask.Entry = DefaultMask.Entry;
      mask.DoubleLong = DefaultMask.DoubleLong;
    }
  }
  uint8_t maskBits[NumPes]; // on the stack, see readOperand
  // Unmasked whole-row stores to local memory need no per-PE mask.
  bool rowStore = mask.MaskKind == MaskSpec::Default &&
                  (op.Where == Space::LM0 || op.Where == Space::LM1 ||
                   op.Where == Space::GRF0 || op.Where == Space::GRF1);
  if (mask.MaskKind == MaskSpec::Default) {
    if (!rowStore)
      std::memset(maskBits + range.Begin, 0xf, range.size());
  } else {
    cycleMask(mask, cycle, maskBits, range);
  }

  switch (op.Where) {
  case Space::MaskReg: {
    uint16_t *entry = &Masks[size_t(op.Address[0]) * NumPes];
    unsigned shift = 12 - 4 * cycle;
    for (unsigned pe = range.Begin; pe < range.End; ++pe) {
      uint16_t keep = uint16_t(~(maskBits[pe] << shift));
      entry[pe] =
          uint16_t((entry[pe] & keep) | ((flags[pe] & maskBits[pe]) << shift));
    }
    return;
  }
  case Space::BarLM0:
  case Space::BarLM1: {
    // Only the low 12 bits of the most significant word count (manual 3.3).
    uint16_t *bar = op.Where == Space::BarLM0 ? Bar0.data() : Bar1.data();
    for (unsigned pe = range.Begin; pe < range.End; ++pe)
      if (maskBits[pe] & 8)
        bar[pe] = uint16_t(value.High[pe] >> 32 & 0xfff);
    return;
  }
  case Space::T: {
    uint64_t *high = &TReg[size_t(cycle * 2) * NumPes];
    uint64_t *low = &TReg[size_t(cycle * 2 + 1) * NumPes];
    for (unsigned pe = range.Begin; pe < range.End; ++pe) {
      uint64_t mh, ml;
      expandMask(maskBits[pe], mask.DoubleLong, mh, ml);
      high[pe] = (high[pe] & ~mh) | (value.High[pe] & mh);
      low[pe] = (low[pe] & ~ml) | (value.Low[pe] & ml);
    }
    return;
  }
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1: {
    // On the stack: a thread_local array in a shared library costs a
    // __tls_get_addr call per access in these per-PE loops.
    uint32_t addresses[NumPes];
    uint32_t uniform = 0;
    bool same = resolveWordAddresses(op, cycle, addresses, range, uniform);
    uint32_t *mem = words(op.Where);
    unsigned width = widthWords(op.Size);
    if (mask.MaskKind == MaskSpec::Default && same) {
      // Unmasked, one address: store whole rows, word 0 most significant.
      // A pointer per row, as in readOperand.
      uint32_t *row0 = mem + size_t(uniform) * NumPes;
      uint32_t *row1 = row0 + NumPes, *row2 = row1 + NumPes,
               *row3 = row2 + NumPes;
      // Both words of a long word in one pass over the values.
      if (width > 1) {
        for (unsigned pe = range.Begin; pe < range.End; ++pe) {
          row0[pe] = uint32_t(value.High[pe] >> 32);
          row1[pe] = uint32_t(value.High[pe]);
        }
      } else {
        for (unsigned pe = range.Begin; pe < range.End; ++pe)
          row0[pe] = uint32_t(value.High[pe] >> 32);
      }
      if (width > 2) {
        for (unsigned pe = range.Begin; pe < range.End; ++pe) {
          row2[pe] = uint32_t(value.Low[pe] >> 32);
          row3[pe] = uint32_t(value.Low[pe]);
        }
      }
      return;
    }
    if (rowStore) // per PE after all: the addresses differ
      std::memset(maskBits + range.Begin, 0xf, range.size());
    for (unsigned pe = range.Begin; pe < range.End; ++pe) {
      uint64_t mh, ml;
      expandMask(maskBits[pe], mask.DoubleLong, mh, ml);
      uint32_t v[4] = {uint32_t(value.High[pe] >> 32), uint32_t(value.High[pe]),
                       uint32_t(value.Low[pe] >> 32), uint32_t(value.Low[pe])};
      uint32_t m[4] = {uint32_t(mh >> 32), uint32_t(mh), uint32_t(ml >> 32),
                       uint32_t(ml)};
      size_t a = same ? uniform : addresses[pe];
      for (unsigned i = 0; i < width; ++i) {
        uint32_t &word = mem[(a + i) * NumPes + pe];
        word = (word & ~m[i]) | (v[i] & m[i]);
      }
    }
    return;
  }
  default:
    return;
  }
}

MNCC_EMU_HOST_VARIANTS
void Machine::executeAlu(const Expression &expr,
                         const WideLanes *const *sources, WideLanes &out,
                         uint8_t *flags, PeRange range) const {
  unsigned bits = laneBits(expr.Prec);
  std::memset(flags + range.Begin, 0, range.size());
  switch (expr.Op) {
  case Opcode::Zero:
    std::memset(out.High + range.Begin, 0, range.size() * sizeof *out.High);
    std::memset(out.Low + range.Begin, 0, range.size() * sizeof *out.Low);
    return;
  case Opcode::Imm: {
    // imm repeats the payload word in all four words, immu in every other
    // one ("xxxx" / "xoxo", manual 3.6.9).
    uint64_t x = expr.Immediate;
    uint64_t word = expr.Unsigned ? x << 32 : (x << 32 | x);
    for (unsigned pe = range.Begin; pe < range.End; ++pe)
      out.High[pe] = out.Low[pe] = word;
    return;
  }
  case Opcode::Msl:
  case Opcode::Msr: {
    // Rotation between the four PEs of a MAB: msl sends PE p to p + 1.
    const WideLanes &x = *sources[0];
    for (unsigned pe = range.Begin; pe < range.End; ++pe) {
      unsigned base = pe & ~3u, subpe = pe & 3u;
      unsigned from =
          expr.Op == Opcode::Msl ? (subpe + 3) & 3 : (subpe + 1) & 3;
      out.High[pe] = x.High[base + from];
      out.Low[pe] = x.Low[pe];
    }
    return;
  }
  case Opcode::Bfn: {
    const WideLanes &x = *sources[0];
    if (expr.Prec != Precision::D && expr.Prec != Precision::F &&
        expr.Prec != Precision::G) {
      // hbfn: the blocks of all MABs at once, MAB m's in High[4m..4m+3].
      std::memcpy(out.Low + range.Begin, x.Low + range.Begin,
                  range.size() * sizeof *out.Low);
      toBlockFloatHalfLongWords(x.High + range.Begin, out.High + range.Begin,
                                range.size() / PesPerMab);
      return;
    }
    for (unsigned mab = range.firstMab(); mab < range.endMab(); ++mab) {
      unsigned pe0 = mab * PesPerMab;
      for (unsigned p = 0; p < PesPerMab; ++p)
        out.Low[pe0 + p] = x.Low[pe0 + p];
      // Blocks are taken across the four PEs of the MAB in one cycle, the
      // vector the MAU multiplies (docs/target/mncore2.md decision S6).
      switch (expr.Prec) {
      case Precision::D: {
        uint64_t in[4], res[4];
        for (unsigned p = 0; p < 4; ++p)
          in[p] = x.High[pe0 + p];
        toBlockFloatDouble(in, res, 4);
        for (unsigned p = 0; p < 4; ++p)
          out.High[pe0 + p] = res[p];
        break;
      }
      case Precision::F: {
        for (unsigned j = 0; j < 2; ++j) {
          uint32_t in[4], res[4];
          for (unsigned p = 0; p < 4; ++p)
            in[p] = uint32_t(x.High[pe0 + p] >> (32 - 32 * j));
          toBlockFloatSingle(in, res, 4);
          for (unsigned p = 0; p < 4; ++p) {
            uint64_t &h = out.High[pe0 + p];
            if (j == 0)
              h = uint64_t(res[p]) << 32;
            else
              h |= res[p];
          }
        }
        break;
      }
      case Precision::G: {
        uint32_t in[8], res[8];
        for (unsigned p = 0; p < 4; ++p) {
          in[2 * p] = uint32_t(x.High[pe0 + p] >> 32);
          in[2 * p + 1] = uint32_t(x.High[pe0 + p]);
        }
        toBlockFloatPseudoSingle(in, res, 8);
        for (unsigned p = 0; p < 4; ++p)
          out.High[pe0 + p] = uint64_t(res[2 * p]) << 32 | res[2 * p + 1];
        break;
      }
      default: // hbfn, above
        break;
      }
    }
    return;
  }
  default:
    break;
  }

  // A half-precision ALU input with "r" is four singles rounded to four
  // halves in the most significant long word; the low long word becomes 0
  // (manual 3.6.9).
  WideLanes *reduced[2] = {nullptr, nullptr};
  std::unique_ptr<WideLanes> reducedStore[2];
  const WideLanes *x = sources[0];
  const WideLanes *y = expr.Sources.size() > 1 ? sources[1] : nullptr;
  for (unsigned i = 0; i < expr.Sources.size() && i < 2; ++i) {
    if (!expr.Sources[i].Reduce)
      continue;
    reducedStore[i].reset(new WideLanes);
    reduced[i] = reducedStore[i].get();
    reduceSinglesToHalves(*sources[i], *reduced[i], range);
    if (i == 0)
      x = reduced[0];
    else
      y = reduced[1];
  }

  bool isUnsigned = expr.Unsigned;
  uint64_t mask = laneMask(bits);
  auto isFloat = expr.Prec == Precision::D || expr.Prec == Precision::F ||
                 expr.Prec == Precision::H;
  switch (expr.Op) {
  case Opcode::Passa:
    // A double long word copy; the flag looks at the high long word only.
    forEachLane(bits, *x, nullptr, out, flags, range,
                [](uint64_t a, uint64_t, bool &f) {
                  f = a == 0;
                  return a;
                });
    for (unsigned pe = range.Begin; pe < range.End; ++pe)
      out.Low[pe] = x->Low[pe];
    return;
  case Opcode::Inc:
  case Opcode::Dec:
  case Opcode::Add:
  case Opcode::Sub: {
    Opcode op = expr.Op;
    forEachLane(bits, *x, y, out, flags, range,
                [=](uint64_t a, uint64_t b, bool &f) {
                  if (op == Opcode::Inc || op == Opcode::Dec)
                    b = 1;
                  bool subtract = op == Opcode::Dec || op == Opcode::Sub;
                  uint64_t r = (subtract ? a - b : a + b) & mask;
                  if (isUnsigned)
                    f = subtract ? a >= b : r >= a; // no borrow / carry
                  else
                    f = signExtend(r, bits) >= 0;
                  return r;
                });
    return;
  }
  case Opcode::Not:
  case Opcode::Lnot:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Lsl:
  case Opcode::Lsr:
  case Opcode::Bsl:
  case Opcode::Bsr: {
    Opcode op = expr.Op;
    forEachLane(
        bits, *x, y, out, flags, range, [=](uint64_t a, uint64_t b, bool &f) {
          uint64_t r = 0;
          switch (op) {
          case Opcode::Not:
            r = ~a;
            break;
          case Opcode::Lnot:
            r = a == 0 ? 1 : 0;
            break;
          case Opcode::And:
            r = a & b;
            break;
          case Opcode::Or:
            r = a | b;
            break;
          case Opcode::Xor:
            r = a ^ b;
            break;
          case Opcode::Lsl:
            r = b >= bits ? 0 : a << b;
            break;
          case Opcode::Lsr:
            if (isUnsigned)
              r = b >= bits ? 0 : a >> b;
            else
              r = uint64_t(signExtend(a, bits) >> (b >= bits ? bits - 1 : b));
            break;
          case Opcode::Bsl:
          case Opcode::Bsr: {
            unsigned s = unsigned(b % bits);
            if (op == Opcode::Bsr)
              s = (bits - s) % bits;
            r = s == 0 ? a : (a << s | a >> (bits - s));
            break;
          }
          default:
            break;
          }
          r &= mask;
          f = r == 0;
          return r;
        });
    return;
  }
  case Opcode::Max:
  case Opcode::Min: {
    bool isMax = expr.Op == Opcode::Max;
    if (isFloat) {
      forEachLane(bits, *x, y, out, flags, range,
                  [=](uint64_t a, uint64_t b, bool &f) -> uint64_t {
                    switch (bits) {
                    case 64:
                      return isMax ? FloatAlu<Double>::maxOf(a, b, f)
                                   : FloatAlu<Double>::minOf(a, b, f);
                    case 32:
                      return isMax ? FloatAlu<Single>::maxOf(a, b, f)
                                   : FloatAlu<Single>::minOf(a, b, f);
                    default:
                      return isMax ? FloatAlu<Half>::maxOf(a, b, f)
                                   : FloatAlu<Half>::minOf(a, b, f);
                    }
                  });
      return;
    }
    forEachLane(bits, *x, y, out, flags, range,
                [=](uint64_t a, uint64_t b, bool &f) {
                  bool pickB;
                  if (isUnsigned)
                    pickB = isMax ? b > a : b < a;
                  else
                    pickB = isMax ? signExtend(b, bits) > signExtend(a, bits)
                                  : signExtend(b, bits) < signExtend(a, bits);
                  f = !pickB;
                  return pickB ? b : a;
                });
    return;
  }
  case Opcode::Relu0:
  case Opcode::Relu1:
  case Opcode::Relu2:
  case Opcode::Relu3:
  case Opcode::Lrelud:
  case Opcode::Lreluo:
  case Opcode::Ilrelud: {
    Opcode op = expr.Op;
    unsigned testBit = op == Opcode::Relu1   ? bits - 2
                       : op == Opcode::Relu2 ? bits - 3
                       : op == Opcode::Relu3 ? bits - 4
                                             : bits - 1;
    forEachLane(
        bits, *x, y, out, flags, range,
        [=](uint64_t a, uint64_t b, bool &f) -> uint64_t {
          bool negative = a >> testBit & 1;
          f = !negative;
          if (!negative)
            return b;
          if (op >= Opcode::Relu0 && op <= Opcode::Relu3)
            return uint64_t(1) << (bits - 1); // -0
          int delta = op == Opcode::Lrelud ? -1 : op == Opcode::Lreluo ? -3 : 1;
          switch (bits) {
          case 64:
            return FloatAlu<Double>::scaleExponent(b, delta);
          case 32:
            return FloatAlu<Single>::scaleExponent(b, delta);
          default:
            return FloatAlu<Half>::scaleExponent(b, delta);
          }
        });
    return;
  }
  case Opcode::Floor:
  case Opcode::Ftoi: {
    bool isFloor = expr.Op == Opcode::Floor;
    forEachLane(bits, *x, nullptr, out, flags, range,
                [=](uint64_t a, uint64_t, bool &f) -> uint64_t {
                  f = false; // floor and ftoi raise no mask flag
                  switch (bits) {
                  case 64:
                    return isFloor ? FloatAlu<Double>::floorOf(a)
                                   : FloatAlu<Double>::toInteger(a, isUnsigned);
                  case 32:
                    return isFloor ? FloatAlu<Single>::floorOf(a)
                                   : FloatAlu<Single>::toInteger(a, isUnsigned);
                  default:
                    return isFloor ? FloatAlu<Half>::floorOf(a)
                                   : FloatAlu<Half>::toInteger(a, isUnsigned);
                  }
                });
    return;
  }
  case Opcode::Rsqrt:
    // The flag is x's sign bit inverted (manual 3.6.9).
    forEachLane(bits, *x, nullptr, out, flags, range,
                [=](uint64_t a, uint64_t, bool &f) -> uint64_t {
                  f = (a >> (bits - 1) & 1) == 0;
                  switch (bits) {
                  case 64:
                    return FloatAlu<Double>::rsqrtOf(a);
                  case 32:
                    return FloatAlu<Single>::rsqrtOf(a);
                  default:
                    return FloatAlu<Half>::rsqrtOf(a);
                  }
                });
    return;
  case Opcode::Packbit:
    // Shifts x left by one and brings in the sign (most significant) bit
    // of y; the flag is that bit inverted (manual 3.6.9, decision S26).
    forEachLane(bits, *x, y, out, flags, range,
                [=](uint64_t a, uint64_t b, bool &f) -> uint64_t {
                  uint64_t sign = b >> (bits - 1) & 1;
                  f = sign == 0;
                  return (a << 1 | sign) & mask;
                });
    return;
  case Opcode::Bfe:
    forEachLane(16, *x, nullptr, out, flags, range,
                [](uint64_t a, uint64_t, bool &f) -> uint64_t {
                  f = false;
                  return halfBlockFloatToExtended(uint16_t(a));
                });
    return;
  default:
    return;
  }
}

MNCC_EMU_HOST_VARIANTS
void Machine::executeMau(const Expression &expr,
                         const WideLanes *const *sources, WideLanes &out,
                         uint8_t *flags, PeRange range) const {
  switch (expr.Prec) {
  case Precision::D:
    if (expr.ReduceOutput)
      mauKernel<Double, Double, Single>(expr, sources, out, flags, range, 1,
                                        Fmt::Double, Fmt::Double, Fmt::Single);
    else
      mauKernel<Double, Double, Double>(expr, sources, out, flags, range, 1,
                                        Fmt::Double, Fmt::Double, Fmt::Double);
    return;
  case Precision::F:
    if (expr.ReduceOutput)
      mauKernel<Single, Single, Half>(expr, sources, out, flags, range, 2,
                                      Fmt::Single, Fmt::Single, Fmt::Half);
    else
      mauKernel<Single, Single, Single>(expr, sources, out, flags, range, 2,
                                        Fmt::Single, Fmt::Single, Fmt::Single);
    return;
  default:
    if (expr.ReduceOutput)
      mauKernel<Half, Single, Half>(expr, sources, out, flags, range, 4,
                                    Fmt::Half, Fmt::Single, Fmt::Half);
    else
      mauKernel<Half, Single, Single>(expr, sources, out, flags, range, 4,
                                      Fmt::Half, Fmt::Single, Fmt::Single);
    return;
  }
}

namespace {

/// L2BM instructions (the instruction table's L2BM issue group): upper
/// memory to upper memory, all done at commit.
bool isUpperToUpper(Opcode op) {
  return target::opcodeInfo(op).Group == target::IssueGroup::L2bm;
}

/// Instructions whose result goes to the L1BM, the L2BM or a matrix
/// register instead of PE destinations.
bool writesUpper(const Expression &expr) {
  if (isUpperToUpper(expr.Op))
    return true;
  switch (expr.Op) {
  case Opcode::L1bmMAt:
  case Opcode::L1bmM4At:
  case Opcode::L1bmR:
  case Opcode::L1bmR4:
  case Opcode::MWrite:
    return true;
  case Opcode::L1bmD:
    return expr.ToUpper;
  default:
    return false;
  }
}

/// Instructions that read the L1BM or a matrix register for the PEs.
bool isTransferToPe(Opcode op) {
  switch (op) {
  case Opcode::L1bmP:
  case Opcode::L1bmM:
  case Opcode::L1bmM4:
  case Opcode::L1bmD:
  case Opcode::MRead:
  case Opcode::MFma:
  case Opcode::MMul:
    return true;
  default:
    return false;
  }
}

} // namespace

/// An expression of the step being executed and its results.
struct Machine::PendingExpression {
  const Expression *Expr;
  std::unique_ptr<WideLanes[]> Result; // one per cycle
  std::unique_ptr<uint8_t[]> Flags;    // [cycle * NumPes + pe]
};

void Machine::executeStep(const Statement &stmt) {
  DefaultMaskCancelled = stmt.CancelsDefaultMask;
  bool forward = true;
  bool writesBaseRegister = false;
  std::vector<PendingExpression> pending;
  for (const Expression &expr : stmt.Expressions) {
    for (const Operand &dst : expr.Destinations)
      writesBaseRegister |=
          dst.Where == Space::BarLM0 || dst.Where == Space::BarLM1;
    if (expr.Op == Opcode::Nop || expr.Op == Opcode::NoForward) {
      forward = false; // nop implies noforward (manual 3.6.5)
      continue;
    }
    if (expr.Op == Opcode::Wait)
      continue; // MV transfers complete at once: nothing to wait for
    PendingExpression p;
    p.Expr = &expr;
    // Result buffers come from a pool and go back to it (or become a
    // forwarding latch) at the end of the step: at 256 KiB each, a fresh
    // allocation per expression cost page faults on every step. A pooled
    // buffer holds an earlier step's values, so every producer below
    // writes both long words of every PE in every cycle it runs.
    if (ResultPool.empty()) {
      p.Result.reset(new WideLanes[4]);
    } else {
      p.Result = std::move(ResultPool.back());
      ResultPool.pop_back();
    }
    // Flags too: every producer writes the flags of every PE it runs
    // (executeStepRange clears them for the transfers, which raise none).
    if (FlagsPool.empty()) {
      p.Flags.reset(new uint8_t[4 * NumPes]);
    } else {
      p.Flags = std::move(FlagsPool.back());
      FlagsPool.pop_back();
    }
    pending.push_back(std::move(p));
  }
  // manual 3.6.5: noforward keeps $lbi too. Set before the ranges run, as
  // is the turnaround register's storage, so that they only read shared
  // members.
  TurnaroundUpdates = forward;
  turnaroundWord(0, 0);
  if (StepThreadCount > 1 && !Threads)
    Threads.reset(new StepThreads(StepThreadCount, FixedStepRanges));
  if (!pending.empty()) {
    uint8_t idle = AllGroups & ~ActiveGroups;
    StaleGroups |= idle;
    GroupSteps += NumGroups;
    GroupStepsLeftOut += unsigned(__builtin_popcount(idle));
  }
  // A step of upper-memory copies alone (l2bmb: 64 long words into each
  // L1BM) is less work than handing it to the helpers: on the caller.
  bool copiesOnly = std::all_of(
      pending.begin(), pending.end(),
      [](const PendingExpression &p) { return isUpperToUpper(p.Expr->Op); });
  if (Threads && !copiesOnly) {
    struct Context {
      Machine *Self;
      std::vector<PendingExpression> *Pending;
    } context{this, &pending};
    Threads->run(
        [](void *c, PeRange range) {
          auto *context = static_cast<Context *>(c);
          context->Self->executeChunks(*context->Pending, range);
        },
        &context, ActiveGroups);
  } else {
    executeChunks(pending, PeRange{0, NumPes});
  }
  // The forwarding latch an expression feeds.
  auto latchOf = [&](Opcode op) -> std::unique_ptr<WideLanes[]> * {
    if (isMauVector(op) || op == Opcode::MFma || op == Opcode::MMul)
      return &MauForward;
    if (isAlu(op))
      return &AluForward;
    if (op == Opcode::MRead)
      return &MreadForward;
    if (isTransferToPe(op))
      return &LbForward;
    return nullptr;
  };
  for (PendingExpression &p : pending) {
    // None under noforward.
    std::unique_ptr<WideLanes[]> *latch =
        forward ? latchOf(p.Expr->Op) : nullptr;
    // The result becomes the latch (the last expression of the step that
    // feeds it wins, as in order of the copies it replaces); the buffer it
    // replaces goes back to the pool.
    if (latch)
      std::swap(*latch, p.Result);
    ResultPool.push_back(std::move(p.Result));
    FlagsPool.push_back(std::move(p.Flags));
  }
  // A base register written: whether all are 0 again (uniformWordAddress).
  if (writesBaseRegister) {
    auto allZero = [](const uint16_t *bar) {
      uint16_t any = 0;
      for (unsigned pe = 0; pe < NumPes; ++pe)
        any |= bar[pe];
      return any == 0;
    };
    Bar0Zero = allZero(Bar0.data());
    Bar1Zero = allZero(Bar1.data());
  }
}

void Machine::executeChunks(std::vector<PendingExpression> &pending,
                            PeRange range) {
  // One chunk of PEs after the other (setStepChunk): read, compute and
  // write a chunk before the next, so that its result and operand rows
  // stay in the cache instead of streaming the whole range's 16 KiB a
  // cycle per L2B through it three times. Chunks are ranges of whole
  // L2Bs, as `range` is, so they may run in any order (executeStepRange).
  for (unsigned begin = range.Begin; begin < range.End; begin += StepChunkPes)
    executeActiveRanges(
        pending, PeRange{begin, std::min(range.End, begin + StepChunkPes)});
}

void Machine::executeActiveRanges(std::vector<PendingExpression> &pending,
                                  PeRange range) {
  if (ActiveGroups == AllGroups) {
    executeStepRange(pending, range);
    return;
  }
  // A group's PEs are a contiguous range, and ranges run independently
  // (executeStepRange): the active groups' parts one after the other.
  constexpr unsigned PesPerGroup = NumPes / NumGroups;
  for (unsigned begin = range.Begin; begin < range.End;) {
    unsigned group = begin / PesPerGroup;
    unsigned end = std::min(range.End, (group + 1) * PesPerGroup);
    if (ActiveGroups >> group & 1)
      executeStepRange(pending, PeRange{begin, end});
    begin = end;
  }
}

// A step on the PEs of one range, reads first, then writes. Why ranges of
// whole groups may run at once on different threads: every read below is
// of the range's own PEs (their memories, T, masks, base registers and
// forwarding latches), of the L1BMs, matrix registers and turnaround
// registers of the range's L1Bs and MABs, or of the L2BMs of its L2Bs;
// every write, here and in commitTransfer, is to the same places of the
// same range (an exchange goes at most across the L1Bs of one L2B, and a
// group holds whole L2Bs). The result buffers, flags and operand scratch
// are indexed by PE, so the ranges use disjoint parts of them. The two
// ranges thus share no state that one writes, and each sees the state
// from before the step on its own PEs, as one thread does on all of them.
// What every range reads that the step changes (the pool, the latches)
// is handled by executeStep on the calling thread before and after.
MNCC_EMU_HOST_VARIANTS
void Machine::executeStepRange(std::vector<PendingExpression> &pending,
                               PeRange range) {
  // The operands live only while one expression's cycles run.
  WideLanes *sources = SourceScratch.get();
  for (PendingExpression &p : pending) {
    const Expression &expr = *p.Expr;
    bool upper = writesUpper(expr);
    bool toPe = isTransferToPe(expr.Op);
    size_t count = std::min<size_t>(expr.Sources.size(), MaxSources);
    const WideLanes *pointers[3] = {nullptr, nullptr, nullptr};
    for (size_t i = 0; i < count && i < 3; ++i)
      pointers[i] = &sources[i];
    for (unsigned cycle = 0; cycle < 4; ++cycle) {
      WideLanes &result = p.Result[cycle];
      uint8_t *flags = &p.Flags[cycle * NumPes];
      if (isUpperToUpper(expr.Op))
        break; // upper memory to upper memory: all done at commit
      if (upper) {
        // PE -> L1BM / matrix register: capture the PE operand; an hmwrite
        // source with "r" is four singles rounded to halves, as an ALU
        // input (manual 3.6.9, decision S35).
        readOperand(expr.Sources[0], cycle, expr, result, range);
        if (expr.Sources[0].Reduce)
          reduceSinglesToHalves(result, result, range);
        continue;
      }
      for (size_t i = 0; i < count; ++i) {
        Space where = expr.Sources[i].Where;
        if (toPe && (where == Space::L1BM || where == Space::MatX ||
                     where == Space::MatY))
          continue;
        // The matrix products read only the vector's most significant
        // long words.
        bool highOnly =
            i == 1 && (expr.Op == Opcode::MFma || expr.Op == Opcode::MMul);
        readOperand(expr.Sources[i], cycle, expr, sources[i], range, highOnly);
      }
      if (toPe) {
        readTransfer(expr, cycle, pointers, result, range);
        if (expr.Op == Opcode::MFma || expr.Op == Opcode::MMul)
          for (unsigned pe = range.Begin; pe < range.End; ++pe)
            flags[pe] = (result.High[pe] >> 63) ? 0 : 0xf;
        else
          std::memset(flags + range.Begin, 0, range.size());
      } else if (isMauVector(expr.Op)) {
        executeMau(expr, pointers, result, flags, range);
      } else {
        executeAlu(expr, pointers, result, flags, range);
      }
      // The zero-flush mask clears what the instruction passes on, not
      // the flags it raises (manual 3.6.2.2).
      if (expr.ZeroFlush.MaskKind != MaskSpec::Default) {
        uint8_t bits[NumPes]; // on the stack, see readOperand
        cycleMask(expr.ZeroFlush, cycle, bits, range);
        for (unsigned pe = range.Begin; pe < range.End; ++pe) {
          uint64_t mh, ml;
          expandMask(bits[pe], expr.ZeroFlush.DoubleLong, mh, ml);
          result.High[pe] &= mh;
          result.Low[pe] &= ml;
        }
      }
    }
  }
  // Writes after all reads: every expression of the step saw the state
  // from before the step.
  for (const PendingExpression &p : pending) {
    if (writesUpper(*p.Expr)) {
      commitTransfer(*p.Expr, p.Result.get(), range);
      continue;
    }
    for (const Operand &dst : p.Expr->Destinations)
      for (unsigned cycle = 0; cycle < 4; ++cycle)
        writeDestination(dst, cycle, p.Result[cycle], &p.Flags[cycle * NumPes],
                         range);
  }
}

} // namespace mncc::emu
