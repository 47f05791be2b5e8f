//===- MNCore2.h - MN-Core 2 geometry, memories, clock and rates -*- C++
//-*-===//
//
// The facts of one MN-Core 2 board that the emulator, the layouts and the
// code generator all depend on, each defined once: the hierarchy, the
// memory capacities, the clock, the MV transfer rates and the PE write
// latencies. Plain constants, no MLIR; docs/target/mncore2.md gives the
// source of each (manual sections in the comments).
//
// The instruction facts (opcodes, issue groups, units, layouts, latency
// classes) are in Instructions.def.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TARGET_MNCORE2_H
#define MNCC_TARGET_MNCORE2_H

#include <cstdint>

namespace mncc::target {

//===----------------------------------------------------------------------===//
// Hierarchy (manual 1.3): 4 groups x 2 L2Bs x 8 L1Bs x 16 MABs x 4 PEs.
//===----------------------------------------------------------------------===//

inline constexpr unsigned NumGroups = 4;
inline constexpr unsigned L2bsPerGroup = 2;
inline constexpr unsigned L1bsPerL2b = 8;
inline constexpr unsigned MabsPerL1b = 16;
inline constexpr unsigned PesPerMab = 4;
/// L2Bs of the board, numbered group * 2 + L2B of the group.
inline constexpr unsigned NumL2bs = NumGroups * L2bsPerGroup;
inline constexpr unsigned NumL1bs = NumL2bs * L1bsPerL2b;
inline constexpr unsigned NumMabs = NumL1bs * MabsPerL1b;
inline constexpr unsigned NumPes = NumMabs * PesPerMab;
inline constexpr unsigned PesPerL1b = MabsPerL1b * PesPerMab;

//===----------------------------------------------------------------------===//
// Word sizes and memories (manual 3.3).
//===----------------------------------------------------------------------===//

inline constexpr unsigned WordBytes = 4;
inline constexpr unsigned LongWordBytes = 8;
/// Words of LM0 and LM1 per PE (2 Ki long words each).
inline constexpr unsigned LmWords = 4096;
inline constexpr unsigned LmLongWords = LmWords * WordBytes / LongWordBytes;
/// Words of GRF0 and GRF1 per PE (256 long words each).
inline constexpr unsigned GrfWords = 512;
/// Long words of each L1BM, L2BM, and each group's PDM and DRAM (4 MiB and
/// 4 GiB).
inline constexpr unsigned L1bmLongWords = 8 * 1024;
inline constexpr unsigned L2bmLongWords = 32 * 1024;
inline constexpr unsigned PdmLongWords = 512 * 1024;
inline constexpr uint64_t DramLongWords = uint64_t(512) * 1024 * 1024;
/// Mask register entries (manual 3.3.9): entry 0 is all ones, 1-15 are
/// writable, 16-31 fixed patterns of their low four bits; only the first
/// MaskLowEntries need storage.
inline constexpr unsigned MaskEntries = 32;
inline constexpr unsigned MaskLowEntries = 16;
/// Long words of an L1B's turnaround register `$lbi` (manual 3.6.8.2): the
/// largest step of a PE -> L1BM transfer, four cycles of the l1bmd layout
/// in double long words.
inline constexpr unsigned TurnaroundLongWords = 512;

//===----------------------------------------------------------------------===//
// Clock and steps (manual 1.4, 3.6).
//===----------------------------------------------------------------------===//

/// The clock the times are reported at (decision T6).
inline constexpr double ClockHz = 750e6;
/// A PE step is four cycles: one instruction line per step.
inline constexpr uint64_t CyclesPerStep = 4;
/// MV instructions issue once every four steps.
inline constexpr uint64_t StepsPerMvSlot = 4;
inline constexpr uint64_t CyclesPerMvSlot = CyclesPerStep * StepsPerMvSlot;

//===----------------------------------------------------------------------===//
// MV transfers (manual 3.5.8; decision T4 derives the rates).
//===----------------------------------------------------------------------===//

/// The unit of every MV transfer: sizes are multiples of it.
inline constexpr uint32_t MvUnitLongWords = 64;
/// What one group contributes to a unit split over the groups (mvr into
/// the DRAMs, mvb4, mvr4, mvd with the DRAMs).
inline constexpr uint32_t MvGroupShare = 16;
/// What one L2BM receives of each round of mvd with the L2BMs ...
inline constexpr uint32_t MvL2bmShare = 16;
/// ... so such a transfer moves multiples of this many long words.
inline constexpr uint32_t MvDistributeL2bmUnit = MvL2bmShare * NumL2bs;
static_assert(MvGroupShare * NumGroups == MvUnitLongWords,
              "a unit of the MV transfers splits evenly over the groups");

/// A data rate: LongWords every Cycles cycles.
struct MvRate {
  uint64_t LongWords;
  uint64_t Cycles;
};
/// A group's DRAM: about 128 GB/s (manual 1.5), 128e9 / 8 bytes / 750 MHz
/// = 21 1/3 long words a cycle, 64 long words in exactly 3 cycles.
inline constexpr MvRate DramRate{64, 3};
/// A group's PDM: 16 long words a cycle (manual 3.5.8.4, PDM to L2BM
/// within a group).
inline constexpr MvRate PdmRate{16, 1};
/// An L2BM on the MV side: 32 long words a cycle (manual 3.5.8.21, the
/// L2BM side of mvr).
inline constexpr MvRate L2bmRate{32, 1};
/// The link from one group to another: 8 long words a cycle (manual
/// 3.5.8.4 across groups; it also gives 3.5.8.16, 3.5.8.17 and 3.5.8.21).
inline constexpr MvRate GroupLinkRate{8, 1};

//===----------------------------------------------------------------------===//
// PE write latencies, in cycles from the first cycle of the writing step to
// the first cycle of a step that may read (decisions H2-H8, H15). The
// latency class of each instruction is in Instructions.def.
//===----------------------------------------------------------------------===//

namespace latency {
/// ALU results, L1BM -> PE transfers and matrix reads into PE memories
/// (manual 3.6.3: a PE memory write completes six cycles after issue): one
/// step in between.
inline constexpr uint64_t PeWrite = 6;
/// MAU results (vector and matrix-vector products) into PE memories: the
/// longer of the two same-address waits of manual 3.6.3, two steps in
/// between.
inline constexpr uint64_t MauWrite = 10;
/// Matrix register rows written by mwrite: the next step reads them.
inline constexpr uint64_t MatrixWrite = 4;
/// Long words written into the L1BM or the L2BM by a PE step.
inline constexpr uint64_t UpperWrite = 6;
/// Extra cycles per RRN stage of four (l1bmr4 one, l1bmr and l2bmr two).
inline constexpr uint64_t ReductionStage = 4;
/// The longest wait of an L1BM -> PE transfer behind a PE -> L1BM write,
/// even an l1bmr's: two steps in between (manual 3.6.8.2's example without
/// the turnaround register, PFN's tutorial's l1bmrdfadd, nop, nop, l1bmm).
inline constexpr uint64_t L1bmForPe = 12;
/// Address inputs (the T register of `$mt`, the base address registers)
/// are read one step before the data.
inline constexpr uint64_t AddressLead = 4;
} // namespace latency

} // namespace mncc::target

#endif // MNCC_TARGET_MNCORE2_H
