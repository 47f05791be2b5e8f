//===- Pool.cpp - MaxPool, AveragePool and the global pools ---------------===//
//
// 2-D pools of half, single and double NHWC tensors (the order preferred
// for both X and Y, as the convolutions use), one code path for every
// format (VectorFormat, MathLib.h). Channels across PEs, spatial positions
// in addresses:
//
//  * a work unit is one output row segment of up to 8 positions of one
//    image and one group of 64 channel long words (a global pool: one
//    image); 64 units run at once, one per L1B of the board;
//  * each unit's input positions (its window rows, the segment's columns)
//    are copied one 64-long-word slot each, DRAM -> PDM once, then PDM ->
//    L2BM per position, so that in the L1BM position t of the tile is
//    [64 t, 64 t + 64) and l1bmd gives PE q channel long word q of every
//    position: LM0 long word t (P1). A position outside the image loads a
//    neutral slot (-inf for max, 0 for the sums), so every unit runs the
//    same PE code whatever its place in the image;
//  * each output is a chain over the window's taps, four outputs a step
//    with flat LM0 addresses (max on the ALU; vadd on the MAU, then a
//    multiply by the reciprocal of its divisor, itself loaded per output
//    from a table of rows, P2);
//  * results go back the same way, one slot per output row into a PDM
//    image of Y's block in ascending row order (a slot's tail past its row
//    is overwritten by the rows after it), then PDM -> DRAM once.
//
// The many 64-long-word MV transfers bound the time; the PE work is small.
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "Generators.h"
#include "MathLib.h"
#include "PoolWindow.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// One dimension of the window (ONNX's pools; ceil_mode as PyTorch).
bool resolveDimension(int64_t in, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t padBegin, int64_t padEnd,
                      const std::string &autoPad, bool ceilMode, int64_t &out,
                      int64_t &begin, int64_t &end, std::string &whyNot) {
  int64_t extent = (kernel - 1) * dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    out = ceilDiv(in, stride);
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
    begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    end = total - begin;
    return true;
  }
  if (autoPad == "VALID") {
    begin = end = 0;
  } else if (autoPad == "NOTSET" || autoPad.empty()) {
    begin = padBegin;
    end = padEnd;
  } else {
    whyNot = "unknown auto_pad '" + autoPad + "'";
    return false;
  }
  int64_t span = in + begin + end - extent;
  if (span < 0) {
    whyNot = "the window is larger than the padded input";
    return false;
  }
  out = (ceilMode ? ceilDiv(span, stride) : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + begin)
    --out;
  return true;
}

} // namespace

bool codegen::poolWindow2d(const KernelRequest &request, int64_t h, int64_t w,
                           PoolWindow2d &window, std::string &whyNot) {
  std::vector<int64_t> kernel = request.getInts("kernel_shape");
  std::vector<int64_t> strides = request.getInts("strides", {1, 1});
  std::vector<int64_t> dilations = request.getInts("dilations", {1, 1});
  std::vector<int64_t> pads = request.getInts("pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 ||
      pads.size() != 4) {
    whyNot = "kernel_shape, strides, dilations and pads of a 2-D pool";
    return false;
  }
  if (request.opType == "AveragePool" &&
      (dilations[0] != 1 || dilations[1] != 1)) {
    whyNot = "AveragePool has no dilations";
    return false;
  }
  std::string autoPad = request.getString("auto_pad", "NOTSET");
  bool ceilMode = request.getInt("ceil_mode", 0) != 0;
  window.kh = kernel[0];
  window.kw = kernel[1];
  window.strideH = strides[0];
  window.strideW = strides[1];
  window.dilH = dilations[0];
  window.dilW = dilations[1];
  if (window.kh < 1 || window.kw < 1 || window.strideH < 1 ||
      window.strideW < 1 || window.dilH < 1 || window.dilW < 1) {
    whyNot = "kernel_shape, strides and dilations must be positive";
    return false;
  }
  return resolveDimension(h, window.kh, window.strideH, window.dilH, pads[0],
                          pads[2], autoPad, ceilMode, window.oh, window.padTop,
                          window.padBottom, whyNot) &&
         resolveDimension(w, window.kw, window.strideW, window.dilW, pads[1],
                          pads[3], autoPad, ceilMode, window.ow, window.padLeft,
                          window.padRight, whyNot);
}

namespace {

constexpr int64_t kSlot = 64;          // long words per position slot
constexpr int64_t kMaxTileInputs = 48; // positions of a unit's input tile
constexpr int64_t kMaxTileOutputs = 8; // outputs of a unit
constexpr int64_t kUnitsPerRound = 64; // one per L1B
constexpr int64_t kPdmLongWords = 512 * 1024;
// L2BM (per L2B, for its eight L1Bs k) and L1BM layouts.
constexpr int64_t kL2bmInput = 0;
constexpr int64_t kL2bmOutput = 8 * kMaxTileInputs * kSlot; // 24576
constexpr int64_t kL2bmDivisor = kL2bmOutput + 8 * kMaxTileOutputs * kSlot;
constexpr int64_t kL1bmInput = 0;
constexpr int64_t kL1bmOutput = kMaxTileInputs * kSlot; // 3072
constexpr int64_t kL1bmDivisor = kL1bmOutput + kMaxTileOutputs * kSlot;

/// The accumulating steps of a pool: acc = max(x, acc) or x + acc (half:
/// rounded to half each time, the accumulator read as the single addend
/// with "e"), and the scaling by a divisor (double: two steps).
std::vector<std::string> accumulate(bool isMax, const VectorFormat &format,
                                    const std::string &x,
                                    const std::string &acc) {
  if (isMax)
    return {format.alu("max") + " " + x + " " + acc + " " + acc};
  return format.mauSteps("vadd", {x, acc}, acc);
}
std::vector<std::string> scale(const VectorFormat &format,
                               const std::string &acc, const std::string &by) {
  return format.mauSteps("vmul", {acc, by}, acc);
}
/// 1 / count in the format: the single's reciprocal rounded once (for half
/// too, as before double), the double's in double.
uint64_t reciprocalOf(const VectorFormat &format, int64_t count) {
  if (count == 0)
    return 0;
  return format.splat(format.type() == DeviceType::Double
                          ? 1.0 / double(count)
                          : double(1.0f / float(count)));
}

void emitSteps(VsmWriter &out, const std::vector<std::string> &steps) {
  for (const std::string &step : steps)
    out.step({step});
}

/// Steps on independent chains (accumulators): a chain's steps go out once
/// its previous result has landed (`latency` steps after its last step),
/// other chains' steps filling the wait.
class Chains {
public:
  Chains(VsmWriter &out, size_t count) : Out(out), Ready(count, 0) {}
  void issue(size_t chain, const std::vector<std::string> &steps,
             int64_t latency) {
    if (Ready[chain] > Now) {
      Out.nop(unsigned(Ready[chain] - Now));
      Now = Ready[chain];
    }
    emitSteps(Out, steps);
    Now += int64_t(steps.size());
    Ready[chain] = Now - 1 + latency;
  }
  /// Waits until every chain's last result has landed.
  void finish() {
    int64_t last = *std::max_element(Ready.begin(), Ready.end());
    Out.nop(unsigned(std::max<int64_t>(0, last - Now)));
  }

private:
  VsmWriter &Out;
  std::vector<int64_t> Ready;
  int64_t Now = 0;
};

struct Geometry {
  bool isMax = true;
  /// The tensors' format: h-precision max and hv* sums in half (P6), d*
  /// and dv* in double (P7).
  VectorFormat format{DeviceType::Single};
  bool global = false;
  bool countPad = false;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  /// Channel long words per row, and groups of 64 of them.
  int64_t rowLongWords = 0, channelGroups = 0;
  /// The tile: window rows, input columns, outputs per unit.
  int64_t tileRows = 0, tileCols = 0, tileOutputs = 0;
};

bool resolve(const KernelRequest &request, Geometry &g, std::string &whyNot) {
  const std::string &op = request.opType;
  g.isMax = op == "MaxPool" || op == "GlobalMaxPool";
  g.global = op == "GlobalAveragePool" || op == "GlobalMaxPool";
  if (request.inputs.size() != 1 || request.outputs.empty()) {
    whyNot = "expects one input";
    return false;
  }
  if (request.outputs.size() > 1) {
    whyNot = "MaxPool's Indices output is not supported";
    return false;
  }
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  if (x.type != y.type || !isFloatingDeviceType(x.type)) {
    whyNot = "only floating-point tensors of one type";
    return false;
  }
  g.format = VectorFormat(x.type);
  if (x.shape.size() != 4 || y.shape.size() != 4) {
    whyNot = "only 2-D pools (4-D tensors)";
    return false;
  }
  std::vector<unsigned> nhwc = {0, 2, 3, 1};
  if (x.order != nhwc || y.order != nhwc) {
    whyNot = "X and Y in NHWC order only";
    return false;
  }
  g.n = x.shape[0];
  g.c = x.shape[1];
  g.h = x.shape[2];
  g.w = x.shape[3];
  if (g.global) {
    g.kh = g.h;
    g.kw = g.w;
    g.oh = g.ow = 1;
  } else {
    PoolWindow2d window;
    if (!poolWindow2d(request, g.h, g.w, window, whyNot))
      return false;
    g.kh = window.kh;
    g.kw = window.kw;
    takeWindow(g, window);
    g.padBottom = window.padBottom;
    g.padRight = window.padRight;
    g.countPad = request.getInt("count_include_pad", 0) != 0;
  }
  if (y.shape != std::vector<int64_t>{g.n, g.c, g.oh, g.ow}) {
    whyNot = "Y's shape is not the pool's output";
    return false;
  }
  g.rowLongWords = x.rowLongWords();
  g.channelGroups = ceilDiv(g.rowLongWords, kSlot);
  if (g.channelGroups > kUnitsPerRound) {
    whyNot = "more than " +
             std::to_string(kUnitsPerRound * kSlot * g.format.lanes()) +
             " channels";
    return false;
  }
  g.tileRows = (g.kh - 1) * g.dh + 1;
  if (g.global) {
    g.tileOutputs = 1;
  } else {
    for (int64_t outputs = std::min(kMaxTileOutputs, g.ow); outputs >= 1;
         --outputs) {
      int64_t cols = (outputs - 1) * g.sw + (g.kw - 1) * g.dw + 1;
      if (g.tileRows * cols <= kMaxTileInputs) {
        g.tileOutputs = outputs;
        g.tileCols = cols;
        break;
      }
    }
    if (g.tileOutputs == 0) {
      whyNot = "a window of more than " + std::to_string(kMaxTileInputs) +
               " positions";
      return false;
    }
  }
  return true;
}

/// A work unit: (image, output row, segment) x channel group.
struct Unit {
  int64_t n, oh, ow0, cg;
};

/// Rounds [firstRound, lastRound) whose X rows lie in the PDM together:
/// per group, local rows [lo, hi) of X's block.
struct Pass {
  size_t firstRound = 0, lastRound = 0;
  std::array<int64_t, kDramGroups> lo{}, hi{};
};

/// How the units run: X's block whole in the PDM when it fits beside Y's
/// (one pass), else in bands of rows, one per pass, that a run of rounds
/// reads (a batch's first pools: ResNet's at batch 8 read 401408 long
/// words an image).
struct Plan {
  bool byGroup = false;
  std::vector<Unit> units;
  int64_t perRound = 0;
  bool wholeX = true;
  std::vector<Pass> passes;
  /// PDM long words for X: its block, or the largest band.
  int64_t xLongWords = 0;
};

bool planUnits(const Geometry &g, const DramForm &x, const DramForm &y,
               Plan &plan, std::string &whyNot) {
  int64_t segments = ceilDiv(g.ow, g.tileOutputs);
  // Every group holding the same number of whole images (of X and of Y):
  // the four groups run the same units on their own images, and one MV
  // statement without a group serves all four (P5).
  plan.byGroup = x.groups == kDramGroups && y.groups == kDramGroups &&
                 g.n % kDramGroups == 0 &&
                 x.rowsPerGroup() == g.n / kDramGroups * g.h * g.w &&
                 y.rowsPerGroup() == g.n / kDramGroups * g.oh * g.ow &&
                 g.channelGroups <= kUnitsPerRound / kDramGroups;
  int64_t images = plan.byGroup ? g.n / kDramGroups : g.n;
  plan.units.clear();
  for (int64_t n = 0; n < images; ++n)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t s = 0; s < segments; ++s)
        for (int64_t cg = 0; cg < g.channelGroups; ++cg)
          plan.units.push_back({n, oh, s * g.tileOutputs, cg});
  int64_t slots = plan.byGroup ? kUnitsPerRound / kDramGroups : kUnitsPerRound;
  plan.perRound = slots / g.channelGroups * g.channelGroups;

  int64_t fixed = roundUp(y.groupLongWords(), kSlot) + 8 * kSlot +
                  kSlot * (g.kh * g.kw + 2);
  size_t rounds = ceilDiv(plan.units.size(), size_t(plan.perRound));
  plan.passes.clear();
  if (roundUp(x.groupLongWords(), kSlot) + fixed <= kPdmLongWords) {
    plan.wholeX = true;
    plan.xLongWords = roundUp(x.groupLongWords(), kSlot);
    Pass all;
    all.lastRound = rounds;
    plan.passes.push_back(all);
    return true;
  }
  plan.wholeX = false;
  // The band a pass may load: what the PDM holds beside Y's block and the
  // tables, less a slot that a row's last channel group reads past it.
  int64_t capacity = (kPdmLongWords - fixed) / kSlot * kSlot - kSlot;
  const int64_t R = g.rowLongWords;
  int64_t xRowsPerGroup = x.rowsPerGroup();
  auto bandWords = [&](int64_t lo, int64_t hi) {
    return hi > lo ? roundUp((hi - lo) * R, kSlot) : 0;
  };
  plan.xLongWords = 0;
  Pass pass;
  pass.lo.fill(std::numeric_limits<int64_t>::max());
  pass.hi.fill(0);
  for (size_t round = 0; round < rounds; ++round) {
    Pass grown = pass;
    size_t first = round * size_t(plan.perRound);
    size_t last = std::min(plan.units.size(), first + size_t(plan.perRound));
    for (size_t u = first; u < last; ++u) {
      const Unit &unit = plan.units[u];
      int64_t ih0 = 0, ih1 = g.h - 1, iw0 = 0, iw1 = g.w - 1;
      if (!g.global) {
        ih0 = std::max<int64_t>(0, unit.oh * g.sh - g.padTop);
        ih1 = std::min(g.h - 1, unit.oh * g.sh - g.padTop + g.tileRows - 1);
        iw0 = std::max<int64_t>(0, unit.ow0 * g.sw - g.padLeft);
        iw1 = std::min(g.w - 1, unit.ow0 * g.sw - g.padLeft + g.tileCols - 1);
        if (ih0 > ih1 || iw0 > iw1)
          continue;
      }
      int64_t r0 = (unit.n * g.h + ih0) * g.w + iw0;
      int64_t r1 = (unit.n * g.h + ih1) * g.w + iw1;
      for (int64_t r = r0; r <= r1;) {
        int64_t group = r / xRowsPerGroup;
        int64_t end = std::min(r1, (group + 1) * xRowsPerGroup - 1);
        size_t gi = plan.byGroup ? 0 : size_t(group);
        grown.lo[gi] = std::min(grown.lo[gi], r % xRowsPerGroup);
        grown.hi[gi] = std::max(grown.hi[gi], end % xRowsPerGroup + 1);
        r = end + 1;
      }
    }
    bool fits = true;
    for (size_t gi = 0; gi < kDramGroups; ++gi)
      fits = fits && bandWords(grown.lo[gi], grown.hi[gi]) <= capacity;
    if (!fits && round > pass.firstRound) {
      // Close the pass before this round and start a new one with it.
      pass.lastRound = round;
      plan.passes.push_back(pass);
      Pass next;
      next.firstRound = round;
      next.lo.fill(std::numeric_limits<int64_t>::max());
      next.hi.fill(0);
      pass = next;
      --round;
      continue;
    }
    if (!fits) {
      whyNot = "the input rows of one round of units are over a PDM per "
               "group beside Y";
      return false;
    }
    pass = grown;
  }
  pass.lastRound = rounds;
  plan.passes.push_back(pass);
  for (const Pass &p : plan.passes)
    for (size_t gi = 0; gi < kDramGroups; ++gi)
      plan.xLongWords =
          std::max(plan.xLongWords, bandWords(p.lo[gi], p.hi[gi]) + kSlot);
  return true;
}

bool resolvePlan(const KernelRequest &request, Geometry &g, Plan &plan,
                 std::string &whyNot) {
  if (!resolve(request, g, whyNot))
    return false;
  const DramForm &y = request.outputs[0].form;
  if (roundUp(y.groupLongWords(), kSlot) + 8 * kSlot +
          kSlot * (g.kh * g.kw + 2) + 2 * kSlot >
      kPdmLongWords) {
    whyNot = "Y is over a PDM per group";
    return false;
  }
  return planUnits(g, request.inputs[0].form, y, plan, whyNot);
}

/// MV transfers issued together and waited for together.
class MvBatch {
public:
  explicit MvBatch(VsmWriter &out) : Out(out) {}
  void move(const std::string &from, const std::string &to,
            int64_t longWords = kSlot) {
    unsigned tag = Out.newTag();
    Tags.insert(tag);
    Out.statement("mvp/n" + std::to_string(longWords) +
                  VsmWriter::tagName(tag) + " " + from + " " + to);
  }
  void waitAll() {
    for (unsigned tag : Tags)
      Out.wait(tag);
    Tags.clear();
  }

private:
  VsmWriter &Out;
  std::set<unsigned> Tags;
};

std::string pdm(int64_t address, unsigned group) {
  return "$p" + std::to_string(address) + "@" + std::to_string(group);
}
std::string l2bm(int64_t address, unsigned group, unsigned l2b) {
  return "$lc" + std::to_string(address) + "@" + std::to_string(group) + "." +
         std::to_string(l2b);
}

class PoolGenerator : public KernelGenerator {
public:
  const char *name() const override { return "pool"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    const std::string &op = request.opType;
    if (op != "MaxPool" && op != "AveragePool" && op != "GlobalAveragePool" &&
        op != "GlobalMaxPool")
      return false;
    Geometry g;
    Plan plan;
    return resolvePlan(withPreferredOrders(request, *this), g, plan, whyNot);
  }

  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    size_t rank =
        operand < request.inputs.size()
            ? request.inputs[operand].form.shape.size()
        : operand - request.inputs.size() < request.outputs.size()
            ? request.outputs[operand - request.inputs.size()].form.shape.size()
            : 0;
    return rank == 4 ? channelsLastOrder(4) : std::vector<unsigned>{};
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override;

private:
  void emitTables(VsmWriter &out, const std::vector<uint64_t> &rows,
                  int64_t pdmAddress) const;
  void emitTaps(VsmWriter &out, const Geometry &g) const;
  void emitGlobalChunk(VsmWriter &out, const Geometry &g, int64_t count,
                       bool firstChunk) const;
};

/// Rows of 64 equal long words (each `rows[i]`) into every group's PDM.
void PoolGenerator::emitTables(VsmWriter &out,
                               const std::vector<uint64_t> &rows,
                               int64_t pdmAddress) const {
  int64_t count = int64_t(rows.size());
  int64_t padded = roundUp(count, 4);
  for (int64_t i = 0; i < count; ++i)
    emitLongWordConstant(out, PeMemory::GRF0, i, rows[size_t(i)]);
  out.nop();
  for (int64_t i = 0; i < padded; ++i)
    out.step(
        {"lpassa " +
         peOperand(PeMemory::GRF0, Width::Long, 2 * std::min(i, count - 1), 0) +
         " " + peOperand(PeMemory::LM1, Width::Long, 2 * i, 0)});
  out.nop();
  // Every PE holds each value: gathered, each L1BM row is 64 copies.
  emitPeToL1bm(out, Spread::AllPes, PeMemory::LM1, 0, padded, kL1bmOutput);
  for (int64_t i = 0; i < count; ++i)
    out.step({"l2bm@0 " + l1bmOperand(kL1bmOutput + kSlot * i) + " " +
              l2bmOperand(kL2bmOutput + kSlot * i)});
  out.nop(2);
  MvBatch mv(out);
  mv.move("$lc" + std::to_string(kL2bmOutput) + "@.0",
          "$p" + std::to_string(pdmAddress), kSlot * count);
  mv.waitAll();
}

/// The window's taps for the tile's outputs, four a step.
void PoolGenerator::emitTaps(VsmWriter &out, const Geometry &g) const {
  int64_t groups = ceilDiv(g.tileOutputs, 4);
  Chains chains(out, size_t(groups));
  bool first = true;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      for (int64_t group = 0; group < groups; ++group) {
        std::array<int64_t, 4> words;
        for (int64_t cycle = 0; cycle < 4; ++cycle) {
          int64_t o = 4 * group + cycle;
          int64_t lw = o < g.tileOutputs
                           ? i * g.dh * g.tileCols + o * g.sw + j * g.dw
                           : 0;
          words[size_t(cycle)] = 2 * lw;
        }
        std::string x = peOperandFlat(PeMemory::LM0, Width::Long, words);
        std::string acc = peOperand(PeMemory::LM1, Width::Long, 8 * group);
        if (first)
          chains.issue(size_t(group), {"lpassa " + x + " " + acc}, 2);
        else
          chains.issue(size_t(group), accumulate(g.isMax, g.format, x, acc),
                       g.isMax ? 2 : 3);
      }
      first = false;
    }
  if (!g.isMax)
    for (int64_t group = 0; group < groups; ++group) {
      std::string acc = peOperand(PeMemory::LM1, Width::Long, 8 * group);
      chains.issue(size_t(group),
                   scale(g.format, acc,
                         peOperand(PeMemory::GRF0, Width::Long, 8 * group)),
                   3);
    }
  chains.finish();
}

/// A global pool's chunk of `count` positions (a multiple of 4) in LM0:
/// folded into three accumulators of four long words (LM1 0-11), so that
/// consecutive steps never wait for each other. The first chunk starts
/// them: from its first positions, or at the neutral value.
void PoolGenerator::emitGlobalChunk(VsmWriter &out, const Geometry &g,
                                    int64_t count, bool firstChunk) const {
  int64_t latency = g.isMax ? 2 : 3;
  Chains chains(out, 3);
  int64_t steps = count / 4;
  for (int64_t t = 0; t < std::max<int64_t>(steps, firstChunk ? 3 : 0); ++t) {
    int64_t a = t % 3;
    std::string acc = peOperand(PeMemory::LM1, Width::Long, 8 * a);
    if (t >= steps) {
      // Fewer than twelve positions: the other accumulators start neutral
      // (a copy of the first for max, zero for the sum).
      chains.issue(size_t(a),
                   {g.isMax ? "lpassa " +
                                  peOperand(PeMemory::LM0, Width::Long, 0) +
                                  " " + acc
                            : "zero " + acc},
                   2);
      continue;
    }
    std::string x = peOperand(PeMemory::LM0, Width::Long, 8 * t);
    if (firstChunk && t < 3)
      chains.issue(size_t(a), {"lpassa " + x + " " + acc}, 2);
    else
      chains.issue(size_t(a), accumulate(g.isMax, g.format, x, acc), latency);
  }
  chains.finish();
}

bool PoolGenerator::emit(const KernelRequest &request, VsmWriter &out,
                         KernelDescription &description,
                         std::string &error) const {
  Geometry g;
  Plan plan;
  if (!resolvePlan(request, g, plan, error))
    return false;
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  const int64_t R = g.rowLongWords;
  // PDM of every group: X's block or band, Y's block (and a slot for the
  // tail of its last row), the neutral slot, the divisor rows.
  const int64_t pdmX = 0;
  const int64_t pdmY = plan.xLongWords;
  const int64_t pdmNeutral = pdmY + roundUp(y.groupLongWords(), kSlot) + kSlot;
  const int64_t pdmDivisors = pdmNeutral + kSlot;

  description.generator = name();
  description.variant = request.opType + ", NHWC, " +
                        std::to_string(g.tileOutputs) + " outputs per unit, " +
                        std::to_string(g.channelGroups) + " channel group(s)";
  description.parameters.push_back(
      {"window", std::to_string(g.kh) + "x" + std::to_string(g.kw) +
                     " stride " + std::to_string(g.sh) + "x" +
                     std::to_string(g.sw)});

  // The divisors of the averages: the reciprocal of each distinct count.
  auto dimensionCount = [](int64_t o, int64_t stride, int64_t kernel,
                           int64_t dilation, int64_t begin, int64_t end,
                           int64_t in, bool padded) {
    int64_t count = 0;
    for (int64_t k = 0; k < kernel; ++k) {
      int64_t i = o * stride - begin + k * dilation;
      if (padded ? (i >= -begin && i < in + end) : (i >= 0 && i < in))
        ++count;
    }
    return count;
  };
  std::vector<uint64_t> divisorRows;
  std::map<int64_t, int64_t> divisorRow; // count -> table row
  auto divisorOf = [&](int64_t oh, int64_t ow) {
    int64_t count = g.global ? g.h * g.w
                             : dimensionCount(oh, g.sh, g.kh, 1, g.padTop,
                                              g.padBottom, g.h, g.countPad) *
                                   dimensionCount(ow, g.sw, g.kw, 1, g.padLeft,
                                                  g.padRight, g.w, g.countPad);
    auto found = divisorRow.find(count);
    if (found != divisorRow.end())
      return found->second;
    int64_t row = int64_t(divisorRows.size());
    divisorRow[count] = row;
    divisorRows.push_back(reciprocalOf(g.format, count));
    return row;
  };
  if (!g.isMax)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow)
        divisorOf(oh, ow);

  // X's block (or its first band) into the PDM, the constant slots
  // beside it.
  auto loadX = [&](const Pass &pass) {
    MvBatch mv(out);
    bool one = x.groups == 1;
    if (plan.wholeX) {
      mv.move("$d" + std::to_string(x.base) + (one ? "@0" : ""),
              "$p" + std::to_string(pdmX) + (one ? "@0" : ""),
              x.groupLongWords());
    } else {
      for (unsigned group = 0; group < kDramGroups; ++group) {
        int64_t lo = pass.lo[group], hi = pass.hi[group];
        if (hi <= lo)
          continue;
        std::string at = plan.byGroup ? "" : "@" + std::to_string(group);
        mv.move("$d" + std::to_string(x.base + lo * R) + at,
                "$p" + std::to_string(pdmX) + at,
                roundUp((hi - lo) * R, kSlot));
      }
    }
    mv.waitAll();
  };
  loadX(plan.passes.front());
  // The neutral slot: -inf or 0.
  std::vector<uint64_t> tables = {
      g.isMax ? g.format.splat(-std::numeric_limits<double>::infinity()) : 0};
  tables.insert(tables.end(), divisorRows.begin(), divisorRows.end());
  emitTables(out, tables, pdmNeutral);

  // Units: (image, output row, segment) x channel group, channel group
  // fastest; a round holds whole segments.
  const std::vector<Unit> &units = plan.units;
  const bool byGroup = plan.byGroup;
  const int64_t perRound = plan.perRound;
  if (byGroup)
    description.variant += ", the four groups together";
  if (!plan.wholeX)
    description.variant +=
        ", X in " + std::to_string(plan.passes.size()) + " bands";
  // PDM and L2BM operands: of one group, or (byGroup) of every group.
  auto pdmOf = [&](int64_t address, unsigned group) {
    return byGroup ? "$p" + std::to_string(address) : pdm(address, group);
  };
  auto l2bmOf = [&](int64_t address, unsigned group, unsigned l2b) {
    return byGroup
               ? "$lc" + std::to_string(address) + "@." + std::to_string(l2b)
               : l2bm(address, group, l2b);
  };

  auto xRow = [&](int64_t n, int64_t ih, int64_t iw) {
    return (n * g.h + ih) * g.w + iw;
  };
  int64_t xRowsPerGroup = x.rowsPerGroup(), yRowsPerGroup = y.rowsPerGroup();
  int64_t inputs = g.global ? g.h * g.w : g.tileRows * g.tileCols;
  int64_t chunk = g.global ? kMaxTileInputs : roundUp(inputs, 4);

  size_t pass = 0;
  for (size_t first = 0; first < units.size(); first += size_t(perRound)) {
    size_t last = std::min(units.size(), first + size_t(perRound));
    size_t round = first / size_t(perRound);
    if (round >= plan.passes[pass].lastRound) {
      ++pass;
      loadX(plan.passes[pass]);
    }
    const Pass &band = plan.passes[pass];
    out.comment("pool units " + std::to_string(first) + " to " +
                std::to_string(last - 1));
    // Input positions of each unit, chunk by chunk (one chunk unless
    // global).
    for (int64_t start = 0; start < inputs; start += chunk) {
      int64_t count = std::min(chunk, inputs - start);
      int64_t padded = roundUp(count, 4);
      MvBatch mv(out);
      for (size_t u = first; u < last; ++u) {
        const Unit &unit = units[u];
        unsigned slot = unsigned(u - first);
        unsigned group = slot / 16, l2b = slot / 8 % 2, k = slot % 8;
        for (int64_t t = 0; t < padded; ++t) {
          int64_t p = start + t;
          int64_t ih, iw;
          bool inside;
          if (g.global) {
            ih = p / g.w;
            iw = p % g.w;
            inside = t < count;
          } else {
            ih = unit.oh * g.sh - g.padTop + p / g.tileCols;
            iw = unit.ow0 * g.sw - g.padLeft + p % g.tileCols;
            inside = p < inputs && ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
          }
          std::string from;
          if (inside) {
            int64_t r = xRow(unit.n, ih, iw);
            int64_t rowGroup = r / xRowsPerGroup;
            int64_t local = r % xRowsPerGroup;
            if (!plan.wholeX)
              local -= band.lo[byGroup ? 0 : size_t(rowGroup)];
            from = pdmOf(pdmX + local * R + kSlot * unit.cg,
                         unsigned(rowGroup));
          } else {
            from = pdmOf(pdmNeutral, group);
          }
          mv.move(from, l2bmOf(kL2bmInput + (k * kMaxTileInputs + t) * kSlot,
                               group, l2b));
        }
        if (!g.isMax && start == 0 && !g.global)
          for (int64_t o = 0; o < g.tileOutputs; ++o) {
            int64_t ow = std::min(unit.ow0 + o, g.ow - 1);
            mv.move(pdmOf(pdmDivisors + kSlot * divisorOf(unit.oh, ow), group),
                    l2bmOf(kL2bmDivisor + (k * kMaxTileOutputs + o) * kSlot,
                           group, l2b));
          }
      }
      mv.waitAll();
      // L2BM -> each L1B's own slots -> LM0 (and the divisors to GRF0).
      for (unsigned k = 0; k < 8; ++k) {
        for (int64_t t = 0; t < padded; ++t)
          out.step({"l2bmb@" + std::to_string(k) + " " +
                    l2bmOperand(kL2bmInput + (k * kMaxTileInputs + t) * kSlot) +
                    " " + l1bmOperand(kL1bmInput + kSlot * t)});
        if (!g.isMax && start == 0 && !g.global)
          for (int64_t o = 0; o < g.tileOutputs; ++o)
            out.step(
                {"l2bmb@" + std::to_string(k) + " " +
                 l2bmOperand(kL2bmDivisor + (k * kMaxTileOutputs + o) * kSlot) +
                 " " + l1bmOperand(kL1bmDivisor + kSlot * o)});
      }
      out.nop();
      emitL1bmToPe(out, Spread::AllPes, kL1bmInput, PeMemory::LM0, 0, padded);
      if (!g.isMax && start == 0 && !g.global)
        emitL1bmToPe(out, Spread::AllPes, kL1bmDivisor, PeMemory::GRF0, 0,
                     roundUp(g.tileOutputs, 4));
      if (g.global)
        emitGlobalChunk(out, g, padded, start == 0);
      else
        emitTaps(out, g);
    }
    if (g.global) {
      // Three accumulators of four into long word 0: the second and third
      // through GRF1 (one LM1 read port).
      unsigned wait = g.isMax ? 1 : 2;
      std::string set0 = peOperand(PeMemory::LM1, Width::Long, 0);
      for (int a = 1; a < 3; ++a)
        out.step({"lpassa " + peOperand(PeMemory::LM1, Width::Long, 8 * a) +
                  " " + peOperand(PeMemory::GRF1, Width::Long, 8 * a)});
      out.nop();
      for (int a = 1; a < 3; ++a) {
        emitSteps(out,
                  accumulate(g.isMax, g.format,
                             peOperand(PeMemory::GRF1, Width::Long, 8 * a),
                             set0));
        out.nop(wait);
      }
      // Lanes 1-3 to GRF1, then folded into lane 0 one at a time.
      out.step({"lpassa " + peOperand(PeMemory::LM1, Width::Long, 0) + " " +
                peOperand(PeMemory::GRF1, Width::Long, 0)});
      out.nop();
      std::string lane0 = peOperand(PeMemory::LM1, Width::Long, 0, 0);
      for (int lane = 1; lane < 4; ++lane) {
        emitSteps(out, accumulate(
                           g.isMax, g.format,
                           peOperand(PeMemory::GRF1, Width::Long, 2 * lane, 0),
                           lane0));
        out.nop(wait);
      }
      if (!g.isMax) {
        emitLongWordConstant(out, PeMemory::GRF1, 8,
                             reciprocalOf(g.format, g.h * g.w));
        out.nop();
        emitSteps(out, scale(g.format, lane0,
                             peOperand(PeMemory::GRF1, Width::Long, 16, 0)));
        out.nop(2);
      }
    }
    // LM1 -> L1BM -> each L1B's L2BM slots -> Y's image in the PDM.
    int64_t outputs = roundUp(g.tileOutputs, 4);
    emitPeToL1bm(out, Spread::AllPes, PeMemory::LM1, 0, outputs, kL1bmOutput);
    for (unsigned k = 0; k < 8; ++k)
      for (int64_t o = 0; o < g.tileOutputs; ++o)
        out.step(
            {"l2bm@" + std::to_string(k) + " " +
             l1bmOperand(kL1bmOutput + kSlot * o) + " " +
             l2bmOperand(kL2bmOutput + (k * kMaxTileOutputs + o) * kSlot)});
    out.nop(2);
    struct Move {
      unsigned group;
      int64_t address;
      std::string from;
    };
    std::vector<Move> moves;
    for (size_t u = first; u < last; ++u) {
      const Unit &unit = units[u];
      unsigned slot = unsigned(u - first);
      unsigned group = slot / 16, l2b = slot / 8 % 2, k = slot % 8;
      for (int64_t o = 0; o < g.tileOutputs && unit.ow0 + o < g.ow; ++o) {
        int64_t r = (unit.n * g.oh + unit.oh) * g.ow + unit.ow0 + o;
        moves.push_back({unsigned(r / yRowsPerGroup),
                         pdmY + (r % yRowsPerGroup) * R + kSlot * unit.cg,
                         l2bmOf(kL2bmOutput + (k * kMaxTileOutputs + o) * kSlot,
                                group, l2b)});
      }
    }
    // Ascending addresses: each slot's tail past its row is overwritten by
    // the rows after it (P3).
    std::stable_sort(
        moves.begin(), moves.end(), [](const Move &a, const Move &b) {
          return a.group != b.group ? a.group < b.group : a.address < b.address;
        });
    MvBatch mv(out);
    for (const Move &m : moves)
      mv.move(m.from, pdmOf(m.address, m.group));
    mv.waitAll();
  }
  // Y's image to DRAM.
  MvBatch mv(out);
  bool one = y.groups == 1;
  mv.move("$p" + std::to_string(pdmY) + (one ? "@0" : ""),
          "$d" + std::to_string(y.base) + (one ? "@0" : ""),
          y.groupLongWords());
  mv.waitAll();
  return true;
}

std::unique_ptr<KernelGenerator> createPoolGenerator() {
  return std::make_unique<PoolGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Pool, 100, createPoolGenerator);
