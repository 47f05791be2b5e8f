//===- PlanAddresses.cpp - DRAM addresses with reuse ----------------------===//

#include "mncc/passes/l3/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>

namespace mncc::l3 {
#define GEN_PASS_DEF_PLANADDRESSES
#include "mncc/passes/l3/Passes.h.inc"
} // namespace mncc::l3

using namespace mlir;
using namespace mncc;

namespace {

constexpr int64_t kAlignment = 64;

struct Interval {
  int64_t start, end; // [start, end)
};

class PlanAddressesPass
    : public mncc::l3::impl::PlanAddressesBase<PlanAddressesPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Lifetimes in kernel positions; program-long buffers span everything.
    std::vector<l3::BufferOp> buffers;
    llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> lifetime;
    int64_t numKernels = 0;
    module.walk([&](l3::KernelOp) { ++numKernels; });
    module.walk([&](l3::BufferOp buffer) {
      buffers.push_back(buffer);
      bool wholeProgram = buffer.getKind() != "temporary";
      lifetime[buffer] = wholeProgram ? std::make_pair(int64_t(0), numKernels)
                                      : std::make_pair(numKernels, int64_t(-1));
    });
    int64_t position = 0;
    auto touch = [&](Attribute attribute) {
      auto symbol = llvm::cast<SymbolRefAttr>(attribute);
      auto buffer = symbols.lookup<l3::BufferOp>(symbol.getRootReference());
      if (!buffer)
        return;
      if (auto alias = buffer.getAliasAttr())
        buffer = symbols.lookup<l3::BufferOp>(alias.getValue());
      auto &[first, last] = lifetime[buffer];
      first = std::min(first, position);
      last = std::max(last, position);
    };
    module.walk([&](l3::KernelOp kernel) {
      for (Attribute input : kernel.getInputs())
        touch(input);
      for (Attribute output : kernel.getOutputs())
        touch(output);
      ++position;
    });

    // First fit, largest buffers first so that big ones do not fragment
    // the space; ties in symbol order keep the result deterministic.
    std::vector<l3::BufferOp> order;
    for (l3::BufferOp buffer : buffers)
      if (!buffer.getAlias())
        order.push_back(buffer);
    std::stable_sort(order.begin(), order.end(),
                     [](l3::BufferOp a, l3::BufferOp b) {
                       return a.getLongWords() > b.getLongWords();
                     });
    std::vector<std::pair<l3::BufferOp, Interval>> placed;
    Builder builder(&getContext());
    int64_t top = 0;
    for (l3::BufferOp buffer : order) {
      auto [first, last] = lifetime[buffer];
      if (last < first) {
        first = 0;
        last = 0; // written and never read: still needs room for its writer
      }
      std::vector<Interval> taken;
      for (auto &[other, span] : placed) {
        auto [otherFirst, otherLast] = lifetime[other];
        if (otherFirst <= last && first <= otherLast)
          taken.push_back(span);
      }
      std::sort(taken.begin(), taken.end(),
                [](const Interval &a, const Interval &b) {
                  return a.start < b.start;
                });
      int64_t size = (buffer.getLongWords() + kAlignment - 1) / kAlignment *
                     kAlignment;
      int64_t address = 0;
      for (const Interval &span : taken) {
        if (address + size <= span.start)
          break;
        address = std::max(address, span.end);
      }
      buffer.setAddressAttr(builder.getI64IntegerAttr(address));
      placed.push_back({buffer, {address, address + size}});
      top = std::max(top, address + size);
    }
    module.walk([&](l3::ScheduleOp schedule) {
      schedule->setAttr("dram_long_words", builder.getI64IntegerAttr(top));
    });
  }
};

} // namespace
