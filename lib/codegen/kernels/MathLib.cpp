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

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
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

unsigned VectorFormat::mantissaBits() const {
  return Type == DeviceType::Half     ? emu::Half::ManBits
         : Type == DeviceType::Double ? emu::Double::ManBits
                                      : emu::Single::ManBits;
}

int VectorFormat::exponentBias() const {
  return Type == DeviceType::Half     ? emu::Half::Bias
         : Type == DeviceType::Double ? emu::Double::Bias
                                      : emu::Single::Bias;
}

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

ClampBounds codegen::emitClampBounds(VsmWriter &out,
                                     const VectorFormat &format,
                                     const reference::FusedActivation &bounds,
                                     PeMemory memory, int64_t loLongWord,
                                     int64_t hiLongWord,
                                     int64_t zeroLongWord) {
  // The float limits are Clip's absent bounds (and +infinity Relu's upper
  // one): they clamp nothing in any format.
  constexpr float kLargest = std::numeric_limits<float>::max();
  ClampBounds operands;
  auto place = [&](float value, int64_t longWord) {
    if (value == 0.0f && zeroLongWord >= 0)
      longWord = zeroLongWord;
    else
      emitLongWordConstant(out, memory, longWord, format.splat(value));
    return peOperand(memory, Width::Long, 2 * longWord, 0);
  };
  if (bounds.lo > -kLargest)
    operands.lo = place(bounds.lo, loLongWord);
  if (bounds.hi < kLargest)
    operands.hi = place(bounds.hi, hiLongWord);
  return operands;
}

void codegen::emitClamp(VsmWriter &out, const VectorFormat &format,
                        const ClampBounds &bounds,
                        const std::vector<std::string> &values) {
  auto pass = [&](const char *operation, const std::string &bound) {
    for (const std::string &value : values)
      out.step({format.alu(operation) + " " + value + " " + bound + " " +
                value});
  };
  if (!bounds.lo.empty())
    pass("max", bounds.lo);
  if (!bounds.lo.empty() && !bounds.hi.empty())
    out.nop(); // the ALU's latency: min reads what max wrote
  if (!bounds.hi.empty())
    pass("min", bounds.hi);
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
  return constantLongWord(Format.longWord([bits](unsigned) { return bits; }),
                          home);
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
//
// One program per function for both formats, parameterised by the
// program's VectorFormat: the lane constants, the opcodes, the clamps, the
// polynomials and the Newton steps come from the format. Where a double
// constant cannot live in T (imm writes T with one word repeated) the
// value goes to another home, and the homes around it move so that no
// expression reads one memory twice at different words (docs/codegen.md
// M1, M8).

namespace {

constexpr Home kFirst = Home::First;
constexpr Home kSecond = Home::Second;
constexpr Home kDest = Home::Destination;

bool isWideFormat(const VectorFormat &f) {
  return f.type() == DeviceType::Double;
}
bool isWide(const MathProgram &p) { return isWideFormat(p.format()); }

/// Singles' bit patterns as values (coefficients rounded to single).
std::vector<double> singles(std::initializer_list<uint32_t> bits) {
  std::vector<double> values;
  for (uint32_t b : bits) {
    float value;
    std::memcpy(&value, &b, sizeof value);
    values.push_back(value);
  }
  return values;
}

/// 1.5 * 2^m (m mantissa bits): adding it rounds a value to an integer
/// held in the low mantissa bits.
double roundingMagic(const VectorFormat &f) {
  return 1.5 * std::ldexp(1.0, int(f.mantissaBits()));
}

/// ln 2 split so that y - k ln2_hi is exact for the k of a reduction:
/// single, hi rounded to single (k of 8 bits: the MAU's product of k and
/// hi is exact); double, hi rounded to double (y - k hi is a multiple of
/// 2^-53 under 1/2 in magnitude).
double ln2High(const VectorFormat &f) {
  return f.type() == DeviceType::Double ? 0x1.62e42fefa39efp-1
                                        : double(float(M_LN2));
}
double ln2Low(const VectorFormat &f) {
  return f.type() == DeviceType::Double
             ? 0x1.abc9e3b39803fp-56
             : double(float(M_LN2 - double(float(M_LN2))));
}

// Minimax coefficients (Remez on the relative error; docs/codegen.md M3,
// M8), lowest degree first, rounded to the format.
/// e^r on [-ln2/2, ln2/2]: single degree 6; double 1 + r + r^2 q(r), q of
/// degree 10 (the expm1 polynomial below), degree 12.
std::vector<double> expCoefficients(const VectorFormat &f) {
  if (f.type() != DeviceType::Double)
    return singles({0x3f800000, 0x3f800000, 0x3efffffd, 0x3e2aaa04, 0x3d2aac50,
                    0x3c093706, 0x3ab55c3f});
  return {1.0,
          1.0,
          0x1.0000000000000p-1,
          0x1.5555555555557p-3,
          0x1.555555555554ep-5,
          0x1.11111111100dep-7,
          0x1.6c16c16c1a0aap-10,
          0x1.a01a01abe80cdp-13,
          0x1.a01a0190560c7p-16,
          0x1.71de022e8bd6dp-19,
          0x1.27e510e5aef56p-22,
          0x1.af4df46f64071p-26,
          0x1.1f19ff46df489p-29};
}
/// (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2]: single degree 4; double degree
/// 10 (relative error 2^-58.4).
std::vector<double> expm1Coefficients(const VectorFormat &f) {
  if (f.type() != DeviceType::Double)
    return singles({0x3f000000, 0x3e2aaa6e, 0x3d2aaadd, 0x3c0905ea, 0x3ab63518});
  std::vector<double> e = expCoefficients(f);
  return std::vector<double>(e.begin() + 2, e.end());
}
/// log(1 + f) / f on [sqrt(1/2) - 1, sqrt(2) - 1], single: degree 9,
/// without its constant term 1: log(1 + f) = f + f^2 Q(f), Q of degree 8.
std::vector<double> logCoefficients() {
  return singles({0xbefffffc, 0x3eaaaaa8, 0xbe800214, 0x3e4cd1f6, 0xbe2a1387,
                  0x3e1138d4, 0xbe079cf4, 0x3e0424d3, 0xbd9c149b});
}
/// Double: (2 atanh(s) - 2 s) / s^3 as a polynomial in z = s^2 on [0,
/// 0.02944] (s = f / (2 + f)), degree 6 (relative error 2^-51).
const std::vector<double> kLogAtanhCoefficients = {
    0x1.5555555555558p-1, 0x1.999999999529cp-2, 0x1.2492492df841cp-2,
    0x1.c71c62dd6bf9ep-3, 0x1.7462b6c84ba0dp-3, 0x1.39fe1f2e7f8aep-3,
    0x1.2b5b3cc208526p-3};
/// 1 / d on [1, 2], the start of the Newton steps: single degree 2 (1 %),
/// double degree 3 (2^-9.2).
std::vector<double> reciprocalCoefficients(const VectorFormat &f) {
  if (f.type() != DeviceType::Double)
    return singles({0x4007c1f0, 0xbfba2e8c, 0x3ea57eb5});
  return {0x1.6a09c2c5e0f16p+1, -0x1.783c56f5cba58p+1, 0x1.54bde47e00e33p+0,
          -0x1.c65285fd56843p-3};
}
/// Double: 1 / d on [1 + sqrt(1/2), 1 + sqrt(2)] (log's 2 + f), degree 2
/// (2^-9.6).
const std::vector<double> kLogDivisorCoefficients = {
    0x1.7a4e363ab197dp+0, -0x1.71e35d67821b5p-1, 0x1.dea87230ad3f4p-4};

/// Newton steps y += y (1 - d y), each doubling the correct bits, from
/// `startBits` to two bits past the format's significand: single 3 from
/// rsqrt's 5 bits (40), 2 from 6.6 (26); double 4 from 5 (80), 3 from 9.2
/// (73).
int newtonSteps(const VectorFormat &f, double startBits) {
  double need = double(f.mantissaBits() + 3);
  int steps = 0;
  for (double bits = startBits; bits < need; bits *= 2)
    ++steps;
  return steps;
}

/// Horner in the reduced argument `r` (kept in the destination's slot, so
/// that the first step can read two constants), into the first block.
Ref horner(MathProgram &p, Ref r, const std::vector<double> &coefficients) {
  const std::string fma = p.format().mau("vfma");
  size_t n = coefficients.size();
  Ref acc = p.mau(fma,
                  {r, p.constant(coefficients[n - 1], kFirst),
                   p.constant(coefficients[n - 2], kSecond)},
                  kFirst);
  for (size_t i = n - 2; i-- > 0;)
    acc = p.mau(fma, {acc, r, p.constant(coefficients[i], kSecond)}, kFirst);
  return acc;
}

/// Reduction for e^y, y = -scaledInput when negateInput: returns r (in the
/// destination's slot) and the integer k << m (in the second block), with
/// y = k ln2 + r. y is in the second block (single) or the destination's
/// slot (double: the rounding constant takes the second block's port,
/// T holding no double).
struct Reduced {
  Ref r;
  Ref kShifted;
};
Reduced reduceForExp(MathProgram &p, Ref y, bool negateInput) {
  const VectorFormat &f = p.format();
  bool wide = isWide(p);
  Ref magic = p.constant(roundingMagic(f), wide ? kSecond : Home::T);
  Ref log2e = p.constant(M_LOG2E, kFirst);
  Ref t = p.mau(f.mau("vfma"), {y, negateInput ? -log2e : log2e, magic},
                kFirst);
  Ref k = p.mau(f.mau("vadd"), {t, -magic}, wide ? kSecond : kDest);
  Ref kShifted = p.alu(f.integer("lsl"),
                       {t, p.constantLane(f.mantissaBits(), kSecond)}, kSecond);
  Ref u = p.mau(f.mau("vfma"),
                {k, -p.constant(ln2High(f), kFirst), negateInput ? -y : y},
                wide ? kDest : kSecond);
  Ref r = p.mau(f.mau("vfma"), {k, -p.constant(ln2Low(f), kFirst), u}, kDest);
  return {r, kShifted};
}

/// 1 / d for d held in the destination's slot, in the interval of
/// `coefficients` (correct to `startBits`): the polynomial, then Newton
/// steps y += y (1 - d y). Result in the first block.
Ref reciprocalNewton(MathProgram &p, Ref d,
                     const std::vector<double> &coefficients,
                     double startBits) {
  const std::string fma = p.format().mau("vfma");
  Ref y = horner(p, d, coefficients);
  Ref one = p.constant(1.0, kSecond);
  for (int i = newtonSteps(p.format(), startBits); i > 0; --i) {
    Ref e = p.mau(fma, {-d, y, one}, kSecond);
    y = p.mau(fma, {y, e, y}, kFirst);
  }
  return y;
}
Ref reciprocalOneToTwo(MathProgram &p, Ref d) {
  bool wide = isWide(p);
  return reciprocalNewton(p, d, reciprocalCoefficients(p.format()),
                          wide ? 9.17 : 6.6);
}

/// Exp's clamps (M2): below the low one the result is under the smallest
/// normal, above the high one over the largest; there k stays in
/// [1 - bias, bias + 1] and the exponent arithmetic gives 0 and infinity.
double expLow(const VectorFormat &f) { return isWideFormat(f) ? -708.5 : -87.5; }
double expHigh(const VectorFormat &f) { return isWideFormat(f) ? 710.0 : 88.75; }

MathProgram expProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  Ref x = p.input();
  Ref xa = p.alu(f.alu("max"), {x, p.constant(expLow(f), kFirst)}, kSecond);
  Ref xc = p.alu(f.alu("min"), {xa, p.constant(expHigh(f), kFirst)},
                 isWide(p) ? kDest : kSecond);
  Reduced red = reduceForExp(p, xc, false);
  Ref poly = horner(p, red.r, expCoefficients(f));
  // 2^k by adding k to the exponent field; an exponent that leaves the
  // range is turned into 0 or infinity by the normalising pass.
  Ref scaled = p.alu(f.integer("add"), {poly, red.kShifted}, kSecond);
  p.setResult(p.mau(f.mau("vpassa"), {scaled}, kDest));
  return p;
}

/// Log's input: no NaN on the device, a negative input reads as zero
/// (M2); xc = max(0, x) in the second block, and xs, xc clamped to the
/// finite normals, in the second block.
struct LogInput {
  Ref xc, xs;
};
LogInput logInput(MathProgram &p) {
  const VectorFormat &f = p.format();
  Ref xc = p.alu(f.alu("max"), {p.constantLane(0, kFirst), p.input()}, kSecond);
  Ref xs = p.alu(f.alu("max"), {xc, p.constantLane(f.smallest(), kFirst)},
                 kSecond);
  xs = p.alu(f.alu("min"), {xs, p.constantLane(f.largest(), kFirst)}, kSecond);
  return {xc, xs};
}

/// Infinity gives +infinity and zero -infinity: y (second block) patched
/// by max with (xc == inf ? +inf : -inf) and min with (xc == 0 ? -inf :
/// +inf), into the destination.
Ref logSpecialValues(MathProgram &p, Ref y, Ref xc) {
  const VectorFormat &f = p.format();
  Ref infinity2 = p.constantLane(f.infinity(), kSecond);
  Ref sign2 = p.constantLane(f.signBit(), kSecond);
  Ref s = p.alu(f.integer("sub"), {xc, p.constantLane(f.infinity(), kFirst)},
                kFirst);
  s = p.alu(f.integer("and"), {s, sign2}, kFirst);
  s = p.alu(f.integer("or"), {s, infinity2}, kFirst);
  y = p.alu(f.alu("max"), {y, s}, kSecond);
  Ref z = p.alu(f.integer("sub"), {xc, p.constantLane(1, kFirst)}, kFirst);
  z = p.alu(f.integer("and"), {z, sign2}, kFirst);
  z = p.alu(f.integer("or"), {z, infinity2}, kFirst);
  return p.alu(f.alu("min"), {y, z}, kDest);
}

MathProgram logProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  bool wide = isWide(p);
  LogInput in = logInput(p);
  // x = 2^e m with m in [sqrt(1/2), sqrt(2)).
  Ref ix = p.alu(f.integer("sub"),
                 {in.xs, p.constant(std::sqrt(0.5), kFirst)}, kFirst);
  Ref shift = p.constantLane(f.mantissaBits(), kSecond);
  Ref e = p.alu(f.integer("lsr"), {ix, shift}, kFirst);
  Ref eShifted = p.alu(f.integer("lsl"), {e, shift}, kFirst);
  Ref m = p.alu(f.integer("sub"), {in.xs, eShifted}, kDest);
  Ref magic = p.constant(roundingMagic(f), wide ? kFirst : Home::T);
  Ref eMagic = p.alu(f.integer("add"), {e, p.constant(roundingMagic(f), kSecond)},
                     kSecond);
  Ref ef = p.mau(f.mau("vadd"), {eMagic, -magic}, kFirst);
  if (!wide) {
    Ref fm = p.mau("fvadd", {m, -p.constant(1.0, kSecond)}, kDest);
    // f + f (f Q(f)): the last rounding is of a sum whose largest term, f,
    // is exact.
    Ref poly = horner(p, fm, logCoefficients());
    Ref fq = p.mau("fvmul", {poly, fm}, kSecond);
    Ref logM = p.mau("fvfma", {fq, fm, fm}, kDest);
    Ref y = p.mau("fvfma", {ef, p.constant(M_LN2, kSecond), logM}, kSecond);
    p.setResult(logSpecialValues(p, y, in.xc));
    return p;
  }
  // Double: log(1 + f) = f - (f^2/2 - s (f^2/2 + R)), s = f / (2 + f),
  // R = z P(z), z = s^2 (2 atanh s = 2 s + s R, and 2 s = f - s f): f
  // is exact and s only enters a term under f^2 / 4, so the division's
  // rounding costs a small fraction of an ulp (M8).
  std::string add = f.mau("vadd"), mul = f.mau("vmul"), fma = f.mau("vfma");
  Ref fm = p.mau(add, {m, -p.constant(1.0, kSecond)}, kSecond);
  Ref d = p.mau(add, {fm, p.constant(2.0, kFirst)}, kDest);
  Ref y = reciprocalNewton(p, d, kLogDivisorCoefficients, 9.59);
  Ref s = p.mau(mul, {fm, y}, kFirst);
  Ref z = p.mau(mul, {s, s}, kDest);
  Ref poly = horner(p, z, kLogAtanhCoefficients);
  Ref r = p.mau(mul, {z, poly}, kSecond);
  // f / 2 by decrementing the exponent (exact; zero stays zero).
  Ref h = p.alu(f.alu("lrelud"), {p.constant(-1.0, kFirst), fm}, kDest);
  Ref hfsq = p.mau(mul, {h, fm}, kFirst);
  Ref t1 = p.mau(add, {hfsq, r}, kDest);
  Ref elo = p.mau(mul, {ef, p.constant(ln2Low(f), kSecond)}, kSecond);
  Ref u = p.mau(fma, {s, t1, elo}, kSecond);
  Ref v = p.mau(add, {hfsq, -u}, kDest);
  Ref w = p.mau(add, {v, -fm}, kDest);
  // e ln2_hi exact (e of 11 bits), one rounding of the sum.
  Ref result =
      p.mau(fma, {ef, p.constant(ln2High(f), kSecond), -w}, kSecond);
  p.setResult(logSpecialValues(p, result, in.xc));
  return p;
}

/// 1 / |d| (second block), d's sign bit (first block) and |d| (second
/// block), for Reciprocal and Divide.
struct Reciprocal {
  Ref magnitude, sign, absolute;
};
Reciprocal reciprocalGeneral(MathProgram &p, Ref d) {
  const VectorFormat &f = p.format();
  Ref ad = p.alu(f.integer("and"), {d, p.constantLane(f.magnitudeMask(), kFirst)},
                 kSecond);
  Ref sign = p.alu(f.integer("xor"), {d, ad}, kFirst);
  // |d| in [smallest, largest], so that the Newton steps see no zero or
  // infinity; zero is put back below, and 1 / |d| under the smallest
  // normal flushes to zero by itself (M4).
  Ref ac = p.alu(f.alu("min"), {ad, p.constantLane(f.largest(), kFirst)},
                 kSecond);
  ac = p.alu(f.alu("max"), {ac, p.constantLane(f.smallest(), kFirst)}, kDest);
  // rsqrt is good to about 5 bits (manual 3.6.9): squared, then Newton
  // steps, 5 -> 10 -> 20 -> 40 (-> 80 in double) bits.
  Ref a = p.alu(f.alu("rsqrt"), {ac}, kFirst);
  Ref y = p.mau(f.mau("vmul"), {a, a}, kFirst);
  Ref one = p.constant(1.0, kSecond);
  for (int i = newtonSteps(f, 5); i > 0; --i) {
    Ref e = p.mau(f.mau("vfma"), {-ac, y, one}, kSecond);
    y = p.mau(f.mau("vfma"), {y, e, y}, kFirst);
  }
  // d == 0: max with (|d| == 0 ? +inf : -0).
  Ref negated = p.alu(f.integer("sub"), {p.constantLane(0, kFirst), ad}, kFirst);
  Ref patch = p.alu(f.alu("relu"),
                    {negated, p.constantLane(f.infinity(), kSecond)}, kSecond);
  return {p.alu(f.alu("max"), {y, patch}, kSecond), sign, ad};
}

MathProgram reciprocalProgram(DeviceType type) {
  MathProgram p(type);
  Reciprocal y = reciprocalGeneral(p, p.input());
  p.setResult(p.alu(p.format().integer("or"), {y.magnitude, y.sign}, kSecond));
  return p;
}

MathProgram divideProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  // The denominator first: it may be the destination (in place).
  Reciprocal y = reciprocalGeneral(p, p.input(1));
  if (!isWide(p)) {
    Ref signed_ = p.alu("ior", {y.magnitude, y.sign}, kSecond);
    p.setResult(p.mau("fvmul", {p.input(0), signed_}, kDest));
    return p;
  }
  // Double: q = |x| / |d| corrected once, q + (|x| - q |d|) / |d|, in
  // magnitudes (an overflowing q stays +inf: the sum of opposite
  // infinities is +inf), then the sign of x xor d (M8).
  Ref x = p.input(0);
  Ref ax = p.alu(f.integer("and"),
                 {x, p.constantLane(f.magnitudeMask(), kFirst)}, kDest);
  Ref sx = p.alu(f.integer("xor"), {x, ax}, kSecond);
  Ref sign = p.alu(f.integer("xor"), {sx, y.sign}, kSecond);
  Ref q = p.mau(f.mau("vmul"), {ax, y.magnitude}, kFirst);
  Ref rem = p.mau(f.mau("vfma"), {-q, y.absolute, ax}, kDest);
  q = p.mau(f.mau("vfma"), {rem, y.magnitude, q}, kFirst);
  p.setResult(p.alu(f.integer("or"), {q, sign}, kDest));
  return p;
}

MathProgram sqrtProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  std::string fma = f.mau("vfma");
  LogInput in = logInput(p);
  // Goldschmidt from rsqrt: g -> sqrt(x), h -> 1 / (2 sqrt(x)), three
  // steps (four in double) from 5 bits, then one correction of g.
  Ref y = p.alu(f.alu("rsqrt"), {in.xs}, kFirst);
  Ref g = p.mau(f.mau("vmul"), {in.xs, y}, kDest);
  Ref h = p.mau(f.mau("vmul"), {y, p.constant(0.5, kSecond)}, kFirst);
  Ref half = p.constant(0.5, isWide(p) ? kSecond : Home::T);
  for (int i = newtonSteps(f, 5); i > 0; --i) {
    Ref r = p.mau(fma, {-g, h, half}, kSecond);
    g = p.mau(fma, {g, r, g}, kDest);
    h = p.mau(fma, {h, r, h}, kFirst);
  }
  Ref d = p.mau(fma, {-g, g, in.xs}, kSecond);
  g = p.mau(fma, {d, h, g}, kDest);
  // Zero (and negative) inputs give +0: and with (xc > 0 ? ~0 : 0).
  Ref negated =
      p.alu(f.integer("sub"), {p.constantLane(0, kFirst), in.xc}, kFirst);
  Ref keep = p.alu(f.integer("lsr"),
                   {negated, p.constantLane(f.bits() - 1, kSecond)}, kFirst);
  Ref finite = p.alu(f.integer("and"), {g, keep}, kSecond);
  // Infinity gives infinity: max with (xc == inf ? +inf : -0).
  Ref s = p.alu(f.integer("sub"), {in.xc, p.constantLane(f.infinity(), kFirst)},
                kFirst);
  Ref patch =
      p.alu(f.alu("relu"), {s, p.constantLane(f.infinity(), kSecond)}, kFirst);
  p.setResult(p.alu(f.alu("max"), {finite, patch}, kDest));
  return p;
}

/// Tanh's and sigmoid's saturation (M2): tanh(x) is 1 in the format from
/// there on, e^-x under the smallest normal.
double tanhSaturation(const VectorFormat &f) {
  return isWideFormat(f) ? 20.0 : 9.5;
}
double sigmoidSaturation(const VectorFormat &f) {
  return isWideFormat(f) ? 708.5 : 87.5;
}

MathProgram tanhProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  Ref x = p.input();
  Ref sign = p.alu(f.integer("and"), {x, p.constantLane(f.signBit(), kFirst)},
                   kSecond);
  Ref ax = p.alu(f.integer("and"), {x, p.constantLane(f.magnitudeMask(), kFirst)},
                 kSecond);
  // Clamping keeps e^-2|x| normal.
  ax = p.alu(f.alu("min"), {ax, p.constant(tanhSaturation(f), kFirst)},
             kSecond);
  // 2|x| by incrementing the exponent (exact; zero stays zero).
  Ref twice = p.alu(f.alu("ilrelud"), {p.constant(-1.0, kFirst), ax},
                    isWide(p) ? kDest : kSecond);
  // t = expm1(-2|x|) = 2^k expm1(r) + (2^k - 1), expm1(r) = r + r^2 q(r).
  Reduced red = reduceForExp(p, twice, true);
  Ref r2 = p.mau(f.mau("vmul"), {red.r, red.r}, kSecond);
  Ref q = horner(p, red.r, expm1Coefficients(f));
  Ref em1 = p.mau(f.mau("vfma"), {r2, q, red.r}, kDest);
  Ref scale = p.alu(f.integer("add"),
                    {red.kShifted, p.constant(1.0, kFirst)}, kFirst);
  Ref scaleMinusOne =
      p.mau(f.mau("vadd"), {scale, -p.constant(1.0, kSecond)}, kSecond);
  Ref t = p.mau(f.mau("vfma"), {scale, em1, scaleMinusOne}, kSecond);
  // tanh|x| = -t / (t + 2), t + 2 in [1, 2].
  Ref d = p.mau(f.mau("vadd"), {t, p.constant(2.0, kFirst)}, kDest);
  Ref rd = reciprocalOneToTwo(p, d);
  Ref magnitude = p.mau(f.mau("vmul"), {-t, rd}, kFirst);
  if (isWide(p)) {
    // Double: the quotient corrected once, q + (-t - q d) / d (1 / d
    // copied to the second block for the last step's ports).
    Ref rd2 = p.alu("lpassa", {rd}, kSecond);
    Ref rem = p.mau(f.mau("vfma"), {-magnitude, d, -t}, kDest);
    magnitude = p.mau(f.mau("vfma"), {rem, rd2, magnitude}, kFirst);
  }
  p.setResult(p.alu(f.integer("or"), {magnitude, sign}, kDest));
  return p;
}

MathProgram sigmoidProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  Ref x = p.input();
  Ref negative = p.alu(f.integer("lsr"),
                       {x, p.constantLane(f.bits() - 1, kSecond)}, kFirst);
  Ref ax = p.alu(f.integer("and"), {x, p.constantLane(f.magnitudeMask(), kFirst)},
                 kSecond);
  // e^-|x| is under the smallest normal past the saturation: the result is
  // exact there on.
  ax = p.alu(f.alu("min"), {ax, p.constant(sigmoidSaturation(f), kFirst)},
             isWide(p) ? kDest : kSecond);
  // z = e^-|x| in (0, 1] (a zero-exponent pattern for the smallest, which
  // every MAU operation reads as zero).
  Reduced red = reduceForExp(p, ax, true);
  Ref poly = horner(p, red.r, expCoefficients(f));
  Ref z = p.alu(f.integer("add"), {poly, red.kShifted}, kSecond);
  // s = 1 / (1 + z); sigmoid(x) = s for x >= 0, z s for x < 0.
  Ref d = p.mau(f.mau("vadd"), {z, p.constant(1.0, kFirst)}, kDest);
  Ref s = reciprocalOneToTwo(p, d);
  Ref zs = p.mau(f.mau("vmul"), {z, s}, kDest);
  Ref diff = p.alu(f.integer("xor"), {s, zs}, kSecond);
  diff = p.alu(f.integer("and"), {diff, negative}, kSecond);
  p.setResult(p.alu(f.integer("xor"), {s, diff}, kDest));
  return p;
}

/// -log(erfc(a)) / a on [0, 4], single: degree 10, relative error 2^-24.2
/// with the coefficients rounded to single (Lawson's minimax on the
/// relative error; M9).
std::vector<double> erfCoefficients() {
  return singles({0x3f906ebb, 0x3f22f97f, 0x3dd27ae2, 0xbc9ca20e, 0xb9893e68,
                  0x3aef9068, 0xba4b348a, 0x3946a1df, 0xb7f3c85d, 0x362e7335,
                  0xb3de714e});
}
/// Where erf(a) is 1 in single (erfc(4) = 1.5e-8, under half an ulp of 1).
constexpr double kErfSaturation = 4.0;

/// erf(x) = sign(x) (-expm1(-v)), v = -log(erfc|x|) = |x| q(|x|): one
/// polynomial over the whole range, and expm1 keeps the relative accuracy
/// near zero, where erf(x) ~ 1.13 x (the relative error of erf is at most
/// that of v plus expm1's: d erf / erf = v e^-v / (1 - e^-v) dv / v).
MathProgram erfProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  Ref x = p.input();
  Ref sign = p.alu(f.integer("and"), {x, p.constantLane(f.signBit(), kFirst)},
                   kSecond);
  Ref ax = p.alu(f.integer("and"),
                 {x, p.constantLane(f.magnitudeMask(), kFirst)}, kSecond);
  ax = p.alu(f.alu("min"), {ax, p.constant(kErfSaturation, kFirst)}, kDest);
  Ref q = horner(p, ax, erfCoefficients());
  Ref v = p.mau(f.mau("vmul"), {q, ax}, isWide(p) ? kDest : kSecond);
  // t = expm1(-v) = 2^k expm1(r) + (2^k - 1), as tanh's.
  Reduced red = reduceForExp(p, v, true);
  Ref r2 = p.mau(f.mau("vmul"), {red.r, red.r}, kSecond);
  Ref em = horner(p, red.r, expm1Coefficients(f));
  Ref em1 = p.mau(f.mau("vfma"), {r2, em, red.r}, kDest);
  Ref scale = p.alu(f.integer("add"), {red.kShifted, p.constant(1.0, kFirst)},
                    kFirst);
  Ref scaleMinusOne =
      p.mau(f.mau("vadd"), {scale, -p.constant(1.0, kSecond)}, kSecond);
  Ref t = p.mau(f.mau("vfma"), {scale, em1, scaleMinusOne}, kSecond);
  // -t >= 0: its magnitude, with x's sign.
  Ref magnitude = p.alu(f.integer("and"),
                        {t, p.constantLane(f.magnitudeMask(), kFirst)}, kFirst);
  p.setResult(p.alu(f.integer("or"), {magnitude, sign}, kDest));
  return p;
}

/// softplus(x) = max(x, 0) + log1p(z), z = e^-|x| in (0, 1]: u = 1 + z
/// rounded, log1p(z) = log(u) + c / u with c = z - (u - 1) exact (u in
/// [1, 2]); |c| is under half an ulp of u, so 1 / u is taken as 1.5 - u / 2
/// (off by 0.09 at most, where c is under 2^-26 of the result; exact at
/// u = 1, where c is all of it). log(u) as log's single path (M3). M12.
MathProgram softplusProgram(DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  Ref x = p.input();
  Ref positive = p.alu(f.alu("max"), {x, p.constantLane(0, kFirst)}, kFirst);
  Ref ax = p.alu(f.integer("and"),
                 {x, p.constantLane(f.magnitudeMask(), kFirst)}, kSecond);
  ax = p.alu(f.alu("min"), {ax, p.constant(sigmoidSaturation(f), kFirst)},
             kSecond);
  Reduced red = reduceForExp(p, ax, true);
  Ref poly = horner(p, red.r, expCoefficients(f));
  Ref z = p.alu(f.integer("add"), {poly, red.kShifted}, kSecond);
  Ref u = p.mau(f.mau("vadd"), {z, p.constant(1.0, kFirst)}, kDest);
  Ref uMinusOne = p.mau(f.mau("vadd"), {u, -p.constant(1.0, kFirst)}, kFirst);
  Ref c = p.mau(f.mau("vadd"), {z, -uMinusOne}, kSecond);
  Ref inverse =
      p.mau(f.mau("vfma"),
            {u, p.constant(-0.5, kFirst), p.constant(1.5, kSecond)}, kFirst);
  Ref correction = p.mau(f.mau("vmul"), {c, inverse}, kFirst);
  // log(u): u = 2^e m, m in [sqrt(1/2), sqrt(2)), e = 0 or 1.
  Ref shift = p.constantLane(f.mantissaBits(), kSecond);
  Ref ix =
      p.alu(f.integer("sub"), {u, p.constant(std::sqrt(0.5), kFirst)}, kFirst);
  Ref e = p.alu(f.integer("lsr"), {ix, shift}, kFirst);
  Ref eShifted = p.alu(f.integer("lsl"), {e, shift}, kFirst);
  Ref m = p.alu(f.integer("sub"), {u, eShifted}, kDest);
  Ref eMagic = p.alu(f.integer("add"),
                     {e, p.constant(roundingMagic(f), kSecond)}, kSecond);
  Ref ef = p.mau(f.mau("vadd"), {eMagic, -p.constant(roundingMagic(f), kFirst)},
                 kFirst);
  Ref fm = p.mau(f.mau("vadd"), {m, -p.constant(1.0, kSecond)}, kDest);
  Ref q = horner(p, fm, logCoefficients());
  Ref fq = p.mau(f.mau("vmul"), {q, fm}, kSecond);
  Ref logM = p.mau(f.mau("vfma"), {fq, fm, fm}, kDest);
  Ref logU =
      p.mau(f.mau("vfma"), {ef, p.constant(M_LN2, kSecond), logM}, kSecond);
  Ref log1p = p.mau(f.mau("vadd"), {logU, correction}, kDest);
  p.setResult(p.mau(f.mau("vadd"), {positive, log1p}, kDest));
  return p;
}

} // namespace

MathProgram codegen::scaledEluProgram(double alpha, double scale,
                                      DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  Ref x = p.input();
  // scale max(x, 0) first: x is read only at the start (in place).
  Ref positive = p.alu(f.alu("max"), {x, p.constantLane(0, kFirst)}, kFirst);
  if (scale != 1)
    positive =
        p.mau(f.mau("vmul"), {positive, p.constant(scale, kSecond)}, kFirst);
  // expm1(min(x, 0)), clamped where e^x is under the smallest normal.
  Ref xn = p.alu(f.alu("min"), {x, p.constantLane(0, kFirst)}, kSecond);
  xn = p.alu(f.alu("max"), {xn, p.constant(expLow(f), kFirst)},
             isWide(p) ? kDest : kSecond);
  Reduced red = reduceForExp(p, xn, false);
  Ref r2 = p.mau(f.mau("vmul"), {red.r, red.r}, kSecond);
  Ref q = horner(p, red.r, expm1Coefficients(f));
  Ref em1 = p.mau(f.mau("vfma"), {r2, q, red.r}, kDest);
  Ref k = p.alu(f.integer("add"), {red.kShifted, p.constant(1.0, kFirst)},
                kFirst);
  Ref kMinusOne = p.mau(f.mau("vadd"), {k, -p.constant(1.0, kSecond)}, kSecond);
  Ref t = p.mau(f.mau("vfma"), {k, em1, kMinusOne}, kSecond);
  Ref negative =
      p.mau(f.mau("vmul"), {t, p.constant(alpha * scale, kFirst)}, kSecond);
  p.setResult(p.mau(f.mau("vadd"), {positive, negative}, kDest));
  return p;
}

MathProgram codegen::mathFunctionProgram(MathFunction function,
                                         DeviceType type) {
  switch (function) {
  case MathFunction::Exp:
    return expProgram(type);
  case MathFunction::Log:
    return logProgram(type);
  case MathFunction::Reciprocal:
    return reciprocalProgram(type);
  case MathFunction::Sqrt:
    return sqrtProgram(type);
  case MathFunction::Tanh:
    return tanhProgram(type);
  case MathFunction::Sigmoid:
    return sigmoidProgram(type);
  case MathFunction::Divide:
    return divideProgram(type);
  case MathFunction::Erf:
    return erfProgram(type);
  case MathFunction::Softplus:
    return softplusProgram(type);
  }
  return expProgram(type);
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
  case MathFunction::Erf:
    return "erf";
  case MathFunction::Softplus:
    return "softplus";
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
