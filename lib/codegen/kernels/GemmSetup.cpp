//===- GemmSetup.cpp - Operand spelling and per-PE setup ------------------===//
//
// Every PE runs the same instructions; what differs between PEs comes from
// the fixed inputs ($subpeid, $mabid, $l1bid, $l2bid). From them the setup
// derives the zero-flush masks that clear a quad's padding elements (they
// depend on the PE's place in the quad) and the T offsets through which a
// MAB reads its own rows of a broadcast image.
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"

#include <cstdio>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

char memoryLetter(PeMemory memory) {
  switch (memory) {
  case PeMemory::LM0:
    return 'm';
  case PeMemory::LM1:
    return 'n';
  case PeMemory::GRF0:
    return 'r';
  case PeMemory::GRF1:
    return 's';
  }
  return 'm';
}

bool evenlySpaced(const std::array<int64_t, 4> &a, int64_t &stride) {
  stride = a[1] - a[0];
  return stride >= 0 && a[2] - a[1] == stride && a[3] - a[2] == stride;
}

} // namespace

std::string gemm::lwFixed(PeMemory memory, int64_t longWord) {
  return std::string("$l") + memoryLetter(memory) + std::to_string(2 * longWord);
}

std::string gemm::lwRun(PeMemory memory, int64_t longWord, int64_t stride) {
  std::string text = lwFixed(memory, longWord);
  if (stride == 0)
    return text;
  return stride == 1 ? text + "v" : text + "v" + std::to_string(2 * stride);
}

std::string gemm::lwFlat(PeMemory memory,
                         const std::array<int64_t, 4> &longWords) {
  std::string text = std::string("$l") + memoryLetter(memory) + "[";
  for (size_t c = 0; c < 4; ++c)
    text += (c ? "," : "") + std::to_string(2 * longWords[c]);
  return text + "]";
}

std::string gemm::lwFlatT(const std::array<int64_t, 4> &longWords) {
  std::string text = "$lmt[";
  for (size_t c = 0; c < 4; ++c)
    text += (c ? "," : "") + std::to_string(2 * longWords[c]);
  return text + "]";
}

std::string gemm::llRun(PeMemory memory, int64_t longWord) {
  return std::string("$ll") + memoryLetter(memory) +
         std::to_string(2 * longWord) + "v";
}

std::string gemm::llFixed(PeMemory memory, int64_t longWord) {
  return std::string("$ll") + memoryLetter(memory) +
         std::to_string(2 * longWord);
}

std::string gemm::lwAny(PeMemory memory,
                        const std::array<int64_t, 4> &longWords) {
  int64_t stride;
  if (evenlySpaced(longWords, stride))
    return lwRun(memory, longWords[0], stride);
  return lwFlat(memory, longWords);
}

std::string gemm::lwAnyT(const std::array<int64_t, 4> &longWords) {
  int64_t stride;
  if (evenlySpaced(longWords, stride)) {
    std::string text = "$lmt" + std::to_string(2 * longWords[0]);
    if (stride == 0)
      return text;
    return stride == 1 ? text + "v" : text + "v" + std::to_string(2 * stride);
  }
  return lwFlatT(longWords);
}

std::string gemm::immWord(uint32_t word) {
  // Unsigned: an i"..." payload must lie in the signed range, and bit 31
  // is as much a bit of a mask pattern as any other.
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "ui\"0x%08x\"", word);
  return buffer;
}

//===----------------------------------------------------------------------===//
// PeSetup
//===----------------------------------------------------------------------===//

namespace {
// GRF1 scratch of the setup: the lane index and two temporaries.
constexpr int64_t kLaneIndexLw = kSetupGrf1;      // 's' lanes 0..15
constexpr int64_t kShiftTempLw = kSetupGrf1 + 2;  // GRF1 temporaries
constexpr int64_t kLaneTempLw = kSetupGrf1 + 4;   // immu target (two lw)
// GRF0 scratch: four per-cycle thresholds, then cached constants.
constexpr int64_t kThresholdLw = kSetupGrf0;      // four long words
constexpr int64_t kTempLw = kSetupGrf0 + 4;       // product temporary
constexpr int64_t kFirstConstantLw = kSetupGrf0 + 6;
} // namespace

int64_t PeSetup::constant(uint32_t word) {
  auto it = Constants.find(word);
  if (it != Constants.end())
    return it->second;
  int64_t at = NextConstant < kFirstConstantLw ? kFirstConstantLw
                                               : NextConstant;
  if (at >= kSetupGrf0 + 32) {
    // Out of cache: reuse the last slot (the caller uses it right away).
    at = kSetupGrf0 + 31;
    for (auto i = Constants.begin(); i != Constants.end();)
      i = i->second == at ? Constants.erase(i) : std::next(i);
  } else {
    NextConstant = at + 1;
  }
  Out.step({"imm " + immWord(word) + " " + lwFixed(PeMemory::GRF0, at)});
  Out.nop(2);
  Constants[word] = at;
  return at;
}

int64_t PeSetup::laneIndex() {
  if (LaneIndex)
    return *LaneIndex;
  // (2,3,2,3) - (2,2,0,0) = (0,1,2,3) in 's' lanes, plus 4 * subpe.
  int64_t q23 = constant(0x00020003);
  int64_t two = constant(0x00020002);
  Out.step({"immu " + immWord(0x00020002) + " " +
            llFixed(PeMemory::GRF1, kLaneTempLw)});
  Out.nop(2);
  Out.step({"ssub " + lwFixed(PeMemory::GRF0, q23) + " " +
            lwFixed(PeMemory::GRF1, kLaneTempLw) + " " +
            lwFixed(PeMemory::GRF0, kTempLw)});
  Out.step({"slsl $subpeid " + lwFixed(PeMemory::GRF0, two) + " " +
            lwFixed(PeMemory::GRF1, kShiftTempLw)});
  Out.nop(2);
  Out.step({"sadd " + lwFixed(PeMemory::GRF0, kTempLw) + " " +
            lwFixed(PeMemory::GRF1, kShiftTempLw) + " " +
            lwFixed(PeMemory::GRF1, kLaneIndexLw)});
  Out.nop(2);
  LaneIndex = kLaneIndexLw;
  return kLaneIndexLw;
}

std::optional<unsigned> PeSetup::laneMask(const std::array<int, 4> &valid,
                                          int perLongWord,
                                          std::string &error) {
  std::array<int, 4> quarters;
  bool full = true;
  for (size_t c = 0; c < 4; ++c) {
    quarters[c] = std::clamp(valid[c], 0, 4 * perLongWord) * (4 / perLongWord);
    full &= quarters[c] == 16;
  }
  if (full)
    return std::nullopt;
  std::array<int, 5> key = {quarters[0], quarters[1], quarters[2],
                            quarters[3], perLongWord};
  auto it = LaneMasks.find(key);
  if (it != LaneMasks.end())
    return it->second;
  if (NextEntry >= kScratchEntry) {
    error = "out of mask register entries for padding masks";
    return std::nullopt;
  }
  int64_t lanes = laneIndex();
  // Quarter q of PE p survives in cycle c when 4p + q <= quarters[c] - 1.
  for (size_t c = 0; c < 4; ++c) {
    uint32_t limit = uint16_t(quarters[c] - 1);
    Out.step({"imm " + immWord(limit << 16 | limit) + " " +
              lwFixed(PeMemory::GRF0, kThresholdLw + int64_t(c))});
  }
  Out.nop(2);
  unsigned entry = NextEntry++;
  Out.step({"ssub " + lwRun(PeMemory::GRF0, kThresholdLw) + " " +
            lwFixed(PeMemory::GRF1, lanes) + " $omr" + std::to_string(entry)});
  Out.nop(2);
  LaneMasks[key] = entry;
  return entry;
}

std::optional<unsigned> PeSetup::peMask(unsigned pe, std::string &error) {
  auto it = PeMasks.find(pe);
  if (it != PeMasks.end())
    return it->second;
  if (NextEntry >= kScratchEntry) {
    error = "out of mask register entries";
    return std::nullopt;
  }
  int64_t value = constant(pe);
  unsigned entry = NextEntry++;
  // 'i' lanes: both words of $subpeid equal pe exactly when the xor is 0.
  Out.step({"ixor $subpeid " + lwFixed(PeMemory::GRF0, value) + " $omr" +
            std::to_string(entry)});
  Out.nop(2);
  PeMasks[pe] = entry;
  return entry;
}

unsigned PeSetup::halfElementScratch(int element) {
  int64_t lanes = laneIndex();
  int64_t value = constant(uint32_t(element) << 16 | uint32_t(element));
  // 's' lanes: the xor is zero exactly in the element's lane.
  Out.step({"sxor " + lwFixed(PeMemory::GRF1, lanes) + " " +
            lwFixed(PeMemory::GRF0, value) + " $omr" +
            std::to_string(kScratchEntry)});
  Out.nop(2);
  return kScratchEntry;
}

unsigned PeSetup::placeMask(uint64_t places) {
  constexpr int64_t kPlaceLw = kSetupGrf1 + 6;   // GRF1: high word - 1
  constexpr int64_t kPatternLw = kSetupGrf1 + 7; // GRF1: the pattern
  constexpr int64_t kAndLw = kSetupGrf1 + 8;     // GRF1: bit & pattern
  constexpr int64_t kBitLw = kTempLw + 1;        // GRF0: 1 << place % 32
  if (!PlaceBit) {
    // place = 8 $l2bid + $l1bid ($l2bid numbers the board's L2Bs, group x
    // 2 + L2B, docs/layout.md): 64 places over two 32-bit pattern words.
    int64_t three = constant(3);
    Out.step({"ilsl $l2bid " + lwFixed(PeMemory::GRF0, three) + " " +
              lwFixed(PeMemory::GRF1, kPlaceLw)});
    Out.nop(2);
    Out.step({"iadd $l1bid " + lwFixed(PeMemory::GRF1, kPlaceLw) + " " +
              lwFixed(PeMemory::GRF1, kPlaceLw)});
    Out.nop(2);
    int64_t low = constant(31);
    Out.step({"iand " + lwFixed(PeMemory::GRF1, kPlaceLw) + " " +
              lwFixed(PeMemory::GRF0, low) + " " +
              lwFixed(PeMemory::GRF1, kAndLw)});
    Out.nop(2);
    int64_t one = constant(1);
    Out.step({"ilsl " + lwFixed(PeMemory::GRF0, one) + " " +
              lwFixed(PeMemory::GRF1, kAndLw) + " " +
              lwFixed(PeMemory::GRF0, kBitLw)});
    Out.nop(2);
    // The pattern word's index (place / 32) less one: all ones where the
    // low word applies, zero where the high one does.
    int64_t five = constant(5);
    Out.step({"ilsr " + lwFixed(PeMemory::GRF1, kPlaceLw) + " " +
              lwFixed(PeMemory::GRF0, five) + " " +
              lwFixed(PeMemory::GRF1, kPlaceLw)});
    Out.nop(2);
    int64_t minusOne = constant(0xffffffffu);
    Out.step({"iadd " + lwFixed(PeMemory::GRF1, kPlaceLw) + " " +
              lwFixed(PeMemory::GRF0, minusOne) + " " +
              lwFixed(PeMemory::GRF1, kPlaceLw)});
    Out.nop(2);
    PlaceBit = kBitLw;
  }
  uint32_t lowWord = uint32_t(places), highWord = uint32_t(places >> 32);
  if (lowWord == highWord) {
    Out.step({"imm " + immWord(lowWord) + " " +
              lwFixed(PeMemory::GRF1, kPatternLw)});
    Out.nop(2);
  } else {
    // pattern = high ^ ((high ^ low) & (index - 1)).
    Out.step({"imm " + immWord(lowWord ^ highWord) + " " +
              lwFixed(PeMemory::GRF0, kTempLw)});
    Out.nop(2);
    Out.step({"iand " + lwFixed(PeMemory::GRF0, kTempLw) + " " +
              lwFixed(PeMemory::GRF1, kPlaceLw) + " " +
              lwFixed(PeMemory::GRF1, kPatternLw)});
    Out.nop(2);
    Out.step(
        {"imm " + immWord(highWord) + " " + lwFixed(PeMemory::GRF0, kTempLw)});
    Out.nop(2);
    Out.step({"ixor " + lwFixed(PeMemory::GRF0, kTempLw) + " " +
              lwFixed(PeMemory::GRF1, kPatternLw) + " " +
              lwFixed(PeMemory::GRF1, kPatternLw)});
    Out.nop(2);
  }
  // (bit & pattern) ^ bit is zero exactly where the bit is one of places.
  Out.step({"iand " + lwFixed(PeMemory::GRF0, *PlaceBit) + " " +
            lwFixed(PeMemory::GRF1, kPatternLw) + " " +
            lwFixed(PeMemory::GRF1, kAndLw)});
  Out.nop(2);
  Out.step({"ixor " + lwFixed(PeMemory::GRF1, kAndLw) + " " +
            lwFixed(PeMemory::GRF0, *PlaceBit) + " $omr" +
            std::to_string(kScratchEntry)});
  Out.nop(2);
  return kScratchEntry;
}

namespace {

/// F[i] = a * (i >> shift) + b * (i & ((1 << shift) - 1)) for every i, with
/// a, b >= 0; shift 0 means F[i] = a * i.
struct ShiftedLinear {
  int shift = 0;
  int64_t a = 0, b = 0;
};

std::optional<ShiftedLinear> shiftedLinear(const std::vector<int64_t> &table) {
  for (int shift = 0; shift <= 3; ++shift) {
    ShiftedLinear f;
    f.shift = shift;
    int64_t size = int64_t(table.size());
    int64_t low = int64_t(1) << shift;
    f.a = size > low ? table[size_t(low)] - table[0] : 0;
    f.b = shift > 0 && size > 1 ? table[1] - table[0] : 0;
    if (table[0] != 0 || f.a < 0 || f.b < 0)
      continue;
    bool fits = true;
    for (int64_t i = 0; i < size && fits; ++i)
      fits = table[size_t(i)] == f.a * (i >> shift) + f.b * (i & (low - 1));
    if (fits)
      return f;
  }
  return std::nullopt;
}

} // namespace

void PeSetup::addTable(const char *fixedInput,
                       const std::vector<int64_t> &table,
                       int64_t accumulator) {
  bool any = false;
  for (int64_t v : table)
    any |= v != 0;
  if (!any)
    return;
  std::string acc = lwFixed(PeMemory::GRF1, accumulator);
  std::string temp = lwFixed(PeMemory::GRF0, kTempLw);
  std::string id = std::string("$") + fixedInput;
  // acc += source << bit for every set bit of the multiplier.
  auto addMultiple = [&](const std::string &source, int64_t multiplier) {
    for (int bit = 0; multiplier >> bit; ++bit) {
      if (!(multiplier >> bit & 1))
        continue;
      int64_t shift = constant(uint32_t(bit));
      // One read port per memory (manual 3.6.4): the shifted value goes
      // to GRF0, the accumulator stays in GRF1.
      Out.step({"ilsl " + source + " " + lwFixed(PeMemory::GRF0, shift) + " " +
                temp});
      Out.nop(2);
      Out.step({"iadd " + acc + " " + temp + " " + acc});
      Out.nop(2);
    }
  };
  if (std::optional<ShiftedLinear> f = shiftedLinear(table)) {
    if (f->shift == 0) {
      addMultiple(id, f->a);
      return;
    }
    // The high part (i >> shift) and the low part (i & mask), each in
    // GRF0 before its multiple is added.
    if (f->a) {
      int64_t shift = constant(uint32_t(f->shift));
      Out.step({"ilsr " + id + " " + lwFixed(PeMemory::GRF0, shift) + " " +
                lwFixed(PeMemory::GRF1, kShiftTempLw + 1)});
      Out.nop(2);
      addMultiple(lwFixed(PeMemory::GRF1, kShiftTempLw + 1), f->a);
    }
    if (f->b) {
      int64_t mask = constant(uint32_t((1 << f->shift) - 1));
      Out.step({"iand " + id + " " + lwFixed(PeMemory::GRF0, mask) + " " +
                lwFixed(PeMemory::GRF1, kShiftTempLw + 1)});
      Out.nop(2);
      addMultiple(lwFixed(PeMemory::GRF1, kShiftTempLw + 1), f->b);
    }
    return;
  }
  // Any other table: one masked add per non-zero entry.
  std::string scratch = std::to_string(kScratchEntry);
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] == 0)
      continue;
    int64_t index = constant(uint32_t(i));
    Out.step({"ixor " + id + " " + lwFixed(PeMemory::GRF0, index) + " $omr" +
              scratch});
    int64_t value = constant(uint32_t(table[i]));
    Out.nop(2);
    Out.step({"iadd " + acc + " " + lwFixed(PeMemory::GRF0, value) + " " +
              acc + "/$imr" + scratch});
    Out.nop(2);
  }
}

void PeSetup::offsetTable(const std::vector<int64_t> &l2bTable,
                          const std::vector<int64_t> &l1bTable,
                          const std::vector<int64_t> &mabTable,
                          int64_t grf1LongWord) {
  Out.step({"zero " + llFixed(PeMemory::GRF1, grf1LongWord)});
  Out.nop(2);
  addTable("l2bid", l2bTable, grf1LongWord);
  addTable("l1bid", l1bTable, grf1LongWord);
  addTable("mabid", mabTable, grf1LongWord);
}

void PeSetup::loadT(int64_t grf1LongWord) {
  Out.step({"lpassa " + llFixed(PeMemory::GRF1, grf1LongWord) + " $t"});
  Out.nop(2);
}
