//===- FoldConstants.cpp - Evaluate constant nodes with pfvm:cpu ----------===//
//
// Runs a node whose inputs are all constants through its pfvm:cpu kernel
// (SimpleKernelContext) and replaces it with constants. Bounded so weights
// are never duplicated: a fold may create at most `size-limit` bytes
// beyond the constants that die with it. Shape and Size of static shapes
// become constants first, so torch's shape arithmetic folds away.
//
//===----------------------------------------------------------------------===//

#include "ConstantUtils.h"

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/interpreter/KernelAttributes.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/reference/SimpleContext.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// Ops whose output can be far larger than their inputs: folded only when
/// their result type is static, so the size is known before they run.
const llvm::StringSet<> kExpanding = {
    "ConstantOfShape", "Expand",     "Tile",
    "Range",           "Pad",        "Resize",
    "Upsample",        "OneHot",     "EyeLike",
    "MelWeightMatrix", "HannWindow", "HammingWindow",
    "BlackmanWindow"};

/// Whether convertOnnxAttribute takes `value` without an error.
bool convertible(Attribute value) {
  if (llvm::isa<IntegerAttr, FloatAttr, StringAttr, TypeAttr, DenseI64ArrayAttr,
                DenseF32ArrayAttr>(value))
    return true;
  if (auto elements = llvm::dyn_cast<ElementsAttr>(value))
    return referenceDTypeOf(elements.getElementType()) !=
           reference::DType::Undefined;
  if (auto array = llvm::dyn_cast<ArrayAttr>(value))
    return llvm::all_of(array, [](Attribute element) {
      return llvm::isa<IntegerAttr, FloatAttr, StringAttr>(element) ||
             (llvm::isa<ElementsAttr>(element) && convertible(element));
    });
  return false;
}

/// Bytes of a static tensor type, or std::nullopt (dynamic, strings,
/// not a tensor).
std::optional<int64_t> staticBytes(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  reference::DType dtype = referenceDTypeOf(tensor.getElementType());
  if (dtype == reference::DType::Undefined || dtype == reference::DType::String)
    return std::nullopt;
  return tensor.getNumElements() *
         static_cast<int64_t>(reference::dtypeSize(dtype));
}

/// Whether a value of `type` may replace `result` at every use: the same
/// type, or a more static one where no terminator (func.return, a
/// subgraph's onnx.Yield) ties the type.
bool canRetype(Value result, Type type) {
  if (result.getType() == type)
    return true;
  return llvm::none_of(result.getUsers(), [](Operation *user) {
    return user->hasTrait<OpTrait::IsTerminator>();
  });
}

class FoldConstantsPass
    : public pfvm::impl::FoldConstantsBase<FoldConstantsPass> {
public:
  using FoldConstantsBase::FoldConstantsBase;

  void runOnOperation() override {
    llvm::SmallVector<Operation *> ops;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "onnx" &&
          !llvm::isa<onnx::ConstantOp, onnx::InitializerOp, onnx::NoneOp,
                     onnx::YieldOp, onnx::CustomOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto shape = llvm::dyn_cast<onnx::ShapeOp>(op))
        foldShape(shape);
      else if (auto size = llvm::dyn_cast<onnx::SizeOp>(op))
        foldSize(size);
      else if (!foldNode(op))
        if (auto slice = llvm::dyn_cast<onnx::SliceOp>(op))
          refineSlice(slice);
    }
  }

private:
  /// The static result type of a Slice of a static tensor whose starts,
  /// ends, axes and steps have become constants (torch computes them from
  /// Shape), which shape inference at import could not know.
  void refineSlice(onnx::SliceOp slice) {
    auto input = llvm::dyn_cast<RankedTensorType>(slice.getData().getType());
    auto result = llvm::dyn_cast<TensorType>(slice.getType());
    if (!input || !input.hasStaticShape() || !result ||
        (llvm::isa<RankedTensorType>(result) && result.hasStaticShape()))
      return;
    auto starts = onnx::getConstantIntegers(slice.getStarts());
    auto ends = onnx::getConstantIntegers(slice.getEnds());
    if (!starts || !ends || starts->size() != ends->size())
      return;
    size_t count = starts->size();
    int64_t rank = input.getRank();
    llvm::SmallVector<int64_t> axes, steps(count, 1);
    if (slice.getAxes()) {
      auto given = onnx::getConstantIntegers(slice.getAxes());
      if (!given || given->size() != count)
        return;
      axes = *given;
    } else {
      for (size_t i = 0; i < count; ++i)
        axes.push_back(i);
    }
    if (slice.getSteps()) {
      auto given = onnx::getConstantIntegers(slice.getSteps());
      if (!given || given->size() != count)
        return;
      steps = *given;
    }
    llvm::SmallVector<int64_t> shape(input.getShape());
    llvm::SmallVector<bool> seen(rank, false);
    for (size_t i = 0; i < count; ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank || seen[axis] || steps[i] == 0)
        return;
      seen[axis] = true;
      int64_t dim = shape[axis], start = (*starts)[i], end = (*ends)[i],
              step = steps[i];
      // ONNX's rule: negative positions count from the end, then clamp.
      start = start < 0 ? std::max<int64_t>(start, -dim) + dim : start;
      end = end < 0 ? std::max<int64_t>(end, -dim - 1) + dim : end;
      int64_t length;
      if (step > 0) {
        start = std::min(start, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        length = end > start ? (end - start + step - 1) / step : 0;
      } else {
        start = std::min(start, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        length = start > end ? (start - end - step - 1) / -step : 0;
      }
      shape[axis] = length;
    }
    if (auto ranked = llvm::dyn_cast<RankedTensorType>(result)) {
      if (ranked.getRank() != rank)
        return;
      for (int64_t d = 0; d < rank; ++d)
        if (!ranked.isDynamicDim(d) && ranked.getDimSize(d) != shape[d])
          return;
    }
    auto refined = RankedTensorType::get(shape, input.getElementType());
    if (canRetype(slice.getResult(), refined))
      slice.getResult().setType(refined);
  }

  void replaceWithConstant(Operation *op, ElementsAttr value) {
    if (!canRetype(op->getResult(0), value.getType()))
      return;
    OpBuilder builder(op);
    Value constant = pfvm::createConstant(builder, op->getLoc(), value);
    op->getResult(0).replaceAllUsesWith(constant);
    op->erase();
  }

  void foldShape(onnx::ShapeOp op) {
    auto type = llvm::dyn_cast<RankedTensorType>(op.getData().getType());
    if (!type)
      return;
    int64_t rank = type.getRank();
    auto clampAxis = [&](int64_t axis) {
      if (axis < 0)
        axis += rank;
      return std::clamp<int64_t>(axis, 0, rank);
    };
    int64_t start = clampAxis(static_cast<int64_t>(op.getStart()));
    int64_t end =
        op.getEnd() ? clampAxis(static_cast<int64_t>(*op.getEnd())) : rank;
    llvm::SmallVector<int64_t> dims;
    for (int64_t d = start; d < end; ++d) {
      if (type.isDynamicDim(d))
        return;
      dims.push_back(type.getDimSize(d));
    }
    OpBuilder builder(op);
    auto resultType =
        RankedTensorType::get({(int64_t)dims.size()}, builder.getI64Type());
    replaceWithConstant(
        op, DenseElementsAttr::get(resultType, llvm::ArrayRef<int64_t>(dims)));
  }

  void foldSize(onnx::SizeOp op) {
    auto type = llvm::dyn_cast<RankedTensorType>(op.getData().getType());
    if (!type || !type.hasStaticShape())
      return;
    OpBuilder builder(op);
    auto resultType = RankedTensorType::get({}, builder.getI64Type());
    replaceWithConstant(
        op, DenseElementsAttr::get(resultType, type.getNumElements()));
  }

  /// Whether `op` was folded.
  bool foldNode(Operation *op) {
    if (op->getNumRegions() || op->getNumOperands() == 0 ||
        !isMemoryEffectFree(op) || op->hasAttr("resultSegmentSizes"))
      return false;
    if (!llvm::all_of(op->getOperands(), pfvm::isConstant))
      return false;
    StringRef opType = op->getName().stripDialect();
    const onnx::OnnxOpInfo *info = onnx::lookupOnnxOp(opType);
    if (!info)
      return false;
    reference::KernelFn kernel = reference::lookupKernel(info->domain, opType);
    if (!kernel)
      return false;

    // The bound: bytes created beyond the constants that die with the node.
    int64_t freed = 0, inputBytes = 0;
    llvm::DenseSet<Value> seen;
    for (Value operand : op->getOperands()) {
      if (!seen.insert(operand).second)
        continue;
      int64_t bytes = pfvm::constantBytes(onnx::getConstantValue(operand));
      inputBytes += bytes;
      if (llvm::all_of(operand.getUsers(),
                       [&](Operation *user) { return user == op; }))
        freed += bytes;
    }
    int64_t allowed = std::max<int64_t>(sizeLimit, freed);
    std::optional<int64_t> expected = 0;
    for (Value result : op->getResults()) {
      std::optional<int64_t> bytes = staticBytes(result.getType());
      expected = bytes && expected ? std::optional<int64_t>(*expected + *bytes)
                                   : std::nullopt;
    }
    if (expected ? *expected > allowed
                 : inputBytes > sizeLimit || kExpanding.contains(opType))
      return false;

    // The inputs at their ONNX positions (omitted optional inputs empty).
    std::vector<reference::Value> inputs;
    std::vector<size_t> omitted;
    auto addInput = [&](Value operand) -> bool {
      std::optional<reference::Tensor> tensor = pfvm::readConstant(operand);
      if (!tensor)
        return false;
      inputs.emplace_back(std::move(*tensor));
      return true;
    };
    if (auto segments =
            op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes")) {
      unsigned next = 0;
      for (int32_t size : segments.asArrayRef()) {
        if (size == 0) {
          omitted.push_back(inputs.size());
          inputs.emplace_back();
        }
        for (int32_t i = 0; i < size; ++i)
          if (!addInput(op->getOperand(next++)))
            return false;
      }
    } else {
      for (Value operand : op->getOperands())
        if (!addInput(operand))
          return false;
    }
    reference::SimpleKernelContext context(opType.str(), std::move(inputs),
                                           op->getNumResults());
    for (size_t index : omitted)
      context.omitInput(index);
    for (NamedAttribute attribute : op->getAttrs()) {
      StringRef name = attribute.getName();
      if (name == "operandSegmentSizes" || name.contains('.'))
        continue;
      if (!convertible(attribute.getValue()))
        return false;
      FailureOr<reference::Attribute> converted =
          convertOnnxAttribute(op, name, attribute.getValue());
      if (failed(converted))
        return false;
      context.setAttribute(name.str(), std::move(*converted));
    }
    if (!reference::runKernel(kernel, context).ok())
      return false; // the run reports it, as it would without the fold

    // Check every result before anything changes.
    llvm::SmallVector<RankedTensorType> types;
    int64_t created = 0;
    for (auto [index, result] : llvm::enumerate(op->getResults())) {
      const reference::Value &value = context.outputs()[index];
      auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
      auto unranked = llvm::dyn_cast<UnrankedTensorType>(result.getType());
      if (!value.isTensor() || value.optional || (!type && !unranked))
        return false;
      const reference::Tensor &tensor = value.tensor;
      Type element = type ? type.getElementType() : unranked.getElementType();
      if (tensor.dtype() != referenceDTypeOf(element) ||
          tensor.dtype() == reference::DType::String)
        return false;
      if (type) {
        if (type.getRank() != tensor.rank())
          return false;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (!type.isDynamicDim(d) && type.getDimSize(d) != tensor.shape()[d])
            return false;
      }
      auto folded = RankedTensorType::get(tensor.shape(), element);
      if (!canRetype(result, folded))
        return false;
      created += static_cast<int64_t>(tensor.byteSize());
      types.push_back(folded);
    }
    if (created > allowed)
      return false;
    llvm::SmallVector<ElementsAttr> values;
    for (auto [index, type] : llvm::enumerate(types)) {
      ElementsAttr attr = pfvm::elementsFromTensor(
          context.outputs()[index].tensor, type, "pfvm_folded");
      if (!attr)
        return false;
      values.push_back(attr);
    }
    OpBuilder builder(op);
    for (auto [result, value] : llvm::zip(op->getResults(), values))
      result.replaceAllUsesWith(
          pfvm::createConstant(builder, op->getLoc(), value));
    op->erase();
    return true;
  }
};

} // namespace
