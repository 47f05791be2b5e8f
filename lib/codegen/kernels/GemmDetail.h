//===- GemmDetail.h - Pieces of the matrix product engine -------*- C++ -*-===//
//
// Shared by the engine's files: VSM operand spelling in long words, the
// per-PE setup every kernel of the family starts with (lane masks, T
// offsets), and the loaders that bring an image of quads into LM0 or a
// packed constant into every PE.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GEMMDETAIL_H
#define MNCC_LIB_CODEGEN_KERNELS_GEMMDETAIL_H

#include "GemmEngine.h"

#include "mncc/codegen/Transfer.h"

#include <functional>
#include <map>
#include <optional>

namespace mncc::codegen::gemm {

//===----------------------------------------------------------------------===//
// Operands, in long word addresses
//===----------------------------------------------------------------------===//

/// `$lm8`: one long word, the same every cycle.
std::string lwFixed(PeMemory memory, int64_t longWord);
/// `$lm8v`: long words lw, lw + 1, lw + 2, lw + 3 (or with `stride`).
std::string lwRun(PeMemory memory, int64_t longWord, int64_t stride = 1);
/// `$lm[8,10,12,14]`: one long word a cycle, anywhere.
std::string lwFlat(PeMemory memory, const std::array<int64_t, 4> &longWords);
/// `$lmt[..]`: LM0 through T.
std::string lwFlatT(const std::array<int64_t, 4> &longWords);
/// Double long words: `$llm8v` (lw, lw + 2, ...) and `$llm8`.
std::string llRun(PeMemory memory, int64_t longWord);
std::string llFixed(PeMemory memory, int64_t longWord);
/// The best spelling of four long word addresses: a run when evenly spaced.
std::string lwAny(PeMemory memory, const std::array<int64_t, 4> &longWords);
std::string lwAnyT(const std::array<int64_t, 4> &longWords);

/// `ui"0x3e003e00"`: an imm payload.
std::string immWord(uint32_t word);

//===----------------------------------------------------------------------===//
// Per-PE setup
//===----------------------------------------------------------------------===//

/// Scratch the setup uses, in long words of GRF0 and GRF1 (the engine keeps
/// it clear of its own data).
constexpr int64_t kSetupGrf0 = 224; // GRF0 [224, 256)
constexpr int64_t kSetupGrf1 = 232; // GRF1 [232, 256)

/// Emits per-PE constants and mask register entries. Entries 1..15 are
/// handed out once; entry kScratchEntry is rewritten as needed.
class PeSetup {
public:
  static constexpr unsigned kScratchEntry = 15;

  explicit PeSetup(VsmWriter &out) : Out(out) {}

  /// A zero-flush entry that keeps, in cycle c, the first valid[c]
  /// elements of a quad of `perLongWord`-element long words (and clears
  /// the rest); nullopt when every cycle keeps the whole quad.
  std::optional<unsigned> laneMask(const std::array<int, 4> &valid,
                                   int perLongWord, std::string &error);
  /// An entry set in every cycle for the PEs whose `$subpeid` is `pe`.
  std::optional<unsigned> peMask(unsigned pe, std::string &error);
  /// The scratch entry, set in every cycle for element `element` (0..15)
  /// of a quad of halves and clear elsewhere.
  unsigned halfElementScratch(int element);
  /// The scratch entry, set in the PEs of the L1Bs whose bit
  /// 8 * $l2bid + $l1bid of `places` is set ($l2bid = group x 2 + L2B:
  /// bit 16 g + 8 l + k is L1B k of L2B l of group g).
  unsigned placeMask(uint64_t places);

  /// T (every cycle) = F2[l2bid] + F1[l1bid] + F0[mabid] words, computed
  /// into GRF1 long word `grf1LongWord` ('i' lanes); tables of 8, 8 and
  /// 16 entries (empty: zero).
  void offsetTable(const std::vector<int64_t> &l2bTable,
                   const std::vector<int64_t> &l1bTable,
                   const std::vector<int64_t> &mabTable,
                   int64_t grf1LongWord);
  /// T = the value in GRF1 long word `grf1LongWord`; the next $mt access
  /// may issue three steps later (H8), which this leaves.
  void loadT(int64_t grf1LongWord);

private:
  /// 's' lanes holding 4 * subpe + quarter (0..15), in GRF1.
  int64_t laneIndex();
  /// The constant word in every lane of a GRF0 long word (cached).
  int64_t constant(uint32_t word);
  void addTable(const char *fixedInput, const std::vector<int64_t> &table,
                int64_t accumulator);

  VsmWriter &Out;
  unsigned NextEntry = 1;
  std::map<std::array<int, 5>, unsigned> LaneMasks;
  std::map<unsigned, unsigned> PeMasks;
  std::optional<int64_t> LaneIndex;
  /// GRF0 long word holding 1 << (8 * l2bid + l1bid) ('i' lanes).
  std::optional<int64_t> PlaceBit;
  std::map<uint32_t, int64_t> Constants;
  int64_t NextConstant = kSetupGrf0;
};

//===----------------------------------------------------------------------===//
// Loading images of quads into LM0
//===----------------------------------------------------------------------===//

/// The work units that run one image load together: an L2B of a group.
/// Every unit gets its own quads (its own rows); all must lie out the same
/// way in their L2BMs (SIMD), which load() checks.
struct LoadUnit {
  unsigned group = 0;
  unsigned l2b = 0;
  std::vector<ImageQuad> quads;
};

struct LoadBudget {
  /// L2BM long words for the image's DRAM ranges, from l2bmBase.
  int64_t l2bmBase = 0;
  int64_t l2bmLongWords = 16 * 1024;
  /// L1BM transit buffer (two halves), from l1bmBase.
  int64_t l1bmBase = 0;
  int64_t l1bmLongWords = 2048;
  /// LM0 long word of a slot nothing reads (for quads a run carries but
  /// no slot wants).
  int64_t trashSlot = 0;
};

/// Loads every unit's quads into LM0 (plus base slot offsets) in parallel:
/// MV to the L2BMs, l2bmb to every L1BM, l1bmm to every MAB, zeros for
/// quads of zeros. Padding elements are cleared with zero-flush masks.
/// Fails when the units' layouts differ or the budget is too small.
/// `afterIssue` runs once the MV transfers are issued, before the first
/// wait (other transfers issued there queue behind them and overlap the
/// rest of the load).
bool loadImages(VsmWriter &out, PeSetup &setup, const MatrixUnit &unit,
                const std::vector<LoadUnit> &units, const LoadBudget &budget,
                std::string &error,
                const std::function<void()> &afterIssue = nullptr);
/// Whether loadImages would accept these units (same layout everywhere).
bool sameLayout(const std::vector<LoadUnit> &units, const LoadBudget &budget);
/// The L2BM long words such a load takes from budget.l2bmBase (-1 when
/// loadImages would refuse it).
int64_t imageL2bmLongWords(const std::vector<LoadUnit> &units,
                           const LoadBudget &budget);

//===----------------------------------------------------------------------===//
// Loading a packed constant into every PE
//===----------------------------------------------------------------------===//

/// A constant image in DRAM (at `base` in every group, each group's own
/// or all alike) that lands `peLongWords` long words in every PE: distinct
/// per MAB (l1bmd) or the same for every MAB (l1bmm); distinct per L1B
/// (l2bmd) or the same for every L1B (l2bmb); the same for both L2Bs
/// (mvb2) or each its own (two mvp, the chunks of L2B 0 and 1 side by
/// side).
struct ConstantStream {
  int64_t base = 0;
  int64_t peLongWords = 0;
  bool mabBroadcast = false;
  bool l1bDistinct = false;
  bool l2bDistinct = false;
};

/// DRAM long words of such a stream (a multiple of a chunk).
int64_t constantStreamLongWords(const ConstantStream &stream);
/// Where PE (l1b, mab, pe)'s long word j lies in the stream's DRAM image.
int64_t constantStreamOffset(const ConstantStream &stream, int64_t j,
                             unsigned l1b, unsigned mab, unsigned pe,
                             unsigned l2b = 0);
/// Emits the load into `memory` from long word `peLongWord` of every PE,
/// through L2BM [l2bmBase, +8 Ki) and L1BM [l1bmBase, +4 Ki).
void loadConstantStream(VsmWriter &out, const ConstantStream &stream,
                        PeMemory memory, int64_t peLongWord, int64_t l2bmBase,
                        int64_t l1bmBase);

/// The same load in two parts: start() issues the first transfers,
/// finish() waits for them, copies down and issues the rest.
class ConstantStreamLoad {
public:
  /// L2BM buffers: l2bmLongWords from l2bmBase (at least one chunk).
  ConstantStreamLoad(VsmWriter &out, const ConstantStream &stream,
                     PeMemory memory, int64_t peLongWord, int64_t l2bmBase,
                     int64_t l1bmBase, int64_t l2bmLongWords = 8192);
  void start();
  void finish();

private:
  void issue(int64_t chunk);

  VsmWriter &Out;
  ConstantStream Stream;
  PeMemory Memory;
  int64_t PeLongWord, L2bmBase, L1bmBase;
  int64_t ChunkLw = 0, PerChunk = 0, Chunks = 0, InFlight = 4;
  std::vector<unsigned> Tags;
};

//===----------------------------------------------------------------------===//
// B built on the device (GemmDevice.cpp)
//===----------------------------------------------------------------------===//

/// Where a B read at run time goes: every MAB's `items` tiles, item e of
/// MAB m of L1B k the tile of K-chunk kc and N-tile t (at(); t < 0 for a
/// tile of zeros), into LM1 long words [e, e + 1) * tilePeLongWords;
/// matrix row i of N-tile t computes column column(t, i) (-1: none).
struct DeviceTiles {
  int64_t items = 0;
  std::function<void(unsigned k, unsigned m, int64_t e, int64_t &kc,
                     int64_t &t)>
      at;
  std::function<int64_t(int64_t t, int i)> column;
};

/// What the build uses besides all of LM0, the budget's L2BM image area
/// and L1BM transit buffer: T offsets in GRF1 [228, 230), two staging
/// buffers in GRF0 [64, 96), alpha in LM1 long word `alphaLm1Lw`; it
/// leaves T changed.
constexpr int64_t kDeviceTGrf1 = 228;
constexpr int64_t kDeviceStageGrf0 = 64;

/// Emits the build of one sub-problem batch's tiles into every PE.
bool buildDeviceB(VsmWriter &out, PeSetup &setup, const MatrixUnit &unit,
                  const DeviceBOperand &b, int64_t batch,
                  const DeviceTiles &tiles, const LoadBudget &budget,
                  int64_t alphaLm1Lw, std::string &error);

/// Transposes an image's blocks (AImage::transpose) in LM0 through matrix
/// register x, block-floating them on the way back (the image needs no
/// other bfn); GRF0 [64, 192) for staging.
void transposeImage(VsmWriter &out, const MatrixUnit &unit,
                    const std::vector<int64_t> &blocks);

//===----------------------------------------------------------------------===//
// The split plan (GemmSplit.cpp)
//===----------------------------------------------------------------------===//

/// Whether the split plan takes the product (few rows, a long K, a
/// constant B); its B image size per group.
bool splitApplies(const ProductSpec &spec, int64_t &bImageLongWords);
void packSplitB(const ProductSpec &spec, DramImage &image);
bool emitSplit(const ProductSpec &spec, VsmWriter &out,
               KernelDescription &description, std::string &error);

//===----------------------------------------------------------------------===//
// The streaming plan (GemmStream.cpp)
//===----------------------------------------------------------------------===//

/// Whether the streaming plan takes the product (large half GEMMs: every
/// group its own rows, 128 N-tiles, B resident in LM1, no fused
/// activation); its B image size.
bool streamApplies(const ProductSpec &spec, int64_t &bImageLongWords);
void packStreamB(const ProductSpec &spec, DramImage &image);
bool emitStream(const ProductSpec &spec, VsmWriter &out,
                KernelDescription &description, std::string &error);

} // namespace mncc::codegen::gemm

#endif // MNCC_LIB_CODEGEN_KERNELS_GEMMDETAIL_H
