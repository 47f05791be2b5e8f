//===- L3Dialect.cpp - L3IR dialect ---------------------------------------===//

#include "mncc/dialects/l3/L3Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mncc::l3;

#include "mncc/dialects/l3/L3Dialect.cpp.inc"

#define GET_OP_CLASSES
#include "mncc/dialects/l3/L3Ops.cpp.inc"

void L3Dialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mncc/dialects/l3/L3Ops.cpp.inc"
      >();
}

static const char *const kBufferKinds[] = {"input", "output", "constant",
                                           "temporary"};

LogicalResult BufferOp::verify() {
  if (!llvm::is_contained(kBufferKinds, getKind()))
    return emitOpError("kind must be input, output, constant or temporary, "
                       "not '")
           << getKind() << "'";
  auto tensor = llvm::dyn_cast<RankedTensorType>(getType());
  if (!tensor || !tensor.hasStaticShape())
    return emitOpError("needs a tensor type of static shape, not ")
           << getType();
  if (getOrder().size() != size_t(tensor.getRank()))
    return emitOpError("order has ")
           << getOrder().size() << " dimensions for a tensor of rank "
           << tensor.getRank();
  llvm::SmallVector<bool> seen(tensor.getRank(), false);
  for (int64_t dim : getOrder()) {
    if (dim < 0 || dim >= tensor.getRank() || seen[dim])
      return emitOpError("order must be a permutation of the dimensions");
    seen[dim] = true;
  }
  if (getGroups() != 1 && getGroups() != 4)
    return emitOpError("groups must be 1 or 4, not ") << getGroups();
  if (getLongWords() <= 0 || getLongWords() % 64 != 0)
    return emitOpError("long_words must be a positive multiple of 64, not ")
           << getLongWords();
  if (getKind() == "constant" && !getValue())
    return emitOpError("a constant needs its value");
  if ((getKind() == "input" || getKind() == "output") &&
      (!getName() || !getIndex()))
    return emitOpError("a graph ") << getKind() << " needs a name and index";
  return success();
}

LogicalResult KernelOp::verify() {
  auto check = [&](ArrayAttr buffers, StringRef role) -> LogicalResult {
    for (Attribute attribute : buffers) {
      auto symbol = llvm::cast<SymbolRefAttr>(attribute);
      if (symbol.getRootReference() == kNoneBuffer)
        continue;
      if (!SymbolTable::lookupNearestSymbolFrom<BufferOp>(*this, symbol))
        return emitOpError(role) << " " << symbol << " is not a buffer";
    }
    return success();
  };
  if (failed(check(getInputs(), "input")) ||
      failed(check(getOutputs(), "output")))
    return failure();
  if (getOutputs().empty())
    return emitOpError("writes no buffer");
  if (getActivation().has_value() != getActivationBounds().has_value())
    return emitOpError("needs both activation and activation_bounds");
  if (std::optional<ArrayRef<float>> bounds = getActivationBounds())
    if (bounds->size() != 2 || !((*bounds)[0] <= (*bounds)[1]))
      return emitOpError("activation_bounds must be (lo, hi) with lo <= hi");
  return success();
}
