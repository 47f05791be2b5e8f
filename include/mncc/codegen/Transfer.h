//===- Transfer.h - Moving data between DRAM and the PEs --------*- C++ -*-===//
//
// The data path every kernel uses (docs/codegen.md, "Transfers"):
//
//   DRAM --mvp/mvb2--> L2BM --l2bmb[@k]--> L1BM --l1bmd/l1bmm/l1bmp--> LM
//   DRAM <----mvp----- L2BM <---l2bm@k---- L1BM <---l1bmd/l1bmm@0----- LM
//
// The two halves are separate so that a kernel can stage a block in the
// L1BMs once and hand it to the PEs in several patterns. Each function
// emits complete, hazard-free code: it waits for its MV transfers and
// leaves the steps the next reader of what it wrote needs.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_CODEGEN_TRANSFER_H
#define MNCC_CODEGEN_TRANSFER_H

#include "mncc/codegen/VsmWriter.h"

#include <cstdint>
#include <vector>

namespace mncc::codegen {

/// Long words of the L1BM and L2BM (manual 3.3).
constexpr int64_t kL1bmLongWords = 8 * 1024;
constexpr int64_t kL2bmLongWords = 32 * 1024;
/// L1Bs per L2B, L2Bs per group, PEs per L1B.
constexpr unsigned kL1bsPerL2b = 8;
constexpr unsigned kL2bsPerGroup = 2;
constexpr unsigned kPesPerL1b = 64;
/// Long words one L2BM <-> L1BM instruction moves per L1B (16 a cycle).
constexpr int64_t kL2bmStepLongWords = 64;

/// Which DRAM range each L1B receives (or sends). For group g (every group
/// in parallel, each reading its own DRAM, unless onlyGroup0), L2B l of the
/// group and L1B k of the L2B the range starts at
///   base + l * l2bStride + k * l1bStride
/// and is `longWords` long, clipped to `limit` long words after base (a
/// store never writes past its tensor; a piece past the limit is skipped).
/// A stride of 0 sends the same data to every L2B or L1B (broadcast); a
/// store then writes it once, from L2B 0 or L1B 0.
struct L1bRanges {
  int64_t base = 0;
  int64_t l2bStride = 0;
  int64_t l1bStride = 0;
  int64_t longWords = 0;
  int64_t limit = INT64_MAX;
  bool onlyGroup0 = false;
};

/// One MV transfer, not waited for: `longWords` from DRAM address `dram`
/// to L2BM address `l2bm` of L2B `l2b`, in every group in parallel (each
/// from its own DRAM) or in group 0 alone. It carries `tag`, or a fresh
/// one for 0 (a wait waits for every transfer a tag carried, T5), and
/// returns it.
unsigned emitMvDramToL2bm(VsmWriter &out, int64_t dram, int64_t l2bm,
                          int64_t longWords, unsigned l2b, bool onlyGroup0,
                          unsigned tag = 0);
/// The inverse, L2BM -> DRAM.
unsigned emitMvL2bmToDram(VsmWriter &out, int64_t l2bm, int64_t dram,
                          int64_t longWords, unsigned l2b, bool onlyGroup0,
                          unsigned tag = 0);

/// DRAM -> L1BM: every L1B gets its range at l1bmAddress. The ranges pass
/// through the L2BM at l2bmAddress (8 * longWords per L2B, or longWords
/// for an L1B broadcast). longWords, l1bmAddress and l2bmAddress must be
/// multiples of 64.
void emitDramToL1bm(VsmWriter &out, const L1bRanges &ranges,
                    int64_t l1bmAddress, int64_t l2bmAddress);
/// L1BM -> DRAM, the inverse.
void emitL1bmToDram(VsmWriter &out, const L1bRanges &ranges,
                    int64_t l1bmAddress, int64_t l2bmAddress);

/// The two halves of each, for kernels that overlap a transfer with other
/// work (the next block's MV while the PEs move this one): the MVs, not
/// waited for (their tags returned: wait on all before reading the L2BM,
/// or before writing the L2BM range an L2BM -> DRAM half reads), and the
/// L2BM <-> L1BM steps, which leave the steps their readers need.
std::vector<unsigned> emitDramToL2bm(VsmWriter &out, const L1bRanges &ranges,
                                     int64_t l2bmAddress);
void emitL2bmToL1bm(VsmWriter &out, const L1bRanges &ranges,
                    int64_t l1bmAddress, int64_t l2bmAddress);
void emitL1bmToL2bm(VsmWriter &out, const L1bRanges &ranges,
                    int64_t l1bmAddress, int64_t l2bmAddress);
std::vector<unsigned> emitL2bmToDram(VsmWriter &out, const L1bRanges &ranges,
                                     int64_t l2bmAddress);

/// How an L1B's block is spread over its 64 PEs. Long word j (j <
/// longWords) of each PE's block corresponds to L1BM address
///   AllPes (l1bmd):       l1bmAddress + 64 j + 4 mab + pe
///   MabBroadcast (l1bmm): l1bmAddress + 4 j + pe     (every MAB the same)
///   PeBroadcast (l1bmp):  l1bmAddress + j            (every PE the same)
enum class Spread : uint8_t { AllPes, MabBroadcast, PeBroadcast };
/// Long words of the L1BM a spread of `longWords` per PE covers.
int64_t spreadL1bmLongWords(Spread spread, int64_t longWords);

/// L1BM -> PE memory: long words [lmLongWord, lmLongWord + longWords) of
/// every PE (longWords a multiple of 4).
void emitL1bmToPe(VsmWriter &out, Spread spread, int64_t l1bmAddress,
                  PeMemory memory, int64_t lmLongWord, int64_t longWords);
/// PE memory -> L1BM. AllPes gathers all 64 PEs; MabBroadcast stores MAB
/// 0's four PEs (the others hold copies). PeBroadcast cannot be stored.
void emitPeToL1bm(VsmWriter &out, Spread spread, PeMemory memory,
                  int64_t lmLongWord, int64_t longWords, int64_t l1bmAddress);

} // namespace mncc::codegen

#endif // MNCC_CODEGEN_TRANSFER_H
