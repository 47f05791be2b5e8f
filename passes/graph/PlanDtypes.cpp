//===- PlanDtypes.cpp - Device formats by float_dtype ---------------------===//

#include "mncc/passes/graph/Passes.h"

#include "mncc/codegen/MLIRBridge.h"
#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/passes/pfvm/Fusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

namespace mncc::graph {
#define GEN_PASS_DEF_PLANDTYPES
#include "mncc/passes/graph/Passes.h.inc"
} // namespace mncc::graph

using namespace mlir;
using namespace mncc;

namespace {

/// ONNX TensorProto data types of the floating formats.
int64_t onnxDataTypeOf(Type element) {
  if (element.isF16())
    return 10;
  if (element.isF64())
    return 11;
  return 1;
}

bool isF32Tensor(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

RankedTensorType withElement(Type type, Type element) {
  auto tensor = llvm::cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), element,
                               tensor.getEncoding());
}

/// A Cast named after the node it serves ("fc1/cast_in0"), so that kernels
/// and profiles say what it is for.
Value createCast(OpBuilder &builder, Location loc, Value input, Type element,
                 llvm::StringRef name) {
  loc = NameLoc::get(builder.getStringAttr(name), loc);
  OperationState state(loc, "onnx.Cast");
  state.addOperands(input);
  state.addAttribute("to", builder.getI64IntegerAttr(onnxDataTypeOf(element)));
  state.addTypes(withElement(input.getType(), element));
  return builder.create(state)->getResult(0);
}

/// The operands of a matrix product computed in half under mixed: all of
/// them, Gemm's and Conv's bias too. The kernels add the bias through the
/// matrix unit (a bias tile beside the products), whose operands share one
/// format; a half bias costs less than the product's own half rounding.
bool isHalfOperandOfProduct(StringRef opType, unsigned operand) {
  if (opType == "Gemm" || opType == "Conv" || opType == "ConvTranspose")
    return operand < 3;
  return opType == "MatMul" && operand < 2;
}

bool isProduct(StringRef opType) {
  return opType == "Gemm" || opType == "MatMul" || opType == "Conv" ||
         opType == "ConvTranspose";
}

/// Ops whose float results follow their float operands' format, so that
/// half and double retype them; the rest (Constant, ConstantOfShape,
/// RandomNormal, ... whose type is an attribute) keep float32 and get a
/// Cast after them.
bool followsOperands(Operation *op) {
  if (op->getName().getDialectNamespace() != "onnx")
    return false;
  StringRef name = op->getName().stripDialect();
  if (name == "Initializer" || name == "Constant" || name == "None" ||
      name == "Custom")
    return false;
  return !op->hasAttr("dtype") && !op->hasAttr("value") &&
         (name == "Cast" || !op->hasAttr("to"));
}

/// Operands ONNX fixes to float32 whatever the data's type: Resize's roi
/// and scales, Upsample's scales (sample positions, not data); retyped,
/// the op no longer verifies.
bool keepsFloat32(Operation *op, unsigned operand) {
  StringRef name = op->getName().getStringRef();
  return (name == "onnx.Resize" && (operand == 1 || operand == 2)) ||
         (name == "onnx.Upsample" && operand == 1);
}

class PlanDtypesPass
    : public mncc::graph::impl::PlanDtypesBase<PlanDtypesPass> {
public:
  using PlanDtypesBase::PlanDtypesBase;

  void runOnOperation() override {
    StringRef mode = floatDtype;
    if (mode != "mixed" && mode != "half" && mode != "float" &&
        mode != "double") {
      getOperation().emitError("float-dtype must be mixed, half, float or "
                               "double, not '")
          << mode << "'";
      return signalPassFailure();
    }
    if (mode == "float")
      return;
    getOperation().walk([&](func::FuncOp function) {
      if (mode == "mixed")
        planMixed(function);
      else
        planUniform(function, mode == "half"
                                  ? Type(Float16Type::get(&getContext()))
                                  : Type(Float64Type::get(&getContext())));
      if (mode == "mixed")
        sinkWideningCasts(function);
      removeRoundTrips(function);
    });
  }

private:
  /// Gemm, MatMul, Conv and ConvTranspose in half, everything else in
  /// single.
  void planMixed(func::FuncOp function) {
    OpBuilder builder(&getContext());
    Type half = Float16Type::get(&getContext());
    Type single = Float32Type::get(&getContext());
    // One Cast to half per single value, however many products read it
    // (a ResNet block's input feeds both conv1 and the downsample), placed
    // after the value's producer so that it comes before every reader.
    llvm::DenseMap<Value, Value> halves;
    auto halfOf = [&](Value value, Operation *reader,
                      unsigned operand) -> Value {
      Value &cast = halves[value];
      if (cast)
        return cast;
      OpBuilder::InsertionGuard guard(builder);
      if (Operation *producer = value.getDefiningOp())
        builder.setInsertionPointAfter(producer);
      else
        builder.setInsertionPointToStart(value.getParentBlock());
      cast = createCast(builder, reader->getLoc(), value, half,
                        codegen::nodeNameOf(reader) + "/cast_in" +
                            std::to_string(operand));
      return cast;
    };
    function.walk([&](Operation *op) {
      StringRef opType = op->getName().stripDialect();
      if (op->getName().getDialectNamespace() != "onnx" || !isProduct(opType))
        return;
      if (op->getNumResults() != 1 || !isF32Tensor(op->getResult(0).getType()))
        return;
      for (OpOperand &operand : op->getOpOperands())
        if (isHalfOperandOfProduct(opType, operand.getOperandNumber()) &&
            isF32Tensor(operand.get().getType()))
          operand.set(halfOf(operand.get(), op, operand.getOperandNumber()));
      Value result = op->getResult(0);
      // A Relu or Clip that is the product's only user takes the product's
      // format, so that the product's kernel can clamp as it stores
      // (mncc-fuse-epilogues): clamping the rounded result is the rounding
      // of the clamped one, so this loses nothing.
      result.setType(withElement(result.getType(), half));
      if (Operation *activation = fusableActivationOf(result)) {
        builder.setInsertionPoint(activation);
        for (OpOperand &bound : llvm::drop_begin(activation->getOpOperands()))
          if (isF32Tensor(bound.get().getType()))
            bound.set(createCast(builder, activation->getLoc(), bound.get(),
                                 half,
                                 codegen::nodeNameOf(activation) + "/cast_in" +
                                     std::to_string(bound.getOperandNumber())));
        result = activation->getResult(0);
        result.setType(withElement(result.getType(), half));
        op = activation;
      }
      builder.setInsertionPointAfter(op);
      Value back = createCast(builder, op->getLoc(), result, single,
                              codegen::nodeNameOf(op) + "/cast_out");
      result.replaceAllUsesExcept(back, back.getDefiningOp());
    });
  }

  /// The activation a product's result feeds when it is the result's only
  /// user, takes it as input 0 and pfvm can fuse it (a Relu, or a Clip of
  /// constant bounds); null otherwise.
  static Operation *fusableActivationOf(Value result) {
    if (!result.hasOneUse())
      return nullptr;
    Operation *user = *result.getUsers().begin();
    if (user->getBlock() != result.getParentBlock() ||
        user->getNumResults() != 1 || user->getOperand(0) != result ||
        !isF32Tensor(user->getResult(0).getType()) ||
        !pfvm::fusableActivation(user))
      return nullptr;
    return user;
  }

  /// Every float32 tensor in `element`; the function's interface keeps the
  /// host type.
  void planUniform(func::FuncOp function, Type element) {
    OpBuilder builder(&getContext());
    Type single = Float32Type::get(&getContext());
    llvm::DenseMap<Value, Value> converted;
    auto convert = [&](Value value, Operation *before) -> Value {
      auto found = converted.find(value);
      if (found != converted.end())
        return found->second;
      OpBuilder::InsertionGuard guard(builder);
      if (Operation *producer = value.getDefiningOp())
        builder.setInsertionPointAfter(producer);
      else
        builder.setInsertionPointToStart(value.getParentBlock());
      std::string name =
          value.getDefiningOp()
              ? codegen::nodeNameOf(value.getDefiningOp()) + "/cast"
              : "input" +
                    std::to_string(llvm::cast<BlockArgument>(value).getArgNumber()) +
                    "/cast";
      Value cast = createCast(builder, before->getLoc(), value, element, name);
      converted[value] = cast;
      return cast;
    };
    for (Operation &op : llvm::make_early_inc_range(function.getBody().front())) {
      if (llvm::isa<func::ReturnOp>(op)) {
        builder.setInsertionPoint(&op);
        for (OpOperand &operand : op.getOpOperands()) {
          auto tensor = llvm::dyn_cast<RankedTensorType>(operand.get().getType());
          if (tensor && tensor.getElementType() == element)
            operand.set(createCast(builder, op.getLoc(), operand.get(), single,
                                   "output" +
                                       std::to_string(operand.getOperandNumber()) +
                                       "/cast"));
        }
        continue;
      }
      bool retype = followsOperands(&op);
      for (OpOperand &operand : op.getOpOperands())
        if (isF32Tensor(operand.get().getType()) && retype &&
            !keepsFloat32(&op, operand.getOperandNumber()))
          operand.set(convert(operand.get(), &op));
      if (!retype)
        continue;
      if (op.getName().getStringRef() == "onnx.Cast" &&
          op.getAttrOfType<IntegerAttr>("to").getInt() == 1)
        op.setAttr("to", builder.getI64IntegerAttr(onnxDataTypeOf(element)));
      for (Value result : op.getResults())
        if (isF32Tensor(result.getType()))
          result.setType(withElement(result.getType(), element));
    }
  }

  /// Under mixed, an op that only selects or moves values (MaxPool after a
  /// convolution, SqueezeNet's Concat of two expand convolutions) whose
  /// float inputs are all half values widened by a Cast only it reads runs
  /// in half, and the Cast follows it instead: selecting among exactly widened halves
  /// gives the widening of what is selected among the halves, so the
  /// results are the same to the bit, the op moves half the bytes, and
  /// the Cast back to half before the next product cancels
  /// (removeRoundTrips). Ops are visited in order, so a Cast sinks through
  /// a chain of them (MaxPool, then Reshape, ...).
  void sinkWideningCasts(func::FuncOp function) {
    OpBuilder builder(&getContext());
    Type single = Float32Type::get(&getContext());
    Type half = Float16Type::get(&getContext());
    auto halfWidened = [](Value value) -> Value {
      Operation *cast = value.getDefiningOp();
      if (!cast || cast->getName().getStringRef() != "onnx.Cast" ||
          !isF32Tensor(value.getType()))
        return nullptr;
      Value source = cast->getOperand(0);
      auto tensor = llvm::dyn_cast<RankedTensorType>(source.getType());
      return tensor && tensor.getElementType().isF16() ? source : nullptr;
    };
    for (Operation &op :
         llvm::make_early_inc_range(function.getBody().front())) {
      if (!selectsValues(&op) || !followsOperands(&op))
        continue;
      // Every float operand a widened half, every float result single.
      llvm::SmallVector<std::pair<OpOperand *, Value>> narrowed;
      bool eligible = true;
      for (OpOperand &operand : op.getOpOperands()) {
        auto tensor = llvm::dyn_cast<RankedTensorType>(operand.get().getType());
        if (!tensor || !llvm::isa<FloatType>(tensor.getElementType()))
          continue;
        Value source = halfWidened(operand.get());
        // Only a Cast this op alone reads: one another op reads too would
        // stay, and the op's own Cast would come on top.
        if (!source || !operand.get().hasOneUse()) {
          eligible = false;
          break;
        }
        narrowed.push_back({&operand, source});
      }
      if (!eligible || narrowed.empty())
        continue;
      for (Value result : op.getResults())
        eligible &= isF32Tensor(result.getType());
      if (!eligible)
        continue;
      for (auto &[operand, source] : narrowed) {
        Operation *widening = operand->get().getDefiningOp();
        operand->set(source);
        if (widening->use_empty())
          widening->erase();
      }
      builder.setInsertionPointAfter(&op);
      for (Value result : op.getResults()) {
        result.setType(withElement(result.getType(), half));
        std::string name = codegen::nodeNameOf(&op) + "/cast_out";
        if (op.getNumResults() > 1)
          name += std::to_string(llvm::cast<OpResult>(result).getResultNumber());
        Value widened =
            createCast(builder, op.getLoc(), result, single, name);
        result.replaceAllUsesExcept(widened, widened.getDefiningOp());
      }
    }
  }

  /// Ops whose results are values of their float operands, moved or
  /// selected but never computed, so that they are exact in any format
  /// (a Pad is not: its fill value is an operand of its own).
  static bool selectsValues(Operation *op) {
    if (op->getName().getDialectNamespace() != "onnx")
      return false;
    StringRef name = op->getName().stripDialect();
    if (name == "MaxPool")
      return op->getNumResults() == 1; // not with the Indices output
    return llvm::StringSwitch<bool>(name)
        .Cases("GlobalMaxPool", "Relu", "Max", "Min", "Identity", true)
        .Cases("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", true)
        .Cases("Concat", "Slice", "Split", true)
        .Default(false);
  }

  /// Cast(Cast(x)) back to x's own format is x; a Cast to the format a
  /// value already has is the value.
  void removeRoundTrips(func::FuncOp function) {
    function.walk([&](Operation *op) {
      if (op->getName().getStringRef() != "onnx.Cast")
        return;
      Value input = op->getOperand(0);
      Value result = op->getResult(0);
      if (input.getType() == result.getType()) {
        result.replaceAllUsesWith(input);
        op->erase();
        return;
      }
      Operation *inner = input.getDefiningOp();
      if (!inner || inner->getName().getStringRef() != "onnx.Cast")
        return;
      Value original = inner->getOperand(0);
      // Only widen-then-narrow within one kind is exact: half -> single ->
      // half; single -> int32 -> single truncates.
      Type originalElement =
          llvm::cast<RankedTensorType>(original.getType()).getElementType();
      Type middleElement =
          llvm::cast<RankedTensorType>(input.getType()).getElementType();
      if (original.getType() == result.getType() &&
          llvm::isa<FloatType>(originalElement) ==
              llvm::isa<FloatType>(middleElement) &&
          originalElement.getIntOrFloatBitWidth() <=
              middleElement.getIntOrFloatBitWidth()) {
        result.replaceAllUsesWith(original);
        op->erase();
        if (inner->use_empty())
          inner->erase();
      }
    });
  }
};

} // namespace
