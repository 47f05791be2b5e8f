//===- GeneralProgram.cpp - Element operations in one PE, list-scheduled --===//

#include "GeneralProgram.h"

#include "mncc/emu/Machine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <queue>
#include <set>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

namespace {

/// Words of each PE memory, in PeMemory order.
constexpr std::array<int32_t, kPeMemories> kMemoryWords = {
    int32_t(emu::LmWords), int32_t(emu::LmWords), int32_t(emu::GrfWords),
    int32_t(emu::GrfWords)};

/// Conflict-copy scratch at the top of each memory.
constexpr std::array<int32_t, kPeMemories> kScratchWords = {64, 64, 32, 32};
/// The constant pool: GRF1 below its scratch, four words per constant so
/// that word and long word operations read it alike.
constexpr int32_t kConstantWords = 128;

/// Steps from an operation's step to the first step that may read its
/// result: ALU results land 6 cycles after their step starts, MAU results
/// 10 (docs/target/mncore2.md, H2-H3), and a step reads at its start.
int resultLatency(ElemOpcode opcode) { return isMauOpcode(opcode) ? 3 : 2; }

unsigned memoryIndex(PeMemory memory) { return unsigned(memory); }

bool isLm(PeMemory memory) {
  return memory == PeMemory::LM0 || memory == PeMemory::LM1;
}

const char *mnemonic(ElemOpcode opcode) {
  switch (opcode) {
  case ElemOpcode::Add:
    return "fvadd";
  case ElemOpcode::Mul:
    return "fvmul";
  case ElemOpcode::Fma:
    return "fvfma";
  case ElemOpcode::Pass:
    return "fvpassa";
  case ElemOpcode::Max:
    return "fmax";
  case ElemOpcode::Min:
    return "fmin";
  case ElemOpcode::Relu:
    return "frelu";
  case ElemOpcode::Rsqrt:
    return "frsqrt";
  case ElemOpcode::Copy:
    return "lpassa";
  case ElemOpcode::Zero:
    return "zero";
  case ElemOpcode::Imm:
    return "imm";
  case ElemOpcode::IAdd:
    return "iadd";
  case ElemOpcode::ISub:
    return "isub";
  case ElemOpcode::IMax:
    return "imax";
  case ElemOpcode::IMin:
    return "imin";
  case ElemOpcode::IXor:
    return "ixor";
  case ElemOpcode::ILsl:
    return "ilsl";
  case ElemOpcode::ILNot:
    return "ilnot";
  case ElemOpcode::IAnd:
    return "iand";
  case ElemOpcode::IOr:
    return "ior";
  case ElemOpcode::ILsrU:
    return "uilsr";
  case ElemOpcode::FToI:
    return "fftoi";
  case ElemOpcode::HalfToSingle:
    return "hvpassa";
  case ElemOpcode::SingleToHalf:
    return "fvpassar";
  case ElemOpcode::DAdd:
    return "dvadd";
  case ElemOpcode::DMulU:
    return "dvmulu";
  case ElemOpcode::DFmaU:
    return "dvfmau";
  case ElemOpcode::DFmaD:
    return "dvfmad";
  case ElemOpcode::DPass:
    return "dvpassa";
  case ElemOpcode::DMax:
    return "dmax";
  case ElemOpcode::DMin:
    return "dmin";
  case ElemOpcode::DRelu:
    return "drelu";
  case ElemOpcode::DRsqrt:
    return "drsqrt";
  }
  return "nop";
}

/// One operand across the four cycles of an instruction, in the shortest
/// spelling: `$m8` (one word), `$m8v` / `$m8v4` (a stride) or flat.
std::string operandText(PeMemory memory, Width width,
                        const std::array<int32_t, 4> &words, bool negate) {
  std::string text = negate ? "-" : "";
  int32_t stride = words[1] - words[0];
  bool arithmetic = stride >= 0 && words[2] - words[1] == stride &&
                    words[3] - words[2] == stride;
  if (arithmetic && (stride == 0 || stride % int32_t(widthWords(width)) == 0))
    return text + peOperand(memory, width, words[0], unsigned(stride));
  return text +
         peOperandFlat(memory, width, {words[0], words[1], words[2], words[3]});
}

/// What the issue rules need to know of an instruction: the memories it
/// reads, the one it writes, whether it is an `imm` or touches LM0.
struct IssueKey {
  ElemOpcode opcode;
  Width width;
  uint8_t negate;
  uint32_t immediate;
  PeMemory dst;
  std::array<PeMemory, 3> src;

  bool operator<(const IssueKey &o) const {
    auto tie = [](const IssueKey &k) {
      return std::make_tuple(uint8_t(k.opcode), uint8_t(k.width), k.negate,
                             k.immediate, uint8_t(k.dst), uint8_t(k.src[0]),
                             uint8_t(k.src[1]), uint8_t(k.src[2]));
    };
    return tie(*this) < tie(o);
  }
  unsigned readMask() const {
    unsigned mask = 0;
    for (unsigned k = 0; k < sourceCount(opcode); ++k)
      mask |= 1u << memoryIndex(src[k]);
    return mask;
  }
  bool touchesLm0() const { return dst == PeMemory::LM0 || (readMask() & 1u); }
};

IssueKey keyOf(const ElemOp &op) {
  IssueKey key{op.opcode, op.width, op.negate, op.immediate, op.dst.memory, {}};
  for (unsigned k = 0; k < 3; ++k)
    key.src[k] = k < sourceCount(op.opcode) ? op.src[k].memory : PeMemory::LM0;
  if (op.opcode != ElemOpcode::Imm)
    key.immediate = 0;
  return key;
}

/// Whether two instructions may issue in one step (manual 3.6.4, as
/// docs/codegen.md C8 restates it): no memory read by both (their address
/// streams differ), different destinations, an LM destination not read by
/// the other, and no LM0 access beside an `imm`.
bool compatible(const IssueKey &a, const IssueKey &b) {
  unsigned readsA = a.readMask(), readsB = b.readMask();
  if (readsA & readsB)
    return false;
  if (a.dst == b.dst)
    return false;
  if (isLm(a.dst) && (readsB & (1u << memoryIndex(a.dst))))
    return false;
  if (isLm(b.dst) && (readsA & (1u << memoryIndex(b.dst))))
    return false;
  if (a.opcode == ElemOpcode::Imm && b.touchesLm0())
    return false;
  if (b.opcode == ElemOpcode::Imm && a.touchesLm0())
    return false;
  return true;
}

} // namespace

bool general::isMauOpcode(ElemOpcode opcode) {
  switch (opcode) {
  case ElemOpcode::Add:
  case ElemOpcode::Mul:
  case ElemOpcode::Fma:
  case ElemOpcode::Pass:
  case ElemOpcode::HalfToSingle:
  case ElemOpcode::SingleToHalf:
  case ElemOpcode::DAdd:
  case ElemOpcode::DMulU:
  case ElemOpcode::DFmaU:
  case ElemOpcode::DFmaD:
  case ElemOpcode::DPass:
    return true;
  default:
    return false;
  }
}

unsigned general::sourceCount(ElemOpcode opcode) {
  switch (opcode) {
  case ElemOpcode::Fma:
  case ElemOpcode::DFmaU:
  case ElemOpcode::DFmaD:
    return 3;
  case ElemOpcode::DAdd:
  case ElemOpcode::DMulU:
  case ElemOpcode::DMax:
  case ElemOpcode::DMin:
  case ElemOpcode::DRelu:
  case ElemOpcode::Add:
  case ElemOpcode::Mul:
  case ElemOpcode::Max:
  case ElemOpcode::Min:
  case ElemOpcode::Relu:
  case ElemOpcode::IAdd:
  case ElemOpcode::ISub:
  case ElemOpcode::IMax:
  case ElemOpcode::IMin:
  case ElemOpcode::IXor:
  case ElemOpcode::ILsl:
  case ElemOpcode::IAnd:
  case ElemOpcode::IOr:
  case ElemOpcode::ILsrU:
    return 2;
  case ElemOpcode::Pass:
  case ElemOpcode::DPass:
  case ElemOpcode::Rsqrt:
  case ElemOpcode::DRsqrt:
  case ElemOpcode::Copy:
  case ElemOpcode::FToI:
  case ElemOpcode::ILNot:
  case ElemOpcode::HalfToSingle:
  case ElemOpcode::SingleToHalf:
    return 1;
  case ElemOpcode::Zero:
  case ElemOpcode::Imm:
    return 0;
  }
  return 0;
}

Width general::sourceWidth(const ElemOp &op) {
  switch (op.opcode) {
  case ElemOpcode::HalfToSingle:
  case ElemOpcode::SingleToHalf:
    return Width::Long;
  default:
    return op.width;
  }
}

Width general::destinationWidth(const ElemOp &op) {
  switch (op.opcode) {
  case ElemOpcode::HalfToSingle:
    return Width::DoubleLong;
  case ElemOpcode::SingleToHalf:
    return Width::Word;
  default:
    return op.width;
  }
}

std::string general::instructionText(const ElemOp *const *ops) {
  const ElemOp &first = *ops[0];
  std::string text = mnemonic(first.opcode);
  if (first.opcode == ElemOpcode::Imm) {
    // i"" takes a signed word, ui"" an unsigned one (the parser checks the
    // range): the sign bit's patterns go unsigned.
    char buffer[24];
    std::snprintf(buffer, sizeof buffer,
                  first.immediate >> 31 ? " ui\"0x%08x\"" : " i\"0x%08x\"",
                  first.immediate);
    text += buffer;
  }
  for (unsigned k = 0; k < sourceCount(first.opcode); ++k) {
    std::array<int32_t, 4> words;
    for (unsigned c = 0; c < 4; ++c)
      words[c] = ops[c]->src[k].word;
    text += " " + operandText(first.src[k].memory, sourceWidth(first), words,
                              first.negate & (1u << k));
  }
  std::array<int32_t, 4> words;
  for (unsigned c = 0; c < 4; ++c)
    words[c] = ops[c]->dst.word;
  text += " " +
          operandText(first.dst.memory, destinationWidth(first), words, false);
  return text;
}

void general::recordCopies(ElemProgram &program,
                           const std::vector<std::pair<Slot, Slot>> &dstSrc) {
  std::vector<std::pair<Slot, Slot>> pairs = dstSrc;
  std::stable_sort(
      pairs.begin(), pairs.end(), [](const auto &a, const auto &b) {
        return std::make_pair(unsigned(a.first.memory), a.first.word) <
               std::make_pair(unsigned(b.first.memory), b.first.word);
      });
  size_t i = 0;
  while (i < pairs.size()) {
    // The run of words that continue both sides by one.
    size_t end = i + 1;
    while (end < pairs.size() &&
           pairs[end].first.memory == pairs[i].first.memory &&
           pairs[end].second.memory == pairs[i].second.memory &&
           pairs[end].first.word == pairs[end - 1].first.word + 1 &&
           pairs[end].second.word == pairs[end - 1].second.word + 1)
      ++end;
    while (i < end) {
      Slot dst = pairs[i].first, src = pairs[i].second;
      size_t left = end - i;
      Width width = Width::Word;
      if (dst.word % 4 == 0 && src.word % 4 == 0 && left >= 4)
        width = Width::DoubleLong;
      else if (dst.word % 2 == 0 && src.word % 2 == 0 && left >= 2)
        width = Width::Long;
      program.copy(dst, src, width);
      i += widthWords(width);
    }
  }
}

ElemProgram::ElemProgram() {
  for (unsigned m = 0; m < kPeMemories; ++m) {
    Limit[m] = kMemoryWords[m] - kScratchWords[m];
    ScratchBase[m] = ScratchNext[m] = Limit[m];
    LastWriter[m].assign(size_t(kMemoryWords[m]), -1);
    Readers[m].resize(size_t(kMemoryWords[m]));
  }
  unsigned grf1 = memoryIndex(PeMemory::GRF1);
  Limit[grf1] -= kConstantWords;
  ConstantBase = ConstantNext = Limit[grf1];
}

int32_t ElemProgram::freeWords(PeMemory memory) const {
  unsigned m = memoryIndex(memory);
  return Limit[m] - Next[m];
}

std::optional<Slot> ElemProgram::allocate(PeMemory memory, int32_t words,
                                          int32_t align) {
  unsigned m = memoryIndex(memory);
  int32_t start = (Next[m] + align - 1) / align * align;
  if (words < 0 || start + words > Limit[m])
    return std::nullopt;
  Next[m] = start + words;
  return Slot{memory, start};
}

std::optional<Slot>
ElemProgram::allocateIn(std::initializer_list<PeMemory> preference,
                        int32_t words, int32_t align) {
  for (PeMemory memory : preference)
    if (std::optional<Slot> slot = allocate(memory, words, align))
      return slot;
  return std::nullopt;
}

Slot ElemProgram::scratch(PeMemory memory, Width width) {
  unsigned m = memoryIndex(memory);
  int32_t words = int32_t(widthWords(width));
  int32_t start = (ScratchNext[m] + words - 1) / words * words;
  if (start + words > kMemoryWords[m])
    start = ScratchBase[m];
  ScratchNext[m] = start + words;
  return Slot{memory, start};
}

void ElemProgram::addEdge(int from, int to, int latency) {
  std::vector<Edge> &succs = Succs[size_t(from)];
  // Every edge into `to` is added while `to` is recorded, so a repeat from
  // the same producer is the producer's last edge.
  if (!succs.empty() && succs.back().to == to) {
    succs.back().latency = std::max(succs.back().latency, latency);
    return;
  }
  succs.push_back({to, latency});
  ++PredCount[size_t(to)];
}

void ElemProgram::record(ElemOp op) {
  if (!Recording)
    return;
  if (Double && recordAsDouble(op))
    return;
  recordOne(op);
}

bool ElemProgram::recordAsDouble(const ElemOp &op) {
  ElemOp d = op;
  switch (op.opcode) {
  case ElemOpcode::Add:
    d.opcode = ElemOpcode::DAdd;
    break;
  case ElemOpcode::Pass:
    d.opcode = ElemOpcode::DPass;
    break;
  case ElemOpcode::Max:
    d.opcode = ElemOpcode::DMax;
    break;
  case ElemOpcode::Min:
    d.opcode = ElemOpcode::DMin;
    break;
  case ElemOpcode::Relu:
    d.opcode = ElemOpcode::DRelu;
    break;
  case ElemOpcode::Rsqrt:
    d.opcode = ElemOpcode::DRsqrt;
    break;
  case ElemOpcode::Copy:
  case ElemOpcode::Zero:
  case ElemOpcode::Mul:
  case ElemOpcode::Fma:
    break;
  default:
    return false;
  }
  // A double long word operation is two doubles: the MAU's dv* and the
  // ALU's d* take long words.
  if (op.width == Width::DoubleLong && op.opcode != ElemOpcode::Copy &&
      op.opcode != ElemOpcode::Zero) {
    ElemOp low = op, high = op;
    low.width = high.width = Width::Long;
    high.dst.word += 2;
    for (unsigned k = 0; k < sourceCount(op.opcode); ++k)
      high.src[k].word += 2;
    record(low);
    record(high);
    return true;
  }
  if (op.width == Width::Word)
    d.width = Width::Long;
  if (op.opcode != ElemOpcode::Mul && op.opcode != ElemOpcode::Fma) {
    recordOne(d);
    return true;
  }
  // x * y (+ z): the "u" pair's product into a scratch long word of a
  // memory no operand uses, then the "d" pair's with it as the addend, so
  // that the destination is written once, after every read.
  PeMemory free = PeMemory::GRF1;
  for (PeMemory memory :
       {PeMemory::GRF1, PeMemory::GRF0, PeMemory::LM0, PeMemory::LM1}) {
    bool used = memory == op.dst.memory;
    for (unsigned k = 0; k < sourceCount(op.opcode); ++k)
      used |= op.src[k].memory == memory;
    if (!used) {
      free = memory;
      break;
    }
  }
  Slot partial = scratch(free, Width::Long);
  ElemOp first = d;
  first.opcode =
      op.opcode == ElemOpcode::Mul ? ElemOpcode::DMulU : ElemOpcode::DFmaU;
  first.dst = partial;
  recordOne(first);
  ElemOp second = d;
  second.opcode = ElemOpcode::DFmaD;
  second.src[2] = partial;
  second.negate = uint8_t(op.negate & 3u);
  recordOne(second);
  return true;
}

void ElemProgram::recordOne(ElemOp op) {
  unsigned sources = sourceCount(op.opcode);
  for (unsigned p = 0; p < sources; ++p) {
    bool conflict = false;
    for (unsigned q = 0; q < p; ++q)
      conflict |= op.src[q].memory == op.src[p].memory &&
                  op.src[q].word != op.src[p].word;
    conflict |= isLm(op.dst.memory) && op.src[p].memory == op.dst.memory &&
                op.src[p].word != op.dst.word;
    if (!conflict)
      continue;
    // Copy the source to a memory no other operand of the operation uses.
    for (PeMemory memory :
         {PeMemory::GRF0, PeMemory::GRF1, PeMemory::LM1, PeMemory::LM0}) {
      bool used = isLm(memory) && memory == op.dst.memory;
      for (unsigned q = 0; q < sources; ++q)
        used |= q != p && op.src[q].memory == memory;
      if (used)
        continue;
      Slot copySlot = scratch(memory, sourceWidth(op));
      ElemOp copyOp;
      copyOp.opcode = ElemOpcode::Copy;
      copyOp.width = sourceWidth(op);
      copyOp.dst = copySlot;
      copyOp.src[0] = op.src[p];
      recordOne(copyOp);
      op.src[p] = copySlot;
      ++Stats.conflictCopies;
      break;
    }
  }

  int index = int(Ops.size());
  Ops.push_back(op);
  Succs.emplace_back();
  PredCount.push_back(0);
  int32_t words = int32_t(widthWords(sourceWidth(op)));
  for (unsigned k = 0; k < sources; ++k) {
    unsigned m = memoryIndex(op.src[k].memory);
    for (int32_t w = op.src[k].word; w < op.src[k].word + words; ++w) {
      int32_t wrapped = w % kMemoryWords[m];
      int writer = LastWriter[m][size_t(wrapped)];
      if (writer >= 0)
        addEdge(writer, index, resultLatency(Ops[size_t(writer)].opcode));
      std::vector<int> &readers = Readers[m][size_t(wrapped)];
      if (readers.empty() && writer < 0)
        TouchedWords[m].push_back(wrapped);
      if (readers.empty() || readers.back() != index)
        readers.push_back(index);
    }
  }
  unsigned m = memoryIndex(op.dst.memory);
  words = int32_t(widthWords(destinationWidth(op)));
  for (int32_t w = op.dst.word; w < op.dst.word + words; ++w) {
    int32_t wrapped = w % kMemoryWords[m];
    int &writer = LastWriter[m][size_t(wrapped)];
    std::vector<int> &readers = Readers[m][size_t(wrapped)];
    if (writer < 0 && readers.empty())
      TouchedWords[m].push_back(wrapped);
    if (writer >= 0) {
      // The new value must land after the old one: an ALU write after a
      // MAU write to the same word waits for the MAU's longer latency.
      int latency =
          isMauOpcode(Ops[size_t(writer)].opcode) && !isMauOpcode(op.opcode)
              ? 2
              : 1;
      addEdge(writer, index, latency);
    }
    // Reads happen at the start of their step and a write lands at least
    // six cycles after its own: a later step never disturbs an earlier
    // reader.
    for (int reader : readers)
      if (reader != index)
        addEdge(reader, index, 1);
    readers.clear();
    writer = index;
  }
}

void ElemProgram::add(Slot dst, Slot x, Slot y, bool negateY, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Add;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = y;
  op.negate = negateY ? 2 : 0;
  record(op);
}

void ElemProgram::mul(Slot dst, Slot x, Slot y, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Mul;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = y;
  record(op);
}

void ElemProgram::fma(Slot dst, Slot x, Slot y, Slot z, uint8_t negate,
                      Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Fma;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = y;
  op.src[2] = z;
  op.negate = negate;
  record(op);
}

void ElemProgram::max(Slot dst, Slot x, Slot y, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Max;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = y;
  record(op);
}

void ElemProgram::min(Slot dst, Slot x, Slot y, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Min;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = y;
  record(op);
}

void ElemProgram::relu(Slot dst, Slot x, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Relu;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = x;
  record(op);
}

void ElemProgram::rsqrt(Slot dst, Slot x) {
  ElemOp op;
  op.opcode = ElemOpcode::Rsqrt;
  op.dst = dst;
  op.src[0] = x;
  record(op);
}

void ElemProgram::copy(Slot dst, Slot x, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Copy;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  record(op);
}

void ElemProgram::integer(ElemOpcode opcode, Slot dst, Slot x, Slot y,
                          Width width) {
  ElemOp op;
  op.opcode = opcode;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  op.src[1] = y;
  record(op);
}

void ElemProgram::toInteger(Slot dst, Slot x, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::FToI;
  op.width = width;
  op.dst = dst;
  op.src[0] = x;
  record(op);
}

void ElemProgram::halfToSingle(Slot dst, Slot x) {
  ElemOp op;
  op.opcode = ElemOpcode::HalfToSingle;
  op.width = Width::Long;
  op.dst = dst;
  op.src[0] = x;
  record(op);
}

void ElemProgram::singleToHalf(Slot dst, Slot x) {
  ElemOp op;
  op.opcode = ElemOpcode::SingleToHalf;
  op.width = Width::Long;
  op.dst = dst;
  op.src[0] = x;
  record(op);
}

void ElemProgram::zero(Slot dst, Width width) {
  ElemOp op;
  op.opcode = ElemOpcode::Zero;
  op.width = width;
  op.dst = dst;
  record(op);
}

void ElemProgram::zeroRange(Slot first, int32_t count) {
  int32_t word = first.word, end = first.word + count;
  while (word < end) {
    Width width = word % 4 == 0 && end - word >= 4   ? Width::DoubleLong
                  : word % 2 == 0 && end - word >= 2 ? Width::Long
                                                     : Width::Word;
    zero({first.memory, word}, width);
    word += int32_t(widthWords(width));
  }
}

Slot ElemProgram::poolEntry(std::pair<bool, uint64_t> key, bool &fresh) {
  auto found = Constants.find(key);
  fresh = found == Constants.end();
  if (!fresh)
    return found->second;
  Slot slot{PeMemory::GRF1, ConstantNext};
  // A full pool wraps around: the value it replaces is only needed by
  // operations recorded before, which the write waits for.
  ConstantNext += 4;
  if (ConstantNext > ConstantBase + kConstantWords)
    ConstantNext = ConstantBase + 4, slot.word = ConstantBase;
  for (auto it = Constants.begin(); it != Constants.end();)
    it = it->second == slot ? Constants.erase(it) : std::next(it);
  Constants[key] = slot;
  return slot;
}

Slot ElemProgram::constant(double value) {
  if (!Double) {
    float single = float(value);
    uint32_t bits;
    std::memcpy(&bits, &single, sizeof bits);
    return constantBits(bits);
  }
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bool fresh;
  Slot slot = poolEntry({true, bits}, fresh);
  if (!fresh)
    return slot;
  // The high word first (the long word's most significant), one imm for
  // both when they are equal.
  uint32_t high = uint32_t(bits >> 32), low = uint32_t(bits);
  ElemOp op;
  op.opcode = ElemOpcode::Imm;
  op.dst = slot;
  op.immediate = high;
  op.width = high == low ? Width::Long : Width::Word;
  recordOne(op);
  if (high != low) {
    op.dst = slot.offset(1);
    op.immediate = low;
    recordOne(op);
  }
  return slot;
}

Slot ElemProgram::constantBits(uint32_t bits) {
  bool fresh;
  Slot slot = poolEntry({false, bits}, fresh);
  if (!fresh)
    return slot;
  ElemOp op;
  op.opcode = ElemOpcode::Imm;
  op.width = Width::DoubleLong;
  op.dst = slot;
  op.immediate = bits;
  recordOne(op);
  return slot;
}

void ElemProgram::flush(VsmWriter &out) {
  size_t count = Ops.size();
  if (count == 0)
    return;
  // Critical path to the end of the block, in steps.
  std::vector<int> priority(count, 0);
  for (size_t i = count; i-- > 0;) {
    int best = resultLatency(Ops[i].opcode);
    for (const Edge &edge : Succs[i])
      best = std::max(best, edge.latency + priority[size_t(edge.to)]);
    priority[i] = best;
  }

  std::map<IssueKey, int> keyIds;
  std::vector<IssueKey> keys;
  std::vector<int> keyOfOp(count);
  for (size_t i = 0; i < count; ++i) {
    IssueKey key = keyOf(Ops[i]);
    auto [it, inserted] = keyIds.emplace(key, int(keys.size()));
    if (inserted)
      keys.push_back(key);
    keyOfOp[i] = it->second;
  }

  using Ranked = std::pair<int, int>; // (-priority, op): best first
  std::vector<std::set<Ranked>> buckets(keys.size());
  std::set<Ranked> ready;
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>,
                      std::greater<>>
      pending; // (earliest step, op)
  std::vector<int> earliest(count, 0), predsLeft = PredCount;
  for (size_t i = 0; i < count; ++i)
    if (predsLeft[i] == 0)
      pending.push({0, int(i)});

  int step = 0, idle = 0, landed = 0;
  size_t scheduled = 0;
  auto flushIdle = [&] {
    out.nop(unsigned(idle));
    idle = 0;
  };
  while (scheduled < count) {
    while (!pending.empty() && pending.top().first <= step) {
      int op = pending.top().second;
      pending.pop();
      Ranked rank{-priority[size_t(op)], op};
      ready.insert(rank);
      buckets[size_t(keyOfOp[size_t(op)])].insert(rank);
    }
    if (ready.empty()) {
      idle += pending.top().first - step;
      step = pending.top().first;
      continue;
    }
    // The first instruction: the most critical ready operation and up to
    // three more of its kind.
    auto takeGroup = [&](int keyId, std::array<int, 4> &group) {
      unsigned n = 0;
      for (const Ranked &rank : buckets[size_t(keyId)]) {
        group[n++] = rank.second;
        if (n == 4)
          break;
      }
      for (unsigned c = n; c < 4; ++c)
        group[c] = group[n - 1];
      return n;
    };
    int firstKey = keyOfOp[size_t(ready.begin()->second)];
    std::array<int, 4> first{}, second{};
    unsigned firstCount = takeGroup(firstKey, first);
    // A second instruction on the other unit, when one fits beside it.
    int secondKey = -1, secondRank = 0;
    bool firstMau = isMauOpcode(keys[size_t(firstKey)].opcode);
    for (size_t k = 0; k < keys.size(); ++k) {
      if (buckets[k].empty() || isMauOpcode(keys[k].opcode) == firstMau ||
          !compatible(keys[size_t(firstKey)], keys[k]))
        continue;
      int rank = buckets[k].begin()->first;
      if (secondKey < 0 || rank < secondRank)
        secondKey = int(k), secondRank = rank;
    }
    unsigned secondCount = secondKey >= 0 ? takeGroup(secondKey, second) : 0;

    flushIdle();
    std::string alu, mau;
    auto issue = [&](const std::array<int, 4> &group, unsigned n) {
      const ElemOp *ops[4];
      for (unsigned c = 0; c < 4; ++c)
        ops[c] = &Ops[size_t(group[c])];
      (isMauOpcode(ops[0]->opcode) ? mau : alu) = instructionText(ops);
      for (unsigned c = 0; c < n; ++c) {
        int op = group[c];
        Ranked rank{-priority[size_t(op)], op};
        ready.erase(rank);
        buckets[size_t(keyOfOp[size_t(op)])].erase(rank);
        ++scheduled;
        landed = std::max(landed, step + resultLatency(Ops[size_t(op)].opcode));
        for (const Edge &edge : Succs[size_t(op)]) {
          size_t to = size_t(edge.to);
          earliest[to] = std::max(earliest[to], step + edge.latency);
          if (--predsLeft[to] == 0)
            pending.push({earliest[to], edge.to});
        }
      }
    };
    issue(first, firstCount);
    if (secondCount) {
      issue(second, secondCount);
      ++Stats.dualIssueSteps;
    }
    out.step({alu, mau});
    ++Stats.steps;
    ++step;
  }
  // Every result lands before whatever follows reads it.
  idle += std::max(0, landed - step);
  Stats.steps += uint64_t(landed > step ? landed - step : 0);
  flushIdle();
  Stats.operations += count;

  Ops.clear();
  Succs.clear();
  PredCount.clear();
  for (unsigned m = 0; m < kPeMemories; ++m) {
    for (int32_t w : TouchedWords[m]) {
      LastWriter[m][size_t(w)] = -1;
      Readers[m][size_t(w)].clear();
    }
    TouchedWords[m].clear();
  }
}
