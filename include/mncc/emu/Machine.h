//===- Machine.h - MN-Core 2 machine state and executor --------*- C++ -*-===//
//
// The state of one MN-Core 2 board (manual 1.3 and 3.3) and the executor of
// a parsed Program. PE storage is kept structure-of-arrays: element
// [address][pe] of each memory is contiguous over the 4096 PEs, so every
// instruction runs as plain loops over all PEs at once.
//
// PE numbering: pe = (((group * 2 + l2b) * 8 + l1b) * 16 + mab) * 4 + subpe.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_MACHINE_H
#define MNCC_EMU_MACHINE_H

#include "mncc/emu/Numerics.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Program.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace mncc::emu {

class Timing;

// The geometry and the memory sizes (mncc/target/MNCore2.h).
using target::L1bmLongWords;
using target::L1bsPerL2b;
using target::L2bmLongWords;
using target::L2bsPerGroup;
using target::MabsPerL1b;
using target::NumGroups;
using target::NumL1bs;
using target::NumL2bs;
using target::NumMabs;
using target::NumPes;
using target::PesPerMab;
/// Words per PE memory (manual 3.3.2).
using target::GrfWords;
using target::LmWords;
/// Long words per upper memory.
using target::DramLongWords;
using target::PdmLongWords;
/// Mask register entries kept: 0 (all ones) and the writable 1..15; 16..31
/// are fixed patterns.
constexpr unsigned MaskEntries = target::MaskLowEntries;

/// The step threads (Machine::setStepThreads) every Machine made from now
/// on starts with: 1 until a tool sets it, once at start, from
/// MNCC_EMU_THREADS (docs/options.md); the library reads no environment.
void setDefaultStepThreads(unsigned count);
unsigned defaultStepThreads();
/// MNCC_EMU_THREADS's text as a thread count: a positive integer, else
/// (null, empty or malformed text) 2 where the host has two CPUs, 1 on one.
unsigned stepThreadsFromText(const char *text);

/// PE index from its position in the hierarchy.
constexpr unsigned peIndex(unsigned group, unsigned l2b, unsigned l1b,
                           unsigned mab, unsigned subpe) {
  return (((group * L2bsPerGroup + l2b) * L1bsPerL2b + l1b) * MabsPerL1b +
          mab) *
             PesPerMab +
         subpe;
}

/// A zero-initialised array obtained from calloc, so untouched pages of the
/// large PE memories cost nothing; its start is aligned to a cache line.
template <typename T> class ZeroedArray {
public:
  explicit ZeroedArray(size_t count);
  ~ZeroedArray();
  ZeroedArray(const ZeroedArray &) = delete;
  ZeroedArray &operator=(const ZeroedArray &) = delete;
  T *data() { return Data; }
  const T *data() const { return Data; }
  T &operator[](size_t i) { return Data[i]; }
  const T &operator[](size_t i) const { return Data[i]; }

private:
  void *Raw;
  T *Data;
};

/// The PEs [Begin, End) of a step that one thread executes. Ranges are
/// whole groups (StepThreads, Machine.cpp), so every exchange a step makes
/// between PEs, MABs, L1Bs or L2Bs stays inside one range.
struct PeRange {
  unsigned Begin = 0;
  unsigned End = NumPes;
  unsigned size() const { return End - Begin; }
  unsigned firstMab() const { return Begin / PesPerMab; }
  unsigned endMab() const { return End / PesPerMab; }
  unsigned firstL1b() const { return Begin / (PesPerMab * MabsPerL1b); }
  unsigned endL1b() const { return End / (PesPerMab * MabsPerL1b); }
  unsigned firstL2b() const {
    return Begin / (PesPerMab * MabsPerL1b * L1bsPerL2b);
  }
  unsigned endL2b() const {
    return End / (PesPerMab * MabsPerL1b * L1bsPerL2b);
  }
};

/// Helper threads that run the ranges of a PE step beside the calling
/// thread (Machine::setStepThreads). Every thread claims ranges until none
/// is left, the caller too; a helper spins a little after each step, for
/// the next one comes soon, then sleeps until woken.
class StepThreads {
public:
  /// count threads in all, the caller's included (2 to 4).
  /// fixedRanges: thread i always runs range i, and the caller never
  /// falls back to running alone (for tests, which must see the helpers
  /// run every step).
  explicit StepThreads(unsigned count, bool fixedRanges = false);
  ~StepThreads();
  StepThreads(const StepThreads &) = delete;
  StepThreads &operator=(const StepThreads &) = delete;
  unsigned count() const { return Count; }
  /// The range thread `index` runs in the current step: whole L2Bs, the
  /// active ones (`activeGroups`, bit g) shared out evenly in order, so
  /// that a step on one group still runs on every thread. A range may
  /// span inactive L2Bs between its active ones, or be empty.
  PeRange rangeOf(unsigned index) const { return Ranges[index]; }
  /// Calls work(context, range) once for every range, on whichever
  /// thread claims it first, and returns when all have returned.
  void run(void (*work)(void *, PeRange), void *context, uint8_t activeGroups);

private:
  void helperLoop(unsigned index);
  /// Runs ranges of the current step until none is left to claim; returns
  /// how many it ran.
  unsigned runClaimedRanges();

  unsigned Count;
  bool FixedRanges;
  std::vector<std::thread> Helpers;
  /// Bumped (under Mutex) to hand out a step, or to stop.
  std::atomic<uint64_t> Generation{0};
  /// The next range of the step to claim, and the ranges finished.
  std::atomic<unsigned> NextRange{0};
  std::atomic<unsigned> Finished{0};
  void (*Work)(void *, PeRange) = nullptr;
  void *Context = nullptr;
  static constexpr unsigned MaxThreads = 4;
  PeRange Ranges[MaxThreads];
  std::atomic<bool> Stopping{false};
  std::mutex Mutex;
  /// The caller's view of how much the helpers help (run): steps of the
  /// current window and those a helper took part in; steps still to run
  /// alone, and how many the next time the helpers fall behind.
  static constexpr unsigned ProbeSteps = 64;
  static constexpr unsigned MinSerialSteps = 1024;
  static constexpr unsigned MaxSerialSteps = 1u << 16;
  unsigned WindowSteps = 0;
  unsigned HelpedSteps = 0;
  unsigned SerialStepsLeft = 0;
  unsigned SerialSteps = MinSerialSteps;
  std::condition_variable Wake;
};

/// One 128-bit value per PE: High is the most significant long word.
struct WideLanes {
  uint64_t High[NumPes];
  uint64_t Low[NumPes];
};

class Machine {
public:
  Machine();
  ~Machine();
  Machine(const Machine &) = delete;
  Machine &operator=(const Machine &) = delete;

  /// Runs a program from the current state, appending the `d get` dump lines
  /// to Dump. Returns false with Error set when a statement cannot run.
  bool run(const Program &program, std::string &dump, Diagnostic &error);
  /// The same; with a null dump the `d get` statements are skipped.
  bool run(const Program &program, std::string *dump, Diagnostic &error);
  /// Counts steps and cycles of later runs into timer (null: none). Timing
  /// is kept per statement, outside the per-PE loops.
  void setTiming(Timing *timer) { Timer = timer; }
  /// Threads that execute each PE step, each on its own groups: 1 runs
  /// every step on the calling thread, the default unless the environment
  /// sets MNCC_EMU_THREADS. The results are the same for every count (the
  /// ranges share no state). fixedRanges as for StepThreads (tests).
  void setStepThreads(unsigned count, bool fixedRanges = false);
  unsigned stepThreads() const;
  /// PEs of each range a step runs as on the calling thread (one thread):
  /// whole L2Bs, the board (NumPes: the reference, one pass over all PEs
  /// per read, compute and write) or the default, one L2B.
  void setStepChunk(unsigned pes);
  unsigned stepChunk() const { return StepChunkPes; }
  /// Whether run() leaves out the PE work of the groups whose L2BMs no MV
  /// transfer of a self-contained kernel reads (Program::KernelStarts,
  /// docs/target/mncore2.md S39): nothing such a group computes there can
  /// reach a memory off the chip, and the next kernel overwrites what it
  /// reads. On by default; off (or a `d get` of on-chip state when dumps
  /// are asked for) runs every group's steps.
  void setSkipIdleGroups(bool skip) { SkipIdleGroups = skip; }
  bool skipIdleGroups() const { return SkipIdleGroups; }
  /// Groups (bit g for group g) whose PE work a run left out since the
  /// board was made: their LM0, LM1, GRF, T, mask and matrix registers,
  /// L1BMs and L2BMs do not hold what the hardware's would.
  uint8_t staleGroups() const { return StaleGroups; }
  /// PE steps with work, once per group, since the board was made; and of
  /// those, the ones left out.
  uint64_t groupSteps() const { return GroupSteps; }
  uint64_t groupStepsLeftOut() const { return GroupStepsLeftOut; }

  /// Fills every memory and register a program can read before writing it
  /// with pseudo-random bytes that depend only on the seed and the
  /// location (docs/target/mncore2.md, decision S32): LM0, LM1, GRF0, GRF1,
  /// T, the writable mask entries 1-15, the matrix registers, the
  /// forwarding latches, the turnaround registers, L1BM, L2BM, PDM and
  /// DRAM. DRAM pages stay unallocated: a page reads the same values until
  /// it is written, and is filled with them when first written. The base
  /// address registers are 0 and the fixed mask entries keep their values.
  void fillRandom(uint64_t seed);
  /// The value every long word of a never written DRAM page holds: 0, or
  /// after fillRandom the seed's value for that group and address.
  uint64_t initialDramValue(unsigned group, uint64_t address) const;
  /// DRAM pages (64 Ki long words each) allocated so far: only writes
  /// allocate them.
  size_t dramPages() const { return Dram.size(); }

  /// Long word at a word address (aligned down to even) of a PE memory
  /// (LM0, LM1, GRF0, GRF1); word 2k is the most significant half of it.
  uint64_t readLong(Space space, unsigned pe, uint32_t wordAddress) const;
  void writeLong(Space space, unsigned pe, uint32_t wordAddress,
                 uint64_t value);
  /// T register of a PE, cycle 0..3: High and Low long word.
  uint64_t readT(unsigned pe, unsigned cycle, bool low = false) const;
  /// Mask register entry 0..31 of a PE: bits 15..12 are cycle 0.
  uint16_t maskEntry(unsigned pe, unsigned entry) const;
  /// Base address registers of LM0 / LM1.
  uint16_t baseAddress(Space space, unsigned pe) const;
  /// Upper memories, long word addresses (wrapping at their size).
  uint64_t readUpper(Space space, unsigned index, uint64_t address) const;
  void writeUpper(Space space, unsigned index, uint64_t address,
                  uint64_t value);

  /// Bulk access for staging (Simulator checks the ranges): long words
  /// [address, address + count) of one instance of a memory, a PE for LM0,
  /// LM1, GRF0 and GRF1 (long word k is words 2k and 2k + 1), an L1B for
  /// L1BM, an L2B for L2BM, a group for PDM and DRAM. The range must lie
  /// inside the memory.
  void writeLongWords(Space space, unsigned instance, uint64_t address,
                      const uint64_t *data, uint64_t count);
  void readLongWords(Space space, unsigned instance, uint64_t address,
                     uint64_t *data, uint64_t count) const;
  /// The same range of every instance: data holds count long words per
  /// instance, instance after instance, or (broadcast) one set for all.
  void writeLongWordsOfAll(Space space, uint64_t address, const uint64_t *data,
                           uint64_t count, bool broadcast);
  void readLongWordsOfAll(Space space, uint64_t address, uint64_t *data,
                          uint64_t count) const;

  /// Executes one PE statement (exposed for tests).
  void executeStep(const Statement &stmt);
  /// Long word 0..3 of a matrix register row (0..15): a double element, or
  /// two singles, or four halves, most significant first.
  uint64_t matrixElement(Space space, unsigned mab, unsigned row,
                         unsigned column) const {
    return matrixWordValue(space, mab, row, column);
  }

private:
  uint32_t *words(Space space);
  const uint32_t *words(Space space) const;
  uint32_t wordCount(Space space) const;
  uint64_t *dramPage(unsigned group, uint64_t page, bool create);
  /// Long word `address` (wrapped) of an upper memory (L1BM, L2BM, PDM,
  /// DRAM: its page made if need be) and how many follow it contiguously.
  uint64_t *upperRun(Space space, unsigned index, uint64_t address,
                     uint64_t &contiguous);
  /// count long words from one upper memory to another, as many
  /// writeUpper(readUpper()) calls in order would copy them.
  void copyUpper(Space from, unsigned fromIndex, uint64_t fromAddress, Space to,
                 unsigned toIndex, uint64_t toAddress, uint64_t count);

  /// The groups each kernel of Program::KernelStarts runs (every group
  /// when skipping is off, or for dumps that read on-chip state).
  std::vector<uint8_t> kernelGroups(const Program &program, bool dumps) const;
  void debugSet(const Statement &stmt);
  void debugGet(const Statement &stmt, std::string &dump) const;

  // Step execution helpers (ExecutePe.cpp).
  /// `highOnly`: the consumer reads only the most significant long words,
  /// so the least significant ones may be left as they are.
  /// Each works on the PEs of `range` (whole groups) only, and every array
  /// indexed by PE is indexed by the PE's number on the board.
  void readOperand(const Operand &op, unsigned cycle, const Expression &expr,
                   WideLanes &out, PeRange range, bool highOnly = false) const;
  void computeWordAddresses(const Operand &op, unsigned cycle,
                            uint32_t *addresses, PeRange range) const;
  /// The word address of a local memory operand in a cycle when it is the
  /// same for every PE without looking at them (no T, no MAB adjustment,
  /// all base registers 0): then true with the address.
  bool uniformWordAddress(const Operand &op, unsigned cycle,
                          uint32_t &address) const;
  /// The word addresses of a local memory operand over `range`: true with
  /// `uniform` when every PE has the same one (found without looking at
  /// the PEs where uniformWordAddress can), else false with each PE's in
  /// `addresses` (and `uniform` the first PE's).
  bool resolveWordAddresses(const Operand &op, unsigned cycle,
                            uint32_t *addresses, PeRange range,
                            uint32_t &uniform) const;
  void cycleMask(const MaskSpec &mask, unsigned cycle, uint8_t *bits,
                 PeRange range) const;
  void writeDestination(const Operand &op, unsigned cycle,
                        const WideLanes &value, const uint8_t *flags,
                        PeRange range);
  void executeAlu(const Expression &expr, const WideLanes *const *sources,
                  WideLanes &result, uint8_t *flags, PeRange range) const;
  void executeMau(const Expression &expr, const WideLanes *const *sources,
                  WideLanes &result, uint8_t *flags, PeRange range) const;
  /// The PEs of a step: read, compute and write them (executeStep).
  struct PendingExpression;
  void executeStepRange(std::vector<PendingExpression> &pending, PeRange range);

  /// A matrix register decoded for the MAU's matrix-vector products at one
  /// precision. It is decoded again when the register may have changed
  /// (matrixWord clears Valid) or is read at another precision.
  struct DecodedMatrix {
    Precision Prec;
    bool Valid;
    /// Prec H: the rows are decoded too (decodedHalfRows), not only the
    /// products.
    bool HalfRowsValid;
  };
  struct DecodedHalfRows {
    DecodedHalfBlock Rows[HalfBlockSize];
  };
  struct DecodedPseudoSingleRows {
    DecodedPseudoSingleBlock Rows[8];
  };
  /// Where the decoded register lives: the half products (Prec H; the
  /// rows through decodedHalfRows) or the pseudo-single rows (Prec G).
  struct DecodedMatrixView {
    const HalfMatrixProducts *HalfProducts;
    const DecodedPseudoSingleBlock *PseudoSingleRows;
  };
  /// The decoded register (Prec H or G) of a MAB, decoded first if stale
  /// (decodeMatrix, Machine.cpp). Inline: it runs for every MAB and cycle.
  DecodedMatrixView decodedMatrix(Space space, unsigned mab,
                                  Precision prec) const {
    size_t index = (space == Space::MatY ? NumMabs : 0) + mab % NumMabs;
    const DecodedMatrix &decoded = DecodedMatrices[index];
    if (!decoded.Valid || decoded.Prec != prec)
      decodeMatrix(index, prec);
    return {&DecodedHalfProducts[index], DecodedPseudoSingle[index].Rows};
  }
  void decodeMatrix(size_t index, Precision prec) const;
  /// The rows of a register decodedMatrix has decoded at Prec H, decoded
  /// on first use: only the general product path reads them (an extended
  /// or infinite element), and writing them for every MAB and hmwrite
  /// cost more than the products.
  const DecodedHalfBlock *decodedHalfRows(Space space, unsigned mab) const;

  // Transfers (ExecuteTransfer.cpp).
  /// Long word of a matrix register row for writing: every write goes
  /// through here, which marks the register's decoded copy stale.
  uint64_t &matrixWord(Space space, unsigned mab, unsigned row,
                       unsigned column);
  uint64_t matrixWordValue(Space space, unsigned mab, unsigned row,
                           unsigned column) const;
  static unsigned matrixElementBits(Precision prec);
  uint64_t matrixElementAt(Space space, unsigned mab, unsigned row,
                           unsigned column, unsigned bits) const;
  void readTransfer(const Expression &expr, unsigned cycle,
                    const WideLanes *const *sources, WideLanes &out,
                    PeRange range) const;
  void commitTransfer(const Expression &expr, const WideLanes *perCycle,
                      PeRange range);
  void executeMv(const MvTransfer &mv);

  ZeroedArray<uint32_t> Lm0, Lm1, Grf0, Grf1;
  /// T[(cycle * 2 + low) * NumPes + pe].
  ZeroedArray<uint64_t> TReg;
  /// Writable mask entries, Masks[entry * NumPes + pe]; entry 0 unused.
  ZeroedArray<uint16_t> Masks;
  ZeroedArray<uint16_t> Bar0, Bar1;
  /// Every entry of Bar0 / Bar1 is 0 (updated after each step that writes
  /// one): LM addresses then need no per-PE look (uniformWordAddress).
  bool Bar0Zero = true, Bar1Zero = true;
  /// Forwarding latches, one per cycle (manual 3.6.1).
  std::unique_ptr<WideLanes[]> AluForward, MauForward, LbForward, MreadForward;
  /// executeStep's scratch: result buffers of four cycles each, reused
  /// across steps, and the operands of the expression being evaluated.
  static constexpr size_t MaxSources = 3;
  std::vector<std::unique_ptr<WideLanes[]>> ResultPool;
  std::vector<std::unique_ptr<uint8_t[]>> FlagsPool;
  std::unique_ptr<WideLanes[]> SourceScratch;
  ZeroedArray<uint64_t> L1bm, L2bm, Pdm;
  /// Matrix registers x and y of each MAB: 16 rows of 4 long words,
  /// Matrices[((plane * NumMabs + mab) * 16 + row) * 4 + column]. Write
  /// only through matrixWord, or as commitTransfer's hmwrite does, marking
  /// the register's DecodedMatrices entry stale.
  ZeroedArray<uint64_t> Matrices;
  /// Decode cache of the matrix registers, same order as Matrices: the
  /// state, and apart from it what the products read on every cycle
  /// (HalfProducts, contiguous) and what they rarely read.
  mutable ZeroedArray<DecodedMatrix> DecodedMatrices;
  mutable ZeroedArray<HalfMatrixProducts> DecodedHalfProducts;
  mutable ZeroedArray<DecodedHalfRows> DecodedHalfRowsOf;
  mutable ZeroedArray<DecodedPseudoSingleRows> DecodedPseudoSingle;
  std::unordered_map<uint64_t, std::unique_ptr<uint64_t[]>> Dram;
  /// fillRandom's seed, for the DRAM pages filled as they are first used.
  bool RandomFill = false;
  uint64_t FillSeed = 0;
  MaskControl DefaultMask;
  /// The step being executed has a single-line write mask, which cancels
  /// DefaultMask for all of its destinations (decision S33).
  bool DefaultMaskCancelled = false;
  Timing *Timer = nullptr;
  /// The helper threads of the PE steps (null: steps run on the caller),
  /// started at the first step when StepThreadCount is above 1.
  std::unique_ptr<StepThreads> Threads;
  unsigned StepThreadCount = 1;
  unsigned StepChunkPes = NumPes / NumL2bs;
  bool FixedStepRanges = false;
  static constexpr uint8_t AllGroups = (1u << NumGroups) - 1;
  bool SkipIdleGroups = true;
  /// The groups whose PEs the current step runs, and those left out so far.
  uint8_t ActiveGroups = AllGroups;
  uint8_t StaleGroups = 0;
  uint64_t GroupSteps = 0, GroupStepsLeftOut = 0;
  /// The step on `range` (whole L2Bs) in chunks of StepChunkPes.
  void executeChunks(std::vector<PendingExpression> &pending, PeRange range);
  /// The PEs of `range` in active groups, as ranges of whole groups.
  void executeActiveRanges(std::vector<PendingExpression> &pending,
                           PeRange range);
  /// The L1BM turnaround registers (`$lbi`), TurnaroundLongWords per L1B,
  /// allocated on first use (ExecuteTransfer.cpp), and whether the step
  /// being committed updates them (not under nop / noforward).
  std::unique_ptr<uint64_t[]> Turnaround;
  /// Long words of one turnaround register: the largest layout offset of a
  /// step (l1bmd double long: 4 cycles of 2 groups of 64).
  static constexpr uint64_t TurnaroundLongWords = target::TurnaroundLongWords;
  bool TurnaroundUpdates = true;
  uint64_t &turnaroundWord(unsigned l1b, uint64_t offset);
  /// Long words of one L1BM / L2BM, the address wrapping at its size as
  /// readUpper's does; inline for the L2BM <-> L1BM copies, which move
  /// 8192 long words a step (commitTransfer).
  uint64_t &l1bmWord(unsigned l1b, uint64_t address) {
    static_assert((L1bmLongWords & (L1bmLongWords - 1)) == 0,
                  "the L1BM wraps with a mask");
    return L1bm[size_t(l1b) * L1bmLongWords + (address & (L1bmLongWords - 1))];
  }
  uint64_t &l2bmWord(unsigned l2b, uint64_t address) {
    static_assert((L2bmLongWords & (L2bmLongWords - 1)) == 0,
                  "the L2BM wraps with a mask");
    return L2bm[size_t(l2b) * L2bmLongWords + (address & (L2bmLongWords - 1))];
  }
};

} // namespace mncc::emu

#endif // MNCC_EMU_MACHINE_H
