//===- Machine.cpp - MN-Core 2 machine state, d set / d get ---------------===//
//
// Storage of the board, the debug statements `d set` and `d get` (manual
// 3.2, emulator only) and the statement loop. The dump lines follow the
// official emulator's `-d` output (see docs/target/mncore2.md, "Dump
// format").
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"

#include "mncc/emu/Numerics.h"
#include "mncc/emu/Timing.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mncc::emu {

template <typename T>
ZeroedArray<T>::ZeroedArray(size_t count)
    : Raw(std::calloc(count * sizeof(T) + 64, 1)) {
  if (!Raw)
    std::abort(); // out of memory: nothing sensible to continue with
  auto address = reinterpret_cast<uintptr_t>(Raw);
  Data = reinterpret_cast<T *>((address + 63) / 64 * 64);
}
template <typename T> ZeroedArray<T>::~ZeroedArray() { std::free(Raw); }

template class ZeroedArray<uint16_t>;
template class ZeroedArray<uint32_t>;
template class ZeroedArray<uint64_t>;
template class ZeroedArray<Machine::DecodedMatrix>;
template class ZeroedArray<HalfMatrixProducts>;
template class ZeroedArray<Machine::DecodedHalfRows>;
template class ZeroedArray<Machine::DecodedPseudoSingleRows>;

namespace {
constexpr unsigned DramPageBits = 16; // 64 Ki long words per page
constexpr uint64_t DramPageSize = uint64_t(1) << DramPageBits;
} // namespace

namespace {

/// The step threads of each new Machine: one unless a tool sets more
/// (setDefaultStepThreads; the tools take MNCC_EMU_THREADS, else two on a
/// host of two CPUs: stepThreadsFromText).
std::atomic<unsigned> DefaultStepThreads{1};

/// Waits a moment inside a spin loop.
inline void spinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Pauses a helper spins for the next step before it sleeps, and the
/// caller for the helpers before it yields: under a millisecond, longer
/// than the MV statements between two steps of a kernel (at 2^10, three
/// steps in four of ResNet-50 found the helper asleep and ran alone).
constexpr unsigned HelperSpins = 1u << 14;

} // namespace

Machine::Machine()
    : Lm0(size_t(LmWords) * NumPes), Lm1(size_t(LmWords) * NumPes),
      Grf0(size_t(GrfWords) * NumPes), Grf1(size_t(GrfWords) * NumPes),
      TReg(size_t(8) * NumPes), Masks(size_t(MaskEntries) * NumPes),
      Bar0(NumPes), Bar1(NumPes), AluForward(new WideLanes[4]()),
      MauForward(new WideLanes[4]()), LbForward(new WideLanes[4]()),
      MreadForward(new WideLanes[4]()),
      SourceScratch(new WideLanes[MaxSources]),
      L1bm(size_t(L1bmLongWords) * NumL1bs),
      L2bm(size_t(L2bmLongWords) * NumL2bs),
      Pdm(size_t(PdmLongWords) * NumGroups),
      Matrices(size_t(2) * NumMabs * 16 * 4),
      DecodedMatrices(size_t(2) * NumMabs),
      DecodedHalfProducts(size_t(2) * NumMabs),
      DecodedHalfRowsOf(size_t(2) * NumMabs),
      DecodedPseudoSingle(size_t(2) * NumMabs) {
  DefaultMask.Entry = 0;
  DefaultMask.Targets = MaskAll;
  setStepThreads(defaultStepThreads());
}

void setDefaultStepThreads(unsigned count) {
  DefaultStepThreads.store(std::max(1u, count), std::memory_order_relaxed);
}

unsigned defaultStepThreads() {
  return DefaultStepThreads.load(std::memory_order_relaxed);
}

unsigned stepThreadsFromText(const char *text) {
  // Two where the host has two CPUs: a batch-1 kernel runs one group, two
  // L2Bs, one a thread (ResNet-50 3.3 -> 2.8 s); more threads find no
  // third L2B to run there, and the memories' bandwidth is shared anyway.
  unsigned host =
      std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  if (!text)
    return host;
  char *end = nullptr;
  unsigned long count = std::strtoul(text, &end, 10);
  return end != text && *end == '\0' && count > 0
             ? unsigned(std::min(count, 64ul))
             : host;
}

Machine::~Machine() = default;

void Machine::setStepThreads(unsigned count, bool fixedRanges) {
  // Ranges of whole L2Bs: 1 to 4 threads.
  unsigned wanted = std::max(1u, std::min(count, 4u));
  Threads.reset();
  StepThreadCount = wanted;
  FixedStepRanges = fixedRanges;
}

unsigned Machine::stepThreads() const { return StepThreadCount; }

void Machine::setStepChunk(unsigned pes) {
  // A whole number of L2Bs that divides the board: every exchange of a PE
  // step stays inside one L2B (executeStepRange).
  constexpr unsigned PesPerL2b = NumPes / NumL2bs;
  unsigned l2bs = std::max(1u, std::min(pes / PesPerL2b, NumL2bs));
  while (NumL2bs % l2bs != 0)
    --l2bs;
  StepChunkPes = l2bs * PesPerL2b;
}

StepThreads::StepThreads(unsigned count, bool fixedRanges)
    : Count(count), FixedRanges(fixedRanges) {
  NextRange.store(Count, std::memory_order_relaxed); // nothing to claim yet
  for (unsigned i = 1; i < Count; ++i)
    Helpers.emplace_back([this, i] { helperLoop(i); });
}

StepThreads::~StepThreads() {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    Stopping.store(true, std::memory_order_relaxed);
    Generation.fetch_add(1, std::memory_order_release);
  }
  Wake.notify_all();
  for (std::thread &helper : Helpers)
    helper.join();
}

void StepThreads::run(void (*work)(void *, PeRange), void *context,
                      uint8_t activeGroups) {
  // Whole L2Bs: every exchange of a PE step stays inside one
  // (Machine::executeStepRange), so L2Bs run independently.
  constexpr unsigned PesPerL2b = NumPes / NumL2bs;
  constexpr unsigned L2bsPerGroup = NumL2bs / NumGroups;
  unsigned active[NumL2bs], activeCount = 0;
  for (unsigned l2b = 0; l2b < NumL2bs; ++l2b)
    if (activeGroups >> (l2b / L2bsPerGroup) & 1)
      active[activeCount++] = l2b;
  for (unsigned i = 0; i < Count; ++i) {
    unsigned first = i * activeCount / Count;
    unsigned last = (i + 1) * activeCount / Count;
    Ranges[i] = first == last ? PeRange{0, 0}
                              : PeRange{active[first] * PesPerL2b,
                                        (active[last - 1] + 1) * PesPerL2b};
  }
  if (!FixedRanges && SerialStepsLeft != 0) {
    // The helpers were late (the host is busy): the caller alone, with no
    // hand-over to pay for, the board as one range.
    --SerialStepsLeft;
    work(context, PeRange());
    return;
  }
  // Published before the ranges can be claimed (NextRange's release).
  Work = work;
  Context = context;
  Finished.store(0, std::memory_order_relaxed);
  NextRange.store(0, std::memory_order_release);
  {
    // Under the mutex, so that a helper going to sleep cannot miss it.
    std::lock_guard<std::mutex> lock(Mutex);
    Generation.fetch_add(1, std::memory_order_release);
  }
  Wake.notify_all();
  // The caller claims ranges too, so a helper that is slow to wake costs
  // no more than running its range here.
  unsigned ranAlone = 1;
  if (FixedRanges) {
    work(context, rangeOf(0));
    Finished.fetch_add(1, std::memory_order_acq_rel);
  } else {
    ranAlone = runClaimedRanges();
  }
  unsigned spins = 0;
  for (; Finished.load(std::memory_order_acquire) != Count; ++spins) {
    if (spins < HelperSpins)
      spinPause();
    else
      std::this_thread::yield();
  }
  // Where the helpers take part in fewer than half of the steps of a
  // window, or keep the caller waiting past its spins (a helper lost its
  // CPU in the middle of a range), their CPUs are busy with other work:
  // run the next steps on the caller alone, longer each time it happens
  // again.
  if (FixedRanges)
    return;
  ++WindowSteps;
  HelpedSteps += ranAlone < Count && spins < HelperSpins;
  if (WindowSteps == ProbeSteps) {
    if (2 * HelpedSteps < WindowSteps) {
      SerialStepsLeft = SerialSteps;
      SerialSteps = std::min(2 * SerialSteps, MaxSerialSteps);
    } else {
      SerialSteps = MinSerialSteps;
    }
    WindowSteps = HelpedSteps = 0;
  }
}

unsigned StepThreads::runClaimedRanges() {
  unsigned ran = 0;
  for (;;) {
    unsigned index = NextRange.fetch_add(1, std::memory_order_acq_rel);
    if (index >= Count)
      return ran;
    Work(Context, rangeOf(index));
    ++ran;
    Finished.fetch_add(1, std::memory_order_acq_rel);
  }
}

void StepThreads::helperLoop(unsigned index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t generation;
    unsigned spins = 0;
    while ((generation = Generation.load(std::memory_order_acquire)) == seen) {
      if (++spins < HelperSpins) {
        spinPause();
        continue;
      }
      std::unique_lock<std::mutex> lock(Mutex);
      Wake.wait(lock, [&] {
        return Generation.load(std::memory_order_acquire) != seen;
      });
    }
    seen = generation;
    if (Stopping.load(std::memory_order_acquire))
      return;
    if (FixedRanges) {
      // The caller waits for this range: the generation is the current
      // step's, and its acquire published Work and Context.
      Work(Context, rangeOf(index));
      Finished.fetch_add(1, std::memory_order_acq_rel);
      continue;
    }
    // Late for this step (the caller took every range), a claim fails; a
    // claim that succeeds is of the step being run, whose Work and
    // Context NextRange published.
    runClaimedRanges();
  }
}

void Machine::decodeMatrix(size_t index, Precision prec) const {
  DecodedMatrix &decoded = DecodedMatrices[index];
  const uint64_t *words = &Matrices[index * 16 * 4];
  decoded.Prec = prec;
  decoded.Valid = true;
  // A row is four long words, elements from the most significant end.
  if (prec == Precision::H) {
    decodeHalfMatrixProducts(words, DecodedHalfProducts[index]);
    decoded.HalfRowsValid = false;
    return;
  }
  for (unsigned row = 0; row < 8; ++row) {
    uint32_t elements[PseudoSingleBlockSize];
    for (unsigned j = 0; j < PseudoSingleBlockSize; ++j)
      elements[j] = uint32_t(words[row * 4 + j / 2] >> (32 - 32 * (j % 2)));
    decodePseudoSingleBlock(elements, DecodedPseudoSingle[index].Rows[row]);
  }
}

const DecodedHalfBlock *Machine::decodedHalfRows(Space space,
                                                 unsigned mab) const {
  size_t index = (space == Space::MatY ? NumMabs : 0) + mab % NumMabs;
  DecodedMatrix &decoded = DecodedMatrices[index];
  DecodedHalfBlock *rows = DecodedHalfRowsOf[index].Rows;
  if (!decoded.HalfRowsValid) {
    const uint64_t *words = &Matrices[index * 16 * 4];
    for (unsigned row = 0; row < HalfBlockSize; ++row)
      decodeHalfBlockOfLongWords(words + row * 4, rows[row]);
    decoded.HalfRowsValid = true;
  }
  return rows;
}

uint32_t *Machine::words(Space space) {
  return const_cast<uint32_t *>(
      static_cast<const Machine *>(this)->words(space));
}

const uint32_t *Machine::words(Space space) const {
  switch (space) {
  case Space::LM0:
    return Lm0.data();
  case Space::LM1:
    return Lm1.data();
  case Space::GRF0:
    return Grf0.data();
  case Space::GRF1:
    return Grf1.data();
  default:
    return nullptr;
  }
}

uint32_t Machine::wordCount(Space space) const {
  return space == Space::LM0 || space == Space::LM1 ? LmWords : GrfWords;
}

uint64_t Machine::readLong(Space space, unsigned pe,
                           uint32_t wordAddress) const {
  const uint32_t *mem = words(space);
  uint32_t size = wordCount(space);
  uint32_t address = (wordAddress & ~1u) % size;
  return uint64_t(mem[size_t(address) * NumPes + pe]) << 32 |
         mem[size_t(address + 1) * NumPes + pe];
}

void Machine::writeLong(Space space, unsigned pe, uint32_t wordAddress,
                        uint64_t value) {
  uint32_t *mem = words(space);
  uint32_t size = wordCount(space);
  uint32_t address = (wordAddress & ~1u) % size;
  mem[size_t(address) * NumPes + pe] = uint32_t(value >> 32);
  mem[size_t(address + 1) * NumPes + pe] = uint32_t(value);
}

uint64_t Machine::readT(unsigned pe, unsigned cycle, bool low) const {
  return TReg[size_t((cycle % 4) * 2 + (low ? 1 : 0)) * NumPes + pe];
}

uint16_t Machine::maskEntry(unsigned pe, unsigned entry) const {
  // Entry 0 is all ones; entries 16..31 spread the low four bits of the
  // entry number over the cycles, bit 3 to cycle 0 (manual 3.3, mask
  // registers; docs/target/mncore2.md decision S3).
  if (entry == 0)
    return 0xffff;
  if (entry >= MaskEntries) {
    uint16_t value = 0;
    for (unsigned cycle = 0; cycle < 4; ++cycle)
      if (entry & (8u >> cycle))
        value |= uint16_t(0xf000u >> (4 * cycle));
    return value;
  }
  return Masks[size_t(entry) * NumPes + pe];
}

uint16_t Machine::baseAddress(Space space, unsigned pe) const {
  return space == Space::BarLM0 ? Bar0[pe] : Bar1[pe];
}

namespace {

/// The finaliser of splitmix64: a bijective mix of 64 bits.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Each memory (and each group's DRAM) draws from a stream of its own.
enum FillStream : uint64_t {
  FillLm0 = 1,
  FillLm1,
  FillGrf0,
  FillGrf1,
  FillT,
  FillMasks,
  FillMatrices,
  FillForwarding,
  FillTurnaround,
  FillL1bm,
  FillL2bm,
  FillPdm,
  FillDram, // + group
};

uint64_t streamKey(uint64_t seed, uint64_t stream) {
  return mix64(seed ^ mix64(stream * 0x632be59bd9b4e019ull));
}

/// Value of the 64-bit element `index` of a stream: splitmix64's output
/// for that position, so any element can be computed alone (DRAM) and the
/// bytes do not depend on the order anything is filled in.
uint64_t streamValue(uint64_t key, uint64_t index) {
  return mix64(key + (index + 1) * 0x9e3779b97f4a7c15ull);
}

void fillStream(void *data, size_t bytes, uint64_t key) {
  auto *words = static_cast<uint64_t *>(data);
  for (size_t i = 0; i < bytes / sizeof(uint64_t); ++i)
    words[i] = streamValue(key, i);
}

} // namespace

uint64_t Machine::initialDramValue(unsigned group, uint64_t address) const {
  if (!RandomFill)
    return 0;
  return streamValue(streamKey(FillSeed, FillDram + group),
                     address % DramLongWords);
}

uint64_t *Machine::dramPage(unsigned group, uint64_t page, bool create) {
  uint64_t key = uint64_t(group) << 40 | page;
  auto it = Dram.find(key);
  if (it != Dram.end())
    return it->second.get();
  if (!create)
    return nullptr;
  auto &slot = Dram[key];
  slot.reset(new uint64_t[DramPageSize]());
  if (RandomFill) {
    uint64_t streamKeyOfGroup = streamKey(FillSeed, FillDram + group);
    for (uint64_t i = 0; i < DramPageSize; ++i)
      slot[i] = streamValue(streamKeyOfGroup, page * DramPageSize + i);
  }
  return slot.get();
}

void Machine::fillRandom(uint64_t seed) {
  RandomFill = true;
  FillSeed = seed;
  fillStream(Lm0.data(), size_t(LmWords) * NumPes * 4,
             streamKey(seed, FillLm0));
  fillStream(Lm1.data(), size_t(LmWords) * NumPes * 4,
             streamKey(seed, FillLm1));
  fillStream(Grf0.data(), size_t(GrfWords) * NumPes * 4,
             streamKey(seed, FillGrf0));
  fillStream(Grf1.data(), size_t(GrfWords) * NumPes * 4,
             streamKey(seed, FillGrf1));
  fillStream(TReg.data(), size_t(8) * NumPes * 8, streamKey(seed, FillT));
  // Entry 0 of the array is never read: entry 0 and 16-31 are fixed
  // (maskEntry).
  fillStream(Masks.data(), size_t(MaskEntries) * NumPes * 2,
             streamKey(seed, FillMasks));
  // The base address registers are the kernel's addressing state, not
  // data: they start at 0 (decision S32).
  std::memset(Bar0.data(), 0, NumPes * sizeof(uint16_t));
  std::memset(Bar1.data(), 0, NumPes * sizeof(uint16_t));
  Bar0Zero = Bar1Zero = true;
  fillStream(Matrices.data(), size_t(2) * NumMabs * 16 * 4 * 8,
             streamKey(seed, FillMatrices));
  for (size_t i = 0; i < size_t(2) * NumMabs; ++i)
    DecodedMatrices[i].Valid = false;
  uint64_t latchKey = streamKey(seed, FillForwarding);
  WideLanes *latches[] = {AluForward.get(), MauForward.get(), LbForward.get(),
                          MreadForward.get()};
  for (size_t k = 0; k < 4; ++k)
    fillStream(latches[k], 4 * sizeof(WideLanes), streamKey(latchKey, k));
  turnaroundWord(0, 0); // allocates the registers
  fillStream(Turnaround.get(), NumL1bs * TurnaroundLongWords * 8,
             streamKey(seed, FillTurnaround));
  fillStream(L1bm.data(), size_t(L1bmLongWords) * NumL1bs * 8,
             streamKey(seed, FillL1bm));
  fillStream(L2bm.data(), size_t(L2bmLongWords) * NumL2bs * 8,
             streamKey(seed, FillL2bm));
  fillStream(Pdm.data(), size_t(PdmLongWords) * NumGroups * 8,
             streamKey(seed, FillPdm));
  // DRAM pages are filled as they are first used (dramPage), and read as
  // initialDramValue until then.
  Dram.clear();
}

uint64_t Machine::readUpper(Space space, unsigned index,
                            uint64_t address) const {
  switch (space) {
  case Space::L1BM:
    return L1bm[size_t(index) * L1bmLongWords + address % L1bmLongWords];
  case Space::L2BM:
    return L2bm[size_t(index) * L2bmLongWords + address % L2bmLongWords];
  case Space::PDM:
    return Pdm[size_t(index) * PdmLongWords + address % PdmLongWords];
  case Space::DRAM: {
    address %= DramLongWords;
    uint64_t key = uint64_t(index) << 40 | (address >> DramPageBits);
    auto it = Dram.find(key);
    return it == Dram.end() ? initialDramValue(index, address)
                            : it->second[address & (DramPageSize - 1)];
  }
  default:
    return 0;
  }
}

void Machine::writeUpper(Space space, unsigned index, uint64_t address,
                         uint64_t value) {
  switch (space) {
  case Space::L1BM:
    L1bm[size_t(index) * L1bmLongWords + address % L1bmLongWords] = value;
    return;
  case Space::L2BM:
    L2bm[size_t(index) * L2bmLongWords + address % L2bmLongWords] = value;
    return;
  case Space::PDM:
    Pdm[size_t(index) * PdmLongWords + address % PdmLongWords] = value;
    return;
  case Space::DRAM:
    address %= DramLongWords;
    dramPage(index, address >> DramPageBits,
             true)[address & (DramPageSize - 1)] = value;
    return;
  default:
    return;
  }
}

uint64_t *Machine::upperRun(Space space, unsigned index, uint64_t address,
                            uint64_t &contiguous) {
  auto within = [&](uint64_t *memory, uint64_t size) {
    address %= size;
    contiguous = size - address;
    return memory + size_t(index) * size + address;
  };
  switch (space) {
  case Space::L1BM:
    return within(L1bm.data(), L1bmLongWords);
  case Space::L2BM:
    return within(L2bm.data(), L2bmLongWords);
  case Space::PDM:
    return within(Pdm.data(), PdmLongWords);
  case Space::DRAM: {
    address %= DramLongWords;
    uint64_t offset = address & (DramPageSize - 1);
    contiguous =
        std::min<uint64_t>(DramPageSize - offset, DramLongWords - address);
    return dramPage(index, address >> DramPageBits, true) + offset;
  }
  default:
    contiguous = 0;
    return nullptr;
  }
}

void Machine::copyUpper(Space from, unsigned fromIndex, uint64_t fromAddress,
                        Space to, unsigned toIndex, uint64_t toAddress,
                        uint64_t count) {
  // In runs contiguous at both ends, long word after long word as
  // writeUpper(readUpper()) would (an overlapping copy in one memory
  // repeats what it has just written, as before).
  while (count > 0) {
    uint64_t sourceRun = 0, targetRun = 0;
    // The source first: a DRAM page it creates is the one the target may
    // then share.
    const uint64_t *source = upperRun(from, fromIndex, fromAddress, sourceRun);
    uint64_t *target = upperRun(to, toIndex, toAddress, targetRun);
    if (!source || !target)
      return;
    uint64_t run = std::min({count, sourceRun, targetRun});
    for (uint64_t i = 0; i < run; ++i)
      target[i] = source[i];
    count -= run;
    fromAddress += run;
    toAddress += run;
  }
}

//===----------------------------------------------------------------------===//
// Bulk access
//===----------------------------------------------------------------------===//

namespace {

/// Instances of PE memories are PEs; in the structure-of-arrays layout a
/// long word k of every PE is two rows, words 2k and 2k + 1.
bool isPeMemory(Space space) {
  return space == Space::LM0 || space == Space::LM1 || space == Space::GRF0 ||
         space == Space::GRF1;
}

unsigned instancesOf(Space space) {
  switch (space) {
  case Space::L1BM:
    return NumL1bs;
  case Space::L2BM:
    return NumL2bs;
  case Space::PDM:
  case Space::DRAM:
    return NumGroups;
  default:
    return NumPes;
  }
}

} // namespace

void Machine::writeLongWords(Space space, unsigned instance, uint64_t address,
                             const uint64_t *data, uint64_t count) {
  if (isPeMemory(space)) {
    uint32_t *mem = words(space);
    for (uint64_t k = 0; k < count; ++k) {
      size_t row = size_t(2 * (address + k)) * NumPes + instance;
      mem[row] = uint32_t(data[k] >> 32);
      mem[row + NumPes] = uint32_t(data[k]);
    }
    return;
  }
  if (space == Space::DRAM) {
    // Page by page; pages are created on first write.
    while (count) {
      uint64_t offset = address & (DramPageSize - 1);
      uint64_t chunk =
          DramPageSize - offset < count ? DramPageSize - offset : count;
      uint64_t *page = dramPage(instance, address >> DramPageBits, true);
      std::memcpy(page + offset, data, chunk * sizeof(uint64_t));
      address += chunk;
      data += chunk;
      count -= chunk;
    }
    return;
  }
  uint64_t *base =
      space == Space::L1BM   ? &L1bm[size_t(instance) * L1bmLongWords]
      : space == Space::L2BM ? &L2bm[size_t(instance) * L2bmLongWords]
                             : &Pdm[size_t(instance) * PdmLongWords];
  std::memcpy(base + address, data, count * sizeof(uint64_t));
}

void Machine::readLongWords(Space space, unsigned instance, uint64_t address,
                            uint64_t *data, uint64_t count) const {
  if (isPeMemory(space)) {
    const uint32_t *mem = words(space);
    for (uint64_t k = 0; k < count; ++k) {
      size_t row = size_t(2 * (address + k)) * NumPes + instance;
      data[k] = uint64_t(mem[row]) << 32 | mem[row + NumPes];
    }
    return;
  }
  if (space == Space::DRAM) {
    while (count) {
      uint64_t offset = address & (DramPageSize - 1);
      uint64_t chunk =
          DramPageSize - offset < count ? DramPageSize - offset : count;
      // A page never written reads as its initial values and is not
      // created.
      auto it = Dram.find(uint64_t(instance) << 40 | address >> DramPageBits);
      if (it == Dram.end() && !RandomFill)
        std::memset(data, 0, chunk * sizeof(uint64_t));
      else if (it == Dram.end())
        for (uint64_t k = 0; k < chunk; ++k)
          data[k] = initialDramValue(instance, address + k);
      else
        std::memcpy(data, it->second.get() + offset, chunk * sizeof(uint64_t));
      address += chunk;
      data += chunk;
      count -= chunk;
    }
    return;
  }
  const uint64_t *base =
      space == Space::L1BM   ? &L1bm[size_t(instance) * L1bmLongWords]
      : space == Space::L2BM ? &L2bm[size_t(instance) * L2bmLongWords]
                             : &Pdm[size_t(instance) * PdmLongWords];
  std::memcpy(data, base + address, count * sizeof(uint64_t));
}

void Machine::writeLongWordsOfAll(Space space, uint64_t address,
                                  const uint64_t *data, uint64_t count,
                                  bool broadcast) {
  unsigned instances = instancesOf(space);
  if (!isPeMemory(space)) {
    for (unsigned i = 0; i < instances; ++i)
      writeLongWords(space, i, address, broadcast ? data : data + i * count,
                     count);
    return;
  }
  // Rows of the structure-of-arrays memory are contiguous over the PEs:
  // fill them in tiles of long words so that both sides stream.
  constexpr uint64_t Tile = 8;
  uint32_t *mem = words(space);
  for (uint64_t k0 = 0; k0 < count; k0 += Tile) {
    uint64_t k1 = k0 + Tile < count ? k0 + Tile : count;
    for (unsigned pe = 0; pe < NumPes; ++pe) {
      const uint64_t *source = broadcast ? data : data + pe * count;
      for (uint64_t k = k0; k < k1; ++k) {
        size_t row = size_t(2 * (address + k)) * NumPes + pe;
        mem[row] = uint32_t(source[k] >> 32);
        mem[row + NumPes] = uint32_t(source[k]);
      }
    }
  }
}

void Machine::readLongWordsOfAll(Space space, uint64_t address, uint64_t *data,
                                 uint64_t count) const {
  unsigned instances = instancesOf(space);
  if (!isPeMemory(space)) {
    for (unsigned i = 0; i < instances; ++i)
      readLongWords(space, i, address, data + i * count, count);
    return;
  }
  constexpr uint64_t Tile = 8;
  const uint32_t *mem = words(space);
  for (uint64_t k0 = 0; k0 < count; k0 += Tile) {
    uint64_t k1 = k0 + Tile < count ? k0 + Tile : count;
    for (unsigned pe = 0; pe < NumPes; ++pe) {
      uint64_t *target = data + pe * count;
      for (uint64_t k = k0; k < k1; ++k) {
        size_t row = size_t(2 * (address + k)) * NumPes + pe;
        target[k] = uint64_t(mem[row]) << 32 | mem[row + NumPes];
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// d set / d get
//===----------------------------------------------------------------------===//

namespace {

/// Calls fn(group, l2b, l1b, mab, subpe) for every position a debug access
/// selects, in dump order (group outermost, PE innermost). Levels below the
/// memory's own level are not iterated.
template <typename Fn>
void forEachPosition(const DebugAccess &access, unsigned depth, Fn fn) {
  auto range = [](int8_t index, unsigned limit, unsigned &lo, unsigned &hi) {
    lo = index < 0 ? 0 : unsigned(index);
    hi = index < 0 ? limit : unsigned(index) + 1;
  };
  unsigned g0, g1, c0 = 0, c1 = 1, b0 = 0, b1 = 1, m0 = 0, m1 = 1, p0 = 0,
                   p1 = 1;
  range(access.Group, NumGroups, g0, g1);
  if (depth >= 2)
    range(access.L2b, L2bsPerGroup, c0, c1);
  if (depth >= 3)
    range(access.L1b, L1bsPerL2b, b0, b1);
  if (depth >= 5) {
    range(access.Mab, MabsPerL1b, m0, m1);
    range(access.Pe, PesPerMab, p0, p1);
  }
  for (unsigned g = g0; g < g1; ++g)
    for (unsigned c = c0; c < c1; ++c)
      for (unsigned b = b0; b < b1; ++b)
        for (unsigned m = m0; m < m1; ++m)
          for (unsigned p = p0; p < p1; ++p)
            fn(g, c, b, m, p);
}

/// Hierarchy depth of a memory: 1 group, 2 L2B, 3 L1B, 5 PE.
unsigned depthOf(Space space) {
  switch (space) {
  case Space::DRAM:
  case Space::PDM:
    return 1;
  case Space::L2BM:
    return 2;
  case Space::L1BM:
    return 3;
  default:
    return 5;
  }
}

const char *dumpName(Space space) {
  switch (space) {
  case Space::LM0:
    return "LM0";
  case Space::LM1:
    return "LM1";
  case Space::GRF0:
    return "GREG0";
  case Space::GRF1:
    return "GREG1";
  case Space::T:
    return "TREG";
  case Space::MaskReg:
    return "OMR";
  case Space::L1BM:
    return "L1BM";
  case Space::L2BM:
    return "L2BM";
  case Space::PDM:
    return "PDM";
  case Space::DRAM:
    return "DRAM";
  default:
    return "?";
  }
}

/// A value of format F as the dump prints it: an exponent field of 0 is a
/// (signed) zero and the all-ones field an infinity, as everywhere on
/// MN-Core 2 (docs/target/mncore2.md decision 2).
template <typename F> double dumpValue(typename F::Storage bits) {
  bool negative = F::sign(bits);
  uint32_t exp = F::exponent(bits);
  double value;
  if (exp == 0)
    value = 0.0;
  else if (exp == F::MaxExp)
    value = __builtin_inf();
  else
    value = __builtin_ldexp(
        double((uint64_t(1) << F::ManBits) | uint64_t(F::mantissa(bits))),
        int(exp) - F::Bias - int(F::ManBits));
  return negative ? -value : value;
}

/// A block-float element: explicit leading bit, M * 2^(E - bias - (m - 1));
/// pseudo-single ignores the low 5 mantissa bits (manual 4, block floats).
template <typename F>
double dumpBlockValue(typename F::Storage bits, unsigned ignoredBits = 0) {
  bool negative = F::sign(bits);
  uint32_t exp = F::exponent(bits);
  uint64_t man = uint64_t(F::mantissa(bits)) >> ignoredBits << ignoredBits;
  double value;
  if (exp == F::MaxExp)
    value = __builtin_inf();
  else if (exp == 0)
    value = 0.0;
  else
    value =
        __builtin_ldexp(double(man), int(exp) - F::Bias - int(F::ManBits - 1));
  return negative ? -value : value;
}

void appendf(std::string &out, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void appendf(std::string &out, const char *format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n > 0)
    out.append(buffer,
               size_t(n) < sizeof buffer ? size_t(n) : sizeof buffer - 1);
}

/// The value part of one dump line for a long word.
void appendLongValue(std::string &out, uint64_t v, DumpType type) {
  switch (type) {
  case DumpType::Raw:
    appendf(out, "(f:%g, i:{{0x%X,0x%X},{0x%X,0x%X}}, v:0x%llX)",
            dumpValue<Double>(v), unsigned(v >> 48 & 0xffff),
            unsigned(v >> 32 & 0xffff), unsigned(v >> 16 & 0xffff),
            unsigned(v & 0xffff), (unsigned long long)v);
    return;
  case DumpType::D:
  case DumpType::BD:
    appendf(out, "(%g) (0x%016llx)",
            type == DumpType::D ? dumpValue<Double>(v)
                                : dumpBlockValue<Double>(v),
            (unsigned long long)v);
    return;
  case DumpType::F:
  case DumpType::BF:
  case DumpType::BG: {
    uint32_t w[2] = {uint32_t(v >> 32), uint32_t(v)};
    double d[2];
    for (int i = 0; i < 2; ++i)
      d[i] = type == DumpType::F ? dumpValue<Single>(w[i])
             : type == DumpType::BF
                 ? dumpBlockValue<Single>(w[i])
                 : dumpBlockValue<Single>(w[i], PseudoSingleIgnoredBits);
    appendf(out, "(%g, %g) (0x%08x, 0x%08x)", d[0], d[1], w[0], w[1]);
    return;
  }
  case DumpType::H:
  case DumpType::BH: {
    uint16_t h[4];
    double d[4];
    for (int i = 0; i < 4; ++i) {
      h[i] = uint16_t(v >> (48 - 16 * i));
      d[i] = type == DumpType::H ? dumpValue<Half>(h[i])
                                 : dumpBlockValue<Half>(h[i]);
    }
    appendf(out, "(%g, %g, %g, %g) (0x%04x, 0x%04x, 0x%04x, 0x%04x)", d[0],
            d[1], d[2], d[3], h[0], h[1], h[2], h[3]);
    return;
  }
  }
}

} // namespace

void Machine::debugSet(const Statement &stmt) {
  const DebugAccess &access = stmt.Debug;
  unsigned depth = depthOf(access.Where);
  forEachPosition(
      access, depth,
      [&](unsigned g, unsigned c, unsigned b, unsigned m, unsigned p) {
        for (uint32_t k = 0; k < access.Count; ++k) {
          uint64_t value = access.Payload[k];
          switch (access.Where) {
          case Space::DRAM:
          case Space::PDM:
            writeUpper(access.Where, g, access.Address + k, value);
            break;
          case Space::L2BM:
            writeUpper(access.Where, g * L2bsPerGroup + c, access.Address + k,
                       value);
            break;
          case Space::L1BM:
            writeUpper(access.Where, (g * L2bsPerGroup + c) * L1bsPerL2b + b,
                       access.Address + k, value);
            break;
          case Space::T:
            // T counts one long word per cycle (the most significant long word
            // of that cycle's double long word); decision S4.
            TReg[size_t(((access.Address + k) % 4) * 2) * NumPes +
                 peIndex(g, c, b, m, p)] = value;
            break;
          default:
            writeLong(access.Where, peIndex(g, c, b, m, p),
                      uint32_t(access.Address + 2 * k), value);
            break;
          }
        }
      });
}

void Machine::debugGet(const Statement &stmt, std::string &dump) const {
  const DebugAccess &access = stmt.Debug;
  unsigned depth = depthOf(access.Where);
  const char *name = dumpName(access.Where);
  forEachPosition(
      access, depth,
      [&](unsigned g, unsigned c, unsigned b, unsigned m, unsigned p) {
        char location[40];
        switch (depth) {
        case 1:
          std::snprintf(location, sizeof location, "n%u", g);
          break;
        case 2:
          std::snprintf(location, sizeof location, "n%uc%u", g, c);
          break;
        case 3:
          std::snprintf(location, sizeof location, "n%uc%ub%u", g, c, b);
          break;
        default:
          std::snprintf(location, sizeof location, "n%uc%ub%um%up%u", g, c, b,
                        m, p);
          break;
        }
        unsigned pe = depth == 5 ? peIndex(g, c, b, m, p) : 0;
        for (uint32_t k = 0; k < access.Count; ++k) {
          if (access.Where == Space::MaskReg) {
            // A mask entry prints as four lines, one per cycle.
            unsigned entry = unsigned(access.Address + k) % 32;
            uint16_t value = maskEntry(pe, entry);
            for (unsigned cycle = 0; cycle < 4; ++cycle)
              appendf(dump, "DEBUG-OMR(%s,%u):Mask{%u} #%s\n", location, entry,
                      unsigned(value >> (12 - 4 * cycle) & 0xf),
                      stmt.Text.c_str());
            continue;
          }
          uint64_t value;
          unsigned long long shownAddress;
          switch (access.Where) {
          case Space::DRAM:
          case Space::PDM:
            // Labelled with the address read, wrapped as every memory's is.
            shownAddress =
                (access.Address + k) %
                (access.Where == Space::PDM ? PdmLongWords : DramLongWords);
            value = readUpper(access.Where, g, shownAddress);
            break;
          case Space::L2BM:
            shownAddress = (access.Address + k) % L2bmLongWords;
            value = readUpper(access.Where, g * L2bsPerGroup + c, shownAddress);
            break;
          case Space::L1BM:
            shownAddress = (access.Address + k) % L1bmLongWords;
            value =
                readUpper(access.Where, (g * L2bsPerGroup + c) * L1bsPerL2b + b,
                          shownAddress);
            break;
          case Space::T:
            shownAddress = (access.Address + k) % 4;
            value = readT(pe, unsigned(shownAddress));
            break;
          default:
            shownAddress =
                ((access.Address & ~1ull) + 2 * k) % wordCount(access.Where);
            value = readLong(access.Where, pe, uint32_t(shownAddress));
            break;
          }
          appendf(dump, "DEBUG-%s(%s,%llu):", name, location, shownAddress);
          appendLongValue(dump, value, access.Type);
          dump += " #";
          dump += stmt.Text;
          dump += '\n';
        }
      });
}

bool Machine::run(const Program &program, std::string &dump,
                  Diagnostic &error) {
  return run(program, &dump, error);
}

namespace {

/// The groups (bit g) whose L2BMs an MV transfer reads: the only way what
/// a group's PEs compute leaves the group (the PEs reach no further than
/// their L2BMs; DRAM and PDM are written only by transfers).
uint8_t groupsReadByTransfer(const MvTransfer &mv, uint8_t all) {
  switch (mv.TransferKind) {
  case MvTransfer::Nop:
  case MvTransfer::Broadcast:
  case MvTransfer::Broadcast2:
  case MvTransfer::Broadcast4:
    return 0; // from DRAM or PDM
  case MvTransfer::Reduce:
  case MvTransfer::Reduce2:
  case MvTransfer::Reduce4:
    return all; // from the L2BMs
  case MvTransfer::Point:
  case MvTransfer::Distribute:
    if (mv.From != Space::L2BM)
      return 0;
    return mv.FromGroup < 0 || mv.TransferKind == MvTransfer::Distribute
               ? all
               : uint8_t(1u << mv.FromGroup);
  }
  return all;
}

bool isOnChip(Space space) {
  return space != Space::DRAM && space != Space::PDM;
}

} // namespace

std::vector<uint8_t> Machine::kernelGroups(const Program &program,
                                           bool dumps) const {
  std::vector<uint8_t> groups(program.KernelStarts.size(), AllGroups);
  if (!SkipIdleGroups)
    return groups;
  // A dump of on-chip state must see every group's.
  if (dumps)
    for (const Statement &stmt : program.Statements)
      if (stmt.StmtKind == Statement::DebugGet && isOnChip(stmt.Debug.Where))
        return groups;
  for (size_t k = 0; k < groups.size(); ++k) {
    size_t end = k + 1 < groups.size() ? program.KernelStarts[k + 1]
                                       : program.Statements.size();
    uint8_t read = 0;
    for (size_t i = program.KernelStarts[k]; i < end; ++i)
      if (program.Statements[i].StmtKind == Statement::Mv)
        read |= groupsReadByTransfer(program.Statements[i].Transfer, AllGroups);
    groups[k] = read;
  }
  return groups;
}

bool Machine::run(const Program &program, std::string *dump,
                  Diagnostic &error) {
  (void)error;
  // Each self-contained kernel runs the PEs of the groups whose L2BMs its
  // transfers read; what comes before the first kernel, every group.
  std::vector<uint8_t> groups = kernelGroups(program, dump != nullptr);
  size_t kernel = 0;
  ActiveGroups = AllGroups;
  for (size_t index = 0; index < program.Statements.size(); ++index) {
    const Statement &stmt = program.Statements[index];
    while (kernel < groups.size() && program.KernelStarts[kernel] == index)
      ActiveGroups = groups[kernel++];
    if (Timer)
      Timer->onStatement(stmt);
    switch (stmt.StmtKind) {
    case Statement::DebugSet:
      debugSet(stmt);
      break;
    case Statement::DebugGet:
      if (dump)
        debugGet(stmt, *dump);
      break;
    case Statement::SetMask:
      DefaultMask = stmt.Mask;
      break;
    case Statement::Mv:
      // The data moves at once, so every later wait finds it done; the
      // Timer alone accounts the transfer's time.
      executeMv(stmt.Transfer);
      break;
    case Statement::Pe:
      for (uint32_t i = 0; i < stmt.Repeat; ++i)
        executeStep(stmt);
      break;
    }
  }
  ActiveGroups = AllGroups;
  if (Timer)
    Timer->finish();
  return true;
}

} // namespace mncc::emu
