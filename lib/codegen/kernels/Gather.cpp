//===- Gather.cpp - Rows of a constant table picked by run-time indices ---===//
//
// Gather with axis 0 of a constant table data[N, D] (an embedding) by
// indices read at run time (docs/codegen.md Q1-Q4). MN-Core has no
// indirect addressing across PEs, but LM0 can be read through the T
// register, whose four slots give each cycle of a step its own word
// offset (manual 3.6, docs/target/mncore2.md S4). So each PE keeps a
// column slice of the whole table in LM0 -- PE q of an L1B the long words
// 64 k + q (k < m, m = R / 64, R the long words of a row) of every row,
// row t at long word t m -- and every output row is m reads through T =
// 2 m index: the output lands in the flat spread's order (PE q, long word
// r m + k is long word 64 k + q of row r), so L1B 0's gather takes it to
// DRAM row by row. The indices reach every PE by l1bmp; an index's word
// is moved to the low half of a long word (T adds the low 32 bits), a
// negative one gets N added (ONNX's indices count from the end).
//
//===----------------------------------------------------------------------===//

#include "Generators.h"
#include "MathLib.h"

#include "mncc/codegen/Transfer.h"

#include <algorithm>
#include <array>

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// The table's long words per PE in LM0, below the pass's scratch.
constexpr int64_t kMaxTableLongWords = 2000;
/// Output rows a pass (one long word each of J and the sign fix).
constexpr int64_t kPassRows = 128;
/// The index image in GRF1 [0, 128) (256 indices with their padding).
constexpr int64_t kMaxIndexLongWords = 128;
/// GRF1 [128, 256): the sign fix of each row of a pass.
constexpr int64_t kSignFix = 128;
/// LM1: the output rows of a pass at 0, constants from 2016.
constexpr int64_t kConstants = 2016;
enum ConstantSlot : int64_t {
  kShift0 = 0,
  kShift32 = 1,
  kShift31 = 2,
  kRows = 3,
  kScale = 4
};

struct Plan {
  int64_t rows = 0;         // N
  int64_t rowLongWords = 0; // R
  int64_t perPe = 0;        // m
  unsigned scaleShift = 0;  // log2(2 m)
  int64_t outputs = 0;      // K
};

bool plan(const KernelRequest &request, Plan &p, std::string &whyNot) {
  if (request.opType != "Gather")
    return false;
  if (request.inputs.size() != 2 || request.outputs.size() != 1) {
    whyNot = "expects data, indices and one output";
    return false;
  }
  const KernelTensor &data = request.inputs[0];
  const DramForm &indices = request.inputs[1].form;
  const DramForm &out = request.outputs[0].form;
  if (!data.constant) {
    whyNot = "the data is not a constant (N5)";
    return false;
  }
  if (!isFloatingDeviceType(data.form.type) || out.type != data.form.type) {
    whyNot = "floating-point data and output of one format only";
    return false;
  }
  if (indices.type != DeviceType::Int32) {
    whyNot = "integer indices only";
    return false;
  }
  if (request.getInt("axis", 0) != 0 || data.form.shape.size() != 2) {
    whyNot = "only axis 0 of a 2-D table";
    return false;
  }
  if (indices.groups != 1 || out.groups != 1) {
    whyNot = "indices and output in more than one group";
    return false;
  }
  p.rows = data.form.shape[0];
  int64_t lanes = elementsPerLongWord(out.type);
  int64_t width = data.form.shape[1];
  if (width % (64 * lanes) != 0) {
    whyNot = "rows of " + std::to_string(width) +
             " elements are not a multiple of 64 long words";
    return false;
  }
  p.rowLongWords = width / lanes;
  p.perPe = p.rowLongWords / 64;
  if ((p.perPe & (p.perPe - 1)) != 0) {
    whyNot = "rows of " + std::to_string(p.rowLongWords) +
             " long words are not 64 times a power of two";
    return false;
  }
  while ((int64_t(1) << p.scaleShift) < 2 * p.perPe)
    ++p.scaleShift;
  if (p.rows * p.perPe > kMaxTableLongWords) {
    whyNot = "the table's slice per PE (" + std::to_string(p.rows * p.perPe) +
             " long words) does not fit LM0";
    return false;
  }
  if (roundUp(indices.groupLongWords(), 4) > kMaxIndexLongWords) {
    whyNot = "more than 256 indices";
    return false;
  }
  p.outputs = 1;
  for (int64_t e : indices.shape)
    p.outputs *= e;
  if (p.outputs * p.rowLongWords > out.groupLongWords()) {
    whyNot = "the output's form does not hold every row";
    return false;
  }
  return true;
}

std::string lw(PeMemory memory, int64_t longWord) {
  return peOperand(memory, Width::Long, 2 * longWord);
}
std::string constantOperand(int64_t slot) {
  return peOperand(PeMemory::LM1, Width::Long, 2 * (kConstants + slot), 0);
}

class GatherGenerator : public KernelGenerator {
public:
  const char *name() const override { return "gather"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    Plan p;
    return plan(request, p, whyNot);
  }

  /// The table as each PE's slice, long word 64 j + q for PE q's long word
  /// j (the order l1bmd deals).
  std::optional<int64_t> constantLongWords(const KernelRequest &request,
                                           size_t input) const override {
    Plan p;
    std::string whyNot;
    if (input != 0 || !plan(request, p, whyNot))
      return std::nullopt;
    return roundUp(p.rows * p.perPe, 4) * 64;
  }

  bool packConstant(const KernelRequest &request, size_t input,
                    DramImage &image, std::string &error) const override {
    Plan p;
    if (!plan(request, p, error))
      return false;
    if (input != 0) {
      error = "gather packs only the table";
      return false;
    }
    const reference::Tensor &table = *request.inputs[0].constant;
    VectorFormat format(request.outputs[0].form.type);
    int64_t lanes = format.lanes();
    int64_t width = p.rowLongWords * lanes;
    image.groups = 1;
    image.longWordsPerGroup = roundUp(p.rows * p.perPe, 4) * 64;
    std::vector<uint64_t> &words = image.data[0];
    words.assign(size_t(image.longWordsPerGroup), 0);
    for (int64_t a = 0; a < image.longWordsPerGroup; ++a) {
      int64_t j = a / 64, q = a % 64;
      int64_t row = j / p.perPe, k = j % p.perPe;
      if (row >= p.rows)
        continue;
      int64_t column = (64 * k + q) * lanes;
      words[size_t(a)] = format.longWord([&](unsigned lane) {
        return format.laneOf(
            table.elementAsDouble(row * width + column + lane));
      });
    }
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Plan p;
    if (!plan(request, p, error))
      return false;
    const DramForm &indices = request.inputs[1].form;
    const DramForm &result = request.outputs[0].form;
    description.generator = name();
    description.variant = "table slices in LM0, rows read through T, " +
                          std::to_string(p.outputs) + " rows of " +
                          std::to_string(p.rowLongWords) + " long words";

    // The table, every L1B the same.
    int64_t tableLongWords = roundUp(p.rows * p.perPe, 4);
    for (int64_t done = 0; done < tableLongWords; done += 32) {
      int64_t chunk = std::min<int64_t>(32, tableLongWords - done);
      L1bRanges ranges;
      ranges.base = request.inputs[0].form.base + done * 64;
      ranges.longWords = chunk * 64;
      ranges.onlyGroup0 = true;
      emitDramToL1bm(out, ranges, 0, 0);
      emitL1bmToPe(out, Spread::AllPes, 0, PeMemory::LM0, done, chunk);
    }
    // The indices (their padded image) into every PE's GRF1.
    int64_t indexLongWords = roundUp(indices.groupLongWords(), 4);
    {
      L1bRanges ranges;
      ranges.base = indices.base;
      ranges.longWords = roundUp(indexLongWords, kMvUnitLongWords);
      ranges.onlyGroup0 = true;
      emitDramToL1bm(out, ranges, 0, 0);
      emitL1bmToPe(out, Spread::PeBroadcast, 0, PeMemory::GRF1, 0,
                   indexLongWords);
    }
    // Shift amounts and N as 64-bit constants (high word, low word).
    const std::array<std::pair<uint32_t, uint32_t>, 5> constants = {
        {{0, 0},
         {0, 32},
         {31, 31},
         {uint32_t(p.rows), uint32_t(p.rows)},
         {p.scaleShift, p.scaleShift}}};
    for (size_t c = 0; c < constants.size(); ++c)
      emitLongWordConstant(out, PeMemory::LM1, kConstants + int64_t(c),
                           uint64_t(constants[c].first) << 32 |
                               constants[c].second);
    out.nop();

    int64_t inner = indices.innerExtent(), padded = indices.innerPadded();
    for (int64_t first = 0; first < p.outputs; first += kPassRows) {
      int64_t rows = std::min(kPassRows, p.outputs - first);
      int64_t steps = ceilDiv(rows, 4);
      // J[r]: index r's word in the low half of a long word (GRF0 [0,
      // rows)): shifted up by 32 when it is the low word, then down by 32
      // (the shift right is arithmetic: the sign fills the high half).
      for (int64_t s = 0; s < steps; ++s) {
        std::array<int64_t, 4> source, shift;
        for (int64_t c = 0; c < 4; ++c) {
          int64_t i = std::min(first + 4 * s + c, p.outputs - 1);
          int64_t position = i / inner * padded + i % inner;
          source[size_t(c)] = 2 * (position / 2);
          shift[size_t(c)] =
              2 * (kConstants + (position % 2 ? kShift32 : kShift0));
        }
        out.step({"llsl " + peOperandFlat(PeMemory::GRF1, Width::Long, source) +
                  " " + peOperandFlat(PeMemory::LM1, Width::Long, shift) + " " +
                  lw(PeMemory::GRF0, 4 * s)});
      }
      out.nop();
      auto overRows = [&](auto expression) {
        for (int64_t s = 0; s < steps; ++s)
          out.step({expression(4 * s)});
        out.nop();
      };
      overRows([&](int64_t r) {
        return "llsr " + lw(PeMemory::GRF0, r) + " " +
               constantOperand(kShift32) + " " + lw(PeMemory::GRF0, r);
      });
      // A negative index counts from the end: + (N and (J >> 31)).
      overRows([&](int64_t r) {
        return "ilsr " + lw(PeMemory::GRF0, r) + " " +
               constantOperand(kShift31) + " " +
               lw(PeMemory::GRF1, kSignFix + r);
      });
      overRows([&](int64_t r) {
        return "land " + lw(PeMemory::GRF1, kSignFix + r) + " " +
               constantOperand(kRows) + " " + lw(PeMemory::GRF1, kSignFix + r);
      });
      overRows([&](int64_t r) {
        return "iadd " + lw(PeMemory::GRF0, r) + " " +
               lw(PeMemory::GRF1, kSignFix + r) + " " + lw(PeMemory::GRF0, r);
      });
      // Four rows a step: T = 2 m J (word offsets of the rows' slices),
      // then the m long words of each row through T.
      for (int64_t s = 0; s < steps; ++s) {
        out.step({"ilsl " + lw(PeMemory::GRF0, 4 * s) + " " +
                  constantOperand(kScale) + " $t"});
        // An ALU write of T two steps before a $mt read (H8).
        out.nop(2);
        for (int64_t k = 0; k < p.perPe; ++k) {
          std::array<int64_t, 4> destination;
          for (int64_t c = 0; c < 4; ++c)
            destination[size_t(c)] = 2 * ((4 * s + c) * p.perPe + k);
          out.step({"lpassa $lmt" + std::to_string(2 * k) + " " +
                    peOperandFlat(PeMemory::LM1, Width::Long, destination)});
        }
      }
      out.nop();
      // L1B 0's rows to DRAM (every L1B holds the same).
      int64_t longWords = roundUp(rows * p.perPe, 4);
      for (int64_t done = 0; done < longWords; done += 32) {
        int64_t chunk = std::min<int64_t>(32, longWords - done);
        emitPeToL1bm(out, Spread::AllPes, PeMemory::LM1, done, chunk, 0);
        L1bRanges ranges;
        int64_t offset = (first * p.perPe + done) * 64;
        ranges.base = result.base + offset;
        ranges.longWords = chunk * 64;
        ranges.limit = result.groupLongWords() - offset;
        ranges.onlyGroup0 = true;
        emitL1bmToDram(out, ranges, 0, 0);
      }
    }
    return true;
  }
};

std::unique_ptr<KernelGenerator> createGatherGenerator() {
  return std::make_unique<GatherGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Gather, 100, createGatherGenerator);
