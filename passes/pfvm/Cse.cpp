//===- Cse.cpp - Merge nodes that compute the same value ------------------===//

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_CSE
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// The operands as compared: in order, or sorted for a commutative op.
llvm::SmallVector<Value, 4> keyOperands(Operation *op) {
  llvm::SmallVector<Value, 4> operands(op->getOperands());
  if (op->hasTrait<OpTrait::IsCommutative>())
    llvm::sort(operands, [](Value a, Value b) {
      return a.getAsOpaquePointer() < b.getAsOpaquePointer();
    });
  return operands;
}

bool sameComputation(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         a->getAttrDictionary() == b->getAttrDictionary() &&
         a->getResultTypes() == b->getResultTypes() &&
         keyOperands(a) == keyOperands(b);
}

struct CsePass : public pfvm::impl::CseBase<CsePass> {
  void runOnOperation() override {
    getOperation().walk([&](Block *block) { mergeIn(*block); });
  }

  void mergeIn(Block &block) {
    llvm::DenseMap<llvm::hash_code, llvm::SmallVector<Operation *, 1>> seen;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (!op.getDialect() || op.getDialect()->getNamespace() != "onnx" ||
          op.getNumResults() == 0 || op.getNumRegions() ||
          !isMemoryEffectFree(&op) ||
          // Constants are pfvm-reuse-constants' (PFVM_DISABLE_CONSTANT_REUSE).
          llvm::isa<onnx::ConstantOp, onnx::InitializerOp, onnx::NoneOp>(op))
        continue;
      llvm::SmallVector<Value, 4> operands = keyOperands(&op);
      llvm::hash_code hash = llvm::hash_combine(
          op.getName().getAsOpaquePointer(),
          op.getAttrDictionary().getAsOpaquePointer(),
          llvm::hash_combine_range(operands.begin(), operands.end()));
      auto &bucket = seen[hash];
      Operation *earlier = nullptr;
      for (Operation *candidate : bucket)
        if (sameComputation(candidate, &op))
          earlier = candidate;
      if (!earlier) {
        bucket.push_back(&op);
        continue;
      }
      op.replaceAllUsesWith(earlier->getResults());
      op.erase();
    }
  }
};

} // namespace
