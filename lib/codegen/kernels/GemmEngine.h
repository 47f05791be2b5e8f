//===- GemmEngine.h - Matrix products on the MAU's matrix unit --*- C++ -*-===//
//
// The engine behind the Gemm, MatMul and Conv kernels (docs/codegen.md,
// X1-X13). Every product is cast as
//
//   C[r, n] = sum_k A[r, k] B[k, n] (+ beta * bias)
//
// over "compute rows" r (the rows of C for Gemm and MatMul, output pixels
// for Conv), computed tile by tile on the matrix unit: a tile is one K-chunk
// (the elements of one DRAM quad along K) by one N-tile (the elements of one
// quad of C), held in a matrix register as block floats; each step
// multiplies it with four rows of A, one a cycle.
//
//   precision     unit  K-chunk x N-tile  tile lw/PE  accumulator lw/PE/row
//   half          hm*   16 x 16           16          2 (four singles)
//   single        gm*    8 x 8             8          1 (two singles)
//   double        dm*    4 x 4             4          1 (one double)
//
// The work is spread over the machine by rows (groups, L2Bs, L1Bs) and by
// output quads inside an L1B (MABs); A reaches every MAB of an L2B by
// broadcast and each MAB picks its rows through the T register (LM0 read
// through T), B tiles are packed per MAB.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GEMMENGINE_H
#define MNCC_LIB_CODEGEN_KERNELS_GEMMENGINE_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/Kernel.h"
#include "mncc/codegen/VsmWriter.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mncc::codegen::gemm {

//===----------------------------------------------------------------------===//
// Matrix unit geometry
//===----------------------------------------------------------------------===//

struct MatrixUnit {
  DeviceType type = DeviceType::Half;
  /// Opcode prefix: 'h', 'g' or 'd'.
  char prefix = 'h';
  /// Elements of one quad (K-chunk) and of one N-tile.
  int kChunk = 16;
  int nTile = 16;
  /// Elements of a long word.
  int perLongWord = 4;
  /// Long words per PE one tile takes (its rows, one long word each).
  int tilePeLongWords = 16;
  /// Accumulator long words per PE and row.
  int accPeLongWords = 2;
  /// mwrite steps per tile, product steps per four rows.
  int writeSteps = 2;
  int productSteps = 1;
};

/// The unit for an operand format (Half, Single or Double).
const MatrixUnit &matrixUnitFor(DeviceType type);

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

/// One quad (four long words, one per PE of a MAB) an image needs: where it
/// comes from in DRAM, how many of its elements are real (the rest is
/// padding, possibly garbage, cleared on the way in), and its LM0 slot (the
/// long word address each PE of the MAB keeps its long word at).
struct ImageQuad {
  int64_t slot = 0;
  /// Group whose DRAM holds it; kZeroQuad for a quad of zeros, kNoQuad for
  /// a slot nothing needs (rows past the tensor).
  int group = -1;
  static constexpr int kZeroQuad = -1;
  static constexpr int kNoQuad = -2;
  int64_t address = 0;
  int valid = 0;
  /// Which tensor it belongs to (A 0, the bias 1): transfers never span
  /// two tensors, so layouts do not depend on where tensors lie.
  int tensor = 0;
  /// The L1B that wants it (0..7), or -1 for every L1B.
  int l1b = -1;
  /// Long words (0..3) the quad lands shifted by: PE p of the slot takes
  /// long word p - shift of the quad, PEs below `shift` are cleared (a
  /// window that starts before its DRAM row: the long words before the
  /// row are padding). `valid` counts the slot's elements.
  int shift = 0;
};

/// The rows of A for a block of compute rows, as the engine places them in
/// LM0: compute row r (counted from the block's first) and K-chunk kc live
/// at slot r * rowStride + kcSlot[kc]. Linear in r, so a MAB reads its own
/// rows by adding a constant offset through T.
struct AImage {
  int64_t rowStride = 0;
  std::vector<int64_t> kcSlot;
  /// Slots the image covers, [0, slots).
  int64_t slots = 0;
  std::vector<ImageQuad> quads;
  /// Blocks transposed in place once loaded (A stored K x M, Gemm's
  /// transA): the quads at slots transpose[b * kChunk + i], i < kChunk, are
  /// the rows of block b; afterwards transpose[b * kChunk + j] holds its
  /// column j. Empty for a plain image.
  std::vector<int64_t> transpose;
};

/// Provides A: the image of compute rows [first, first + count) for the
/// work of group `group` (the rows the group computes; the quads may live
/// in any group's DRAM).
class AOperand {
public:
  virtual ~AOperand();
  virtual int64_t kChunks() const = 0;
  /// Slots one compute row takes in an image of kcWidth K-chunks.
  virtual int64_t rowStride(int64_t kcWidth) const = 0;
  /// The image of compute rows [first, first + count) for K-chunks
  /// [kcBegin, kcBegin + kcWidth) (clipped to kChunks()), slots counted
  /// from 0; kcSlot[kc - kcBegin]. Quads of rows past the tensor are zeros,
  /// or, where the rows' DRAM block has room, whatever the block holds
  /// there (the engine never stores their results where they are read).
  virtual void image(int64_t first, int64_t count, int64_t kcBegin,
                     int64_t kcWidth, AImage &image) const = 0;
  /// image(...).slots for count rows of kcWidth K-chunks, without listing
  /// the quads (the planner sizes every row block it considers); by
  /// default from the image itself.
  virtual int64_t imageSlots(int64_t count, int64_t kcWidth) const;
  /// What every image's first row and rows per MAB class must be a
  /// multiple of (the transposed blocks of a K x M A).
  virtual int64_t rowAlign() const { return 1; }
  /// The most K-chunks one image may take (0: no limit).
  virtual int64_t maxKcWidth() const { return 0; }
  /// Everything the images depend on, as bytes (appendPlanKey), so that
  /// the engine may reuse a plan made for an operand of the same key
  /// (GemmEngine.cpp, PlanCache); empty: never reused.
  virtual std::string planKey() const { return {}; }
};

/// Appends a value's bytes to a plan key.
void appendPlanKey(std::string &key, int64_t value);
/// Appends what the planner sees of a DRAM form: its type, shape, order
/// and groups, and its base within an MV unit (the planner sees addresses
/// only through the MV units a tensor's quads fall in, relative to the
/// tensor's own: moving a tensor by whole units moves its ranges alike).
void appendPlanKey(std::string &key, const DramForm &form);

/// Matrix row `row` of a constant tile from its kChunk values: rounded once
/// into the unit's format, block-floated as the unit's bfn would, into
/// peLongWords[pe * tilePeLongWords + row] for the four PEs.
void packTileRow(const MatrixUnit &unit, const double *values, int row,
                 uint64_t *peLongWords);

/// A constant B: the tile of K-chunk kc of sub-problem `batch` whose
/// matrix row i computes output column columns[i] (-1: none), as block
/// floats, tilePeLongWords long words per PE (PE p's at [p * tilePeLongWords,
/// (p + 1) * tilePeLongWords), row i at long word i).
class BOperand {
public:
  virtual ~BOperand();
  virtual void tile(int64_t batch, int64_t kc, const int64_t *columns,
                    uint64_t *peLongWords) const = 0;
};

/// A B read from DRAM at run time (not a constant): the quads its tiles
/// are made of, block-floated (and, stored K x N, transposed through a
/// matrix register) on the device into the tiles a constant B would have
/// (GemmDevice.cpp).
class DeviceBOperand {
public:
  virtual ~DeviceBOperand();
  /// B stored K x N: a tile's quads are the rows of its K-chunk (one N-tile
  /// of each), transposed on the device; else N x K (Gemm's transB): a
  /// tile's matrix rows are DRAM quads themselves.
  virtual bool kRows() const = 0;
  /// kRows: N-tile `quad` of K index `row` (counted over every K-chunk of
  /// the product); else K-chunk `quad` of output column `row`; of the B of
  /// sub-problem batch `batch`. Quads of zeros past the tensor.
  virtual ImageQuad quad(int64_t batch, int64_t row, int64_t quad) const = 0;
  /// The scale the tiles take (Gemm's alpha).
  virtual double alpha() const = 0;
};

/// How beta * bias reaches the accumulators.
struct BiasSpec {
  enum class Kind { None, Row, Matrix, Column, Scalar } kind = Kind::None;
  /// The bias tensor (operand format).
  DramForm form;
  float beta = 1;
  /// An initializer: staged by the host, its row padding zero (C2), so
  /// that a quad may be read whole.
  bool constant = false;
  /// A Row bias whose quads repeat every this many N-tiles (0: they do
  /// not): output columns (pixel, channel) of a Conv over packed taps.
  int64_t rowPeriodQuads = 0;
};

/// One run of compute rows sharing one B (a batch of a batched MatMul).
struct SubProblem {
  int64_t firstRow = 0;
  int64_t rows = 0;
  int64_t batch = 0;
};

struct ProductSpec {
  const MatrixUnit *unit = nullptr;
  DeviceType outType = DeviceType::Half;
  /// C in DRAM; compute row r is C row r.
  DramForm out;
  int64_t n = 0;
  int64_t k = 0;
  std::vector<SubProblem> subProblems;
  const AOperand *a = nullptr;
  const BOperand *b = nullptr;
  /// Or B read at run time (b null).
  const DeviceBOperand *deviceB = nullptr;
  /// DRAM address of the packed B image (packBImage), every group.
  int64_t bBase = 0;
  /// A when it is plain rows: compute row r is row r of this tensor, its
  /// quads the K-chunks (null otherwise). The streaming plan needs it.
  const DramForm *plainA = nullptr;
  BiasSpec bias;
  /// A Relu or Clip applied to C as it is stored (the resident and split
  /// plans; the streaming plan is not taken with one).
  std::optional<KernelActivation> activation;
};

/// Quad `quad` of row `row` of a tensor in its DRAM form (rows past the
/// tensor: the last group's block tail while the block lasts, else no quad
/// at all), with its real elements out of perQuad.
ImageQuad rowQuad(const DramForm &form, int64_t row, int64_t quad,
                  int perQuad);

/// rowQuad for many quads of one form, its geometry worked out once (an
/// image asks for thousands of quads, the planner for millions).
class RowQuads {
public:
  RowQuads(const DramForm &form, int perQuad);
  ImageQuad operator()(int64_t row, int64_t quad) const {
    ImageQuad q;
    int64_t group = row / std::max<int64_t>(BlockRows, 1);
    // Rows past the tensor read the last block's tail while it lasts.
    if (group >= Groups) {
      q.group = ImageQuad::kNoQuad;
      return q;
    }
    q.group = int(group);
    q.address =
        Base + (row - group * BlockRows) * RowLongWords + quad * kQuadLongWords;
    q.valid =
        int(std::clamp<int64_t>(InnerExtent - quad * PerQuad, 0, PerQuad));
    return q;
  }

private:
  int64_t Base, BlockRows, RowLongWords, InnerExtent;
  int64_t Groups;
  int PerQuad;
};

/// How many products the resident plan's planner planned and how many
/// times it reused a plan of the same key (AOperand::planKey), for tests.
struct PlanCacheCounts {
  uint64_t planned = 0;
  uint64_t reused = 0;
};
PlanCacheCounts planCacheCounts();

/// Emits the product; on failure a message naming the problem.
bool emitProduct(const ProductSpec &spec, VsmWriter &out,
                 KernelDescription &description, std::string &error);

//===----------------------------------------------------------------------===//
// Constant images
//===----------------------------------------------------------------------===//

/// How the engine arranges B tiles in DRAM (what packConstant writes),
/// reproduced on the host from the plan.
struct BLayout {
  /// The streaming plan's layout (GemmStream.cpp), the split plan's
  /// (GemmSplit.cpp).
  bool streamed = false;
  bool split = false;
  bool mabBroadcast = false;
  bool l1bDistinct = false;
  int64_t kChunks = 0;
  int64_t batches = 1;
  /// Long words per PE of one sub-problem's tiles, and of the DRAM image.
  int64_t peLongWords = 0;
  int64_t imageLongWords = 0;
};

/// The plan's B layout for a spec (what packConstant must write).
bool planBLayout(const ProductSpec &spec, BLayout &layout, std::string &error);
/// The resident plan's estimated cycles for a spec (GemmEngine.cpp,
/// estimatedCycles: B's stream, A's image slots, the products), to choose
/// between two ways of casting one operator as a product.
bool estimateCycles(const ProductSpec &spec, double &cycles,
                    std::string &error);
/// The DRAM image (every group the same) of all sub-problems' tiles.
void packBImage(const ProductSpec &spec, const BLayout &layout,
                DramImage &image);

} // namespace mncc::codegen::gemm

#endif // MNCC_LIB_CODEGEN_KERNELS_GEMMENGINE_H
