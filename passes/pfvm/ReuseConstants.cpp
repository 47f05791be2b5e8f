//===- ReuseConstants.cpp - Identical constants share one value -----------===//

#include "ConstantUtils.h"

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/xxhash.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_REUSECONSTANTS
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// What makes two constants the same: their type and their data. Dense
/// literals are uniqued by MLIR, so the attribute itself is the key; the
/// data of dense_resource blobs is hashed and compared byte for byte.
struct Candidate {
  Operation *op;
  ElementsAttr value;
  std::optional<llvm::ArrayRef<char>> bytes;
};

struct ReuseConstantsPass
    : public pfvm::impl::ReuseConstantsBase<ReuseConstantsPass> {
  void runOnOperation() override {
    getOperation().walk([&](Block *block) { reuseIn(*block); });
  }

  void reuseIn(Block &block) {
    // Kept constants by a hash of (type, data).
    llvm::DenseMap<uint64_t, llvm::SmallVector<Candidate, 1>> kept;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (!llvm::isa<onnx::ConstantOp, onnx::InitializerOp>(op))
        continue;
      ElementsAttr value = onnx::getConstantValue(op.getResult(0));
      if (!value || value.getType() != op.getResult(0).getType())
        continue;
      Candidate candidate{&op, value, std::nullopt};
      uint64_t hash = llvm::hash_value(value.getType().getAsOpaquePointer());
      if (llvm::isa<DenseResourceElementsAttr>(value)) {
        candidate.bytes = pfvm::storedBytes(value);
        if (!candidate.bytes)
          continue;
        hash = llvm::hash_combine(
            hash,
            llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                reinterpret_cast<const uint8_t *>(candidate.bytes->data()),
                candidate.bytes->size())));
      } else {
        hash = llvm::hash_combine(hash, value.getAsOpaquePointer());
      }
      auto &bucket = kept[hash];
      Candidate *same = nullptr;
      for (Candidate &other : bucket)
        if (other.value.getType() == value.getType() &&
            (other.value == value || (other.bytes && candidate.bytes &&
                                      *other.bytes == *candidate.bytes)))
          same = &other;
      if (!same) {
        bucket.push_back(candidate);
        continue;
      }
      op.getResult(0).replaceAllUsesWith(same->op->getResult(0));
      op.erase();
    }
  }
};

} // namespace
