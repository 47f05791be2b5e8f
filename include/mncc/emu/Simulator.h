//===- Simulator.h - mncc-sim as a library ----------------------*- C++ -*-===//
//
// The emulator for the compiler and the runtime: load a program once, stage
// memories in bulk, run it as often as needed, read the results back in bulk
// and read the counters, with no text on the way (a program's `d get`
// statements are skipped unless a dump is asked for).
//
// Every call that takes a range checks it and returns false with a message
// instead of touching memory outside it; nothing here aborts on bad input.
//
// docs/target/mncore2.md, "Library API", describes the calls.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_SIMULATOR_H
#define MNCC_EMU_SIMULATOR_H

#include "mncc/emu/Machine.h"
#include "mncc/emu/Program.h"
#include "mncc/emu/Timing.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mncc::emu {

/// Instance value of a Region meaning every instance of the memory.
constexpr unsigned AllInstances = ~0u;

/// A range of long words in one memory.
struct Region {
  /// LM0, LM1, GRF0, GRF1 (per PE), L1BM (per L1B), L2BM (per L2B), PDM or
  /// DRAM (per group).
  Space Memory = Space::None;
  /// The PE, L1B, L2B or group index (as in Machine.h's numbering), or
  /// AllInstances.
  unsigned Instance = 0;
  /// First long word. Long word k of LM0, LM1, GRF0 and GRF1 is words 2k
  /// (the most significant half) and 2k + 1, as `d set` addresses them.
  uint64_t Address = 0;
  /// Long words per instance.
  uint64_t Count = 0;
};

class Simulator {
public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator &) = delete;
  Simulator &operator=(const Simulator &) = delete;

  /// Parses a VSM program and keeps it for run(). On a parse error returns
  /// false with "file:line:column: error: ..." in error and keeps the
  /// program loaded before, if any.
  [[nodiscard]] bool load(std::string_view text, std::string_view fileName,
                          std::string &error);
  /// Keeps an already parsed program.
  void load(Program program);
  bool hasProgram() const { return HasProgram; }

  /// Runs the loaded program from the current state (memories keep what
  /// earlier runs and writes left in them). Counters restart for each run.
  /// With a dump, the program's `d get` lines are appended to it.
  [[nodiscard]] bool run(std::string &error, std::string *dump = nullptr);
  /// Puts the board back to its power-on state: every memory and register
  /// zero. The loaded program stays.
  void reset();
  /// Instead of zeros, every memory and register a program can read before
  /// writing it holds pseudo-random bytes given by the seed and the
  /// location (as `gpfn3-smi clear` leaves the board; Machine::fillRandom
  /// lists what is filled). The same seed gives the same bytes. DRAM costs
  /// nothing until used. Like reset(), it replaces what earlier runs and
  /// writes left.
  void fillRandom(uint64_t seed);
  /// Machine::setSkipIdleGroups, kept over reset() and fillRandom(). While
  /// a run has left some group's PE work out, read() refuses that group's
  /// on-chip memories.
  void setSkipIdleGroups(bool skip);

  /// Copies Region.Count long words per instance in or out. With
  /// AllInstances the data holds Count long words for instance 0, then for
  /// instance 1, and so on (instanceCount(Memory) * Count in all); write
  /// with broadcast = true sends the same Count long words to every
  /// instance instead.
  [[nodiscard]] bool write(const Region &region, const uint64_t *data,
                           std::string &error, bool broadcast = false);
  [[nodiscard]] bool read(const Region &region, uint64_t *data,
                          std::string &error) const;

  /// The same with host bytes: every long word is 8 / elementBytes elements
  /// of elementBytes bytes (1, 2, 4 or 8) in host byte order, the first
  /// element the most significant, as MN-Core orders the words of a long
  /// word and mncc-layout's MemoryImage stores them. numBytes must be 8
  /// bytes per long word of the region.
  [[nodiscard]] bool writeBytes(const Region &region, const void *bytes,
                                uint64_t numBytes, unsigned elementBytes,
                                std::string &error, bool broadcast = false);
  [[nodiscard]] bool readBytes(const Region &region, void *bytes,
                               uint64_t numBytes, unsigned elementBytes,
                               std::string &error) const;

  /// Counters of the last run: steps, stall cycles, cycles, per-unit busy
  /// cycles (indexed by Unit), MAU multiply-adds (see Timing.h).
  const TimingStats &stats() const { return Stats; }
  /// Runs since the simulator was made.
  uint64_t runs() const { return Runs; }

  /// Instances and long words of a memory (0 for anything else).
  static unsigned instanceCount(Space memory);
  static uint64_t longWordCount(Space memory);

  /// The machine, for what this API does not cover (registers, matrices).
  Machine &machine() { return *Board; }
  const Machine &machine() const { return *Board; }

private:
  bool check(const Region &region, bool broadcast, std::string &error) const;
  /// Whether the region's on-chip state was computed (Machine::staleGroups).
  bool computed(const Region &region, std::string &error) const;
  /// check() plus the element size and the byte count of a byte transfer.
  bool checkBytes(const Region &region, bool broadcast, uint64_t numBytes,
                  unsigned elementBytes, std::string &error) const;

  std::unique_ptr<Machine> Board;
  Program Code;
  bool HasProgram = false;
  TimingStats Stats;
  uint64_t Runs = 0;
  bool SkipIdleGroups = true;
};

} // namespace mncc::emu

#endif // MNCC_EMU_SIMULATOR_H
