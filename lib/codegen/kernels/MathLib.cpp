//===- MathLib.cpp - Element-wise math on a block of PE memory ------------===//
//
// Two parts: the scheduler that turns a MathProgram into steps over the
// chunks of a block, and the programs of the functions.
//
// Scheduling. The block is cut into chunks of four long words, one step of
// an auto-stride operand. Each operation of each chunk is placed, chunk
// after chunk, at the earliest step where
//  * its operands have landed (ALU results 6 cycles after their step, one
//    step between; MAU results 10 cycles, two steps; docs/target/mncore2.md
//    H2-H3),
//  * its unit (ALU or MAU) is free in that step,
//  * the step's reads of each PE memory touch the same words, a memory is
//    written by one expression, a step reading and writing LM0 or LM1 does
//    so at the same words, and `imm` meets no LM0 access (manual 3.6.4,
//    docs/codegen.md C8),
//  * its result slot is no longer read by an earlier value that shared it
//    and the earlier write has landed.
// Values of chunk c use slot c mod W of their home, so W chunks are in
// flight; later chunks fill the steps where earlier ones wait for results.
//
//===----------------------------------------------------------------------===//

#include "MathLib.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

using namespace mncc;
using namespace mncc::codegen;

using Home = MathProgram::Home;
using Ref = MathProgram::Ref;
using Unit = MathProgram::Unit;

namespace {

constexpr int64_t kChunkLongWords = 4;
constexpr unsigned kMaxWindow = 4;
/// Steps between an ALU (MAU) result's step and the first step that may
/// read it, plus one.
constexpr int64_t kAluLatency = 2;
constexpr int64_t kMauLatency = 3;

} // namespace

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

namespace {

char floatPrecision(DeviceType type) {
  return type == DeviceType::Half ? 'h' : type == DeviceType::Double ? 'd' : 'f';
}

char integerPrecision(DeviceType type) {
  return type == DeviceType::Half ? 's' : type == DeviceType::Double ? 'l' : 'i';
}

} // namespace

std::string VectorFormat::alu(std::string_view name) const {
  return floatPrecision(Type) + std::string(name);
}

std::string VectorFormat::integer(std::string_view name) const {
  return integerPrecision(Type) + std::string(name);
}

std::string VectorFormat::mau(std::string_view name) const {
  // Half results are rounded once into half (the output reduction).
  return floatPrecision(Type) + std::string(name) +
         (Type == DeviceType::Half ? "r" : "");
}

std::vector<std::string>
VectorFormat::mauSteps(std::string_view name, std::vector<std::string> sources,
                       const std::string &destination) const {
  std::string opcode = mau(name);
  // Half: the addend (vfma's third source, vadd's second) in halves, "e"
  // (the accumulating form reads it one format lower than its single).
  if (Type == DeviceType::Half && (name == "vfma" || name == "vadd"))
    sources.back() += "e";
  if (isPairedProduct(opcode)) {
    std::array<std::string, 2> pair =
        pairedProductSteps(opcode, sources, destination);
    return {pair[0], pair[1]};
  }
  std::string text = opcode;
  for (const std::string &source : sources)
    text += " " + source;
  return {text + " " + destination};
}

uint64_t VectorFormat::laneOf(double value) const {
  // A zero keeps its sign (the device's conversions give +0, decision 4).
  if (value == 0)
    return std::signbit(value) ? signBit() : 0;
  uint64_t bits = 0;
  switch (Type) {
  case DeviceType::Half: {
    uint16_t half = 0;
    hostToDevice(reference::DType::Float64, &value, Type, &half, 1);
    return half;
  }
  case DeviceType::Double:
    hostToDevice(reference::DType::Float64, &value, Type, &bits, 1);
    return bits;
  default: {
    uint32_t single = 0;
    hostToDevice(reference::DType::Float64, &value, DeviceType::Single,
                 &single, 1);
    return single;
  }
  }
}

uint64_t
VectorFormat::longWord(const std::function<uint64_t(unsigned)> &lane) const {
  uint64_t word = 0;
  uint64_t mask = ~uint64_t(0) >> (64 - bits());
  for (unsigned i = 0; i < unsigned(lanes()); ++i)
    word |= (lane(i) & mask) << (64 - bits() * (i + 1));
  return word;
}

bool codegen::isPairedProduct(std::string_view opcode) {
  return opcode == "dvfma" || opcode == "dvmul";
}

std::array<std::string, 2>
codegen::pairedProductSteps(std::string_view opcode,
                            const std::vector<std::string> &sources,
                            const std::string &destination) {
  // u: PEs 0 and 1 compute, 2 and 3 pass the addend (0 for dvmul); d: PEs
  // 2 and 3 compute a b + (that), 0 and 1 pass their result.
  std::string a = sources.at(0), b = sources.at(1);
  std::string u = std::string(opcode) + "u " + a + " " + b;
  if (opcode == "dvfma")
    u += " " + sources.at(2);
  return {u + " $nowrite",
          "dvfmad " + a + " " + b + " $mauf " + destination};
}

std::string codegen::immediatePayload(uint32_t bits) {
  char payload[24];
  std::snprintf(payload, sizeof payload, "ui\"0x%08x\"", bits);
  return payload;
}

void codegen::emitLongWordConstant(VsmWriter &out, PeMemory memory,
                                   int64_t longWord, uint64_t bits) {
  uint32_t high = uint32_t(bits >> 32), low = uint32_t(bits);
  if (high == low) {
    out.step({"imm " + immediatePayload(high) + " " +
              peOperand(memory, Width::Long, 2 * longWord, 0)});
    return;
  }
  // A word destination stores the most significant word of imm's value.
  out.step({"imm " + immediatePayload(high) + " " +
            peOperand(memory, Width::Word, 2 * longWord, 0)});
  out.step({"imm " + immediatePayload(low) + " " +
            peOperand(memory, Width::Word, 2 * longWord + 1, 0)});
}

//===----------------------------------------------------------------------===//
// Program construction
//===----------------------------------------------------------------------===//

Ref MathProgram::input(unsigned index) {
  for (size_t i = 0; i < Values.size(); ++i)
    if (Values[i].kind == Value::Kind::Input && Values[i].input == index)
      return Ref{int(i)};
  Value value{Value::Kind::Input};
  value.input = index;
  Values.push_back(value);
  return Ref{int(Values.size() - 1)};
}

Ref MathProgram::constantBits(uint32_t bits, Home home) {
  return constantPair(bits, bits, home);
}

Ref MathProgram::constantPair(uint32_t high, uint32_t low, Home home) {
  for (size_t i = 0; i < Values.size(); ++i)
    if (Values[i].kind == Value::Kind::Constant && Values[i].bits == high &&
        Values[i].lowBits == low && Values[i].home == home)
      return Ref{int(i)};
  Value value{Value::Kind::Constant};
  value.bits = high;
  value.lowBits = low;
  value.home = home;
  Values.push_back(value);
  return Ref{int(Values.size() - 1)};
}

Ref MathProgram::fixed(const std::string &name) {
  for (size_t i = 0; i < Values.size(); ++i)
    if (Values[i].kind == Value::Kind::Fixed && Values[i].name == name)
      return Ref{int(i)};
  Value value{Value::Kind::Fixed};
  value.name = name;
  Values.push_back(value);
  return Ref{int(Values.size() - 1)};
}

Ref MathProgram::constantLane(uint64_t bits, Home home) {
  uint64_t word = Format.longWord([bits](unsigned) { return bits; });
  return constantPair(uint32_t(word >> 32), uint32_t(word), home);
}

Ref MathProgram::constant(double value, Home home) {
  return constantLane(Format.laneOf(value), home);
}

Ref MathProgram::compute(Unit unit, const std::string &opcode,
                         std::vector<Ref> sources, Home home) {
  Value value{Value::Kind::Computed};
  value.home = home;
  value.producer = int(Operations.size());
  Values.push_back(value);
  Operations.push_back(
      {unit, opcode, std::move(sources), int(Values.size() - 1)});
  return Ref{int(Values.size() - 1)};
}

Ref MathProgram::alu(const std::string &opcode, std::vector<Ref> sources,
                     Home home) {
  return compute(Unit::Alu, opcode, std::move(sources), home);
}

Ref MathProgram::mau(const std::string &opcode, std::vector<Ref> sources,
                     Home home) {
  return compute(Unit::Mau, opcode, std::move(sources), home);
}

void MathProgram::setResult(Ref value) { Result = value.id; }

namespace {

/// Constants and chunk values each scratch block holds.
struct PoolCounts {
  int64_t constants[2] = {0, 0};
  int64_t values[2] = {0, 0};
};

PoolCounts countPools(const MathProgram &program) {
  PoolCounts counts;
  for (size_t i = 0; i < program.values().size(); ++i) {
    const MathProgram::Value &value = program.values()[i];
    if (int(i) == program.result())
      continue; // written to the destination
    if (value.kind == MathProgram::Value::Kind::Input ||
        value.kind == MathProgram::Value::Kind::Fixed ||
        (value.home != Home::First && value.home != Home::Second))
      continue;
    unsigned pool = value.home == Home::First ? 0 : 1;
    if (value.kind == MathProgram::Value::Kind::Constant)
      ++counts.constants[pool];
    else
      ++counts.values[pool];
  }
  return counts;
}

} // namespace

int64_t MathProgram::scratchLongWords(unsigned window) const {
  PoolCounts counts = countPools(*this);
  int64_t need = 0;
  for (unsigned p = 0; p < 2; ++p)
    need = std::max(need, counts.constants[p] +
                              counts.values[p] * kChunkLongWords * window);
  return (need + 1) / 2 * 2;
}

//===----------------------------------------------------------------------===//
// Scheduling
//===----------------------------------------------------------------------===//

namespace {

int64_t roundUpTo(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

/// The memories with read and write ports; T has a write port only (its
/// reads take no memory port).
enum Port : unsigned {
  PortLm0,
  PortLm1,
  PortGrf0,
  PortGrf1,
  PortT,
  NumPorts,
  /// Fixed inputs: no storage, no port.
  PortNone = NumPorts
};

unsigned portOf(PeMemory memory) {
  switch (memory) {
  case PeMemory::LM0:
    return PortLm0;
  case PeMemory::LM1:
    return PortLm1;
  case PeMemory::GRF0:
    return PortGrf0;
  case PeMemory::GRF1:
    return PortGrf1;
  }
  return PortLm0;
}

/// The words one operand touches: a start long word and whether it
/// advances a long word a cycle (a chunk) or stays (a constant).
struct Region {
  bool used = false;
  int64_t longWord = 0;
  bool advances = false;
  bool operator==(const Region &o) const {
    return used == o.used && longWord == o.longWord && advances == o.advances;
  }
  bool operator!=(const Region &o) const { return !(*this == o); }
};

/// One operand of a placed expression.
struct Access {
  unsigned port = PortLm0;
  Region region;
  bool negate = false;
  /// The slot whose state orders reads and writes.
  std::pair<unsigned, int64_t> slot() const { return {port, region.longWord}; }
  std::string fixedName;
  /// A word-wide destination (the halves of a constant pair).
  bool word = false;
  int64_t wordOffset = 0;
  std::string text(bool destination) const {
    std::string prefix = negate && !destination ? "-" : "";
    if (port == PortNone)
      return fixedName;
    if (port == PortT)
      return prefix + "$t";
    PeMemory memory = port == PortLm0    ? PeMemory::LM0
                      : port == PortLm1  ? PeMemory::LM1
                      : port == PortGrf0 ? PeMemory::GRF0
                                         : PeMemory::GRF1;
    if (word)
      return peOperand(memory, Width::Word, 2 * region.longWord + wordOffset,
                       0);
    return prefix + peOperand(memory, Width::Long, 2 * region.longWord,
                              region.advances ? 2 : 0);
  }
};

struct Step {
  std::string expression[2]; // ALU, MAU
  Region reads[NumPorts];
  bool writes[NumPorts] = {};
  Region lmWrite[2];
  bool hasImm = false;
};

struct SlotState {
  int64_t ready = 0;
  int64_t lastRead = -1;
};

class Scheduler {
public:
  Scheduler(const MathProgram &program, const std::vector<PeBlock> &sources,
            const PeBlock &destination, const MathScratch &scratch)
      : Program(program), Sources(sources), Destination(destination),
        Scratch(scratch) {}

  bool run(VsmWriter &out, std::string &error);

private:
  bool layOut(std::string &error);
  Access accessOf(int value, int64_t chunk) const;
  bool fits(const Step &step, unsigned unit, const std::vector<Access> &reads,
            const Access *write, bool isImm) const;
  bool place(unsigned unit, const std::string &opcode,
             const std::vector<Access> &reads, const Access &write,
             int64_t latency, bool isImm, std::string &error);

  const MathProgram &Program;
  std::vector<PeBlock> Sources;
  PeBlock Destination;
  MathScratch Scratch;

  unsigned Window = 1;
  /// Long word of each constant; first slot long word of each pooled
  /// value's W slots.
  std::vector<int64_t> Address;
  std::vector<Step> Timeline;
  std::map<std::pair<unsigned, int64_t>, SlotState> Slots;
};

bool checkBlock(const PeBlock &block, const char *what, std::string &error) {
  if (block.longWords <= 0 || block.longWords % kChunkLongWords != 0 ||
      block.longWord < 0 ||
      block.longWord + block.longWords > peMemoryLongWords(block.memory)) {
    error = std::string(what) + " block " + peMemoryName(block.memory) + " [" +
            std::to_string(block.longWord) + ", +" +
            std::to_string(block.longWords) +
            ") is not a positive multiple of 4 long words inside its memory";
    return false;
  }
  return true;
}

bool overlaps(const PeBlock &a, const PeBlock &b) {
  return a.memory == b.memory && a.longWord < b.longWord + b.longWords &&
         b.longWord < a.longWord + a.longWords;
}

bool Scheduler::layOut(std::string &error) {
  if (Program.result() < 0) {
    error = "the math program has no result";
    return false;
  }
  unsigned inputs = 0;
  for (const MathProgram::Value &value : Program.values())
    if (value.kind == MathProgram::Value::Kind::Input)
      inputs = std::max(inputs, value.input + 1);
  if (Sources.size() != inputs) {
    error = "the math program reads " + std::to_string(inputs) +
            " sources, given " + std::to_string(Sources.size());
    return false;
  }
  if (!checkBlock(Destination, "destination", error))
    return false;
  for (const PeBlock &source : Sources) {
    if (!checkBlock(source, "source", error))
      return false;
    if (source.longWords != Destination.longWords) {
      error = "a source of " + std::to_string(source.longWords) +
              " long words for a destination of " +
              std::to_string(Destination.longWords);
      return false;
    }
    if (overlaps(source, Destination) &&
        source.longWord != Destination.longWord) {
      error = "a source overlaps the destination without being it";
      return false;
    }
  }
  const PeBlock *pools[2] = {&Scratch.first, &Scratch.second};
  for (const PeBlock *pool : pools) {
    if (pool->longWord < 0 || pool->longWords < 0 ||
        pool->longWord + pool->longWords > peMemoryLongWords(pool->memory)) {
      error =
          std::string("a scratch block outside ") + peMemoryName(pool->memory);
      return false;
    }
  }
  if (Scratch.first.memory == Scratch.second.memory) {
    error = "the two scratch blocks are both in " +
            std::string(peMemoryName(Scratch.first.memory)) +
            "; they need two memories";
    return false;
  }
  std::vector<PeBlock> data = Sources;
  data.push_back(Destination);
  for (const PeBlock &block : data)
    for (const PeBlock *pool : pools)
      if (block.memory == pool->memory) {
        error = std::string("a source or the destination is in ") +
                peMemoryName(block.memory) + ", the memory of a scratch block";
        return false;
      }

  // In place: an input that is the destination must be read before the
  // destination's slot holds anything else.
  int firstDestinationWrite = int(Program.operations().size());
  for (size_t i = 0; i < Program.operations().size(); ++i) {
    const MathProgram::Value &result =
        Program.values()[Program.operations()[i].result];
    if (result.home == Home::Destination ||
        Program.operations()[i].result == Program.result()) {
      firstDestinationWrite = int(i);
      break;
    }
  }
  for (size_t i = 0; i < Program.operations().size(); ++i)
    for (const Ref &ref : Program.operations()[i].sources) {
      const MathProgram::Value &value = Program.values()[ref.id];
      if (value.kind == MathProgram::Value::Kind::Input &&
          Sources[value.input].memory == Destination.memory &&
          Sources[value.input].longWord == Destination.longWord &&
          int(i) > firstDestinationWrite) {
        error = "this math program cannot run in place: it reads its "
                "source after writing the destination";
        return false;
      }
    }

  // The largest window that fits both scratch blocks.
  PoolCounts counts = countPools(Program);
  Window = 0;
  for (unsigned w = kMaxWindow; w >= 1; --w) {
    bool fitsAll = true;
    for (unsigned p = 0; p < 2; ++p)
      if (counts.constants[p] + counts.values[p] * kChunkLongWords * w >
          pools[p]->longWords)
        fitsAll = false;
    if (fitsAll) {
      Window = w;
      break;
    }
  }
  if (Window == 0) {
    error = "the scratch blocks hold " +
            std::to_string(
                std::min(Scratch.first.longWords, Scratch.second.longWords)) +
            " long words; this math program needs " +
            std::to_string(Program.scratchLongWords(1)) + " in each";
    return false;
  }
  int64_t next[2] = {pools[0]->longWord, pools[1]->longWord};
  Address.assign(Program.values().size(), -1);
  unsigned tConstants = 0;
  for (size_t i = 0; i < Program.values().size(); ++i) {
    const MathProgram::Value &value = Program.values()[i];
    if (value.kind == MathProgram::Value::Kind::Constant &&
        value.home == Home::T)
      ++tConstants;
    if (value.kind == MathProgram::Value::Kind::Constant &&
        (value.home == Home::First || value.home == Home::Second))
      Address[i] = next[value.home == Home::Second]++;
  }
  if (tConstants > 1) {
    error = "a math program keeps at most one constant in T";
    return false;
  }
  for (const MathProgram::Value &value : Program.values())
    if (value.kind == MathProgram::Value::Kind::Constant &&
        value.home == Home::T && value.bits != value.lowBits) {
      error = "T holds a constant of two equal words only (imm)";
      return false;
    }
  for (unsigned p = 0; p < 2; ++p)
    next[p] = roundUpTo(next[p], 2);
  for (size_t i = 0; i < Program.values().size(); ++i) {
    const MathProgram::Value &value = Program.values()[i];
    if (value.kind != MathProgram::Value::Kind::Computed ||
        int(i) == Program.result())
      continue;
    if (value.home == Home::T) {
      error = "T holds a constant, not a computed value";
      return false;
    }
    if (value.home == Home::First || value.home == Home::Second) {
      unsigned p = value.home == Home::Second;
      Address[i] = next[p];
      next[p] += kChunkLongWords * Window;
    }
  }
  return true;
}

Access Scheduler::accessOf(int id, int64_t chunk) const {
  const MathProgram::Value &value = Program.values()[id];
  Access access;
  if (value.kind == MathProgram::Value::Kind::Fixed) {
    access.port = PortNone;
    access.fixedName = value.name;
    return access;
  }
  if (value.kind == MathProgram::Value::Kind::Input) {
    const PeBlock &block = Sources[value.input];
    access.port = portOf(block.memory);
    access.region = {true, block.longWord + kChunkLongWords * chunk, true};
    return access;
  }
  if (id == Program.result() || value.home == Home::Destination) {
    access.port = portOf(Destination.memory);
    access.region = {true, Destination.longWord + kChunkLongWords * chunk,
                     true};
    return access;
  }
  if (value.home == Home::T) {
    access.port = PortT;
    access.region = {true, 0, false};
    return access;
  }
  const PeBlock &pool =
      value.home == Home::First ? Scratch.first : Scratch.second;
  access.port = portOf(pool.memory);
  if (value.kind == MathProgram::Value::Kind::Constant) {
    access.region = {true, Address[id], false};
    return access;
  }
  access.region = {
      true, Address[id] + kChunkLongWords * int64_t(chunk % Window), true};
  return access;
}

bool Scheduler::fits(const Step &step, unsigned unit,
                     const std::vector<Access> &reads, const Access *write,
                     bool isImm) const {
  if (!step.expression[unit].empty())
    return false;
  Region combined[NumPorts];
  for (unsigned p = 0; p < NumPorts; ++p)
    combined[p] = step.reads[p];
  bool lm0 = step.reads[PortLm0].used || step.lmWrite[0].used;
  for (const Access &read : reads) {
    if (read.port >= PortT)
      continue;
    Region &seen = combined[read.port];
    if (seen.used && seen != read.region)
      return false;
    seen = read.region;
    if (read.port <= PortLm1 && step.lmWrite[read.port].used &&
        step.lmWrite[read.port] != read.region)
      return false;
    lm0 |= read.port == PortLm0;
  }
  if (write && step.writes[write->port])
    return false;
  if (write && write->port <= PortLm1) {
    if (combined[write->port].used && combined[write->port] != write->region)
      return false;
    lm0 |= write->port == PortLm0;
  }
  if ((isImm || step.hasImm) && lm0)
    return false;
  return true;
}

bool Scheduler::place(unsigned unit, const std::string &opcode,
                      const std::vector<Access> &reads, const Access &write,
                      int64_t latency, bool isImm, std::string &error) {
  int64_t earliest = 0;
  for (const Access &read : reads)
    earliest = std::max(earliest, Slots[read.slot()].ready);
  SlotState &target = Slots[write.slot()];
  earliest = std::max({earliest, target.lastRead, target.ready});
  // A double product takes two consecutive steps of the MAU (the first
  // writes nothing, the second reads its result from $mauf).
  bool paired = isPairedProduct(opcode);
  int64_t span = paired ? 2 : 1;
  for (int64_t s = earliest;; ++s) {
    if (s + span > int64_t(Timeline.size()))
      Timeline.resize(size_t(s + span));
    bool fit = fits(Timeline[size_t(s + span - 1)], unit, reads, &write, isImm);
    if (paired)
      fit = fit && fits(Timeline[size_t(s)], unit, reads, nullptr, false);
    if (!fit) {
      // The operands of one expression conflict among themselves: it never
      // fits, whatever the step.
      if (s > earliest + 4096) {
        error = "cannot schedule '" + opcode +
                "': its operands share a memory port";
        return false;
      }
      continue;
    }
    std::vector<std::string> texts;
    for (const Access &read : reads)
      texts.push_back(read.text(false));
    std::vector<std::string> expressions;
    if (paired) {
      std::array<std::string, 2> pair =
          pairedProductSteps(opcode, texts, write.text(true));
      expressions = {pair[0], pair[1]};
    } else {
      std::string text = opcode;
      for (const std::string &read : texts)
        text += " " + read;
      expressions = {text + " " + write.text(true)};
    }
    for (int64_t i = 0; i < span; ++i) {
      Step &step = Timeline[size_t(s + i)];
      step.expression[unit] = expressions[size_t(i)];
      for (const Access &read : reads)
        if (read.port < PortT)
          step.reads[read.port] = read.region;
    }
    int64_t last = s + span - 1;
    for (const Access &read : reads) {
      SlotState &state = Slots[read.slot()];
      state.lastRead = std::max(state.lastRead, last);
    }
    Step &step = Timeline[size_t(last)];
    step.writes[write.port] = true;
    if (write.port <= PortLm1)
      step.lmWrite[write.port] = write.region;
    step.hasImm |= isImm;
    SlotState &written = Slots[write.slot()];
    written.ready = last + latency;
    return true;
  }
}

bool Scheduler::run(VsmWriter &out, std::string &error) {
  if (!layOut(error))
    return false;
  // The constants, written once by imm.
  for (size_t i = 0; i < Program.values().size(); ++i) {
    const MathProgram::Value &value = Program.values()[i];
    if (value.kind != MathProgram::Value::Kind::Constant)
      continue;
    char payload[24];
    if (value.bits == value.lowBits || value.home == Home::T) {
      std::snprintf(payload, sizeof payload, "ui\"0x%08x\"", value.bits);
      if (!place(0, std::string("imm ") + payload, {}, accessOf(int(i), 0),
                 kAluLatency, true, error))
        return false;
      continue;
    }
    // Two words: each written alone.
    for (unsigned half = 0; half < 2; ++half) {
      std::snprintf(payload, sizeof payload, "ui\"0x%08x\"",
                    half ? value.lowBits : value.bits);
      Access target = accessOf(int(i), 0);
      target.word = true;
      target.wordOffset = half;
      if (!place(0, std::string("imm ") + payload, {}, target, kAluLatency,
                 true, error))
        return false;
    }
  }
  int64_t chunks = Destination.longWords / kChunkLongWords;
  for (int64_t c = 0; c < chunks; ++c) {
    for (const MathProgram::Operation &op : Program.operations()) {
      std::vector<Access> reads;
      for (const Ref &ref : op.sources) {
        Access access = accessOf(ref.id, c);
        access.negate = ref.negate;
        reads.push_back(access);
      }
      bool isMau = op.unit == Unit::Mau;
      if (!place(isMau ? 1 : 0, op.opcode, reads, accessOf(op.result, c),
                 isMau ? kMauLatency : kAluLatency, false, error))
        return false;
    }
  }
  // Steps, runs of empty ones as one nop; then wait until every write has
  // landed, so the caller may read anything at once.
  unsigned idle = 0;
  for (const Step &step : Timeline) {
    if (step.expression[0].empty() && step.expression[1].empty()) {
      ++idle;
      continue;
    }
    out.nop(idle);
    idle = 0;
    out.step({step.expression[0], step.expression[1]});
  }
  int64_t landed = 0;
  for (const auto &entry : Slots)
    landed = std::max(landed, entry.second.ready);
  out.nop(
      unsigned(idle + std::max<int64_t>(0, landed - int64_t(Timeline.size()))));
  return true;
}

} // namespace

bool MathProgram::emit(VsmWriter &out, const std::vector<PeBlock> &sources,
                       const PeBlock &destination, const MathScratch &scratch,
                       std::string &error) const {
  Scheduler scheduler(*this, sources, destination, scratch);
  return scheduler.run(out, error);
}

//===----------------------------------------------------------------------===//
// The functions
//===----------------------------------------------------------------------===//

namespace {

constexpr Home kFirst = Home::First;
constexpr Home kSecond = Home::Second;
constexpr Home kDest = Home::Destination;

/// 1.5 * 2^23: adding it rounds a single to an integer held in the low
/// mantissa bits.
constexpr float kRoundingMagic = 12582912.0f;
constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kInfinity = 0x7f800000u;
constexpr uint32_t kLargest = 0x7f7fffffu;
constexpr uint32_t kSmallest = 0x00800000u;

/// ln 2 split so that k * hi is exact for the |k| <= 128 of a reduction.
float ln2High() { return float(M_LN2); }
float ln2Low() { return float(M_LN2 - double(ln2High())); }

// Minimax coefficients (Remez on the relative error, rounded to single;
// docs/codegen.md M3), lowest degree first.
/// e^r on [-ln2/2, ln2/2], degree 6.
constexpr uint32_t kExpCoefficients[] = {0x3f800000, 0x3f800000, 0x3efffffd,
                                         0x3e2aaa04, 0x3d2aac50, 0x3c093706,
                                         0x3ab55c3f};
/// log(1 + f) / f on [sqrt(1/2) - 1, sqrt(2) - 1], degree 9, without its
/// constant term 1: log(1 + f) = f + f^2 Q(f), Q of degree 8.
constexpr uint32_t kLogCoefficients[] = {0xbefffffc, 0x3eaaaaa8, 0xbe800214,
                                         0x3e4cd1f6, 0xbe2a1387, 0x3e1138d4,
                                         0xbe079cf4, 0x3e0424d3, 0xbd9c149b};
/// (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2], degree 4.
constexpr uint32_t kExpm1Coefficients[] = {0x3f000000, 0x3e2aaa6e, 0x3d2aaadd,
                                           0x3c0905ea, 0x3ab63518};
/// 1 / d on [1, 2], degree 2 (relative error 1 %).
constexpr uint32_t kReciprocalCoefficients[] = {0x4007c1f0, 0xbfba2e8c,
                                                0x3ea57eb5};

/// Horner in the reduced argument `r` (kept in the destination's slot, so
/// that the first step can read two constants), into the first block.
template <size_t N>
Ref horner(MathProgram &p, Ref r, const uint32_t (&coefficients)[N]) {
  Ref acc = p.mau("fvfma",
                  {r, p.constantBits(coefficients[N - 1], kFirst),
                   p.constantBits(coefficients[N - 2], kSecond)},
                  kFirst);
  for (size_t i = N - 2; i-- > 0;)
    acc = p.mau("fvfma", {acc, r, p.constantBits(coefficients[i], kSecond)},
                kFirst);
  return acc;
}

/// Reduction for e^y, y = -scaledInput when negateInput: returns r (in the
/// destination's slot) and the integer k << 23 (in the second block), with
/// y = k ln2 + r.
struct Reduced {
  Ref r;
  Ref kShifted;
};
Reduced reduceForExp(MathProgram &p, Ref y, bool negateInput) {
  Ref magic = p.constant(kRoundingMagic, Home::T);
  Ref log2e = p.constant(float(M_LOG2E), kFirst);
  Ref t = p.mau("fvfma", {y, negateInput ? -log2e : log2e, magic}, kFirst);
  Ref k = p.mau("fvadd", {t, -magic}, kDest);
  Ref kShifted = p.alu("ilsl", {t, p.constantBits(23, kSecond)}, kSecond);
  Ref u =
      p.mau("fvfma", {k, -p.constant(ln2High(), kFirst), negateInput ? -y : y},
            kSecond);
  Ref r = p.mau("fvfma", {k, -p.constant(ln2Low(), kFirst), u}, kDest);
  return {r, kShifted};
}

/// 1 / d for d in [1, 2] held in the destination's slot: a quadratic
/// start, then two Newton steps y += y (1 - d y). Result in the first
/// block.
Ref reciprocalOneToTwo(MathProgram &p, Ref d) {
  Ref y = p.mau("fvfma",
                {d, p.constantBits(kReciprocalCoefficients[2], kFirst),
                 p.constantBits(kReciprocalCoefficients[1], kSecond)},
                kFirst);
  y = p.mau("fvfma",
            {y, d, p.constantBits(kReciprocalCoefficients[0], kSecond)},
            kFirst);
  Ref one = p.constant(1.0f, kSecond);
  for (int i = 0; i < 2; ++i) {
    Ref e = p.mau("fvfma", {-d, y, one}, kSecond);
    y = p.mau("fvfma", {y, e, y}, kFirst);
  }
  return y;
}

MathProgram expProgram() {
  MathProgram p;
  Ref x = p.input();
  // Below -87.5 the result is under the smallest normal, above 88.75 it is
  // over the largest: clamped there, k stays in [-126, 128] and the
  // exponent arithmetic gives 0 and infinity (M2).
  Ref xa = p.alu("fmax", {x, p.constant(-87.5f, kFirst)}, kSecond);
  Ref xc = p.alu("fmin", {xa, p.constant(88.75f, kFirst)}, kSecond);
  Reduced red = reduceForExp(p, xc, false);
  Ref poly = horner(p, red.r, kExpCoefficients);
  // 2^k by adding k to the exponent field; an exponent that leaves the
  // range is turned into 0 or infinity by the normalising pass.
  Ref scaled = p.alu("iadd", {poly, red.kShifted}, kSecond);
  p.setResult(p.mau("fvpassa", {scaled}, kDest));
  return p;
}

MathProgram logProgram() {
  MathProgram p;
  Ref x = p.input();
  // No NaN on the device: a negative input reads as zero (M2).
  Ref xc = p.alu("fmax", {p.constantBits(0, kFirst), x}, kSecond);
  Ref xs = p.alu("fmax", {xc, p.constantBits(kSmallest, kFirst)}, kSecond);
  xs = p.alu("fmin", {xs, p.constantBits(kLargest, kFirst)}, kSecond);
  // x = 2^e m with m in [sqrt(1/2), sqrt(2)).
  Ref ix = p.alu("isub", {xs, p.constantBits(0x3f3504f3, kFirst)}, kFirst);
  Ref shift = p.constantBits(23, kSecond);
  Ref e = p.alu("ilsr", {ix, shift}, kFirst);
  Ref eShifted = p.alu("ilsl", {e, shift}, kFirst);
  Ref m = p.alu("isub", {xs, eShifted}, kDest);
  Ref eMagic = p.alu("iadd", {e, p.constantBits(0x4b400000, kSecond)}, kSecond);
  Ref ef =
      p.mau("fvadd", {eMagic, -p.constant(kRoundingMagic, Home::T)}, kFirst);
  Ref f = p.mau("fvadd", {m, -p.constant(1.0f, kSecond)}, kDest);
  // f + f (f Q(f)): the last rounding is of a sum whose largest term, f,
  // is exact.
  Ref poly = horner(p, f, kLogCoefficients);
  Ref fq = p.mau("fvmul", {poly, f}, kSecond);
  Ref logM = p.mau("fvfma", {fq, f, f}, kDest);
  Ref y =
      p.mau("fvfma", {ef, p.constant(float(M_LN2), kSecond), logM}, kSecond);
  // Infinity gives +infinity: max with (xc == inf ? +inf : -inf).
  Ref infinity2 = p.constantBits(kInfinity, kSecond);
  Ref sign2 = p.constantBits(kSignBit, kSecond);
  Ref s = p.alu("isub", {xc, p.constantBits(kInfinity, kFirst)}, kFirst);
  s = p.alu("iand", {s, sign2}, kFirst);
  s = p.alu("ior", {s, infinity2}, kFirst);
  y = p.alu("fmax", {y, s}, kSecond);
  // Zero gives -infinity: min with (xc == 0 ? -inf : +inf).
  Ref z = p.alu("isub", {xc, p.constantBits(1, kFirst)}, kFirst);
  z = p.alu("iand", {z, sign2}, kFirst);
  z = p.alu("ior", {z, infinity2}, kFirst);
  p.setResult(p.alu("fmin", {y, z}, kDest));
  return p;
}

/// 1 / d into the second block (for Reciprocal and Divide).
Ref reciprocalGeneral(MathProgram &p, Ref d) {
  Ref ad = p.alu("iand", {d, p.constantBits(kAbsMask, kFirst)}, kSecond);
  Ref sign = p.alu("ixor", {d, ad}, kFirst);
  // |d| in [smallest, largest], so that the Newton steps see no zero or
  // infinity; zero is put back below, and 1 / |d| under the smallest
  // normal flushes to zero by itself (M4).
  Ref ac = p.alu("fmin", {ad, p.constantBits(kLargest, kFirst)}, kSecond);
  ac = p.alu("fmax", {ac, p.constantBits(kSmallest, kFirst)}, kDest);
  // rsqrt is good to about 5 bits (manual 3.6.9): squared, then three
  // Newton steps, 5 -> 10 -> 20 -> 40 bits.
  Ref a = p.alu("frsqrt", {ac}, kFirst);
  Ref y = p.mau("fvmul", {a, a}, kFirst);
  Ref one = p.constant(1.0f, kSecond);
  for (int i = 0; i < 3; ++i) {
    Ref e = p.mau("fvfma", {-ac, y, one}, kSecond);
    y = p.mau("fvfma", {y, e, y}, kFirst);
  }
  // d == 0: max with (|d| == 0 ? +inf : -0).
  Ref negated = p.alu("isub", {p.constantBits(0, kFirst), ad}, kFirst);
  Ref patch =
      p.alu("frelu", {negated, p.constantBits(kInfinity, kSecond)}, kSecond);
  Ref magnitude = p.alu("fmax", {y, patch}, kSecond);
  return p.alu("ior", {magnitude, sign}, kSecond);
}

MathProgram reciprocalProgram() {
  MathProgram p;
  Ref y = reciprocalGeneral(p, p.input());
  p.setResult(y);
  return p;
}

MathProgram divideProgram() {
  MathProgram p;
  // The denominator first: it may be the destination (in place).
  Ref y = reciprocalGeneral(p, p.input(1));
  p.setResult(p.mau("fvmul", {p.input(0), y}, kDest));
  return p;
}

MathProgram sqrtProgram() {
  MathProgram p;
  Ref x = p.input();
  Ref xc = p.alu("fmax", {p.constantBits(0, kFirst), x}, kSecond);
  Ref xs = p.alu("fmax", {xc, p.constantBits(kSmallest, kFirst)}, kSecond);
  xs = p.alu("fmin", {xs, p.constantBits(kLargest, kFirst)}, kSecond);
  // Goldschmidt from rsqrt: g -> sqrt(x), h -> 1 / (2 sqrt(x)), three
  // steps from 5 bits, then one correction of g.
  Ref y = p.alu("frsqrt", {xs}, kFirst);
  Ref g = p.mau("fvmul", {xs, y}, kDest);
  Ref h = p.mau("fvmul", {y, p.constant(0.5f, kSecond)}, kFirst);
  Ref half = p.constant(0.5f, Home::T);
  for (int i = 0; i < 3; ++i) {
    Ref r = p.mau("fvfma", {-g, h, half}, kSecond);
    g = p.mau("fvfma", {g, r, g}, kDest);
    h = p.mau("fvfma", {h, r, h}, kFirst);
  }
  Ref d = p.mau("fvfma", {-g, g, xs}, kSecond);
  g = p.mau("fvfma", {d, h, g}, kDest);
  // Zero (and negative) inputs give +0: and with (xc > 0 ? ~0 : 0).
  Ref negated = p.alu("isub", {p.constantBits(0, kFirst), xc}, kFirst);
  Ref keep = p.alu("ilsr", {negated, p.constantBits(31, kSecond)}, kFirst);
  Ref finite = p.alu("iand", {g, keep}, kSecond);
  // Infinity gives infinity: max with (xc == inf ? +inf : -0).
  Ref s = p.alu("isub", {xc, p.constantBits(kInfinity, kFirst)}, kFirst);
  Ref patch = p.alu("frelu", {s, p.constantBits(kInfinity, kSecond)}, kFirst);
  p.setResult(p.alu("fmax", {finite, patch}, kDest));
  return p;
}

MathProgram tanhProgram() {
  MathProgram p;
  Ref x = p.input();
  Ref sign = p.alu("iand", {x, p.constantBits(kSignBit, kFirst)}, kSecond);
  Ref ax = p.alu("iand", {x, p.constantBits(kAbsMask, kFirst)}, kSecond);
  // tanh(9.5) is 1 in single; clamping keeps e^-2|x| normal.
  ax = p.alu("fmin", {ax, p.constant(9.5f, kFirst)}, kSecond);
  // 2|x| by incrementing the exponent (exact; zero stays zero).
  Ref twice = p.alu("filrelud", {p.constant(-1.0f, kFirst), ax}, kSecond);
  // t = expm1(-2|x|) = 2^k expm1(r) + (2^k - 1), expm1(r) = r + r^2 q(r).
  Reduced red = reduceForExp(p, twice, true);
  Ref r2 = p.mau("fvmul", {red.r, red.r}, kSecond);
  Ref q = horner(p, red.r, kExpm1Coefficients);
  Ref em1 = p.mau("fvfma", {r2, q, red.r}, kDest);
  Ref scale =
      p.alu("iadd", {red.kShifted, p.constantBits(0x3f800000, kFirst)}, kFirst);
  Ref scaleMinusOne =
      p.mau("fvadd", {scale, -p.constant(1.0f, kSecond)}, kSecond);
  Ref t = p.mau("fvfma", {scale, em1, scaleMinusOne}, kSecond);
  // tanh|x| = -t / (t + 2), t + 2 in [1, 2].
  Ref d = p.mau("fvadd", {t, p.constant(2.0f, kFirst)}, kDest);
  Ref rd = reciprocalOneToTwo(p, d);
  Ref magnitude = p.mau("fvmul", {-t, rd}, kFirst);
  p.setResult(p.alu("ior", {magnitude, sign}, kDest));
  return p;
}

MathProgram sigmoidProgram() {
  MathProgram p;
  Ref x = p.input();
  Ref negative = p.alu("ilsr", {x, p.constantBits(31, kSecond)}, kFirst);
  Ref ax = p.alu("iand", {x, p.constantBits(kAbsMask, kFirst)}, kSecond);
  // e^-87.5 is under the smallest normal: the result is exact there on.
  ax = p.alu("fmin", {ax, p.constant(87.5f, kFirst)}, kSecond);
  // z = e^-|x| in (0, 1] (a zero-exponent pattern for the smallest, which
  // every MAU operation reads as zero).
  Reduced red = reduceForExp(p, ax, true);
  Ref poly = horner(p, red.r, kExpCoefficients);
  Ref z = p.alu("iadd", {poly, red.kShifted}, kSecond);
  // s = 1 / (1 + z); sigmoid(x) = s for x >= 0, z s for x < 0.
  Ref d = p.mau("fvadd", {z, p.constant(1.0f, kFirst)}, kDest);
  Ref s = reciprocalOneToTwo(p, d);
  Ref zs = p.mau("fvmul", {z, s}, kDest);
  Ref diff = p.alu("ixor", {s, zs}, kSecond);
  diff = p.alu("iand", {diff, negative}, kSecond);
  p.setResult(p.alu("ixor", {s, diff}, kDest));
  return p;
}

//===----------------------------------------------------------------------===//
// The functions in double
//===----------------------------------------------------------------------===//

MathProgram doubleFunctionProgram(MathFunction function) {
  MathProgram p(DeviceType::Double);
  (void)function;
  p.setResult(p.mau("dvpassa", {p.input()}, kDest));
  return p;
}

} // namespace

MathProgram codegen::mathFunctionProgram(MathFunction function,
                                         DeviceType type) {
  if (type == DeviceType::Double)
    return doubleFunctionProgram(function);
  switch (function) {
  case MathFunction::Exp:
    return expProgram();
  case MathFunction::Log:
    return logProgram();
  case MathFunction::Reciprocal:
    return reciprocalProgram();
  case MathFunction::Sqrt:
    return sqrtProgram();
  case MathFunction::Tanh:
    return tanhProgram();
  case MathFunction::Sigmoid:
    return sigmoidProgram();
  case MathFunction::Divide:
    return divideProgram();
  }
  return expProgram();
}

const char *codegen::mathFunctionName(MathFunction function) {
  switch (function) {
  case MathFunction::Exp:
    return "exp";
  case MathFunction::Log:
    return "log";
  case MathFunction::Reciprocal:
    return "reciprocal";
  case MathFunction::Sqrt:
    return "sqrt";
  case MathFunction::Tanh:
    return "tanh";
  case MathFunction::Sigmoid:
    return "sigmoid";
  case MathFunction::Divide:
    return "divide";
  }
  return "?";
}

unsigned codegen::mathFunctionInputs(MathFunction function) {
  return function == MathFunction::Divide ? 2 : 1;
}

int64_t codegen::mathScratchLongWords(MathFunction function,
                                      DeviceType type) {
  return mathFunctionProgram(function, type).scratchLongWords(kMaxWindow);
}

int64_t codegen::mathScratchMinimum(MathFunction function, DeviceType type) {
  return mathFunctionProgram(function, type).scratchLongWords(1);
}

bool codegen::emitMathFunction(VsmWriter &out, MathFunction function,
                               const std::vector<PeBlock> &sources,
                               const PeBlock &destination,
                               const MathScratch &scratch, std::string &error,
                               DeviceType type) {
  if (sources.size() != mathFunctionInputs(function)) {
    error = std::string(mathFunctionName(function)) + " reads " +
            std::to_string(mathFunctionInputs(function)) + " sources, given " +
            std::to_string(sources.size());
    return false;
  }
  out.comment(std::string(mathFunctionName(function)) + " over " +
              std::to_string(destination.longWords) + " long words of " +
              std::string(deviceTypeName(type)));
  return mathFunctionProgram(function, type)
      .emit(out, sources, destination, scratch, error);
}
