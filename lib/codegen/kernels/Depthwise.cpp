//===- Depthwise.cpp - Depthwise convolutions in vector mode -------------===//
//
// A Conv with group = C = M (W [C, 1, KH, KW], a constant) on the MAU's
// vector unit, with work proportional to its taps: the dense product of
// the conv kernel multiplies C times as many zeros as real taps (docs/
// codegen.md X9, D1-D9). X and Y in NHWC.
//
//  * A work item is a block of output rows of one image; each L1B takes
//    one a round, from the images in its group's DRAM where it can (the
//    links between groups are slow: D2). Its *band* (the padded input rows its
//    outputs read, every channel) is staged DRAM -> L2BM (one MV per input row,
//    zeros from the constant image for rows outside the image) -> L1BM
//    (l2bmb) -> LM0 of every MAB (l1bmm: PE pe holds long word pe of each
//    channel quad), laid out padded: quad ((row * Wp) + column) * Q + cq,
//    the pad columns zeroed in LM0 (D2).
//  * The sixteen MABs share an item's outputs: lane 4 m + c (MAB m, cycle
//    c) is output pixel (dr, dc) of a *set* of 64 / L rows by L columns,
//    reached through T (a table of the lanes' LM0 offsets, loaded once),
//    so every tap of every channel quad is one step with PE-uniform
//    addresses: x through T, the tap's weight long word in LM1, the
//    accumulators in GRF1 (D3, D4).
//  * Half accumulates in single (hvfma: exact products) from the bias and
//    rounds once into half; single and double accumulate in their format
//    (D5). The results go MAB by MAB (l1bmm@m) into an L1BM image of the
//    item's rows in NHWC, l2bm@k into the L2BM, and MV into Y (when every
//    item starts an MV unit) or an image of Y's block in the PDM, in
//    ascending order (a transfer's tail past the item is overwritten by
//    the items after it); the image goes on to DRAM as it holds for good
//    (D6).
//  * A MaxPool walks the same bands with the ALU's max instead of the
//    MAU's products (generator "pool-bands", D10): no constant image, so T
//    is computed from $peid and the rows outside the image copy a row of
//    -inf built in the PDM; the pad columns are -inf in LM0.
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "ConvWindow.h"
#include "Generators.h"
#include "MathLib.h"
#include "PoolWindow.h"

#include "mncc/codegen/Transfer.h"
#include "mncc/target/MNCore2.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <set>

using namespace mncc;
using namespace mncc::codegen;

namespace {

constexpr int64_t kLmLongWords = target::LmLongWords;
constexpr int64_t kGrfLongWords =
    target::GrfWords * target::WordBytes / target::LongWordBytes;
constexpr int64_t kPdmLongWords = target::PdmLongWords;
/// One item per L1B a round: of the board, or of one group.
constexpr int64_t kItemsPerRound = target::NumL1bs;
constexpr int64_t kL1bsPerGroup = target::L2bsPerGroup * target::L1bsPerL2b;
constexpr int64_t kMabs = target::MabsPerL1b;
/// A set's lanes: the MABs of an L1B by the cycles of a step.
constexpr int64_t kLanes = kMabs * target::CyclesPerStep;
/// GRF1: T's table (one long word per cycle) at 0, the accumulators from
/// long word 8 (double long words aligned).
constexpr int64_t kGrf1Table = 0;
constexpr int64_t kGrf1Accumulators = 8;
/// The constant image: T's table for l1bmd (64 x 4 long words) first.
constexpr int64_t kTableImageLongWords = kPesPerL1b * 4;

const std::vector<unsigned> kNhwc = {0, 2, 3, 1};

struct Geometry {
  /// A MaxPool (the max over the taps, -inf where the window leaves the
  /// image: D10) instead of a depthwise Conv.
  bool maxPool = false;
  DeviceType type = DeviceType::Half;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t padTop = 0, padLeft = 0;
  /// Channel quads per pixel, and long words (4 q: X's and Y's rows).
  int64_t q = 0, r = 0;
  /// Padded columns the outputs read: (OW - 1) sw + (KW - 1) dw + 1.
  int64_t wp = 0;
  int64_t taps() const { return kh * kw; }
};

/// A MaxPool of X and Y in one floating format, NHWC (D10).
bool analyseMaxPool(const KernelRequest &r, Geometry &g, std::string &whyNot) {
  g.maxPool = true;
  if (r.inputs.size() != 1 || r.outputs.size() != 1) {
    whyNot = r.outputs.size() > 1 ? "MaxPool's Indices output is not supported"
                                  : "expects X and one output";
    return false;
  }
  const DramForm &x = r.inputs[0].form, &y = r.outputs[0].form;
  if (x.shape.size() != 4 || y.shape.size() != 4) {
    whyNot = "2-D pools only";
    return false;
  }
  g.type = x.type;
  if (!isFloatingDeviceType(g.type) || y.type != g.type) {
    whyNot = "X and Y of one floating format";
    return false;
  }
  if (x.order != kNhwc || y.order != kNhwc) {
    whyNot = "X and Y in NHWC";
    return false;
  }
  g.n = x.shape[0];
  g.c = x.shape[1];
  g.h = x.shape[2];
  g.w = x.shape[3];
  PoolWindow2d window;
  if (!poolWindow2d(r, g.h, g.w, window, whyNot))
    return false;
  g.kh = window.kh;
  g.kw = window.kw;
  takeWindow(g, window);
  if (y.shape != std::vector<int64_t>{g.n, g.c, g.oh, g.ow}) {
    whyNot = "Y's shape is not the pool's output";
    return false;
  }
  g.r = x.rowLongWords();
  g.q = g.r / kQuadLongWords;
  g.wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  return true;
}

bool analyse(const KernelRequest &r, Geometry &g, std::string &whyNot) {
  if (r.opType == "MaxPool")
    return analyseMaxPool(r, g, whyNot);
  if (r.opType != "Conv")
    return false;
  if (r.inputs.size() < 2 || r.outputs.size() != 1 || !r.hasInput(0) ||
      !r.hasInput(1)) {
    whyNot = "expects X, W and one output";
    return false;
  }
  const DramForm &x = r.inputs[0].form, &wf = r.inputs[1].form,
                 &y = r.outputs[0].form;
  if (x.shape.size() != 4 || wf.shape.size() != 4 || y.shape.size() != 4) {
    whyNot = "2-D convolutions only";
    return false;
  }
  g.c = x.shape[1];
  int64_t group = r.getInt("group", 1);
  // A plain convolution of one channel is the matrix unit's.
  if (g.c < 2 || group != g.c || wf.shape[0] != g.c || wf.shape[1] != 1) {
    whyNot = "depthwise convolutions only (group = C = M, C > 1)";
    return false;
  }
  g.type = x.type;
  if (!isFloatingDeviceType(g.type) || wf.type != g.type || y.type != g.type ||
      (r.hasInput(2) && r.inputs[2].form.type != g.type)) {
    whyNot = "X, W, B and Y of one floating format";
    return false;
  }
  if (!r.inputs[1].constant || (r.hasInput(2) && !r.inputs[2].constant)) {
    whyNot = "W and B must be initializers";
    return false;
  }
  if (x.order != kNhwc || y.order != kNhwc) {
    whyNot = "X and Y in NHWC";
    return false;
  }
  g.n = x.shape[0];
  g.h = x.shape[2];
  g.w = x.shape[3];
  g.kh = wf.shape[2];
  g.kw = wf.shape[3];
  ConvWindow2d window;
  if (!convWindow2d(r, g.h, g.w, g.kh, g.kw, window, whyNot))
    return false;
  takeWindow(g, window);
  if (y.shape != std::vector<int64_t>{g.n, g.c, g.oh, g.ow}) {
    whyNot = "an output shape Conv does not give";
    return false;
  }
  if (r.hasInput(2) && r.inputs[2].form.shape != std::vector<int64_t>{g.c}) {
    whyNot = "a bias of C elements";
    return false;
  }
  g.r = x.rowLongWords();
  g.q = g.r / kQuadLongWords;
  g.wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  return true;
}

/// A block of output rows [oh0, oh0 + rows) of image n, columns [ow0,
/// ow0 + cols) of them (all but a MaxPool's column segments: every column).
struct Item {
  int64_t n = 0, oh0 = 0, rows = 0, ow0 = 0, cols = 0;
};

struct Plan {
  /// Output rows per item and the padded input rows of its band.
  int64_t rowsPerItem = 0, bandRows = 0;
  /// A set of lanes: L columns by 64 / L rows.
  int64_t setCols = 0, setRows = 0;
  /// Output columns per item: OW, or a MaxPool's column segment when one
  /// output row's band is over the memories (D10; one row per item).
  int64_t itemCols = 0;
  bool segmented(const Geometry &g) const { return itemCols < g.ow; }
  /// Channel quads accumulated together (GRF1 holds their accumulators).
  int64_t chunk = 0;
  /// Long words: the band in LM0 (quads), in the L1BM and L2BM (its
  /// staging buffer, two of them), the item's output image (L1BM and each
  /// L1B's region of the L2BM).
  int64_t bandQuads = 0, bandLongWords = 0, stageLongWords = 0,
          outLongWords = 0;
  /// LM1: the weights, then the outputs of the item's sets.
  int64_t weightLongWords = 0, lm1Outputs = 0;
  /// The constant image: T's table, a zero row, weights, bias.
  int64_t zeroOffset = 0, zeroLongWords = 0, weightOffset = 0,
          weightImageLongWords = 0, biasOffset = 0, biasLongWords = 0,
          imageLongWords = 0;
  std::vector<Item> items;
  /// How items meet L1Bs (D2): X in group 0's DRAM only, its sixteen L1Bs
  /// take sixteen items a round (the links to the other groups carry 8 long
  /// words a cycle and hold group 0's DRAM meanwhile); X and Y holding the same
  /// images in each of the four groups, each group's L1Bs take its own
  /// images' items; else any item any L1B, 64 a round.
  enum class Placement {
    GroupZero,
    ByGroup,
    Anywhere
  } placement = Placement::Anywhere;
  int64_t imagesPerGroup = 0;
  int64_t rounds = 0;
  /// The items' rows straight into Y's DRAM (else through the PDM).
  bool directY = false;
  /// A MaxPool's row of -inf (zeroLongWords of them) in the PDM of every
  /// group that takes items, beside Y's image: what rows outside the image
  /// copy (D10).
  int64_t pdmNeutral = 0;

  /// The item L1B `slot` (group slot / 16, L2B slot / 8 % 2, L1B slot % 8)
  /// takes in `round`, or null.
  const Item *itemAt(int64_t round, int64_t slot) const {
    size_t index;
    if (placement == Placement::Anywhere) {
      index = size_t(round * kItemsPerRound + slot);
    } else {
      int64_t group = slot / kL1bsPerGroup;
      if (placement == Placement::GroupZero && group != 0)
        return nullptr;
      int64_t inGroup = round * kL1bsPerGroup + slot % kL1bsPerGroup;
      index = size_t(group * imagesPerGroupItems + inGroup);
      if (inGroup >= itemsInGroup(group))
        return nullptr;
    }
    return index < items.size() ? &items[index] : nullptr;
  }
  /// ByGroup: items of group g are items [g imagesPerGroupItems, ...).
  int64_t imagesPerGroupItems = 0;
  int64_t itemsInGroup(int64_t group) const {
    if (placement == Placement::GroupZero)
      return group == 0 ? int64_t(items.size()) : 0;
    return std::max<int64_t>(
        0,
        std::min<int64_t>(imagesPerGroupItems,
                          int64_t(items.size()) - group * imagesPerGroupItems));
  }
};

int64_t setsOf(const Geometry &g, const Plan &p, int64_t rows) {
  (void)g;
  return ceilDiv(rows, p.setRows) * ceilDiv(p.itemCols, p.setCols);
}

/// Whether items of `rows` output rows fit every memory they pass.
bool fits(const Geometry &g, Plan &p, int64_t rows) {
  p.rowsPerItem = rows;
  p.bandRows = (rows - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  p.bandQuads = p.bandRows * g.wp * g.q;
  p.bandLongWords = roundUp(p.bandQuads * kQuadLongWords, kMvUnitLongWords);
  // A row's transfer writes whole MV units from its first column: past the
  // band by the columns no output reads and the rounding.
  // (A segment's transfers hold to its columns: past by the rounding.)
  int64_t overhang =
      p.segmented(g) ? kMvUnitLongWords
                     : std::max<int64_t>(0, g.w - (g.wp - g.padLeft)) * g.r +
                           kMvUnitLongWords;
  p.stageLongWords =
      roundUp(p.bandQuads * kQuadLongWords + overhang, kMvUnitLongWords);
  // A MAB stores four pixels: up to three past the item's last.
  p.outLongWords = roundUp((rows * p.itemCols + 3) * g.r, kMvUnitLongWords);
  p.weightLongWords = g.maxPool ? 0 : roundUp(g.taps() * g.q, 4);
  p.lm1Outputs = setsOf(g, p, rows) * 4 * g.q;
  return roundUp(p.bandQuads, 4) <= kLmLongWords &&
         p.bandLongWords <= kL1bmLongWords &&
         p.outLongWords <= kL1bmLongWords &&
         p.weightLongWords + p.lm1Outputs <= kLmLongWords &&
         std::max(2 * p.stageLongWords,
                  int64_t(kL1bsPerL2b) * p.outLongWords) <= kL2bmLongWords;
}

/// Items of `cols` output columns: the band's width and the sets' shape.
void setItemCols(Geometry &g, Plan &p, int64_t cols) {
  p.itemCols = cols;
  g.wp = (cols - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  p.setCols = 4;
  while (p.setCols < cols && p.setCols < kLanes)
    p.setCols *= 2;
  p.setRows = kLanes / p.setCols;
}

bool planKernel(Geometry &g, const DramForm &x, const DramForm &y, Plan &p,
                std::string &whyNot) {
  setItemCols(g, p, g.ow);
  // Half convolutions accumulate in single (a double long word a quad);
  // maxima stay in their format.
  int64_t accumulatorPerQuad = g.type == DeviceType::Half && !g.maxPool ? 8 : 4;
  p.chunk =
      std::min(g.q, (kGrfLongWords - kGrf1Accumulators) / accumulatorPerQuad);
  int64_t bias = g.maxPool ? 0 : roundUp(g.q, 4);
  // GRF0: the bias, a zero and a fused activation's two bounds (a
  // MaxPool: -inf).
  if (bias + 3 > kGrfLongWords) {
    whyNot = "more than " + std::to_string(4 * (kGrfLongWords - 4)) +
             " channel long words";
    return false;
  }
  // The most output rows an item may take, then the fewest that keep the
  // same number of rounds (less work per round).
  int64_t most = 0;
  for (int64_t rows = 1; rows <= g.oh; ++rows) {
    if (!fits(g, p, rows))
      break;
    most = rows;
  }
  // A MaxPool whose output row's band is over the memories (single or
  // double at 112 x 112 x 64): items of one row's column segment, the
  // fewest segments that fit, of equal width (D10).
  if (most == 0 && g.maxPool)
    for (int64_t cols = g.ow - 1; cols >= 1; --cols) {
      setItemCols(g, p, cols);
      if (!fits(g, p, 1))
        continue;
      setItemCols(g, p, ceilDiv(g.ow, ceilDiv(g.ow, cols)));
      most = 1;
      break;
    }
  if (most == 0) {
    whyNot = "one output row's band or outputs are over the PE memories, "
             "the L1BM or the L2BM";
    return false;
  }
  using Placement = Plan::Placement;
  p.imagesPerGroup = x.rowsPerGroup() / (g.h * g.w);
  if (x.groups == 1)
    p.placement = Placement::GroupZero;
  else if (y.groups == kDramGroups &&
           y.rowsPerGroup() == p.imagesPerGroup * g.oh * g.ow)
    p.placement = Placement::ByGroup;
  else
    p.placement = Placement::Anywhere;
  // Rounds for items of `rows` rows: 16 items a round from a group's
  // images, or 64 from all.
  auto roundsOf = [&](int64_t rows) {
    int64_t perImage = ceilDiv(g.oh, rows) * ceilDiv(g.ow, p.itemCols);
    if (p.placement == Placement::GroupZero)
      return ceilDiv(g.n * perImage, kL1bsPerGroup);
    if (p.placement == Placement::ByGroup)
      return ceilDiv(p.imagesPerGroup * perImage, kL1bsPerGroup);
    return ceilDiv(g.n * perImage, kItemsPerRound);
  };
  p.rounds = roundsOf(most);
  int64_t rows = most;
  for (int64_t fewer = 1; fewer < most; ++fewer)
    if (roundsOf(fewer) <= p.rounds) {
      rows = fewer;
      break;
    }
  fits(g, p, rows);
  p.items.clear();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh0 = 0; oh0 < g.oh; oh0 += rows)
      for (int64_t ow0 = 0; ow0 < g.ow; ow0 += p.itemCols)
        p.items.push_back({n, oh0, std::min(rows, g.oh - oh0), ow0,
                           std::min(p.itemCols, g.ow - ow0)});
  p.imagesPerGroupItems =
      p.imagesPerGroup * ceilDiv(g.oh, rows) * ceilDiv(g.ow, p.itemCols);
  // When every item's rows start an MV unit of Y's block, its transfer
  // (whole units, the tail overwritten by the next item's) goes straight
  // to DRAM and stays inside the block; else through Y's image in the PDM.
  // (Segments: their transfers' tails run into the next segment and past
  // the block, so through the PDM.)
  p.directY = !p.segmented(g) &&
              std::all_of(p.items.begin(), p.items.end(), [&](const Item &i) {
                return (i.n * g.oh + i.oh0) * g.ow % y.rowsPerGroup() * g.r %
                           kMvUnitLongWords ==
                       0;
              });
  if (!p.directY &&
      roundUp(y.groupLongWords(), kMvUnitLongWords) + kMvUnitLongWords >
          kPdmLongWords) {
    whyNot = "Y is over a PDM per group";
    return false;
  }
  p.zeroOffset = kTableImageLongWords;
  p.zeroLongWords = roundUp(g.wp * g.r, kMvUnitLongWords);
  if (g.maxPool) {
    p.pdmNeutral = p.directY ? 0
                             : roundUp(y.groupLongWords(), kMvUnitLongWords) +
                                   kMvUnitLongWords;
    if (p.pdmNeutral + p.zeroLongWords > kPdmLongWords) {
      whyNot = "Y and a row of -inf are over a PDM per group";
      return false;
    }
  }
  p.weightOffset = p.zeroOffset + p.zeroLongWords;
  p.weightImageLongWords =
      roundUp(kQuadLongWords * p.weightLongWords, kMvUnitLongWords);
  p.biasOffset = p.weightOffset + p.weightImageLongWords;
  p.biasLongWords = roundUp(kQuadLongWords * bias, kMvUnitLongWords);
  p.imageLongWords = p.biasOffset + p.biasLongWords;
  return true;
}

bool resolvePlan(const KernelRequest &request, Geometry &g, Plan &p,
                 std::string &whyNot) {
  return analyse(request, g, whyNot) &&
         planKernel(g, request.inputs[0].form, request.outputs[0].form, p,
                    whyNot);
}

/// Steps on independent accumulators (chains): a chain's step goes out
/// once its previous result has landed, other chains filling the wait.
class Chains {
public:
  Chains(VsmWriter &out, size_t count) : Out(out), Ready(count, 0) {}
  /// `latency`: steps from a step to the first that may read its result
  /// (3 for the MAU, 2 for the ALU).
  void issue(size_t chain, const std::vector<std::string> &steps,
             int64_t latency) {
    if (Ready[chain] > Now) {
      Out.nop(unsigned(Ready[chain] - Now));
      Now = Ready[chain];
    }
    for (const std::string &step : steps)
      Out.step({step});
    Now += int64_t(steps.size());
    Ready[chain] = Now - 1 + latency;
  }
  void finish() {
    int64_t last = *std::max_element(Ready.begin(), Ready.end());
    Out.nop(unsigned(std::max<int64_t>(0, last - Now)));
    Now = std::max(Now, last);
  }

private:
  VsmWriter &Out;
  std::vector<int64_t> Ready;
  int64_t Now = 0;
};

/// MV transfers issued together and waited for together.
class MvBatch {
public:
  explicit MvBatch(VsmWriter &out) : Out(out) {}
  void move(const std::string &from, const std::string &to, int64_t longWords) {
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

std::string at(const char *space, int64_t address, unsigned group) {
  return std::string(space) + std::to_string(address) + "@" +
         std::to_string(group);
}
std::string l2bmAt(int64_t address, unsigned group, unsigned l2b) {
  return "$lc" + std::to_string(address) + "@" + std::to_string(group) + "." +
         std::to_string(l2b);
}

/// Sets long words [first, end) of LM0 in every PE to the neutral value:
/// zero, or (`neutral` an operand, a MaxPool's -inf) a copy of it; four a
/// step, the last step's spare cycles repeating its last address.
void fillLm0(VsmWriter &out, int64_t first, int64_t end,
             const std::string &neutral) {
  std::string opcode = neutral.empty() ? "zero " : "lpassa " + neutral + " ";
  for (int64_t a = first; a < end; a += 4) {
    if (a + 4 <= end) {
      out.step({opcode + peOperand(PeMemory::LM0, Width::Long, 2 * a)});
      continue;
    }
    std::array<int64_t, 4> words;
    for (int64_t c = 0; c < 4; ++c)
      words[size_t(c)] = 2 * std::min(a + c, end - 1);
    out.step({opcode + peOperandFlat(PeMemory::LM0, Width::Long, words)});
  }
}

void emitNeutralRow(VsmWriter &out, const Plan &p);

/// A MaxPool's setup, with no constant image to read (D10): T's table
/// computed from $peid, -inf in GRF0 long word 0, and a row of -inf in
/// the PDMs (at pdmNeutral, emitNeutralRow) for the band rows outside the
/// image.
bool emitMaxPoolSetup(VsmWriter &out, const Geometry &g, const Plan &p,
                      std::string &error) {
  using Home = MathProgram::Home;
  using Ref = MathProgram::Ref;
  // Lane 4 m + c (MAB m = floor(peid / 4), cycle c) is pixel (dr, dc) of
  // a set of L columns: dr = floor(m / (L / 4)), dc = 4 (m - dr L / 4) + c,
  // at LM0 word 2 (dr sh Wp + dc sw) Q, as packConstant's table for the
  // convolutions; small integers, exact in single.
  const VectorFormat single(DeviceType::Single);
  const double mabsPerRow = double(p.setCols / 4);
  for (int64_t c = 0; c < 4; ++c)
    emitLongWordConstant(out, PeMemory::LM1, c,
                         single.splat(double(2 * c * g.sw * g.q)));
  MathProgram table(DeviceType::Single);
  Ref cycleWords = table.input();
  Ref pe = table.alu(
      "ior",
      {table.fixed("$peid"), table.constantBits(0x4b000000, Home::First)},
      Home::Second);
  pe = table.mau("fvadd", {pe, -table.constant(8388608.0, Home::First)},
                 Home::Second);
  Ref quarter =
      table.mau("fvmul", {pe, table.constant(0.25, Home::First)}, Home::First);
  Ref mab = table.alu("ffloor", {quarter}, Home::Second);
  Ref scaled =
      table.mau("fvmul", {mab, table.constant(1.0 / mabsPerRow, Home::First)},
                Home::First);
  Ref dr = table.alu("ffloor", {scaled}, Home::Destination);
  Ref dcm =
      table.mau("fvfma", {dr, -table.constant(mabsPerRow, Home::First), mab},
                Home::Second);
  Ref along = table.mau(
      "fvfma",
      {dcm, table.constant(double(8 * g.sw * g.q), Home::First), cycleWords},
      Home::First);
  Ref words = table.mau(
      "fvfma",
      {dr, table.constant(double(2 * g.sh * g.wp * g.q), Home::Second), along},
      Home::Second);
  table.setResult(table.alu("fftoi", {words}, Home::Destination));
  MathScratch scratch{{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}};
  if (!table.emit(out, {{PeMemory::LM1, 0, 4}}, {PeMemory::LM0, 0, 4}, scratch,
                  error))
    return false;
  out.nop(2);
  out.step({"lpassa " + peOperand(PeMemory::LM0, Width::Long, 0) + " $t"});
  // -inf in GRF0, then LM1 full of it, gathered into the L1BM (every L1B
  // the same), its first L1B's copy into each L2BM and on to the
  // PDMs (emitNeutralRow).
  const VectorFormat format(g.type);
  emitLongWordConstant(out, PeMemory::GRF0, 0,
                       format.splat(-std::numeric_limits<double>::infinity()));
  out.nop();
  emitNeutralRow(out, p);
  return true;
}

/// GRF0 long word 0's value (-inf, or zero to clear it again) in a row of
/// p.zeroLongWords in the PDM at p.pdmNeutral of every group whose L1Bs
/// take items, through LM1, the L1BM and the L2BM from their address 0.
void emitNeutralRow(VsmWriter &out, const Plan &p) {
  const int64_t perPe = roundUp(ceilDiv(p.zeroLongWords, kPesPerL1b), 4);
  for (int64_t j = 0; j < perPe; j += 4)
    out.step({"lpassa " + peOperand(PeMemory::GRF0, Width::Long, 0, 0) + " " +
              peOperand(PeMemory::LM1, Width::Long, 2 * j)});
  out.nop();
  emitPeToL1bm(out, Spread::AllPes, PeMemory::LM1, 0, perPe, 0);
  for (int64_t offset = 0; offset < p.zeroLongWords;
       offset += kL2bmStepLongWords)
    out.step({"l2bm@0 " + l1bmOperand(offset) + " " + l2bmOperand(offset)});
  out.nop(2);
  unsigned tag = out.newTag();
  // Only group 0's PDM where only group 0's L1Bs take items: a transfer
  // from every group's L2BM would keep the other groups' PEs running in
  // the emulator (docs/target/mncore2.md S39) for rows nobody reads.
  std::string from = p.placement == Plan::Placement::GroupZero
                         ? l2bmAt(0, 0, 0) + " " + at("$p", p.pdmNeutral, 0)
                         : "$lc0@.0 $p" + std::to_string(p.pdmNeutral);
  out.statement("mvp/n" + std::to_string(p.zeroLongWords) +
                VsmWriter::tagName(tag) + " " + from);
  out.wait(tag);
}

class DepthwiseGenerator : public KernelGenerator {
public:
  const char *name() const override { return "depthwise"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "Conv")
      return false;
    Geometry g;
    Plan p;
    return resolvePlan(withPreferredOrders(request, *this), g, p, whyNot);
  }

  /// X and Y in NHWC, as the conv kernel takes them.
  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    if (operand == 0 || operand == request.inputs.size())
      return kNhwc;
    return {};
  }

  /// W carries the whole image (T's table, a zero row, the weights and
  /// the bias); B stays canonical and unread.
  std::optional<int64_t> constantLongWords(const KernelRequest &request,
                                           size_t input) const override {
    Geometry g;
    Plan p;
    std::string whyNot;
    if (input != 1 || !resolvePlan(request, g, p, whyNot))
      return std::nullopt;
    return p.imageLongWords;
  }

  /// A Relu or Clip after it clamps the outputs before they are stored.
  bool fusesActivation(const KernelRequest &request) const override {
    std::string whyNot;
    return matches(request, whyNot);
  }

  bool packConstant(const KernelRequest &request, size_t input,
                    DramImage &image, std::string &error) const override;

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override;
};

/// MaxPool over the same bands (D10): one MV per input row instead of the
/// pool kernel's one per input position (P4), so ahead of it; the pool
/// kernel keeps what this refuses (Indices, rows over the memories).
class MaxPoolBandGenerator : public DepthwiseGenerator {
public:
  const char *name() const override { return "pool-bands"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "MaxPool")
      return false;
    Geometry g;
    Plan p;
    return resolvePlan(withPreferredOrders(request, *this), g, p, whyNot);
  }

  bool fusesActivation(const KernelRequest &) const override { return false; }
};

bool DepthwiseGenerator::packConstant(const KernelRequest &request,
                                      size_t input, DramImage &image,
                                      std::string &error) const {
  Geometry g;
  Plan p;
  if (input != 1 || !resolvePlan(request, g, p, error)) {
    if (error.empty())
      error = "depthwise packs only W";
    return false;
  }
  VectorFormat format(g.type);
  const int64_t lanes = format.lanes();
  const reference::Tensor &w = *request.inputs[1].constant;
  const reference::Tensor *b =
      request.hasInput(2) ? request.inputs[2].constant : nullptr;
  std::vector<uint64_t> words(size_t(p.imageLongWords), 0);
  // T's table: PE q (MAB m = q / 4) at GRF1 long word c holds the LM0 word
  // offset of lane 4 m + c: pixel (dr, dc) of a set.
  for (int64_t pe = 0; pe < kPesPerL1b; ++pe)
    for (int64_t c = 0; c < 4; ++c) {
      int64_t lane = 4 * (pe / 4) + c;
      int64_t dr = lane / p.setCols, dc = lane % p.setCols;
      int64_t quad = (dr * g.sh * g.wp + dc * g.sw) * g.q;
      words[size_t(kPesPerL1b * c + pe)] = uint64_t(2 * quad);
    }
  // Weights: long word j = tap q + cq of PE pe at 4 j + pe, channels
  // (4 cq + pe) lanes + lane; then the bias alike (zeros without B).
  auto channelWord = [&](int64_t channelLongWord,
                         const std::function<double(int64_t)> &value) {
    return format.longWord([&](unsigned lane) -> uint64_t {
      int64_t channel = channelLongWord * lanes + lane;
      return channel < g.c ? format.laneOf(value(channel)) : 0;
    });
  };
  for (int64_t tap = 0; tap < g.taps(); ++tap)
    for (int64_t cl = 0; cl < g.r; ++cl)
      words[size_t(p.weightOffset + tap * g.r + cl)] =
          channelWord(cl, [&](int64_t channel) {
            return w.elementAsDouble(channel * g.taps() + tap);
          });
  if (b)
    for (int64_t cl = 0; cl < g.r; ++cl)
      words[size_t(p.biasOffset + cl)] = channelWord(
          cl, [&](int64_t channel) { return b->elementAsDouble(channel); });
  // Every group reads its own copy.
  image.groups = kDramGroups;
  image.longWordsPerGroup = p.imageLongWords;
  for (unsigned group = 0; group < kDramGroups; ++group)
    image.data[group] = words;
  return true;
}

bool DepthwiseGenerator::emit(const KernelRequest &request, VsmWriter &out,
                              KernelDescription &description,
                              std::string &error) const {
  Geometry g;
  Plan p;
  if (!resolvePlan(request, g, p, error))
    return false;
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  // A MaxPool has no constant image: its T and -inf row are made here.
  const int64_t wBase = g.maxPool ? 0 : request.inputs[1].form.base;
  const VectorFormat format(g.type);
  const bool half = g.type == DeviceType::Half;
  const bool dbl = g.type == DeviceType::Double;
  const int64_t rounds = p.rounds;

  description.generator = name();
  description.variant =
      std::string(g.maxPool ? "MaxPool, " : "") +
      (half  ? (g.maxPool ? "half" : "half (single accumulators)")
       : dbl ? "double"
             : "single") +
      (g.maxPool ? ", vector ALU, " : ", vector MAU, ") +
      std::to_string(p.rowsPerItem) + " output row(s) per L1B, sets of " +
      std::to_string(p.setRows) + " x " + std::to_string(p.setCols) +
      " pixels, " + std::to_string(rounds) + " round(s) " +
      (p.placement == Plan::Placement::GroupZero ? "on group 0's L1Bs"
       : p.placement == Plan::Placement::ByGroup ? "on each group's L1Bs"
                                                 : "on every L1B") +
      (p.segmented(g) ? ", column segments of " + std::to_string(p.itemCols)
                      : std::string()) +
      ", Y " + (p.directY ? "straight to DRAM" : "through the PDM") +
      (request.activation ? ", then " + request.activation->opType : "");
  description.parameters.push_back(
      {"window", std::to_string(g.kh) + "x" + std::to_string(g.kw) +
                     " stride " + std::to_string(g.sh) + "x" +
                     std::to_string(g.sw)});

  // GRF0: the bias quads, then a zero long word (the conversion's product).
  const int64_t biasQuads = roundUp(g.q, 4);
  const int64_t grf0Zero = biasQuads;
  // LM1: the weights, then the outputs of the item's sets.
  const int64_t lm1Outputs = p.weightLongWords;
  // L2BM: two staging buffers, then each L1B's output region: beside them
  // when they fit, so that a round's results move out while the next
  // round's first bands move in (D8); else over them, once the bands are
  // in the L1BMs, each round waiting for its results.
  const bool apart =
      2 * p.stageLongWords + int64_t(kL1bsPerL2b) * p.outLongWords <=
      kL2bmLongWords;
  const int64_t l2bmOut = apart ? 2 * p.stageLongWords : 0;

  ClampBounds clamp;
  if (g.maxPool) {
    if (!emitMaxPoolSetup(out, g, p, error))
      return false;
  } else {
    // T's table into GRF1 (l1bmd: PE q gets long word 64 j + q), then T.
    L1bRanges table;
    table.base = wBase;
    table.longWords = kTableImageLongWords;
    emitDramToL1bm(out, table, 0, 0);
    emitL1bmToPe(out, Spread::AllPes, 0, PeMemory::GRF1, kGrf1Table, 4);
    out.step({"lpassa " +
              peOperand(PeMemory::GRF1, Width::Long, 2 * kGrf1Table) + " $t"});
    // The weights into LM1 and the bias into GRF0 (l1bmm: PE pe gets
    // long word 4 j + pe), the zero beside it.
    L1bRanges weights;
    weights.base = wBase + p.weightOffset;
    weights.longWords = p.weightImageLongWords;
    emitDramToL1bm(out, weights, 0, 0);
    emitL1bmToPe(out, Spread::MabBroadcast, 0, PeMemory::LM1, 0,
                 p.weightLongWords);
    L1bRanges bias;
    bias.base = wBase + p.biasOffset;
    bias.longWords = p.biasLongWords;
    emitDramToL1bm(out, bias, 0, 0);
    emitL1bmToPe(out, Spread::MabBroadcast, 0, PeMemory::GRF0, 0, biasQuads);
    out.step(
        {"zero " + peOperand(PeMemory::GRF0, Width::Long, 2 * grf0Zero, 0)});
    // A fused Relu or Clip's bounds beside the zero (D7).
    if (request.activation)
      clamp =
          emitClampBounds(out, format, request.activation->bounds,
                          PeMemory::GRF0, grf0Zero + 1, grf0Zero + 2, grf0Zero);
  }
  out.nop(2);

  // The pad columns' value: zero, or a MaxPool's -inf (GRF0 long word 0).
  const std::string neutral =
      g.maxPool ? peOperand(PeMemory::GRF0, Width::Long, 0, 0) : "";
  const int64_t xRowsPerGroup = x.rowsPerGroup();
  const int64_t yRowsPerGroup = y.rowsPerGroup();
  const int64_t rowMove = roundUp(g.w * g.r, kMvUnitLongWords);
  const bool segmented = p.segmented(g);

  // Bands: DRAM -> L2BM (buffer k % 2, one MV per input row) -> L1BM of
  // L1B k; the next L1B's rows move while this one's are copied, and the
  // next round's first two while this round computes (apart).
  std::array<std::set<unsigned>, kL1bsPerL2b> tags;
  std::array<bool, kL1bsPerL2b> staged{};
  MvBatch results(out);
  // Through the PDM: what every group's image holds for good (up to the
  // last item moved, whose tail the next item overwrites) goes on to Y's
  // DRAM as soon as it has landed, beside the next round (D6).
  std::array<int64_t, kDramGroups> written{}, copied{};
  MvBatch copies(out);
  auto copyOut = [&](bool all) {
    if (p.directY)
      return;
    for (unsigned group = 0; group < y.groups; ++group) {
      int64_t to = all ? y.groupLongWords()
                       : written[group] / kMvUnitLongWords * kMvUnitLongWords;
      if (to > copied[group])
        copies.move(at("$p", copied[group], group),
                    at("$d", y.base + copied[group], group),
                    to - copied[group]);
      copied[group] = std::max(copied[group], to);
    }
  };
  auto resultsLanded = [&]() {
    results.waitAll();
    copyOut(false);
  };
  auto stage = [&](int64_t round, unsigned k) {
    staged[k] = true;
    int64_t buffer = (k % 2) * p.stageLongWords;
    for (unsigned group = 0; group < kDramGroups; ++group)
      for (unsigned l2b = 0; l2b < kL2bsPerGroup; ++l2b) {
        int64_t slot = (group * kL2bsPerGroup + l2b) * kL1bsPerL2b + k;
        const Item *found = p.itemAt(round, slot);
        if (!found)
          continue;
        const Item &item = *found;
        for (int64_t rp = 0; rp < p.bandRows; ++rp) {
          int64_t ih = item.oh0 * g.sh + rp - g.padTop;
          unsigned tag = out.newTag();
          tags[k].insert(tag);
          std::string mv = "mvp/n";
          if (ih < 0 || ih >= g.h) {
            out.statement(mv + std::to_string(p.zeroLongWords) +
                          VsmWriter::tagName(tag) + " " +
                          (g.maxPool ? at("$p", p.pdmNeutral, group)
                                     : at("$d", wBase + p.zeroOffset, group)) +
                          " " + l2bmAt(buffer + rp * g.wp * g.r, group, l2b));
            continue;
          }
          int64_t row = (item.n * g.h + ih) * g.w;
          if (segmented) {
            // The segment's columns [iw0, iw0 + Wp): -inf before the image,
            // its columns, -inf after, in that order (each transfer's tail
            // is overwritten by the next, D10).
            int64_t iw0 = item.ow0 * g.sw - g.padLeft;
            int64_t first = std::max<int64_t>(0, -iw0);
            int64_t end = std::max(first, std::min(g.wp, g.w - iw0));
            int64_t rowAt = buffer + rp * g.wp * g.r;
            auto neutralColumns = [&](int64_t from, int64_t to) {
              unsigned padTag = out.newTag();
              tags[k].insert(padTag);
              out.statement(
                  mv +
                  std::to_string(roundUp((to - from) * g.r, kMvUnitLongWords)) +
                  VsmWriter::tagName(padTag) + " " +
                  at("$p", p.pdmNeutral, group) + " " +
                  l2bmAt(rowAt + from * g.r, group, l2b));
            };
            if (first > 0)
              neutralColumns(0, first);
            if (end > first) {
              int64_t at0 = row + iw0 + first;
              out.statement(mv +
                            std::to_string(roundUp((end - first) * g.r,
                                                   kMvUnitLongWords)) +
                            VsmWriter::tagName(tag) + " " +
                            at("$d", x.base + (at0 % xRowsPerGroup) * g.r,
                               unsigned(at0 / xRowsPerGroup)) +
                            " " + l2bmAt(rowAt + first * g.r, group, l2b));
            } else {
              tags[k].erase(tag);
            }
            if (end < g.wp)
              neutralColumns(end, g.wp);
            continue;
          }
          out.statement(
              mv + std::to_string(rowMove) + VsmWriter::tagName(tag) + " " +
              at("$d", x.base + (row % xRowsPerGroup) * g.r,
                 unsigned(row / xRowsPerGroup)) +
              " " + l2bmAt(buffer + (rp * g.wp + g.padLeft) * g.r, group, l2b));
        }
      }
  };
  for (int64_t round = 0; round < rounds; ++round) {
    out.comment("depthwise round " + std::to_string(round));
    if (!staged[0])
      stage(round, 0);
    for (unsigned k = 0; k < kL1bsPerL2b; ++k) {
      if (k + 1 < kL1bsPerL2b && !staged[k + 1])
        stage(round, k + 1);
      for (unsigned tag : tags[k])
        out.wait(tag);
      tags[k].clear();
      staged[k] = false;
      int64_t buffer = (k % 2) * p.stageLongWords;
      for (int64_t offset = 0; offset < p.bandLongWords;
           offset += kL2bmStepLongWords)
        out.step({"l2bmb@" + std::to_string(k) + " " +
                  l2bmOperand(buffer + offset) + " " + l1bmOperand(offset)});
    }
    if (apart && round + 1 < rounds) {
      stage(round + 1, 0);
      stage(round + 1, 1);
    }
    out.nop();
    // L1BM -> LM0 of every MAB, then the pad columns to zero.
    emitL1bmToPe(out, Spread::MabBroadcast, 0, PeMemory::LM0, 0,
                 roundUp(p.bandQuads, 4));
    // (Segments bring their -inf columns with them.)
    int64_t padRight = g.wp - g.padLeft - g.w;
    for (int64_t rp = 0; rp < p.bandRows && !segmented; ++rp) {
      int64_t rowQuad = rp * g.wp * g.q;
      fillLm0(out, rowQuad, rowQuad + g.padLeft * g.q, neutral);
      if (padRight > 0)
        fillLm0(out, rowQuad + (g.wp - padRight) * g.q, rowQuad + g.wp * g.q,
                neutral);
    }
    out.nop();

    // The sets: every tap of every channel quad one step per chunk of
    // accumulators, then the conversion into the outputs in LM1.
    const int64_t across = ceilDiv(p.itemCols, p.setCols);
    const int64_t sets = setsOf(g, p, p.rowsPerItem);
    const std::string zero =
        peOperand(PeMemory::GRF0, Width::Long, 2 * grf0Zero, 0);
    Chains chains(out, size_t(p.chunk));
    for (int64_t set = 0; set < sets; ++set) {
      int64_t a = set / across, b = set % across;
      int64_t setQuad =
          (a * p.setRows * g.sh * g.wp + b * p.setCols * g.sw) * g.q;
      int64_t outputs = lm1Outputs + set * 4 * g.q;
      for (int64_t k0 = 0; k0 < g.q; k0 += p.chunk) {
        int64_t kc = std::min(p.chunk, g.q - k0);
        auto accumulator = [&](int64_t slot) {
          return half && !g.maxPool
                     ? peOperand(PeMemory::GRF1, Width::DoubleLong,
                                 2 * (kGrf1Accumulators + 8 * slot))
                     : peOperand(PeMemory::GRF1, Width::Long,
                                 2 * (kGrf1Accumulators + 4 * slot));
        };
        for (int64_t tap = 0; tap < g.taps(); ++tap) {
          int64_t i = tap / g.kw, j = tap % g.kw;
          int64_t tapQuad = (i * g.dh * g.wp + j * g.dw) * g.q;
          for (int64_t cq = k0; cq < k0 + kc; ++cq) {
            int64_t slot = cq - k0;
            std::string xOp =
                "$lmt" + std::to_string(2 * (setQuad + tapQuad + cq));
            std::string wOp =
                peOperand(PeMemory::LM1, Width::Long, 2 * (tap * g.q + cq), 0);
            std::string acc = accumulator(slot);
            if (g.maxPool) {
              // max(x, acc), as the pool kernel and pfvm:cpu order it
              // (which zero a tie of -0 and +0 keeps), from the first tap.
              chains.issue(size_t(slot),
                           {tap == 0 ? "lpassa " + xOp + " " + acc
                                     : format.alu("max") + " " + xOp + " " +
                                           acc + " " + acc},
                           2);
              continue;
            }
            std::string addend =
                tap == 0 ? peOperand(PeMemory::GRF0, Width::Long, 2 * cq, 0) +
                               (half ? "e" : "")
                         : acc;
            std::vector<std::string> steps;
            if (dbl) {
              std::array<std::string, 2> pair =
                  pairedProductSteps("dvfma", {xOp, wOp, addend}, acc);
              steps = {pair[0], pair[1]};
            } else {
              steps = {std::string(half ? "hvfma " : "fvfma ") + xOp + " " +
                       wOp + " " + addend + " " + acc};
            }
            chains.issue(size_t(slot), steps, 3);
          }
        }
        // Cycle c's accumulators are pixel c's: q long words apart in LM1.
        for (int64_t cq = k0; cq < k0 + kc; ++cq) {
          int64_t slot = cq - k0;
          std::string result = peOperand(PeMemory::LM1, Width::Long,
                                         2 * (outputs + cq), unsigned(2 * g.q));
          if (half && !g.maxPool)
            chains.issue(size_t(slot),
                         {"hvfmar " + zero + " " + zero + " " +
                          accumulator(slot) + " " + result},
                         3);
          else
            chains.issue(size_t(slot),
                         {"lpassa " + accumulator(slot) + " " + result}, 2);
        }
      }
    }
    chains.finish();
    // A fused activation clamps the outputs in LM1, in the result's format,
    // before they are stored (D7).
    if (request.activation) {
      std::vector<std::string> outputs;
      for (int64_t j = 0; j < sets * 4 * g.q; j += 4)
        outputs.push_back(
            peOperand(PeMemory::LM1, Width::Long, 2 * (lm1Outputs + j)));
      emitClamp(out, format, clamp, outputs);
      out.nop();
    }

    // MAB m's four pixels of each set into the L1BM image of the item's
    // rows (pixel p's quads at 4 q p), in ascending pixel order: a MAB's
    // pixels past a row's end are overwritten by the next row's.
    struct Store {
      int64_t pixel, set, mab;
    };
    std::vector<Store> stores;
    for (int64_t set = 0; set < sets; ++set)
      for (int64_t mab = 0; mab < kMabs; ++mab) {
        int64_t lane = 4 * mab;
        int64_t row = set / across * p.setRows + lane / p.setCols;
        int64_t col = set % across * p.setCols + lane % p.setCols;
        if (row < p.rowsPerItem && col < p.itemCols)
          stores.push_back({row * p.itemCols + col, set, mab});
      }
    std::stable_sort(
        stores.begin(), stores.end(),
        [](const Store &s, const Store &t) { return s.pixel < t.pixel; });
    for (const Store &s : stores) {
      int64_t lm = lm1Outputs + s.set * 4 * g.q;
      int64_t l1bm = s.pixel * g.r;
      std::string opcode = "l1bmm@" + std::to_string(s.mab) + " ";
      int64_t j = 0;
      for (; j + 8 <= 4 * g.q; j += 8)
        out.step({opcode +
                  peOperand(PeMemory::LM1, Width::DoubleLong, 2 * (lm + j)) +
                  " " + l1bmOperand(l1bm + 4 * j, true)});
      for (; j < 4 * g.q; j += 4)
        out.step({opcode + peOperand(PeMemory::LM1, Width::Long, 2 * (lm + j)) +
                  " " + l1bmOperand(l1bm + 4 * j)});
    }
    out.nop();
    // Each L1B's image into its region of the L2BM (the last round's
    // results out of it first), then the items' rows into Y (or its image
    // in the PDM), in item order.
    resultsLanded();
    for (unsigned k = 0; k < kL1bsPerL2b; ++k)
      for (int64_t offset = 0; offset < p.outLongWords;
           offset += kL2bmStepLongWords)
        out.step({"l2bm@" + std::to_string(k) + " " + l1bmOperand(offset) +
                  " " + l2bmOperand(l2bmOut + k * p.outLongWords + offset)});
    out.nop(2);
    for (int64_t slot = 0; slot < kItemsPerRound; ++slot) {
      const Item *found = p.itemAt(round, slot);
      if (!found)
        continue;
      const Item &item = *found;
      unsigned group = unsigned(slot / kL1bsPerGroup),
               l2b = unsigned(slot / kL1bsPerL2b % kL2bsPerGroup),
               k = unsigned(slot % kL1bsPerL2b);
      int64_t pixel = (item.n * g.oh + item.oh0) * g.ow + item.ow0;
      int64_t local = (pixel % yRowsPerGroup) * g.r;
      unsigned yGroup = unsigned(pixel / yRowsPerGroup);
      written[yGroup] =
          std::max(written[yGroup], local + item.rows * item.cols * g.r);
      results.move(
          l2bmAt(l2bmOut + k * p.outLongWords, group, l2b),
          p.directY ? at("$d", y.base + local, unsigned(pixel / yRowsPerGroup))
                    : at("$p", local, unsigned(pixel / yRowsPerGroup)),
          roundUp(item.rows * item.cols * g.r, kMvUnitLongWords));
    }
    if (!apart)
      resultsLanded();
  }
  results.waitAll();
  copyOut(true);
  copies.waitAll();
  if (g.maxPool) {
    // The row of -inf back to zero in the PDM, the L2BM, the L1BM and LM1
    // (GRF0's -inf too): a later kernel reads only what it writes, but its
    // matrix products also take lanes it leaves as they were (transfers
    // move whole pieces), and the emulator's fast product path declines
    // infinite elements. ResNet-50 on mncc-sim: 21.2 s with the -inf left,
    // 14.3 s without, for 320 cycles more.
    out.step({"zero " + peOperand(PeMemory::GRF0, Width::Long, 0, 0)});
    out.nop();
    emitNeutralRow(out, p);
  }
  return true;
}

std::unique_ptr<KernelGenerator> createDepthwiseGenerator() {
  return std::make_unique<DepthwiseGenerator>();
}
std::unique_ptr<KernelGenerator> createMaxPoolBandGenerator() {
  return std::make_unique<MaxPoolBandGenerator>();
}

} // namespace

// Ahead of the conv kernel (200), which takes every depthwise shape this
// one refuses.
MNCC_KERNEL_GENERATOR(Depthwise, 210, createDepthwiseGenerator);
// Ahead of the pool kernel (100), which takes every MaxPool this refuses.
MNCC_KERNEL_GENERATOR(MaxPoolBand, 110, createMaxPoolBandGenerator);
