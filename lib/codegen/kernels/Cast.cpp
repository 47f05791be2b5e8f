//===- Cast.cpp - Conversions between the device's floating formats -------===//
//
// Cast between half, single and double tensors of one shape and DRAM order
// (the dtype planner puts them around the matrix products under
// float_dtype=mixed). The MAU does the conversions: its output reduction
// rounds once to nearest even into the narrower format, with overflow to
// infinity and no subnormals (docs/target/mncore2.md, "Conversions"), and
// the "e" operand option extends exactly.
//
// A long word of the result holds a different number of elements than one
// of the source, so an element changes PE under any spread of both. The
// kernel spreads the result (l1bmd, PE q gets result long word 64 j + q of
// its pass), broadcasts the matching source range of its L1B to every PE
// (l1bmp, into LM0), and each PE reads the source it needs through the T
// register: T holds q times the words per result long word, plus the
// cycle's share, once for the whole kernel, so every step's $mt address
// is PE-uniform in the code and PE-specific in effect (V1-V3). The
// broadcast moves two long words a cycle per L1B (double long l1bmp),
// more than the DRAM's share of 1.3 a cycle per L1B.
//
// Rows whose padded extents differ between the formats (120 singles pad
// to 120, 120 halves to 128) shift the elements by the difference once per
// row: there the source word of result long word j of PE q repeats over j
// with the rows, so T is reloaded from a few tables computed once, and a
// mask zeroes the columns past the source row (V5). Double to half
// rounds once by integer arithmetic on the doubles' bits (through single
// it would round twice, V6). Left to the general kernel: half to double
// and double to half between rows that pad differently.
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "Generators.h"
#include "MathLib.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// LM1 long word of the four source blocks of double to half.
constexpr int64_t kHalfBlocks = 256;
/// A cast-add's single operand: L1BM long word (past the largest source
/// a pass broadcasts), LM0 long word (past the broadcast), and the GRF0
/// long words of a fused activation's bounds.
constexpr int64_t kAddendL1bm = 4096;
constexpr int64_t kAddendLm = 1024;
constexpr int64_t kClampLo = 20;
/// A cast-add's half copy of its result (V9): the T tables of the two
/// conversions (GRF0 long words), the copy's L1BM long word (past the
/// result), its LM1 long word (past the result) and the GRF long words
/// its T table is built from.
constexpr int64_t kWideningT = 64;
constexpr int64_t kNarrowingT = 68;
constexpr int64_t kNarrowedL1bm = 2048;
constexpr int64_t kNarrowedLm = 512;
constexpr int64_t kNarrowingShift = 24;
constexpr int64_t kNarrowingCycles = 12;
/// A half addend widened (V10): GRF1 long word of its singles (not LM1,
/// which holds the widened source: one read a memory and step).
constexpr int64_t kWidenedAddendGrf1 = 64;

/// LM0 words of source read per result long word, per cycle of a step
/// (the T table's stride), and the expression pattern.
struct Conversion {
  DeviceType from, to;
  /// Source long words per result long word, as a fraction num / den.
  int64_t num = 1, den = 1;
  /// T = (q << shl) >> shr words + cycle * cycleWords.
  unsigned shl = 0, shr = 0;
  int64_t cycleWords = 0;
  const char *name = "";
};

bool conversionOf(DeviceType from, DeviceType to, Conversion &c,
                  std::string &whyNot) {
  c.from = from;
  c.to = to;
  using D = DeviceType;
  if (from == to) {
    c = {from, to, 1, 1, 1, 0, 128, "copy"};
  } else if (from == D::Single && to == D::Half) {
    c = {from, to, 2, 1, 2, 0, 256, "single to half"};
  } else if (from == D::Double && to == D::Single) {
    c = {from, to, 2, 1, 2, 0, 256, "double to single"};
  } else if (from == D::Half && to == D::Single) {
    c = {from, to, 1, 2, 0, 0, 64, "half to single"};
  } else if (from == D::Single && to == D::Double) {
    c = {from, to, 1, 2, 0, 0, 64, "single to double"};
  } else if (from == D::Half && to == D::Double) {
    c = {from, to, 1, 4, 0, 1, 32, "half to double"};
  } else if (from == D::Double && to == D::Half) {
    c = {from, to, 4, 1, 3, 0, 512, "double to half"};
  } else {
    whyNot = "not a conversion between floating formats";
    return false;
  }
  // The identity reads two words per long word: q << 1.
  if (from == to)
    c.shl = 1;
  return true;
}

/// Rows that pad differently (V5): result long word P of a row-aligned
/// range is row P / Rout, column P mod Rout, and reads the source at
/// 2 Rin row + wpo column words. Over result long words j = 4 s + c of a
/// PE that repeats every Lp steps, so T takes Lp tables, each used by every
/// Lp-th step with the source address advanced by delta words.
struct RowPlan {
  int64_t sourceRow = 0, resultRow = 0;
  /// Source words per result long word.
  int64_t wordsPerResult = 0;
  int64_t align = 0, stepPeriod = 0, delta = 0, pass = 0;
};

bool planRows(const DramForm &x, const DramForm &y, const Conversion &c,
              RowPlan &plan, std::string &whyNot) {
  std::string rows = "rows of " + std::to_string(x.innerExtent()) + " in " +
                     std::string(deviceTypeName(x.type)) + " and " +
                     std::string(deviceTypeName(y.type));
  if (c.den > 2) {
    whyNot = rows + " pad differently, and half to double takes a word's "
                    "half per PE";
    return false;
  }
  if (c.num > 2) {
    whyNot = rows + " pad differently, and double to half reads four "
                    "source long words per result long word";
    return false;
  }
  plan.sourceRow = x.rowLongWords();
  plan.resultRow = y.rowLongWords();
  plan.wordsPerResult = 2 * c.num / c.den;
  // Shares and passes of whole result rows whose source ranges start on
  // MV units (clipped at the tensor's end, they stay whole units too).
  int64_t rowAlign = periodicTableLongWords(plan.resultRow);
  plan.align = rowAlign;
  while (plan.align * kPesPerL1b / plan.resultRow * plan.sourceRow %
             kMvUnitLongWords !=
         0)
    plan.align += rowAlign;
  int64_t periodJ = plan.resultRow / std::gcd(plan.resultRow, kPesPerL1b);
  plan.stepPeriod = periodJ / std::gcd(periodJ, int64_t(4));
  int64_t rowsPerPeriod = 4 * plan.stepPeriod * kPesPerL1b / plan.resultRow;
  plan.delta = rowsPerPeriod * plan.sourceRow * 2;
  // The broadcast source of a pass (whole MV units) fits LM0.
  plan.pass = 0;
  for (int64_t count = plan.align; count <= 1024; count += plan.align) {
    int64_t source = count * kPesPerL1b / plan.resultRow * plan.sourceRow;
    if (roundUp(source, kMvUnitLongWords) > 2048)
      break;
    plan.pass = count;
  }
  if (plan.stepPeriod > 32 || plan.pass == 0) {
    whyNot = rows + " repeat too slowly for the T tables";
    return false;
  }
  return true;
}

bool analyse(const KernelRequest &request, Conversion &c, std::string &whyNot) {
  if (request.inputs.size() != 1 || request.outputs.size() != 1) {
    whyNot = "expects one input and one output";
    return false;
  }
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  if (!isFloatingDeviceType(x.type) || !isFloatingDeviceType(y.type)) {
    whyNot = "only floating formats";
    return false;
  }
  if (!conversionOf(x.type, y.type, c, whyNot))
    return false;
  if (x.shape != y.shape || x.order != y.order || x.groups != y.groups) {
    whyNot = "source and result of different shapes, orders or groups";
    return false;
  }
  if (x.innerPadded() != y.innerPadded()) {
    RowPlan plan;
    if (!planRows(x, y, c, plan, whyNot))
      return false;
  }
  return true;
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// Double to half rounded once (V6), over four source blocks (the four
/// doubles of each result long word) into result long words: per double,
/// |d| clamped to [2^-b, 2^(E - b)] (b the half's bias, E its all-ones
/// exponent: the patterns of +0 and of infinity once rebiased), the
/// exponent rebiased by the difference of the biases, the mantissa
/// rounded to nearest even at the half's last place by integer adds (a
/// carry moves into the exponent), the sign put back; the four halves
/// or-ed into their places and normalised by hvpassar (a zero exponent
/// gives +0, as the MAU's conversions).
MathProgram doubleToHalfProgram() {
  using Home = MathProgram::Home;
  using Ref = MathProgram::Ref;
  MathProgram p(DeviceType::Double);
  VectorFormat wide(DeviceType::Double), half(DeviceType::Half);
  int64_t shift = wide.mantissaBits() - half.mantissaBits();
  uint64_t rebias = uint64_t(wide.exponentBias() - half.exponentBias())
                    << wide.mantissaBits();
  int allOnes = int(half.infinity() >> half.mantissaBits());
  double top = std::ldexp(1.0, allOnes - half.exponentBias());
  double bottom = std::ldexp(1.0, -half.exponentBias());
  Ref acc;
  int64_t halves = half.lanes();
  for (int64_t j = 0; j < halves; ++j) {
    // Alternate homes, so that or-ing two halves reads two memories.
    Home mine = j % 2 ? Home::First : Home::Second;
    Home other = j % 2 ? Home::Second : Home::First;
    Ref x = p.input(unsigned(j));
    Ref a = p.alu("land", {x, p.constantLane(wide.magnitudeMask(), other)},
                  mine);
    a = p.alu("dmin", {a, p.constant(top, other)}, mine);
    a = p.alu("dmax", {a, p.constant(bottom, other)}, mine);
    Ref v = p.alu("lsub", {a, p.constantLane(rebias, other)}, mine);
    Ref odd = p.alu("llsr", {v, p.constantLane(shift, other)}, other);
    odd = p.alu("land", {odd, p.constantLane(1, mine)}, other);
    Ref r = p.alu("ladd", {v, odd}, mine);
    r = p.alu("ladd",
              {r, p.constantLane((uint64_t(1) << (shift - 1)) - 1, other)},
              mine);
    Ref bits = p.alu("llsr", {r, p.constantLane(shift, other)}, mine);
    Ref sign = p.alu("llsr", {x, p.constantLane(64 - half.bits(), other)},
                     other);
    sign = p.alu("land", {sign, p.constantLane(half.signBit(), mine)}, other);
    bits = p.alu("lor", {bits, sign}, mine);
    if (j + 1 < halves)
      bits = p.alu("llsl",
                   {bits, p.constantLane(half.bits() * (halves - 1 - j), other)},
                   mine);
    acc = j == 0 ? bits : p.alu("lor", {acc, bits}, Home::Destination);
  }
  p.setResult(p.mau("hvpassar", {acc}, Home::Destination));
  return p;
}

class CastGenerator : public KernelGenerator {
public:
  const char *name() const override { return "cast"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "Cast")
      return false;
    Conversion c;
    return analyse(request, c, whyNot);
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Conversion c;
    if (!analyse(request, c, error))
      return false;
    return emitConversion(request, c, nullptr, out, description, error);
  }

private:
  bool emitRows(const KernelRequest &request, const Conversion &c,
                const RowPlan &plan, VsmWriter &out,
                KernelDescription &description, std::string &error) const;

protected:
  /// The single operand of a cast-add (CastAddGenerator): added to the
  /// converted source in the result's spread, in the Add's operand order,
  /// then clamped by the fused activation if any.
  struct Addend {
    DramForm form;
    bool first = false; // the single operand is the Add's input 0
    std::optional<KernelActivation> activation;
    /// A second result: the sum rounded to half, in this form (V9).
    std::optional<DramForm> narrowed;
    /// The other operand is half too, widened as the source is (V10).
    bool widened() const { return form.type == DeviceType::Half; }
  };

  bool emitConversion(const KernelRequest &request, const Conversion &c,
                      const Addend *addend, VsmWriter &out,
                      KernelDescription &description,
                      std::string &error) const {
    const DramForm &x = request.inputs[0].form;
    const DramForm &y = request.outputs[0].form;
    if (x.innerPadded() != y.innerPadded()) {
      if (addend) {
        error = "a cast-add of rows that pad differently";
        return false;
      }
      RowPlan plan;
      if (!planRows(x, y, c, plan, error))
        return false;
      return emitRows(request, c, plan, out, description, error);
    }
    // Result long words per PE and pass: whole MV units of source, and
    // the L2BM of an L2B holding two passes' sources and two passes'
    // results, so that the next pass's source and the last pass's result
    // move while the PEs work on this one (V7). Per result long word of a
    // pass: the source, the result, a cast-add's addend (single, or half as
    // the source) and its half copy; all twice.
    bool narrows = addend && addend->narrowed;
    bool bothHalf = addend && addend->widened();
    int64_t addendShare = !addend ? 0 : bothHalf ? 2 * c.num : 2 * c.den;
    int64_t l2bPerPass =
        kPesPerL1b * kL1bsPerL2b *
        (2 * c.num + 2 * c.den + addendShare + (narrows ? c.den : 0)) / c.den;
    // The half copy takes four long words a step: its passes and shares
    // are whole multiples of eight result long words.
    int64_t align = narrows ? 8 : 4;
    int64_t pass = std::min<int64_t>(AlignedSpread::kChunkLongWords,
                                     kL2bmLongWords / l2bPerPass) /
                   align * align;
    AlignedSpread result(y, align);
    int64_t share = result.peLongWords() * kPesPerL1b;
    description.generator = name();
    description.variant =
        std::string(c.name) + ", " +
        (bothHalf ? std::string("added to a widened half operand, ")
         : addend ? std::string("added to a single operand, ")
                  : "") +
        std::to_string(result.peLongWords()) + " result long words per PE" +
        (addend && addend->activation ? ", then " + addend->activation->opType
                                      : "") +
        (narrows ? ", and a half copy" : "");
    description.parameters.push_back(
        {"gather",
         "l1bmp source, $mt reads, passes of " + std::to_string(pass) + " lw"});

    // T: q's source words plus the cycle's, once (manual 3.3.3: the LM0
    // address through T adds T's low word).
    auto imm = [&](uint32_t bits, const std::string &to) {
      char payload[24];
      std::snprintf(payload, sizeof payload, "ui\"0x%08x\"", bits);
      out.step({std::string("imm ") + payload + " " + to});
    };
    // A conversion's T table is built from its shift of $peid (GRF0 long
    // word shiftLw, the shifted $peid in the next) and its cycles' offsets
    // (GRF1 long words cycleLw to cycleLw + 3).
    auto tableInputs = [&](const Conversion &conv, int64_t shiftLw,
                           int64_t cycleLw) {
      imm(conv.shl ? conv.shl : conv.shr,
          peOperand(PeMemory::GRF0, Width::Long, 2 * shiftLw, 0));
      for (int64_t cycle = 0; cycle < 4; ++cycle)
        imm(uint32_t(cycle * conv.cycleWords),
            peOperand(PeMemory::GRF1, Width::Long, 2 * (cycleLw + cycle), 0));
    };
    auto shiftPeid = [&](const Conversion &conv, int64_t shiftLw) {
      out.step({std::string(conv.shl ? "ilsl" : "ilsr") + " $peid " +
                peOperand(PeMemory::GRF0, Width::Long, 2 * shiftLw, 0) + " " +
                peOperand(PeMemory::GRF0, Width::Long, 2 * (shiftLw + 1), 0)});
    };
    auto addCycles = [&](int64_t shiftLw, int64_t cycleLw,
                         const std::string &to) {
      out.step({"iadd " +
                peOperand(PeMemory::GRF0, Width::Long, 2 * (shiftLw + 1), 0) +
                " " +
                peOperandFlat(PeMemory::GRF1, Width::Long,
                              {2 * cycleLw, 2 * cycleLw + 2, 2 * cycleLw + 4,
                               2 * cycleLw + 6}) +
                " " + to});
    };
    tableInputs(c, 0, 0);
    // Half to double: PEs of odd q take the low single of their word; 1
    // and 5 as 64-bit lanes (GRF0 and GRF1 long word 4).
    bool parity = c.from == DeviceType::Half && c.to == DeviceType::Double;
    if (parity) {
      imm(0, peOperand(PeMemory::GRF0, Width::Word, 8, 0));
      imm(1, peOperand(PeMemory::GRF0, Width::Word, 9, 0));
      imm(0, peOperand(PeMemory::GRF1, Width::Word, 8, 0));
      imm(5, peOperand(PeMemory::GRF1, Width::Word, 9, 0));
    }
    out.nop();
    shiftPeid(c, 0);
    if (parity)
      out.step({"land $peid " + peOperand(PeMemory::GRF0, Width::Long, 8, 0) +
                " " + peOperand(PeMemory::GRF0, Width::Long, 16, 0)});
    // The half copy reads the result as Cast single to half does: T = 4 q
    // words plus the cycle's 256.
    Conversion narrowing;
    if (narrows) {
      if (!conversionOf(DeviceType::Single, DeviceType::Half, narrowing, error))
        return false;
      tableInputs(narrowing, kNarrowingShift, kNarrowingCycles);
      out.nop();
      shiftPeid(narrowing, kNarrowingShift);
    }
    out.nop();
    addCycles(0, 0, "$t");
    if (narrows) {
      // Both tables kept, T reloaded from them in every pass.
      addCycles(0, 0, peOperand(PeMemory::GRF0, Width::Long, 2 * kWideningT));
      addCycles(kNarrowingShift, kNarrowingCycles,
                peOperand(PeMemory::GRF0, Width::Long, 2 * kNarrowingT));
    }
    auto loadT = [&](int64_t table) {
      out.step({"lpassa " + peOperand(PeMemory::GRF0, Width::Long, 2 * table) +
                " $t"});
      // An ALU write of T two steps before a $mt read (H8).
      out.nop(2);
    };
    if (parity) {
      // 32 (q mod 2) as a 64-bit shift: GRF0 long word 8.
      out.nop();
      out.step({"llsl " + peOperand(PeMemory::GRF0, Width::Long, 16, 0) + " " +
                peOperand(PeMemory::GRF1, Width::Long, 8, 0) + " " +
                peOperand(PeMemory::GRF0, Width::Long, 16, 0)});
    }
    // A fused activation's bounds in GRF0 long words 20 and 21, clear of
    // T's words above.
    VectorFormat single(DeviceType::Single);
    ClampBounds clamp;
    if (addend && addend->activation)
      clamp = emitClampBounds(out, single, addend->activation->bounds,
                              PeMemory::GRF0, kClampLo, kClampLo + 1);
    // An ALU write of T two steps before a $mt read (H8).
    out.nop(2);

    auto passCount = [&](int64_t first) {
      return std::min(pass, result.peLongWords() - first);
    };
    auto sourceRanges = [&](int64_t first) {
      L1bRanges ranges;
      ranges.base = x.base + first * kPesPerL1b * c.num / c.den;
      ranges.l1bStride = share * c.num / c.den;
      ranges.l2bStride = ranges.l1bStride * kL1bsPerL2b;
      ranges.longWords = kPesPerL1b * passCount(first) * c.num / c.den;
      ranges.limit = x.groupLongWords() - first * kPesPerL1b * c.num / c.den;
      ranges.onlyGroup0 = x.groups == 1;
      return ranges;
    };
    // The L2BM of an L2B: the sources of even and odd passes, then their
    // results.
    int64_t sourceBuffer = kPesPerL1b * kL1bsPerL2b * pass * c.num / c.den;
    int64_t resultBuffer = kPesPerL1b * kL1bsPerL2b * pass;
    auto sourceAt = [&](int64_t index) { return (index % 2) * sourceBuffer; };
    auto resultAt = [&](int64_t index) {
      return 2 * sourceBuffer + (index % 2) * resultBuffer;
    };
    // A cast-add's single operand: in the result's spread, through two
    // more L2BM buffers, the L1BM past the source and LM0 past the
    // broadcast.
    // A half addend: in the source's spread, broadcast like it.
    std::optional<AlignedSpread> addendSpread;
    if (addend && !bothHalf)
      addendSpread.emplace(addend->form, align);
    int64_t addendBuffer = bothHalf ? sourceBuffer : resultBuffer;
    auto addendAt = [&](int64_t index) {
      return 2 * sourceBuffer + 2 * resultBuffer + (index % 2) * addendBuffer;
    };
    auto addendRangesOf = [&](int64_t first, int64_t count) {
      if (!bothHalf)
        return addendSpread->rangesOf(first, count);
      L1bRanges ranges = sourceRanges(first);
      ranges.base = addend->form.base + (ranges.base - x.base);
      return ranges;
    };
    // The half copy: half a result buffer each, past the addends; its
    // block address is half the result's (same rows, half the long words).
    auto narrowedAt = [&](int64_t index) {
      return 2 * sourceBuffer + 2 * resultBuffer + 2 * addendBuffer +
             (index % 2) * (resultBuffer / 2);
    };
    auto narrowedRanges = [&](int64_t first, int64_t count) {
      L1bRanges ranges = result.rangesOf(first, count);
      ranges.base = addend->narrowed->base + (ranges.base - y.base) / 2;
      ranges.l1bStride /= 2;
      ranges.l2bStride /= 2;
      ranges.longWords /= 2;
      ranges.limit = addend->narrowed->groupLongWords() -
                     (ranges.base - addend->narrowed->base);
      return ranges;
    };
    auto startPass = [&](int64_t first, int64_t index) {
      std::vector<unsigned> tags =
          emitDramToL2bm(out, sourceRanges(first), sourceAt(index));
      if (addend)
        for (unsigned tag : emitDramToL2bm(
                 out, addendRangesOf(first, passCount(first)), addendAt(index)))
          tags.push_back(tag);
      return tags;
    };
    std::vector<unsigned> sourceTags = startPass(0, 0);
    std::vector<unsigned> resultTags[2], narrowedTags[2];
    for (int64_t first = 0, index = 0; first < result.peLongWords();
         first += pass, ++index) {
      int64_t count = passCount(first);
      L1bRanges ranges = sourceRanges(first);
      if (narrows && index > 0)
        loadT(kWideningT);
      std::vector<unsigned> nextTags;
      if (first + pass < result.peLongWords())
        nextTags = startPass(first + pass, index + 1);
      for (unsigned tag : sourceTags)
        out.wait(tag);
      emitL2bmToL1bm(out, ranges, 0, sourceAt(index));
      if (addend) {
        // The addend's copy into the L1BM (past the source) beside the
        // source's broadcast out of it: an L2BM and an L1BM transfer, one
        // step for both.
        L1bRanges addendRanges = addendRangesOf(first, count);
        VsmWriter broadcast, copy;
        emitL1bmToPe(broadcast, Spread::PeBroadcast, 0, PeMemory::LM0, 0,
                     ranges.longWords);
        emitL2bmToL1bm(copy, addendRanges, kAddendL1bm, addendAt(index));
        out.sideBySide(broadcast, copy);
        if (bothHalf)
          emitL1bmToPe(out, Spread::PeBroadcast, kAddendL1bm, PeMemory::LM0,
                       kAddendLm, addendRanges.longWords);
        else
          emitL1bmToPe(out, Spread::AllPes, kAddendL1bm, PeMemory::LM0,
                       kAddendLm, count);
      } else {
        emitL1bmToPe(out, Spread::PeBroadcast, 0, PeMemory::LM0, 0,
                     ranges.longWords);
      }
      sourceTags = std::move(nextTags);
      // Step s makes result long words 4 s .. 4 s + 3 (one a cycle).
      int64_t stepWords = 4 * c.cycleWords;
      auto source = [&](int64_t s, int64_t offset, bool longWord) {
        return std::string(longWord ? "$lmt" : "$mt") +
               std::to_string(s * stepWords + offset);
      };
      int64_t steps = count / 4;
      if (c.from == c.to) {
        for (int64_t s = 0; s < steps; ++s)
          out.step({"lpassa " + source(s, 0, true) + " " +
                    peOperand(PeMemory::LM1, Width::Long, 8 * s)});
      } else if (c.num == 4) {
        // Double to half: each result long word's four doubles to LM1
        // blocks, then the program into LM1 (V6).
        for (int64_t s = 0; s < steps; ++s)
          for (int64_t j = 0; j < 4; ++j)
            out.step({"lpassa " + source(s, 2 * j, true) + " " +
                      peOperand(PeMemory::LM1, Width::Long,
                                2 * (kHalfBlocks + 32 * j + 4 * s))});
        out.nop();
        std::vector<PeBlock> blocks;
        for (int64_t j = 0; j < 4; ++j)
          blocks.push_back({PeMemory::LM1, kHalfBlocks + 32 * j, count});
        MathScratch scratch{{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}};
        if (!doubleToHalfProgram().emit(out, blocks, {PeMemory::LM1, 0, count},
                                        scratch, error))
          return false;
      } else if (c.num == 2) {
        // Two source long words per result long word: high and low word.
        const char *op = c.from == DeviceType::Single ? "fvpassar" : "dvpassar";
        for (int64_t s = 0; s < steps; ++s)
          for (int64_t half = 0; half < 2; ++half)
            out.step({std::string(op) + " " + source(s, 2 * half, true) + " " +
                      peOperand(PeMemory::LM1, Width::Word, 8 * s + half, 2)});
      } else if (!parity) {
        const char *op = c.to == DeviceType::Single ? "fvpassa" : "dvpassa";
        for (int64_t s = 0; s < steps; ++s)
          out.step({std::string(op) + " " + source(s, 0, false) + "e " +
                    peOperand(PeMemory::LM1, Width::Long, 8 * s)});
        // A half addend the same way, from its broadcast past the source's.
        if (bothHalf)
          for (int64_t s = 0; s < steps; ++s)
            out.step({std::string(op) + " " + source(s, 2 * kAddendLm, false) +
                      "e " +
                      peOperand(PeMemory::GRF1, Width::Long,
                                2 * kWidenedAddendGrf1 + 8 * s)});
      } else {
        // Both halves of the word to singles (GRF1), the PE's own one to
        // the top, then to double. Phase by phase: every phase is at least
        // three steps apart from the one it reads when there are three
        // steps; fewer wait.
        for (int64_t s = 0; s < steps; ++s)
          out.step({"fvpassa " + source(s, 0, false) + "e " +
                    peOperand(PeMemory::GRF1, Width::Long, 16 + 8 * s)});
        out.nop(unsigned(std::max<int64_t>(0, 3 - steps)));
        for (int64_t s = 0; s < steps; ++s)
          out.step({"llsl " +
                    peOperand(PeMemory::GRF1, Width::Long, 16 + 8 * s) + " " +
                    peOperand(PeMemory::GRF0, Width::Long, 16, 0) + " " +
                    peOperand(PeMemory::GRF1, Width::Long, 16 + 8 * s)});
        out.nop(unsigned(std::max<int64_t>(0, 2 - steps)));
        for (int64_t s = 0; s < steps; ++s)
          out.step({"dvpassa " +
                    peOperand(PeMemory::GRF1, Width::Long, 16 + 8 * s) + "e " +
                    peOperand(PeMemory::LM1, Width::Long, 8 * s)});
      }
      // MAU results land ten cycles after their step.
      out.nop(2);
      if (addend) {
        std::vector<std::string> values;
        for (int64_t s = 0; s < steps; ++s) {
          std::string converted = peOperand(PeMemory::LM1, Width::Long, 8 * s);
          std::string other = bothHalf
                                  ? peOperand(PeMemory::GRF1, Width::Long,
                                              2 * (kWidenedAddendGrf1 + 4 * s))
                                  : peOperand(PeMemory::LM0, Width::Long,
                                              2 * (kAddendLm + 4 * s));
          for (const std::string &expression : single.mauSteps(
                   "vadd",
                   addend->first ? std::vector<std::string>{other, converted}
                                 : std::vector<std::string>{converted, other},
                   converted))
            out.step({expression});
          values.push_back(converted);
        }
        out.nop(2);
        if (addend->activation) {
          emitClamp(out, single, clamp, values);
          out.nop(2);
        }
      }
      // The result through L2BM buffer index % 2, whose MV two passes back
      // must be done first; this pass's MV goes on beside the next pass.
      emitPeToL1bm(out, Spread::AllPes, PeMemory::LM1, 0, count, 0);
      for (unsigned tag : resultTags[index % 2])
        out.wait(tag);
      L1bRanges stored = result.rangesOf(first, count);
      if (narrows) {
        // The sum back from the L1BM to every PE of its L1B, rounded to
        // half two long words at a time through T, as Cast does; the
        // broadcast beside the sum's copy to the L2BM, which reads the
        // same L1BM long words (an L1BM and an L2BM transfer).
        VsmWriter sumCopy, sumBroadcast;
        emitL1bmToL2bm(sumCopy, stored, 0, resultAt(index));
        emitL1bmToPe(sumBroadcast, Spread::PeBroadcast, 0, PeMemory::LM0, 0,
                     count * kPesPerL1b);
        out.sideBySide(sumCopy, sumBroadcast);
        resultTags[index % 2] = emitL2bmToDram(out, stored, resultAt(index));
        loadT(kNarrowingT);
        int64_t stepWords = 4 * narrowing.cycleWords;
        for (int64_t s = 0; s < count / 8; ++s)
          for (int64_t half = 0; half < 2; ++half)
            out.step({"fvpassar $lmt" +
                      std::to_string(s * stepWords + 2 * half) + " " +
                      peOperand(PeMemory::LM1, Width::Word,
                                2 * kNarrowedLm + 8 * s + half, 2)});
        out.nop(2);
        emitPeToL1bm(out, Spread::AllPes, PeMemory::LM1, kNarrowedLm, count / 2,
                     kNarrowedL1bm);
        for (unsigned tag : narrowedTags[index % 2])
          out.wait(tag);
        L1bRanges copy = narrowedRanges(first, count);
        emitL1bmToL2bm(out, copy, kNarrowedL1bm, narrowedAt(index));
        narrowedTags[index % 2] = emitL2bmToDram(out, copy, narrowedAt(index));
      } else {
        emitL1bmToL2bm(out, stored, 0, resultAt(index));
        resultTags[index % 2] = emitL2bmToDram(out, stored, resultAt(index));
      }
    }
    for (const std::vector<unsigned> &tags : resultTags)
      for (unsigned tag : tags)
        out.wait(tag);
    for (const std::vector<unsigned> &tags : narrowedTags)
      for (unsigned tag : tags)
        out.wait(tag);
    (void)floatBits;
    return true;
  }
};

bool CastGenerator::emitRows(const KernelRequest &request, const Conversion &c,
                             const RowPlan &plan, VsmWriter &out,
                             KernelDescription &description,
                             std::string &error) const {
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  AlignedSpread result(y, plan.align);
  int64_t share = result.peLongWords() * kPesPerL1b;
  description.generator = name();
  description.variant = std::string(c.name) + ", rows of " +
                        std::to_string(plan.sourceRow) + " to " +
                        std::to_string(plan.resultRow) + " long words, " +
                        std::to_string(plan.stepPeriod) + " T tables";
  description.parameters.push_back(
      {"gather", "l1bmp source, $mt reads, passes of " +
                     std::to_string(plan.pass) + " lw"});
  // The tables, once: for entry j (step j / 4, cycle j % 4) of PE q,
  // P = 64 j + q: T = source word of P, and the mask of its column.
  int64_t entries = 4 * plan.stepPeriod;
  for (int64_t j = 0; j < entries; ++j) {
    char payload[24];
    std::snprintf(payload, sizeof payload, "ui\"0x%08x\"",
                  floatBits(float(64 * j)));
    out.step({std::string("imm ") + payload + " " +
              peOperand(PeMemory::LM1, Width::Long, 2 * (1024 + j), 0)});
  }
  out.nop();
  float resultRow = float(plan.resultRow);
  for (int table = 0; table < 2; ++table) {
    using Home = MathProgram::Home;
    MathProgram p;
    MathProgram::Ref k = p.input();
    MathProgram::Ref pe = p.alu(
        "ior", {p.fixed("$peid"), p.constantBits(0x4b000000, Home::First)},
        Home::Second);
    pe = p.mau("fvadd", {pe, -p.constant(8388608.0f, Home::First)},
               Home::Second);
    MathProgram::Ref position = p.mau("fvadd", {k, pe}, Home::Destination);
    MathProgram::Ref t =
        p.mau("fvfma",
              {position, p.constant(1.0f / resultRow, Home::First),
               p.constant(0.5f / resultRow, Home::Second)},
              Home::First);
    MathProgram::Ref row = p.alu("ffloor", {t}, Home::Second);
    MathProgram::Ref column =
        p.mau("fvfma", {row, -p.constant(resultRow, Home::First), position},
              Home::Destination);
    MathProgram::Ref words = p.mau(
        "fvmul", {column, p.constant(float(plan.wordsPerResult), Home::First)},
        Home::Destination);
    if (table == 0) {
      MathProgram::Ref source = p.mau(
          "fvfma",
          {row, p.constant(float(2 * plan.sourceRow), Home::First), words},
          Home::First);
      p.setResult(p.alu("fftoi", {source}, Home::Destination));
    } else {
      // Columns past the source row read the next row: zero them.
      MathProgram::Ref d = p.mau(
          "fvadd", {words, -p.constant(float(2 * plan.sourceRow), Home::First)},
          Home::First);
      p.setResult(p.alu("ilsr", {d, p.constantBits(31, Home::Second)},
                        Home::Destination));
    }
    MathScratch scratch{{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}};
    if (!p.emit(out, {{PeMemory::LM1, 1024, entries}},
                {PeMemory::LM0, 1024 + 256 * table, entries}, scratch, error))
      return false;
  }
  // T tables to GRF0 and masks to GRF1, long words 64 on.
  for (int64_t j = 0; j < entries; j += 4) {
    out.step({"lpassa " +
              peOperand(PeMemory::LM0, Width::Long, 2 * (1024 + j)) + " " +
              peOperand(PeMemory::GRF0, Width::Long, 2 * (64 + j))});
    out.step({"lpassa " +
              peOperand(PeMemory::LM0, Width::Long, 2 * (1280 + j)) + " " +
              peOperand(PeMemory::GRF1, Width::Long, 2 * (64 + j))});
  }
  out.nop();

  bool twoReads = c.num == 2;
  const char *op = c.from == DeviceType::Single
                       ? (twoReads ? "fvpassar" : "dvpassa")
                       : (twoReads ? "dvpassar" : "fvpassa");
  for (int64_t first = 0; first < result.peLongWords(); first += plan.pass) {
    int64_t count = std::min(plan.pass, result.peLongWords() - first);
    int64_t rows = count * kPesPerL1b / plan.resultRow;
    int64_t sourceLongWords = roundUp(rows * plan.sourceRow, kMvUnitLongWords);
    int64_t sourceBase = first * kPesPerL1b / plan.resultRow * plan.sourceRow;
    L1bRanges ranges;
    ranges.base = x.base + sourceBase;
    ranges.l1bStride = share / plan.resultRow * plan.sourceRow;
    ranges.l2bStride = ranges.l1bStride * kL1bsPerL2b;
    ranges.longWords = sourceLongWords;
    ranges.limit = x.groupLongWords() - sourceBase;
    ranges.onlyGroup0 = x.groups == 1;
    emitDramToL1bm(out, ranges, 0, 0);
    emitL1bmToPe(out, Spread::PeBroadcast, 0, PeMemory::LM0, 0,
                 sourceLongWords);
    int64_t steps = count / 4;
    for (int64_t sigma = 0; sigma < plan.stepPeriod && sigma < steps; ++sigma) {
      out.step({"lpassa " +
                peOperand(PeMemory::GRF0, Width::Long, 2 * (64 + 4 * sigma)) +
                " $t"});
      // An ALU write of T two steps before a $mt read (H8).
      out.nop(2);
      for (int64_t s = sigma; s < steps; s += plan.stepPeriod) {
        int64_t address = (s - sigma) / plan.stepPeriod * plan.delta;
        if (twoReads) {
          for (int64_t half = 0; half < 2; ++half)
            out.step({std::string(op) + " $lmt" +
                      std::to_string(address + 2 * half) + " " +
                      peOperand(PeMemory::LM1, Width::Word, 8 * s + half, 2)});
        } else {
          out.step({std::string(op) + " $mt" + std::to_string(address) + "e " +
                    peOperand(PeMemory::LM1, Width::Long, 8 * s)});
        }
      }
    }
    out.nop(2);
    for (int64_t s = 0; s < steps; ++s)
      out.step({"iand " + peOperand(PeMemory::LM1, Width::Long, 8 * s) + " " +
                peOperand(PeMemory::GRF1, Width::Long,
                          2 * (64 + 4 * (s % plan.stepPeriod))) +
                " " + peOperand(PeMemory::LM1, Width::Long, 8 * s)});
    out.nop();
    result.emitStore(out, first, count, PeMemory::LM1, 0);
  }
  return true;
}

/// An Add of a half and a single tensor into a single one: the Cast of
/// mixed's half product result folded into the Add that reads it
/// (mncc-fuse-epilogues, docs/codegen.md V8). Widening is exact, and the
/// add is the elementwise kernel's, so the result is the same to the bit.
/// With a second, half output it also writes the sum rounded to half, the
/// Cast after it folded in (V9).
class CastAddGenerator : public CastGenerator {
public:
  const char *name() const override { return "cast-add"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "Add")
      return false;
    Addend addend;
    KernelRequest conversion;
    Conversion c;
    return analyseAdd(request, conversion, addend, c, whyNot);
  }

  bool fusesActivation(const KernelRequest &request) const override {
    std::string whyNot;
    return matches(request, whyNot);
  }

  bool writesNarrowedCopy(const KernelRequest &request) const override {
    std::string whyNot;
    return request.outputs.size() == 2 && matches(request, whyNot);
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Addend addend;
    KernelRequest conversion;
    Conversion c;
    if (!analyseAdd(request, conversion, addend, c, error))
      return false;
    if (!emitConversion(conversion, c, &addend, out, description, error))
      return false;
    description.generator = name();
    return true;
  }

private:
  /// The conversion of the half operand to the result, and the single
  /// operand beside it, of one shape, order, groups and row padding.
  static bool analyseAdd(const KernelRequest &request,
                         KernelRequest &conversion, Addend &addend,
                         Conversion &c, std::string &whyNot) {
    if (request.inputs.size() != 2 || request.outputs.empty() ||
        request.outputs.size() > 2 || !request.hasInput(0) ||
        !request.hasInput(1)) {
      whyNot = "expects two inputs and one output (and a half copy)";
      return false;
    }
    const DramForm &y = request.outputs[0].form;
    int half = request.inputs[0].form.type == DeviceType::Half   ? 0
               : request.inputs[1].form.type == DeviceType::Half ? 1
                                                                  : -1;
    DeviceType otherType =
        half < 0 ? DeviceType::Single : request.inputs[1 - half].form.type;
    if (y.type != DeviceType::Single || half < 0 ||
        (otherType != DeviceType::Single && otherType != DeviceType::Half)) {
      whyNot = "a half and a single or half operand into a single result only";
      return false;
    }
    const DramForm &x = request.inputs[half].form;
    const DramForm &other = request.inputs[1 - half].form;
    if (other.shape != y.shape || other.order != y.order ||
        other.groups != y.groups || x.innerPadded() != y.innerPadded() ||
        other.innerPadded() != y.innerPadded()) {
      whyNot = "operands of different shapes, orders, groups or row padding";
      return false;
    }
    if (request.outputs.size() == 2) {
      // The sum rounded to half beside it: a Cast of the result folded in
      // (V9), long word for long word half the result's.
      const DramForm &copy = request.outputs[1].form;
      if (copy.type != DeviceType::Half || copy.shape != y.shape ||
          copy.order != y.order || copy.groups != y.groups ||
          copy.innerPadded() != y.innerPadded()) {
        whyNot = "a half copy of another shape, order, groups or row padding";
        return false;
      }
      addend.narrowed = copy;
    }
    conversion = request;
    conversion.opType = "Cast";
    conversion.inputs = {request.inputs[half]};
    conversion.outputs = {request.outputs[0]};
    conversion.activation.reset();
    if (!analyse(conversion, c, whyNot))
      return false;
    addend.form = other;
    addend.first = half == 1;
    addend.activation = request.activation;
    return true;
  }
};

std::unique_ptr<KernelGenerator> createCastGenerator() {
  return std::make_unique<CastGenerator>();
}
std::unique_ptr<KernelGenerator> createCastAddGenerator() {
  return std::make_unique<CastAddGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Cast, 100, createCastGenerator);
MNCC_KERNEL_GENERATOR(CastAdd, 100, createCastAddGenerator);
