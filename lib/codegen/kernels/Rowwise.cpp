//===- Rowwise.cpp - LayerNormalization and Softmax over long rows --------===//
//
// LayerNormalization (over the axes from `axis`), Softmax and LogSoftmax
// (over the last axis) of tensors too large for the general kernel, on
// single tensors whose normalised row is a whole number of L1B rounds: R
// long words, R a multiple of 64, with no padding (docs/codegen.md N1-N6).
//
// The data keep the flat spread (AlignedSpread, aligned to 4 m long words,
// m = R / 64): long word j of PE q of an L1B covers row long word
// 64 (j mod m) + q of row j / m of the pass, so each row lies on all 64
// PEs of one L1B, m long words each, at the same addresses. A row's
// reduction is
//   * in each PE, the m long words of each row (flat addresses: four rows
//     a step);
//   * over the 16 MABs, in the L1BM (`l1bmrffadd` / `l1bmrfmax`): L1BM
//     long word 4 r + pe holds row r's partial of PE position pe;
//   * back to every PE (`l1bmp`), the four positions added in each PE,
//     then the two singles of the long word (a swap by 32-bit shifts).
// Every PE then holds each row's statistic, splat in both lanes, and
// applies it to its long words through flat addresses (stat of row j / m).
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "Generators.h"
#include "MathLib.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

using namespace mncc;
using namespace mncc::codegen;

namespace {

using Home = MathProgram::Home;
using Ref = MathProgram::Ref;

/// Rows per pass: the statistics of a pass are blocks of rows long words
/// (GRF0 and GRF1 at 128, beside 128 long words of MathLib scratch), the
/// broadcast partials 4 long words a row.
constexpr int64_t kMaxPassRows = 64;
/// Long words of one pass of the data (LM0 and LM1 at 0).
constexpr int64_t kMaxPassLongWords = 1024;
/// The PE memory map of a pass (long words).
constexpr int64_t kBroadcast = 1024;   // 4 a row, in LM0 or LM1
constexpr int64_t kAccumulator = 1280; // one a row, in LM0 or LM1
constexpr int64_t kRowResult = 1344;   // one a row, in LM0 or LM1
constexpr int64_t kStat = 128;         // one a row, in GRF0 or GRF1
constexpr int64_t kTable = 192;        // scale (GRF1) and bias (GRF0)
constexpr int64_t kMaxTableLongWords = 64;
/// Half data arrive in LM1 at 1536 (up to 512 long words) before they are
/// widened.
constexpr int64_t kHalfData = 1536;
constexpr int64_t kScratchLongWords = 128;
/// The L1BM block the reductions go through (the spread uses [0, 2048)).
constexpr int64_t kL1bmReduction = 4096;

enum class RowOp : uint8_t { LayerNorm, Softmax, LogSoftmax };

struct Plan {
  RowOp op = RowOp::Softmax;
  /// Elements of a normalised row, and its long words.
  int64_t elements = 0;
  int64_t rowLongWords = 0;
  /// Long words of a row per PE in the DRAM form (R / 64), and as singles
  /// (twice that for half: N7).
  int64_t spreadPerPe = 0;
  int64_t perPe = 0;
  bool half = false;
  int64_t tableLongWords = 0;
  bool hasBias = false;
  double epsilon = 1e-5;
};

bool isIdentityOrder(const DramForm &form) {
  for (size_t i = 0; i < form.order.size(); ++i)
    if (form.order[i] != i)
      return false;
  return true;
}

bool sameGeometry(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

bool plan(const KernelRequest &request, Plan &p, std::string &whyNot) {
  const std::string &op = request.opType;
  if (op == "LayerNormalization")
    p.op = RowOp::LayerNorm;
  else if (op == "Softmax")
    p.op = RowOp::Softmax;
  else if (op == "LogSoftmax")
    p.op = RowOp::LogSoftmax;
  else
    return false;
  if (request.inputs.empty() || request.outputs.empty()) {
    whyNot = "expects an input and an output";
    return false;
  }
  for (size_t i = 1; i < request.outputs.size(); ++i)
    if (!request.outputs[i].omitted) {
      whyNot = "LayerNormalization's Mean and InvStdDev outputs are not "
               "produced";
      return false;
    }
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  if ((x.type != DeviceType::Single && x.type != DeviceType::Half) ||
      !sameGeometry(x, y)) {
    whyNot = "single or half X and Y of one form only (double: N6)";
    return false;
  }
  p.half = x.type == DeviceType::Half;
  if (!isIdentityOrder(x)) {
    whyNot = "X is not in the identity DRAM order";
    return false;
  }
  int64_t rank = int64_t(x.shape.size());
  if (rank == 0) {
    whyNot = "a scalar has no row";
    return false;
  }
  int64_t axis = request.getInt("axis", p.op == RowOp::LayerNorm ? -1 : -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    whyNot = "axis out of range";
    return false;
  }
  if (p.op != RowOp::LayerNorm && axis != rank - 1) {
    whyNot = "only the last axis";
    return false;
  }
  if (x.innerExtent() != x.innerPadded()) {
    whyNot = "rows of " + std::to_string(x.innerExtent()) +
             " elements are padded (N1)";
    return false;
  }
  p.elements = 1;
  for (int64_t d = axis; d < rank; ++d)
    p.elements *= x.shape[size_t(d)];
  p.rowLongWords = p.elements / elementsPerLongWord(x.type);
  if (p.rowLongWords % 64 != 0) {
    whyNot = "a row of " + std::to_string(p.rowLongWords) +
             " long words is not a multiple of 64 (N1)";
    return false;
  }
  if (axis == 0 && x.groups != 1) {
    whyNot = "the normalised block spans groups";
    return false;
  }
  p.spreadPerPe = p.rowLongWords / 64;
  p.perPe = p.half ? 2 * p.spreadPerPe : p.spreadPerPe;
  p.tableLongWords = std::lcm(p.perPe, int64_t(4));
  if (4 * p.perPe > kMaxPassLongWords ||
      p.tableLongWords > kMaxTableLongWords) {
    whyNot = "rows of " + std::to_string(p.rowLongWords) +
             " long words are longer than a pass";
    return false;
  }
  if (p.op == RowOp::LayerNorm) {
    p.epsilon = request.getFloat("epsilon", 1e-5f);
    std::vector<int64_t> normalised(x.shape.begin() + axis, x.shape.end());
    for (size_t i = 1; i < 3; ++i) {
      if (!request.hasInput(i)) {
        if (i == 1) {
          whyNot = "LayerNormalization needs Scale";
          return false;
        }
        continue;
      }
      const reference::Tensor *c = request.inputs[i].constant;
      if (!c ||
          (c->dtype() != reference::DType::Float32 &&
           c->dtype() != reference::DType::Float64) ||
          c->numElements() != p.elements) {
        whyNot = "Scale and B must be floating-point constants of the "
                 "normalised shape";
        return false;
      }
    }
    p.hasBias = request.hasInput(2);
  }
  return true;
}

std::string lw(PeMemory memory, int64_t longWord) {
  return peOperand(memory, Width::Long, 2 * longWord);
}

/// Long words of four rows r0..r0+3 at `base + stride r + offset` as a
/// flat operand.
std::string rowsFlat(PeMemory memory, int64_t base, int64_t r0, int64_t stride,
                     int64_t offset) {
  std::array<int64_t, 4> words;
  for (int64_t c = 0; c < 4; ++c)
    words[size_t(c)] = 2 * (base + (r0 + c) * stride + offset);
  return peOperandFlat(memory, Width::Long, words);
}

/// The statistic of the row of long words j..j+3 (row (j + c) / m).
std::string statFlat(PeMemory memory, int64_t j, int64_t perPe) {
  std::array<int64_t, 4> words;
  for (int64_t c = 0; c < 4; ++c)
    words[size_t(c)] = 2 * (kStat + (j + c) / perPe);
  return peOperandFlat(memory, Width::Long, words);
}

enum class Combine : uint8_t { Add, Max, SquareAdd };

/// acc[r] = combine over k < count of source[base + stride r + k] (r <
/// rows): one step per four rows and k, rows interleaved so that no step
/// waits for its accumulator (padded with nops below three groups).
void emitRowFold(VsmWriter &out, Combine combine, PeMemory source, int64_t base,
                 int64_t stride, int64_t count, PeMemory acc, int64_t accBase,
                 int64_t rows) {
  int64_t groups = rows / 4;
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t r = 0; r < rows; r += 4) {
      std::string x = rowsFlat(source, base, r, stride, k);
      std::string a = lw(acc, accBase + r);
      if (combine == Combine::SquareAdd)
        out.step({k == 0 ? "fvmul " + x + " " + x + " " + a
                         : "fvfma " + x + " " + x + " " + a + " " + a});
      else if (k == 0)
        out.step({"lpassa " + x + " " + a});
      else if (combine == Combine::Max)
        out.step({"fmax " + x + " " + a + " " + a});
      else
        out.step({"fvadd " + x + " " + a + " " + a});
    }
    if (k + 1 < count)
      out.nop(unsigned(std::max<int64_t>(0, 3 - groups)));
  }
  // MAU results land two steps later (one for the ALU's).
  out.nop(combine == Combine::Max ? 1 : 2);
}

/// The row partials acc[r] (one long word a row and PE, in `memory` at
/// kAccumulator) reduced over the L1B's 64 PEs: the 16 MABs in the L1BM,
/// the four PE positions back in every PE (into the same block).
void emitRowReduction(VsmWriter &out, bool max, PeMemory memory,
                      PeMemory broadcast, int64_t rows) {
  for (int64_t r = 0; r < rows; r += 4)
    out.step({std::string(max ? "l1bmrfmax " : "l1bmrffadd ") +
              lw(memory, kAccumulator + r) + " " +
              l1bmOperand(kL1bmReduction + 4 * r)});
  // The 16x1 reduction's two stages land 12 cycles on for L1BM -> PE (H6).
  out.nop(3);
  emitL1bmToPe(out, Spread::PeBroadcast, kL1bmReduction, broadcast, kBroadcast,
               4 * rows);
  emitRowFold(out, max ? Combine::Max : Combine::Add, broadcast, kBroadcast, 4,
              4, memory, kAccumulator, rows);
}

/// The two singles of each long word combined (sum or max) and splat;
/// `scale` multiplies the sum (1 / N for means; 0: none).
Ref laneCombined(MathProgram &p, bool max, double scale) {
  Ref in = p.input();
  Ref high =
      p.alu("llsl", {in, p.constantPair(0, 32, Home::First)}, Home::Second);
  // The shift right is arithmetic: the sign fill is masked off.
  Ref shifted = p.alu("llsr", {in, p.constantPair(0, 32, Home::First)},
                      Home::Destination);
  Ref low = p.alu("land", {shifted, p.constantPair(0, ~0u, Home::First)},
                  Home::Destination);
  Ref swapped = p.alu("lor", {high, low}, Home::First);
  if (max)
    return p.alu("fmax", {in, swapped}, Home::Destination);
  if (scale == 0)
    return p.mau("fvadd", {in, swapped}, Home::Destination);
  Ref sum = p.mau("fvadd", {in, swapped}, Home::Second);
  return p.mau("fvmul", {sum, p.constant(scale, Home::First)},
               Home::Destination);
}

/// 1 / sqrt(var + eps) from the row's sum of squares (N3): frsqrt's
/// start (about 5 bits, manual 3.6.9) and three Newton steps
/// g (1.5 - (v / 2) g^2), 5 -> 10 -> 20 -> 40 bits.
MathProgram rsqrtProgram(int64_t elements, double epsilon) {
  MathProgram p;
  Ref var = laneCombined(p, false, 1.0 / double(elements));
  Ref v = p.mau("fvadd", {var, p.constant(epsilon, Home::First)}, Home::Second);
  Ref g = p.alu("frsqrt", {v}, Home::First);
  Ref h = p.mau("fvmul", {v, p.constant(0.5, Home::First)}, Home::Second);
  Ref threeHalves = p.constant(1.5, Home::T);
  for (int i = 0; i < 3; ++i) {
    Ref g2 = p.mau("fvmul", {g, g}, Home::Destination);
    Ref t = p.mau("fvfma", {-h, g2, threeHalves}, Home::Destination);
    g = p.mau("fvmul", {g, t}, i == 2 ? Home::Destination : Home::First);
  }
  p.setResult(g);
  return p;
}

/// Copies `rows` long words of `from` at `fromLongWord` to `to`'s
/// statistics block.
void emitCopy(VsmWriter &out, PeMemory from, int64_t fromLongWord, PeMemory to,
              int64_t rows) {
  for (int64_t r = 0; r < rows; r += 4)
    out.step(
        {"lpassa " + lw(from, fromLongWord + r) + " " + lw(to, kStat + r)});
  out.nop();
}

class RowwiseGenerator : public KernelGenerator {
public:
  const char *name() const override { return "rowwise"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    Plan p;
    return plan(request, p, whyNot);
  }

  /// Scale carries its table, B its own (the row's columns as each PE
  /// sees them: a periodic table, E1).
  std::optional<int64_t> constantLongWords(const KernelRequest &request,
                                           size_t input) const override {
    Plan p;
    std::string whyNot;
    if ((input != 1 && input != 2) || !plan(request, p, whyNot) ||
        p.op != RowOp::LayerNorm)
      return std::nullopt;
    return p.tableLongWords * 64;
  }

  bool packConstant(const KernelRequest &request, size_t input,
                    DramImage &image, std::string &error) const override {
    Plan p;
    if (!plan(request, p, error))
      return false;
    if (p.op != RowOp::LayerNorm || (input != 1 && input != 2)) {
      error = "rowwise packs only LayerNormalization's Scale and B";
      return false;
    }
    // Single long word t of PE q holds the row's elements 2 (64 t + q) and
    // the next (single data); for half data, the widened half long word
    // t / 2 (64 (t / 2) + q of the row) gives halves 2 (t mod 2) and the
    // next of its four (N7).
    const reference::Tensor &c = *request.inputs[input].constant;
    VectorFormat format(DeviceType::Single);
    image.groups = request.outputs[0].form.groups;
    image.longWordsPerGroup = p.tableLongWords * 64;
    for (unsigned g = 0; g < image.groups; ++g) {
      std::vector<uint64_t> &words = image.data[g];
      words.assign(size_t(image.longWordsPerGroup), 0);
      for (int64_t a = 0; a < image.longWordsPerGroup; ++a) {
        int64_t t = a / 64, q = a % 64;
        int64_t first =
            p.half ? 4 * (64 * ((t / 2) % p.spreadPerPe) + q) + 2 * (t % 2)
                   : 2 * (64 * (t % p.perPe) + q);
        words[size_t(a)] = format.longWord([&](unsigned lane) {
          return format.laneOf(float(c.elementAsDouble(first + lane)));
        });
      }
    }
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Plan p;
    if (!plan(request, p, error))
      return false;
    const DramForm &x = request.inputs[0].form;
    const DramForm &y = request.outputs[0].form;
    AlignedSpread input(x, 4 * p.spreadPerPe), output(y, 4 * p.spreadPerPe);
    // A pass is at most kMaxPassLongWords singles a PE.
    int64_t pass = input.passLongWords(
        std::min(kMaxPassLongWords, kMaxPassRows * p.perPe) * p.spreadPerPe /
        p.perPe);
    if (pass == 0) {
      error = "a row is longer than a pass";
      return false;
    }
    MathScratch scratch{{PeMemory::GRF0, 0, kScratchLongWords},
                        {PeMemory::GRF1, 0, kScratchLongWords}};
    description.generator = name();
    description.variant =
        std::string(p.op == RowOp::LayerNorm ? "layer normalization"
                    : p.op == RowOp::Softmax ? "softmax"
                                             : "log softmax") +
        ", rows of " + std::to_string(p.rowLongWords) +
        " long words over the 64 PEs of an L1B, reduced in the L1BM";
    description.parameters.push_back(
        {"spread", "flat, " + std::to_string(input.peLongWords()) +
                       " lw per PE, passes of " + std::to_string(pass)});

    if (p.op == RowOp::LayerNorm) {
      emitLoadTable(out, x, request.inputs[1].form.base, p.tableLongWords,
                    PeMemory::GRF1, kTable);
      if (p.hasBias)
        emitLoadTable(out, x, request.inputs[2].form.base, p.tableLongWords,
                      PeMemory::GRF0, kTable);
    }
    for (int64_t first = 0; first < input.peLongWords(); first += pass) {
      int64_t count = std::min(pass, input.peLongWords() - first);
      int64_t rows = count / p.spreadPerPe;
      int64_t singles = rows * p.perPe;
      if (p.half) {
        // Halves into LM1 at kHalfData, widened exactly into LM0 (E7).
        input.emitLoad(out, first, count, PeMemory::LM1, kHalfData);
        for (int64_t j = 0; j < count; j += 4)
          out.step({"hvpassa " +
                    peOperand(PeMemory::LM1, Width::Long, 2 * (kHalfData + j)) +
                    " " + peOperand(PeMemory::LM0, Width::DoubleLong, 4 * j)});
        out.nop(2);
      } else {
        input.emitLoad(out, first, count, PeMemory::LM0, 0);
      }
      bool ok = p.op == RowOp::LayerNorm
                    ? emitLayerNorm(out, p, singles, rows, scratch, error)
                    : emitSoftmax(out, p, singles, rows, scratch, error);
      if (!ok)
        return false;
      if (!p.half) {
        output.emitStore(out, first, count, PeMemory::LM1, 0);
        continue;
      }
      // Rounded once to half, two singles a word, into LM0.
      for (int64_t k = 0; k < singles; k += 4)
        out.step({"fvpassar " + peOperand(PeMemory::LM1, Width::Long, 2 * k) +
                  " " + peOperand(PeMemory::LM0, Width::Word, k)});
      out.nop(2);
      output.emitStore(out, first, count, PeMemory::LM0, 0);
    }
    return true;
  }

private:
  /// X in LM0 [0, count) -> Y in LM1 [0, count).
  static bool emitLayerNorm(VsmWriter &out, const Plan &p, int64_t count,
                            int64_t rows, const MathScratch &scratch,
                            std::string &error) {
    double inverse = 1.0 / double(p.elements);
    // The mean of each row into GRF0.
    emitRowFold(out, Combine::Add, PeMemory::LM0, 0, p.perPe, p.perPe,
                PeMemory::LM1, kAccumulator, rows);
    emitRowReduction(out, false, PeMemory::LM1, PeMemory::LM0, rows);
    MathProgram mean;
    mean.setResult(laneCombined(mean, false, inverse));
    if (!mean.emit(out, {{PeMemory::LM1, kAccumulator, rows}},
                   {PeMemory::LM0, kRowResult, rows}, scratch, error))
      return false;
    emitCopy(out, PeMemory::LM0, kRowResult, PeMemory::GRF0, rows);
    // d = x - mean into LM1.
    for (int64_t j = 0; j < count; j += 4)
      out.step({"fvadd " + lw(PeMemory::LM0, j) + " -" +
                statFlat(PeMemory::GRF0, j, p.perPe) + " " +
                lw(PeMemory::LM1, j)});
    out.nop(2);
    // 1 / sqrt(mean of d^2 + epsilon) into GRF1 (two passes, as the
    // reference: N3).
    emitRowFold(out, Combine::SquareAdd, PeMemory::LM1, 0, p.perPe, p.perPe,
                PeMemory::LM0, kAccumulator, rows);
    emitRowReduction(out, false, PeMemory::LM0, PeMemory::LM1, rows);
    if (!rsqrtProgram(p.elements, p.epsilon)
             .emit(out, {{PeMemory::LM0, kAccumulator, rows}},
                   {PeMemory::LM1, kRowResult, rows}, scratch, error))
      return false;
    emitCopy(out, PeMemory::LM1, kRowResult, PeMemory::GRF1, rows);
    // y = d rstd scale + B.
    for (int64_t j = 0; j < count; j += 4)
      out.step({"fvmul " + lw(PeMemory::LM1, j) + " " +
                statFlat(PeMemory::GRF1, j, p.perPe) + " " +
                lw(PeMemory::LM1, j)});
    out.nop(2);
    for (int64_t j = 0; j < count; j += 4) {
      int64_t t = kTable + j % p.tableLongWords;
      if (p.hasBias)
        out.step({"fvfma " + lw(PeMemory::LM1, j) + " " +
                  lw(PeMemory::GRF1, t) + " " + lw(PeMemory::GRF0, t) + " " +
                  lw(PeMemory::LM1, j)});
      else
        out.step({"fvmul " + lw(PeMemory::LM1, j) + " " +
                  lw(PeMemory::GRF1, t) + " " + lw(PeMemory::LM1, j)});
    }
    out.nop(2);
    return true;
  }

  /// X in LM0 [0, count) -> Y in LM1 [0, count).
  static bool emitSoftmax(VsmWriter &out, const Plan &p, int64_t count,
                          int64_t rows, const MathScratch &scratch,
                          std::string &error) {
    // The maximum of each row into GRF0.
    emitRowFold(out, Combine::Max, PeMemory::LM0, 0, p.perPe, p.perPe,
                PeMemory::LM1, kAccumulator, rows);
    emitRowReduction(out, true, PeMemory::LM1, PeMemory::LM0, rows);
    MathProgram lanes;
    lanes.setResult(laneCombined(lanes, true, 0));
    if (!lanes.emit(out, {{PeMemory::LM1, kAccumulator, rows}},
                    {PeMemory::LM0, kRowResult, rows}, scratch, error))
      return false;
    emitCopy(out, PeMemory::LM0, kRowResult, PeMemory::GRF0, rows);
    // x - max into LM1, its exp into LM0.
    for (int64_t j = 0; j < count; j += 4)
      out.step({"fvadd " + lw(PeMemory::LM0, j) + " -" +
                statFlat(PeMemory::GRF0, j, p.perPe) + " " +
                lw(PeMemory::LM1, j)});
    out.nop(2);
    if (!emitMathFunction(out, MathFunction::Exp, {{PeMemory::LM1, 0, count}},
                          {PeMemory::LM0, 0, count}, scratch, error))
      return false;
    // The sums of each row; 1 / s (Softmax) or log s (LogSoftmax) into
    // GRF1.
    emitRowFold(out, Combine::Add, PeMemory::LM0, 0, p.perPe, p.perPe,
                PeMemory::LM1, kAccumulator, rows);
    emitRowReduction(out, false, PeMemory::LM1, PeMemory::LM0, rows);
    MathProgram sum;
    sum.setResult(laneCombined(sum, false, 0));
    if (!sum.emit(out, {{PeMemory::LM1, kAccumulator, rows}},
                  {PeMemory::LM0, kRowResult, rows}, scratch, error))
      return false;
    bool log = p.op == RowOp::LogSoftmax;
    if (!emitMathFunction(out,
                          log ? MathFunction::Log : MathFunction::Reciprocal,
                          {{PeMemory::LM0, kRowResult, rows}},
                          {PeMemory::LM1, kRowResult, rows}, scratch, error))
      return false;
    emitCopy(out, PeMemory::LM1, kRowResult, PeMemory::GRF1, rows);
    // Softmax: e^(x - m) / s; LogSoftmax: (x - m) - log s (adding log s to
    // m first would round at m's scale, as G7).
    for (int64_t j = 0; j < count; j += 4)
      out.step({log ? "fvadd " + lw(PeMemory::LM1, j) + " -" +
                          statFlat(PeMemory::GRF1, j, p.perPe) + " " +
                          lw(PeMemory::LM1, j)
                    : "fvmul " + lw(PeMemory::LM0, j) + " " +
                          statFlat(PeMemory::GRF1, j, p.perPe) + " " +
                          lw(PeMemory::LM1, j)});
    out.nop(2);
    return true;
  }
};

std::unique_ptr<KernelGenerator> createRowwiseGenerator() {
  return std::make_unique<RowwiseGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Rowwise, 100, createRowwiseGenerator);
