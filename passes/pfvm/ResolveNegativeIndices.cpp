//===- ResolveNegativeIndices.cpp - Negative axes and indices made positive
//===//
//
// ONNX counts an axis or an index from the end when it is negative. The
// code generator and the layout planners want the position itself, so
// each one is rewritten as the equivalent non-negative value for the
// operand's rank or dimension; anything out of range, or without a
// positive form, stays as it is (the run reports what ONNX would).
//
//===----------------------------------------------------------------------===//

#include "ConstantUtils.h"

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_RESOLVENEGATIVEINDICES
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// An `axis` attribute: the rank it counts in (of operand 0, or of result 0
/// when `ofResult`), its default when absent (resolved too when negative),
/// and whether the rank itself is a valid axis (Flatten).
struct AxisAttribute {
  bool ofResult = false;
  std::optional<int64_t> defaultValue;
  bool inclusive = false;
};

const llvm::StringMap<AxisAttribute> &axisAttributes() {
  static const llvm::StringMap<AxisAttribute> table = {
      {"Concat", {true, std::nullopt, false}},
      {"Softmax", {false, -1, false}},
      {"LogSoftmax", {false, -1, false}},
      {"Hardmax", {false, -1, false}},
      {"Gather", {false, 0, false}},
      {"GatherElements", {false, 0, false}},
      {"ScatterElements", {false, 0, false}},
      {"Scatter", {false, 0, false}},
      {"Split", {false, 0, false}},
      {"ArgMax", {false, 0, false}},
      {"ArgMin", {false, 0, false}},
      {"Compress", {false, std::nullopt, false}},
      {"LayerNormalization", {false, -1, false}},
      {"TopK", {false, -1, false}},
      {"QuantizeLinear", {false, 1, false}},
      {"DequantizeLinear", {false, 1, false}},
      {"LpNormalization", {false, -1, false}},
      {"Unique", {false, std::nullopt, false}},
      {"Flatten", {false, 1, true}},
      {"OneHot", {true, -1, false}},
  };
  return table;
}

/// Ops with an `axes` attribute, counted in operand 0's rank.
const llvm::StringSet<> kAxesAttributes = {
    "ReduceL1",        "ReduceL2",
    "ReduceLogSum",    "ReduceLogSumExp",
    "ReduceMax",       "ReduceMean",
    "ReduceMin",       "ReduceProd",
    "ReduceSumSquare", "MeanVarianceNormalization"};

int64_t rankOf(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getRank() : -1;
}

/// `axis` counted from the front, or std::nullopt when out of range.
std::optional<int64_t> resolveAxis(int64_t axis, int64_t rank,
                                   bool inclusive = false) {
  int64_t last = inclusive ? rank : rank - 1;
  if (rank < 0 || axis < -rank || axis > last)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

/// Each axis of `axes` resolved, or std::nullopt when one is out of range
/// or two name the same dimension.
std::optional<llvm::SmallVector<int64_t>>
resolveAxes(llvm::ArrayRef<int64_t> axes, int64_t rank) {
  llvm::SmallVector<int64_t> resolved;
  for (int64_t axis : axes) {
    std::optional<int64_t> position = resolveAxis(axis, rank);
    if (!position || llvm::is_contained(resolved, *position))
      return std::nullopt;
    resolved.push_back(*position);
  }
  return resolved;
}

class ResolveNegativeIndicesPass
    : public pfvm::impl::ResolveNegativeIndicesBase<
          ResolveNegativeIndicesPass> {
public:
  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (!op->getDialect() || op->getDialect()->getNamespace() != "onnx")
        return;
      StringRef name = op->getName().stripDialect();
      auto axis = axisAttributes().find(name);
      if (axis != axisAttributes().end())
        resolveAxisAttribute(op, axis->second);
      if (kAxesAttributes.contains(name))
        resolveAxesAttribute(op);
      if (auto squeeze = llvm::dyn_cast<onnx::SqueezeOp>(op))
        resolveAxesInput(op, squeeze.getAxesMutable(),
                         rankOf(squeeze.getData()));
      else if (auto unsqueeze = llvm::dyn_cast<onnx::UnsqueezeOp>(op))
        resolveAxesInput(op, unsqueeze.getAxesMutable(),
                         rankOf(unsqueeze.getExpanded()));
      else if (auto sum = llvm::dyn_cast<onnx::ReduceSumOp>(op))
        resolveAxesInput(op, sum.getAxesMutable(), rankOf(sum.getData()));
      else if (auto cumsum = llvm::dyn_cast<onnx::CumSumOp>(op))
        resolveAxesInput(op, cumsum.getAxisMutable(), rankOf(cumsum.getX()));
      else if (auto gather = llvm::dyn_cast<onnx::GatherOp>(op))
        resolveGatherIndices(gather);
      else if (auto slice = llvm::dyn_cast<onnx::SliceOp>(op))
        resolveSlice(slice);
    });
  }

private:
  /// Replaces operand `operand` of `op` by a new integer constant of the
  /// old one's type holding `values`.
  void replaceConstant(Operation *op, OpOperand &operand,
                       llvm::ArrayRef<int64_t> values) {
    auto type = llvm::cast<RankedTensorType>(operand.get().getType());
    OpBuilder builder(op);
    operand.set(pfvm::createIntegerConstant(builder, operand.get().getLoc(),
                                            values, type.getElementType(),
                                            type.getShape()));
  }

  void resolveAxisAttribute(Operation *op, const AxisAttribute &info) {
    int64_t rank =
        info.ofResult ? (op->getNumResults() ? rankOf(op->getResult(0)) : -1)
                      : (op->getNumOperands() ? rankOf(op->getOperand(0)) : -1);
    std::optional<int64_t> axis = info.defaultValue;
    if (auto given = op->getAttrOfType<IntegerAttr>("axis"))
      axis = given.getInt();
    if (!axis || *axis >= 0)
      return;
    if (std::optional<int64_t> position =
            resolveAxis(*axis, rank, info.inclusive))
      op->setAttr(
          "axis",
          IntegerAttr::get(IntegerType::get(op->getContext(), 64), *position));
  }

  void resolveAxesAttribute(Operation *op) {
    auto axes = op->getAttrOfType<ArrayAttr>("axes");
    if (!axes || op->getNumOperands() == 0)
      return;
    llvm::SmallVector<int64_t> values;
    for (Attribute element : axes) {
      auto integer = llvm::dyn_cast<IntegerAttr>(element);
      if (!integer)
        return;
      values.push_back(integer.getInt());
    }
    if (llvm::none_of(values, [](int64_t axis) { return axis < 0; }))
      return;
    if (auto resolved = resolveAxes(values, rankOf(op->getOperand(0))))
      op->setAttr("axes", Builder(op->getContext()).getI64ArrayAttr(*resolved));
  }

  void resolveAxesInput(Operation *op, MutableOperandRange range,
                        int64_t rank) {
    if (range.size() != 1)
      return;
    OpOperand &operand = range[0];
    std::optional<llvm::SmallVector<int64_t>> values =
        onnx::getConstantIntegers(operand.get());
    if (!values || llvm::none_of(*values, [](int64_t v) { return v < 0; }))
      return;
    if (auto resolved = resolveAxes(*values, rank))
      replaceConstant(op, operand, *resolved);
  }

  void resolveGatherIndices(onnx::GatherOp gather) {
    auto type = llvm::dyn_cast<RankedTensorType>(gather.getData().getType());
    std::optional<int64_t> axis =
        type ? resolveAxis(static_cast<int64_t>(gather.getAxis()),
                           type.getRank())
             : std::nullopt;
    if (!axis || type.isDynamicDim(*axis))
      return;
    int64_t dim = type.getDimSize(*axis);
    OpOperand &operand = gather.getIndicesMutable();
    std::optional<llvm::SmallVector<int64_t>> indices =
        onnx::getConstantIntegers(operand.get());
    if (!indices || llvm::none_of(*indices, [](int64_t v) { return v < 0; }))
      return;
    for (int64_t &index : *indices) {
      if (index < -dim || index >= dim)
        return; // out of range: left for the run to report
      if (index < 0)
        index += dim;
    }
    replaceConstant(gather, operand, *indices);
  }

  void resolveSlice(onnx::SliceOp slice) {
    auto type = llvm::dyn_cast<RankedTensorType>(slice.getData().getType());
    if (!type)
      return;
    int64_t rank = type.getRank();
    resolveAxesInput(slice, slice.getAxesMutable(), rank);
    std::optional<llvm::SmallVector<int64_t>> starts =
        onnx::getConstantIntegers(slice.getStarts());
    std::optional<llvm::SmallVector<int64_t>> ends =
        onnx::getConstantIntegers(slice.getEnds());
    if (!starts || !ends || starts->size() != ends->size())
      return;
    size_t count = starts->size();
    llvm::SmallVector<int64_t> axes, steps(count, 1);
    if (slice.getAxes()) {
      std::optional<llvm::SmallVector<int64_t>> given =
          onnx::getConstantIntegers(slice.getAxes());
      if (!given || given->size() != count)
        return;
      for (int64_t axis : *given) {
        std::optional<int64_t> position = resolveAxis(axis, rank);
        if (!position)
          return;
        axes.push_back(*position);
      }
    } else {
      for (size_t i = 0; i < count; ++i)
        axes.push_back(i);
    }
    if (slice.getSteps()) {
      std::optional<llvm::SmallVector<int64_t>> given =
          onnx::getConstantIntegers(slice.getSteps());
      if (!given || given->size() != count)
        return;
      steps.assign(given->begin(), given->end());
    }
    bool startsChanged = false, endsChanged = false;
    for (size_t i = 0; i < count; ++i) {
      if (axes[i] >= rank || type.isDynamicDim(axes[i]) || steps[i] == 0)
        continue;
      int64_t dim = type.getDimSize(axes[i]);
      // ONNX adds the dimension to a negative start or end, then clamps.
      if ((*starts)[i] < 0) {
        (*starts)[i] = std::max<int64_t>((*starts)[i] + dim, 0);
        startsChanged = true;
      }
      int64_t end = (*ends)[i];
      if (end < 0 && (end + dim >= 0 || steps[i] > 0)) {
        (*ends)[i] = std::max<int64_t>(end + dim, 0);
        endsChanged = true;
      }
      // A negative step's end before the first element (-1 after the
      // adjustment) has no positive form and stays.
    }
    if (startsChanged)
      replaceConstant(slice, slice.getStartsMutable(), *starts);
    if (endsChanged)
      replaceConstant(slice, slice.getEndsMutable(), *ends);
  }
};

} // namespace
