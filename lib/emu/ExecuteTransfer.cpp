//===- ExecuteTransfer.cpp - L1BM, L2BM, matrix and MV transfers ----------===//
//
// The data movement instructions of mncc-sim: L1BM <-> PE transfers and RRN
// reductions (manual 3.6.8), L2BM <-> L1BM copies, distribution and
// reductions (3.6.7), the matrix registers (3.6.6) and the MV transfers
// mvp, mvb, mvb2 and mvr (3.5). Layouts follow the manual's tables: per
// cycle, 16x1 mode moves 4 long words per width unit (one per PE of a MAB,
// broadcast or reduced over the 16 MABs), 4x4 mode 16 (MAB bits 3-2
// distribute, bits 1-0 broadcast or reduce), l1bmp 1 (the same to every
// PE), l1bmd 64 (one per PE); docs/target/mncore2.md decisions S17-S24.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"

#include "mncc/emu/Numerics.h"

#include "HostTarget.h"

#include <cstring>

namespace mncc::emu {

namespace {

using target::PesPerL1b;

/// Long words per PE and cycle of an upper memory operand.
unsigned longsOf(const Operand &op) {
  return op.Size == Width::DoubleLong ? 2 : 1;
}

/// Long word offset in the L1BM of PE (mab, subpe), cycle c and half h (0
/// for the most significant long word) for a transfer layout. Per cycle a
/// layout moves a group of G long words per width unit (l1bmp 1, 16x1 4,
/// 4x4 16, l1bmd 64), one per PE position; a double long transfer moves
/// two such groups, the high long words first (decision S17: the public
/// DRAM download programs place long word k of a 16x1 double long group at
/// 8c + 4h + pe).
uint64_t l1bmOffset(Opcode op, unsigned longs, unsigned cycle, unsigned half,
                    unsigned mab, unsigned subpe) {
  unsigned group = target::opcodeInfo(op).L1bmLongWords;
  // The position of the PE in the group: none for l1bmp, the PE of the
  // MAB for 16x1, 4 * (mab >> 2) + PE for 4x4, 4 * mab + PE for l1bmd.
  unsigned index = group == 1    ? 0
                   : group == 4  ? subpe
                   : group == 16 ? (mab >> 2) * PesPerMab + subpe
                                 : mab * PesPerMab + subpe;
  return uint64_t(cycle) * group * longs + uint64_t(half) * group + index;
}

/// The slot of the l1bmd layout that MAB `mab` uses under the rotation of
/// l1bmd+n / l1bmd-n, which moves the data n MABs on (decision S37): a
/// gather puts MAB m's long words in the slot of MAB m + n (manual
/// 3.6.8.21), a distribution gives MAB m the slot of MAB m - n (the open
/// SDK's measurement on PFN's emulator: l1bmd+1 reads MAB N - 1, l1bmd-1
/// MAB N + 1), wrapping within the L1B.
unsigned rotatedMab(const Expression &expr, unsigned mab, bool gather) {
  int shift = gather ? expr.MabShift : -expr.MabShift;
  int shifted = (int(mab) + shift) % int(MabsPerL1b);
  return unsigned(shifted < 0 ? shifted + int(MabsPerL1b) : shifted);
}

uint64_t lane(uint64_t value, unsigned bits, unsigned i) {
  unsigned shift = 64 - bits * (i + 1);
  return bits == 64 ? value : value >> shift & ((uint64_t(1) << bits) - 1);
}

/// One RRN reduction of n (1, 4, 8 or 16) long words, lane by lane in the
/// reduction's precision (manual 3.5, chapter 4 for the floating point
/// rules). Reductions of 8 and 16 elements are two-stage, over groups of
/// four (docs/target/mncore2.md decisions 17 and S21). The L1BM reduces
/// halves on its single circuit; the L2BM and MV have half circuits.
uint64_t reduceLongs(const uint64_t *values, unsigned n, RrnOp op,
                     Precision prec, bool halfOnSingleCircuit) {
  if (n == 1)
    return values[0];
  unsigned bits = prec == Precision::D || prec == Precision::L   ? 64
                  : prec == Precision::F || prec == Precision::I ? 32
                                                                 : 16;
  uint64_t result = 0;
  for (unsigned i = 0; i < 64 / bits; ++i) {
    uint64_t r = 0;
    if (op == RrnOp::FAdd) {
      if (bits == 64) {
        r = n > 4 ? rrnFaddTwoStage<Double>(values, n, 4)
                  : rrnFadd<Double>(values, n);
      } else if (bits == 32) {
        uint32_t v[16];
        for (unsigned k = 0; k < n; ++k)
          v[k] = uint32_t(lane(values[k], 32, i));
        r = n > 4 ? rrnFaddTwoStage<Single>(v, n, 4) : rrnFadd<Single>(v, n);
      } else if (!halfOnSingleCircuit) {
        uint16_t h[16];
        for (unsigned k = 0; k < n; ++k)
          h[k] = uint16_t(lane(values[k], 16, i));
        r = n > 4 ? rrnFaddTwoStage<Half>(h, n, 4) : rrnFadd<Half>(h, n);
      } else {
        // The L1BM reduces halves on its single circuit (manual 4, RRN).
        uint16_t h[16];
        uint32_t v[16];
        for (unsigned k = 0; k < n; ++k) {
          h[k] = uint16_t(lane(values[k], 16, i));
          v[k] = halfToSingle(h[k]);
        }
        r = n == 16 ? l1bmHalfFadd16(h, 16)
            : n > 4 ? rrnFaddTwoStage<Single, Half>(v, n, 4)
                    : rrnFadd<Single, Half>(v, n);
      }
    } else if (op == RrnOp::Max || op == RrnOp::Min) {
      r = lane(values[0], bits, i);
      for (unsigned k = 1; k < n; ++k) {
        uint64_t v = lane(values[k], bits, i);
        bool isMax = op == RrnOp::Max;
        if (bits == 64)
          r = isMax ? rrnMax<Double>(r, v) : rrnMin<Double>(r, v);
        else if (bits == 32)
          r = isMax ? rrnMax<Single>(uint32_t(r), uint32_t(v))
                    : rrnMin<Single>(uint32_t(r), uint32_t(v));
        else
          r = isMax ? rrnMax<Half>(uint16_t(r), uint16_t(v))
                    : rrnMin<Half>(uint16_t(r), uint16_t(v));
      }
    } else {
      r = op == RrnOp::BAnd || op == RrnOp::And ? ~uint64_t(0) : 0;
      for (unsigned k = 0; k < n; ++k) {
        uint64_t v = lane(values[k], bits, i);
        switch (op) {
        case RrnOp::IAdd:
          r += v;
          break;
        case RrnOp::BAnd:
          r &= v;
          break;
        case RrnOp::BOr:
          r |= v;
          break;
        case RrnOp::And: // logical: 1 when every element is non-zero
          r = (r && v) ? 1 : 0;
          break;
        default: // logical or
          r = (r || v) ? 1 : 0;
          break;
        }
      }
    }
    if (bits == 64)
      result = r;
    else
      result |= (r & ((uint64_t(1) << bits) - 1)) << (64 - bits * (i + 1));
  }
  return result;
}

} // namespace

uint64_t &Machine::turnaroundWord(unsigned l1b, uint64_t offset) {
  if (!Turnaround)
    Turnaround.reset(new uint64_t[NumL1bs * TurnaroundLongWords]());
  return Turnaround[l1b * TurnaroundLongWords + offset % TurnaroundLongWords];
}

uint64_t &Machine::matrixWord(Space space, unsigned mab, unsigned row,
                              unsigned column) {
  size_t plane = space == Space::MatY ? 1 : 0;
  // The caller may write the word: the decoded copy is stale.
  DecodedMatrices[plane * NumMabs + mab % NumMabs].Valid = false;
  return Matrices[((plane * NumMabs + mab) * 16 + row % 16) * 4 + column % 4];
}

uint64_t Machine::matrixWordValue(Space space, unsigned mab, unsigned row,
                                  unsigned column) const {
  size_t plane = space == Space::MatY ? 1 : 0;
  return Matrices[((plane * NumMabs + mab) * 16 + row % 16) * 4 + column % 4];
}

unsigned Machine::matrixElementBits(Precision prec) {
  return prec == Precision::D ? 64 : prec == Precision::H ? 16 : 32;
}

uint64_t Machine::matrixElementAt(Space space, unsigned mab, unsigned row,
                                  unsigned column, unsigned bits) const {
  // A row is 256 bits: four long words, elements from the most significant
  // end of long word 0.
  unsigned offset = column * bits % 256;
  uint64_t word = matrixWordValue(space, mab, row, offset / 64);
  return bits == 64
             ? word
             : word >> (64 - offset % 64 - bits) & ((uint64_t(1) << bits) - 1);
}

MNCC_EMU_HOST_VARIANTS
void Machine::readTransfer(const Expression &expr, unsigned cycle,
                           const WideLanes *const *sources, WideLanes &out,
                           PeRange range) const {
  switch (expr.Op) {
  case Opcode::L1bmP:
  case Opcode::L1bmM:
  case Opcode::L1bmM4:
  case Opcode::L1bmD: {
    const Operand &src = expr.Sources[0];
    unsigned longs = longsOf(src);
    if (src.Turnaround) {
      // $lbi: the previous PE -> L1BM transfer's step, in its layout
      // (decision S30); an l1bmd rotation applies to it too (manual
      // 3.6.8.20).
      Machine *self = const_cast<Machine *>(this);
      for (unsigned pe = range.Begin; pe < range.End; ++pe) {
        unsigned l1b = pe / PesPerL1b;
        unsigned mab = rotatedMab(expr, pe / PesPerMab % MabsPerL1b, false);
        unsigned subpe = pe % PesPerMab;
        out.High[pe] = self->turnaroundWord(
            l1b, l1bmOffset(expr.Op, longs, cycle, 0, mab, subpe));
        out.Low[pe] =
            longs == 2
                ? self->turnaroundWord(
                      l1b, l1bmOffset(expr.Op, longs, cycle, 1, mab, subpe))
                : 0;
      }
      return;
    }
    // The long word a PE reads depends on its place in the L1B only: the
    // 64 addresses (of each half) once, then every L1B reads through them.
    uint64_t addresses[2][PesPerL1b];
    for (unsigned half = 0; half < longs; ++half)
      for (unsigned p = 0; p < PesPerL1b; ++p) {
        unsigned mab = rotatedMab(expr, p / PesPerMab, false);
        addresses[half][p] =
            (src.Address[0] +
             l1bmOffset(expr.Op, longs, cycle, half, mab, p % PesPerMab)) %
            L1bmLongWords;
      }
    // The addresses repeat every `period` PEs (1 for l1bmp, 4 for 16x1
    // mode, 16 for 4x4, 64 for l1bmd): each L1B reads one period and
    // repeats it. A power of two, so a mask finds the place in it.
    unsigned period = 1;
    for (unsigned half = 0; half < longs; ++half)
      for (unsigned p = 0; p < PesPerL1b; ++p)
        while (addresses[half][p] != addresses[half][p & (period - 1)])
          period *= 2;
    auto readHalf = [&](const uint64_t *l1bm, const uint64_t *halfAddresses,
                        uint64_t *lanes) {
      uint64_t values[PesPerL1b];
      for (unsigned p = 0; p < period; ++p)
        values[p] = l1bm[halfAddresses[p]];
      if (period == 1) {
        for (unsigned p = 0; p < PesPerL1b; ++p)
          lanes[p] = values[0];
      } else if (period == 4) {
        for (unsigned p = 0; p < PesPerL1b; ++p)
          lanes[p] = values[p % 4];
      } else {
        for (unsigned p = 0; p < PesPerL1b; ++p)
          lanes[p] = values[p & (period - 1)];
      }
    };
    for (unsigned l1b = range.firstL1b(); l1b < range.endL1b(); ++l1b) {
      const uint64_t *l1bm = &L1bm[size_t(l1b) * L1bmLongWords];
      readHalf(l1bm, addresses[0], out.High + size_t(l1b) * PesPerL1b);
      if (longs == 2)
        readHalf(l1bm, addresses[1], out.Low + size_t(l1b) * PesPerL1b);
    }
    if (longs != 2)
      std::memset(out.Low + range.Begin, 0, range.size() * sizeof *out.Low);
    return;
  }
  case Opcode::MRead: {
    // Transposed read (manual 3.6.6): in cycle c the PEs receive column
    // addr + c of the matrix, PE k its k-th quarter; hmread moves two
    // columns a cycle, the second in the low long word (decision S19).
    const Operand &src = expr.Sources[0];
    unsigned bits = matrixElementBits(expr.Prec);
    unsigned perPe = 64 / bits;
    bool twoColumns = expr.Prec == Precision::H;
    for (unsigned pe = range.Begin; pe < range.End; ++pe) {
      unsigned mab = pe / PesPerMab, k = pe % PesPerMab;
      uint64_t words[2] = {0, 0};
      for (unsigned half = 0; half < (twoColumns ? 2u : 1u); ++half) {
        unsigned column =
            src.Address[0] + (twoColumns ? 2 * cycle + half : cycle);
        for (unsigned e = 0; e < perPe; ++e) {
          uint64_t element =
              matrixElementAt(src.Where, mab, k * perPe + e, column, bits);
          words[half] |= element << (64 - bits * (e + 1));
        }
      }
      out.High[pe] = words[0];
      out.Low[pe] = words[1];
    }
    return;
  }
  case Opcode::MFma:
  case Opcode::MMul: {
    // y = M b + c over the MAB (manual 3.6.6, chapter 4 for the
    // arithmetic): b is the block-float vector the four PEs supply in the
    // cycle, PE k its k-th quarter; y and c are laid out the same way in
    // the output precision. dm(fma|mul) computes rows 0, 1 ("u", PEs 0, 1)
    // or 2, 3 ("d", PEs 2, 3) and the other PEs pass c through the output
    // tail.
    const Operand &matrix = expr.Sources[0];
    const WideLanes &b = *sources[1];
    const WideLanes *c = expr.Op == Opcode::MFma ? sources[2] : nullptr;
    for (unsigned mab = range.firstMab(); mab < range.endMab(); ++mab) {
      unsigned pe0 = mab * PesPerMab;
      if (expr.Prec == Precision::D) {
        uint64_t vector[4], row[4];
        for (unsigned k = 0; k < 4; ++k)
          vector[k] = b.High[pe0 + k];
        for (unsigned p = 0; p < 4; ++p) {
          uint64_t addend = c ? c->High[pe0 + p] : 0;
          bool active = expr.DoubleHalf == 1 ? p < 2 : p >= 2;
          for (unsigned k = 0; k < 4; ++k)
            row[k] = matrixElementAt(matrix.Where, mab, p, k, 64);
          out.High[pe0 + p] =
              active ? mauMatVecDouble(row, vector, 4, addend)
                     : roundToFormat<Double>(decode<Double>(addend));
          out.Low[pe0 + p] = 0;
        }
        continue;
      }
      if (expr.Prec == Precision::F) {
        // fm(fma|mul): the 8 x 8 single register's even columns times the
        // single block float of the PEs' most significant singles, 8 x 4
        // (manual 3.6.6, 1.4); output i goes to PE i / 2, single i % 2 of
        // its long word, like gm* (decision S29).
        uint32_t vector[4], row[4];
        for (unsigned k = 0; k < 4; ++k)
          vector[k] = uint32_t(b.High[pe0 + k] >> 32);
        for (unsigned p = 0; p < 4; ++p) {
          out.High[pe0 + p] = 0;
          out.Low[pe0 + p] = 0;
        }
        for (unsigned i = 0; i < 8; ++i) {
          unsigned pe = pe0 + i / 2, slot = i % 2;
          uint32_t addend = c ? uint32_t(c->High[pe] >> (32 - 32 * slot)) : 0;
          for (unsigned k = 0; k < 4; ++k)
            row[k] = uint32_t(matrixElementAt(matrix.Where, mab, i, 2 * k, 32));
          out.High[pe] |= uint64_t(mauMatVecSingle(row, vector, 4, addend))
                          << (32 - 32 * slot);
        }
        continue;
      }
      // The register is decoded once per contents (decodedMatrix), the
      // vector once per cycle; the products then run over integers.
      const DecodedMatrixView decoded =
          decodedMatrix(matrix.Where, mab, expr.Prec);
      uint32_t addends[16] = {}, results[16];
      if (expr.Prec == Precision::H) {
        // PE k supplies halves 4k..4k+3 of b, most significant first, and
        // receives the four singles 4k..4k+3 of y and c (High then Low).
        if (mauMatVecHalfLanes(*decoded.HalfProducts, &b.High[pe0],
                               c ? &c->High[pe0] : nullptr,
                               c ? &c->Low[pe0] : nullptr, &out.High[pe0],
                               &out.Low[pe0]))
          continue;
        if (c)
          halfSinglesFromLanes(&c->High[pe0], &c->Low[pe0], addends);
        DecodedHalfBlock vector;
        decodeHalfBlockOfLongWords(&b.High[pe0], vector);
        mauMatVecHalfMatrix(*decoded.HalfProducts,
                            decodedHalfRows(matrix.Where, mab), vector, addends,
                            results);
        halfLanesFromSingles(results, &out.High[pe0], &out.Low[pe0]);
        continue;
      }
      // Pseudo-single: PE k supplies singles 2k, 2k + 1 of b and receives
      // those of y and c in its most significant long word.
      uint32_t singleVector[8];
      for (unsigned k = 0; k < 4; ++k) {
        singleVector[2 * k] = uint32_t(b.High[pe0 + k] >> 32);
        singleVector[2 * k + 1] = uint32_t(b.High[pe0 + k]);
        if (c) {
          addends[2 * k] = uint32_t(c->High[pe0 + k] >> 32);
          addends[2 * k + 1] = uint32_t(c->High[pe0 + k]);
        }
      }
      DecodedPseudoSingleBlock vector;
      decodePseudoSingleBlock(singleVector, vector);
      mauMatVecPseudoSingleRows(decoded.PseudoSingleRows, 8, vector, addends,
                                results);
      for (unsigned k = 0; k < 4; ++k) {
        out.High[pe0 + k] = uint64_t(results[2 * k]) << 32 | results[2 * k + 1];
        out.Low[pe0 + k] = 0;
      }
    }
    return;
  }
  default:
    return;
  }
}

MNCC_EMU_HOST_VARIANTS
void Machine::commitTransfer(const Expression &expr, const WideLanes *perCycle,
                             PeRange range) {
  switch (expr.Op) {
  case Opcode::L1bmMAt:
  case Opcode::L1bmM4At:
  case Opcode::L1bmR:
  case Opcode::L1bmR4:
  case Opcode::L1bmD: {
    const Operand &dst = expr.Destinations[0];
    unsigned longs = longsOf(dst);
    // A noforward step leaves the turnaround register as it is.
    if (dst.Turnaround && !TurnaroundUpdates)
      return;
    bool reduces = expr.Op == Opcode::L1bmR || expr.Op == Opcode::L1bmR4;
    for (unsigned cycle = 0; cycle < 4; ++cycle) {
      const WideLanes &v = perCycle[cycle];
      // The slots a cycle writes depend on the PE's place in its L1B only:
      // worked out once, in the order the writes are made (a later write
      // to the same slot wins), then applied to every L1B.
      struct Slot {
        uint64_t Offset;  // in the turnaround register
        uint64_t Address; // in the L1BM
        unsigned Mab, Subpe, Half;
      };
      Slot slots[PesPerL1b * 2];
      unsigned slotCount = 0;
      for (unsigned mab = 0; mab < MabsPerL1b; ++mab) {
        // Which MABs write: @<mab> picks one (in 4x4 mode one of each
        // group of four); reductions write once per slot, from the MAB
        // with the lowest index of the reduced set.
        bool writes = true;
        if (expr.Op == Opcode::L1bmMAt)
          writes = mab == unsigned(expr.Target);
        else if (expr.Op == Opcode::L1bmM4At)
          writes = (mab & 3) == unsigned(expr.Target);
        else if (expr.Op == Opcode::L1bmR)
          writes = mab == 0;
        else if (expr.Op == Opcode::L1bmR4)
          writes = (mab & 3) == 0;
        if (!writes)
          continue;
        for (unsigned subpe = 0; subpe < PesPerMab; ++subpe)
          for (unsigned half = 0; half < longs; ++half) {
            // An l1bmd gather puts MAB m's long words in the slot of MAB
            // m + n, except into the turnaround register (manual
            // 3.6.8.21).
            Slot &slot = slots[slotCount++];
            slot.Offset = l1bmOffset(expr.Op, longs, cycle, half, mab, subpe) %
                          TurnaroundLongWords;
            slot.Address = (dst.Address[0] +
                            l1bmOffset(expr.Op, longs, cycle, half,
                                       rotatedMab(expr, mab, true), subpe)) %
                           L1bmLongWords;
            slot.Mab = mab;
            slot.Subpe = subpe;
            slot.Half = half;
          }
      }
      for (unsigned l1b = range.firstL1b(); l1b < range.endL1b(); ++l1b) {
        unsigned base = l1b * PesPerL1b;
        uint64_t *l1bm = &L1bm[size_t(l1b) * L1bmLongWords];
        uint64_t *turnaround = &turnaroundWord(l1b, 0);
        for (unsigned i = 0; i < slotCount; ++i) {
          const Slot &slot = slots[i];
          auto word = [&](unsigned m) {
            unsigned pe = base + m * PesPerMab + slot.Subpe;
            return slot.Half ? v.Low[pe] : v.High[pe];
          };
          uint64_t value;
          if (reduces) {
            uint64_t values[16];
            unsigned n = expr.Op == Opcode::L1bmR ? 16 : 4;
            for (unsigned k = 0; k < n; ++k)
              values[k] = word(n == 16 ? k : (slot.Mab & ~3u) + k);
            value = reduceLongs(values, n, expr.Reduction, expr.Prec, true);
          } else {
            value = word(slot.Mab);
          }
          // Every PE -> L1BM transfer leaves its step in the turnaround
          // register, in its layout and unrotated; to "$lbi" it writes
          // only there (manual 3.6.8.2, 3.6.8.21).
          if (TurnaroundUpdates)
            turnaround[slot.Offset] = value;
          if (!dst.Turnaround)
            l1bm[slot.Address] = value;
        }
      }
    }
    return;
  }
  case Opcode::MWrite: {
    // Cycle c writes row addr + c, PE k supplying the k-th quarter of it;
    // hmwrite to "$llx" writes two rows a cycle, the second from the low
    // long words (manual 3.6.6).
    const Operand &dst = expr.Destinations[0];
    bool twoRows = dst.Size == Width::DoubleLong;
    // MAB by MAB (matrixWord's layout and staleness, once per MAB): the 4
    // or 8 rows of a step are distinct, so the order of the writes does
    // not matter.
    size_t plane = dst.Where == Space::MatY ? 1 : 0;
    for (unsigned mab = range.firstMab(); mab < range.endMab(); ++mab) {
      DecodedMatrices[plane * NumMabs + mab].Valid = false;
      uint64_t *matrix = &Matrices[(plane * NumMabs + mab) * 16 * 4];
      unsigned pe0 = mab * PesPerMab;
      for (unsigned cycle = 0; cycle < 4; ++cycle)
        for (unsigned half = 0; half < (twoRows ? 2u : 1u); ++half) {
          unsigned row =
              (dst.Address[0] + (twoRows ? 2 * cycle + half : cycle)) % 16;
          const uint64_t *lanes =
              half ? perCycle[cycle].Low : perCycle[cycle].High;
          for (unsigned k = 0; k < PesPerMab; ++k)
            matrix[row * 4 + k] = lanes[pe0 + k];
        }
    }
    return;
  }
  case Opcode::L2bmR: {
    // Each of 64 long words reduced over the L1Bs of the L2B (or copied
    // from the one named by @<l1b>).
    const Operand &src = expr.Sources[0];
    const Operand &dst = expr.Destinations[0];
    for (unsigned l2b = range.firstL2b(); l2b < range.endL2b(); ++l2b) {
      for (unsigned i = 0; i < 64; ++i) {
        uint64_t values[L1bsPerL2b];
        unsigned n = 0;
        for (unsigned l1 = 0; l1 < L1bsPerL2b; ++l1)
          if (expr.Target < 0 || l1 == unsigned(expr.Target))
            values[n++] = l1bmWord(l2b * L1bsPerL2b + l1, src.Address[0] + i);
        l2bmWord(l2b, dst.Address[0] + i) =
            reduceLongs(values, n, expr.Reduction, expr.Prec, false);
      }
    }
    return;
  }
  case Opcode::L2bmD: {
    // Distribution: per cycle 64 long words of the L2BM, 8 to each L1B
    // (manual 3.6.7 table), so over a step L1B k receives
    // L2BM[addr + 64c + 8k + i] at L1BM[addr + 8c + i]; gathering is the
    // reverse (decision S23).
    const Operand &src = expr.Sources[0];
    const Operand &dst = expr.Destinations[0];
    for (unsigned l2b = range.firstL2b(); l2b < range.endL2b(); ++l2b)
      for (unsigned k = 0; k < L1bsPerL2b; ++k) {
        if (expr.Target >= 0 && k != unsigned(expr.Target))
          continue;
        unsigned l1b = l2b * L1bsPerL2b + k;
        for (unsigned cycle = 0; cycle < 4; ++cycle)
          for (unsigned i = 0; i < 8; ++i) {
            uint64_t wide = 64 * cycle + 8 * k + i, narrow = 8 * cycle + i;
            if (expr.ToUpper)
              l2bmWord(l2b, dst.Address[0] + wide) =
                  l1bmWord(l1b, src.Address[0] + narrow);
            else
              l1bmWord(l1b, dst.Address[0] + narrow) =
                  l2bmWord(l2b, src.Address[0] + wide);
          }
      }
    return;
  }
  case Opcode::L2bmB2:
  case Opcode::L2bmR2: {
    // Pairs of L1Bs: per cycle the L2BM side moves 64 long words and each
    // L1BM 16 (manual 3.6.7 table), so L1Bs 2p and 2p + 1 share
    // L2BM[addr + 64c + 16p + i] and L1BM[addr + 16c + i]: l2bmb2 copies
    // it to both, l2bmr2 reduces the two into it (decision S27).
    const Operand &src = expr.Sources[0];
    const Operand &dst = expr.Destinations[0];
    bool reduce = expr.Op == Opcode::L2bmR2;
    for (unsigned l2b = range.firstL2b(); l2b < range.endL2b(); ++l2b)
      for (unsigned pair = 0; pair < L1bsPerL2b / 2; ++pair)
        for (unsigned cycle = 0; cycle < 4; ++cycle)
          for (unsigned i = 0; i < 16; ++i) {
            uint64_t wide = 64 * cycle + 16 * pair + i, narrow = 16 * cycle + i;
            unsigned l1b0 = l2b * L1bsPerL2b + 2 * pair;
            if (reduce) {
              uint64_t values[2] = {
                  l1bmWord(l1b0, src.Address[0] + narrow),
                  l1bmWord(l1b0 + 1, src.Address[0] + narrow)};
              writeUpper(
                  Space::L2BM, l2b, dst.Address[0] + wide,
                  reduceLongs(values, 2, expr.Reduction, expr.Prec, false));
              continue;
            }
            uint64_t value = l2bmWord(l2b, src.Address[0] + wide);
            for (unsigned k = 0; k < 2; ++k)
              if (expr.Target < 0 || 2 * pair + k == unsigned(expr.Target))
                l1bmWord(l1b0 + k, dst.Address[0] + narrow) = value;
          }
    return;
  }
  case Opcode::L2bmI: {
    // l2bmi@k/m (manual 3.6.7.9): 16 long words a cycle from each reading
    // L1B (those agreeing with k outside the immode bits m) to every L1B
    // with the same bits m, itself included; all read before any write.
    const Operand &src = expr.Sources[0];
    const Operand &dst = expr.Destinations[0];
    unsigned m = expr.ImMode;
    for (unsigned l2b = range.firstL2b(); l2b < range.endL2b(); ++l2b) {
      uint64_t data[L1bsPerL2b][64];
      for (unsigned l1 = 0; l1 < L1bsPerL2b; ++l1)
        if ((l1 & ~m) == unsigned(expr.Target))
          for (unsigned i = 0; i < 64; ++i)
            data[l1 & m][i] =
                l1bmWord(l2b * L1bsPerL2b + l1, src.Address[0] + i);
      for (unsigned l1 = 0; l1 < L1bsPerL2b; ++l1)
        for (unsigned i = 0; i < 64; ++i)
          l1bmWord(l2b * L1bsPerL2b + l1, dst.Address[0] + i) = data[l1 & m][i];
    }
    return;
  }
  case Opcode::L2bmB:
  case Opcode::L2bmAt: {
    // 16 long words per cycle, 64 per instruction (manual 3.6.7).
    const Operand &src = expr.Sources[0];
    const Operand &dst = expr.Destinations[0];
    for (unsigned l2b = range.firstL2b(); l2b < range.endL2b(); ++l2b) {
      for (unsigned l1 = 0; l1 < L1bsPerL2b; ++l1) {
        if (expr.Target >= 0 && l1 != unsigned(expr.Target))
          continue;
        unsigned l1b = l2b * L1bsPerL2b + l1;
        bool toL1bm = expr.Op == Opcode::L2bmB;
        uint64_t *to = toL1bm ? &l1bmWord(l1b, dst.Address[0])
                              : &l2bmWord(l2b, dst.Address[0]);
        const uint64_t *from = toL1bm ? &l2bmWord(l2b, src.Address[0])
                                      : &l1bmWord(l1b, src.Address[0]);
        // In one piece unless an end wraps round its memory (the L1BM and
        // the L2BM never overlap).
        uint64_t toEnd =
            (dst.Address[0] % (toL1bm ? L1bmLongWords : L2bmLongWords)) + 64;
        uint64_t fromEnd =
            (src.Address[0] % (toL1bm ? L2bmLongWords : L1bmLongWords)) + 64;
        if (toEnd <= (toL1bm ? L1bmLongWords : L2bmLongWords) &&
            fromEnd <= (toL1bm ? L2bmLongWords : L1bmLongWords)) {
          std::memcpy(to, from, 64 * sizeof *to);
          continue;
        }
        for (unsigned i = 0; i < 64; ++i) {
          if (toL1bm)
            l1bmWord(l1b, dst.Address[0] + i) =
                l2bmWord(l2b, src.Address[0] + i);
          else
            l2bmWord(l2b, dst.Address[0] + i) =
                l1bmWord(l1b, src.Address[0] + i);
        }
      }
    }
    return;
  }
  default:
    return;
  }
}

void Machine::executeMv(const MvTransfer &mv) {
  if (mv.TransferKind == MvTransfer::Broadcast4) {
    // mvb4 (manual 3.5.8.16): per unit i of 64 long words on the L2BM
    // side, L2B b of every group receives 16 long words from each group
    // g's DRAM, DRAM_g[from + 32i + 16b + o], at to + 64i + 16g + o.
    for (uint32_t k = 0; k < mv.Size; ++k) {
      uint64_t unit = k / MvUnitLongWords, offset = k % MvUnitLongWords;
      unsigned source = unsigned(offset / MvGroupShare);
      for (unsigned l2b = 0; l2b < NumL2bs; ++l2b) {
        unsigned side = l2b % L2bsPerGroup;
        writeUpper(Space::L2BM, l2b, mv.ToAddress + k,
                   readUpper(Space::DRAM, source,
                             mv.FromAddress + unit * 2 * MvGroupShare +
                                 side * MvGroupShare + offset % MvGroupShare));
      }
    }
    return;
  }
  if (mv.TransferKind == MvTransfer::Reduce4) {
    // mvr4 (manual 3.5.8.17): the L2B b of the four groups reduced; long
    // word 16g + o of unit i goes to DRAM g at to + 32i + 16b + o.
    for (uint32_t k = 0; k < mv.Size; ++k) {
      uint64_t unit = k / MvUnitLongWords, offset = k % MvUnitLongWords;
      unsigned target = unsigned(offset / MvGroupShare);
      for (unsigned side = 0; side < L2bsPerGroup; ++side) {
        uint64_t values[NumGroups];
        for (unsigned g = 0; g < NumGroups; ++g)
          values[g] = readUpper(Space::L2BM, g * L2bsPerGroup + side,
                                mv.FromAddress + k);
        writeUpper(
            Space::DRAM, target,
            mv.ToAddress + unit * 2 * MvGroupShare + side * MvGroupShare +
                offset % MvGroupShare,
            reduceLongs(values, NumGroups, mv.Reduction, mv.Prec, false));
      }
    }
    return;
  }
  if (mv.TransferKind == MvTransfer::Distribute) {
    // mvd (decision S36): PDM long word k of a named group and its place
    // in the L2BMs (16 per L2BM of every 128: L2B l = (k / 16) % 8 at
    // address + 16 (k / 128) + k % 16) or in the DRAMs (16 per group of
    // every 64: group (k / 16) % 4 at address + 16 (k / 64) + k % 16).
    bool toPdm = mv.To == Space::PDM;
    Space other = toPdm ? mv.From : mv.To;
    unsigned pdm = unsigned(toPdm ? mv.ToGroup : mv.FromGroup);
    uint64_t pdmAddress = toPdm ? mv.ToAddress : mv.FromAddress;
    uint64_t otherAddress = toPdm ? mv.FromAddress : mv.ToAddress;
    unsigned ways = other == Space::L2BM ? NumL2bs : NumGroups;
    uint64_t share = other == Space::L2BM ? MvL2bmShare : MvGroupShare;
    for (uint32_t k = 0; k < mv.Size; ++k) {
      unsigned instance = unsigned(k / share % ways);
      uint64_t address = otherAddress + k / (share * ways) * share + k % share;
      if (toPdm)
        writeUpper(Space::PDM, pdm, pdmAddress + k,
                   readUpper(other, instance, address));
      else
        writeUpper(other, instance, address,
                   readUpper(Space::PDM, pdm, pdmAddress + k));
    }
    return;
  }
  if (mv.TransferKind == MvTransfer::Reduce2) {
    // mvr2: the two L2BMs of each group (of the named one) reduced into
    // that group's PDM or DRAM (decision S28).
    for (unsigned group = 0; group < NumGroups; ++group) {
      if (mv.FromGroup >= 0 && group != unsigned(mv.FromGroup))
        continue;
      unsigned to = mv.ToGroup >= 0 ? unsigned(mv.ToGroup) : group;
      for (uint32_t i = 0; i < mv.Size; ++i) {
        uint64_t values[L2bsPerGroup];
        for (unsigned k = 0; k < L2bsPerGroup; ++k)
          values[k] = readUpper(Space::L2BM, group * L2bsPerGroup + k,
                                mv.FromAddress + i);
        writeUpper(
            mv.To, to, mv.ToAddress + i,
            reduceLongs(values, L2bsPerGroup, mv.Reduction, mv.Prec, false));
      }
    }
    return;
  }
  if (mv.TransferKind == MvTransfer::Reduce) {
    // mvr: the same address of the eight L2BMs reduced. Into the DRAMs
    // without a group each unit of 64 long words is split 16 per group
    // (manual 3.5.8.21); otherwise the result goes to the named group or,
    // without one, to every group's PDM (decision S21).
    bool split = mv.To == Space::DRAM && mv.ToGroup < 0;
    for (uint32_t i = 0; i < mv.Size; ++i) {
      uint64_t values[NumL2bs];
      for (unsigned l2b = 0; l2b < NumL2bs; ++l2b)
        values[l2b] = readUpper(Space::L2BM, l2b, mv.FromAddress + i);
      uint64_t value =
          reduceLongs(values, NumL2bs, mv.Reduction, mv.Prec, false);
      if (split) {
        uint64_t unit = i / MvUnitLongWords, offset = i % MvUnitLongWords;
        writeUpper(Space::DRAM, unsigned(offset / MvGroupShare),
                   mv.ToAddress + unit * MvGroupShare + offset % MvGroupShare,
                   value);
        continue;
      }
      for (unsigned group = 0; group < NumGroups; ++group)
        if (mv.ToGroup < 0 || group == unsigned(mv.ToGroup))
          writeUpper(mv.To, group, mv.ToAddress + i, value);
    }
    return;
  }
  if (mv.TransferKind == MvTransfer::Broadcast ||
      mv.TransferKind == MvTransfer::Broadcast2) {
    for (unsigned l2b = 0; l2b < NumL2bs; ++l2b) {
      unsigned group = l2b / L2bsPerGroup;
      unsigned from = mv.TransferKind == MvTransfer::Broadcast
                          ? unsigned(mv.FromGroup)
                          : group;
      copyUpper(mv.From, from, mv.FromAddress, Space::L2BM, l2b, mv.ToAddress,
                mv.Size);
    }
    return;
  }
  if (mv.TransferKind != MvTransfer::Point)
    return;
  // mvp: a contiguous copy of Size long words; without a group every group
  // copies in parallel (manual 3.5, mvp).
  for (unsigned group = 0; group < NumGroups; ++group) {
    if (mv.FromGroup >= 0 && group != 0)
      break;
    unsigned fromGroup = mv.FromGroup >= 0 ? unsigned(mv.FromGroup) : group;
    unsigned toGroup = mv.ToGroup >= 0 ? unsigned(mv.ToGroup) : group;
    auto index = [](Space space, unsigned g, int8_t l2b) {
      return space == Space::L2BM
                 ? g * L2bsPerGroup + unsigned(l2b < 0 ? 0 : l2b)
                 : g;
    };
    unsigned from = index(mv.From, fromGroup, mv.FromL2b);
    unsigned to = index(mv.To, toGroup, mv.ToL2b);
    copyUpper(mv.From, from, mv.FromAddress, mv.To, to, mv.ToAddress, mv.Size);
  }
}

} // namespace mncc::emu
