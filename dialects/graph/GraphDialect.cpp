//===- GraphDialect.cpp - MNGraph dialect ----------------------------------===//

#include "mncc/dialects/graph/GraphDialect.h"

#include "mncc/layout/Layout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mncc::graph;

#include "mncc/dialects/graph/GraphDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mncc/dialects/graph/GraphAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "mncc/dialects/graph/GraphOps.cpp.inc"

void GraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mncc/dialects/graph/GraphAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mncc/dialects/graph/GraphOps.cpp.inc"
      >();
}

static constexpr llvm::StringLiteral kLayoutPrefix = "layout<";

Attribute GraphDialect::parseAttribute(DialectAsmParser &parser,
                                       Type type) const {
  // The layout notation is read as raw text: `75_Time:4` is not a sequence
  // of MLIR tokens. The generic parser has already balanced the brackets.
  StringRef spec = parser.getFullSymbolSpec();
  if (!spec.starts_with(kLayoutPrefix) || !spec.ends_with(">")) {
    parser.emitError(parser.getNameLoc(), "unknown mngraph attribute '")
        << spec << "'";
    return {};
  }
  StringRef text = spec.drop_front(kLayoutPrefix.size()).drop_back();
  if (text.trim().empty()) {
    parser.emitError(parser.getNameLoc(), "empty layout");
    return {};
  }
  mncc::layout::LayoutResult<mncc::layout::Layout> layout =
      mncc::layout::parseLayout(std::string_view(text.data(), text.size()));
  if (!layout) {
    // Point at the offending character of the layout in the source.
    const mncc::layout::LayoutError &error = layout.error();
    llvm::SMLoc at = parser.getNameLoc();
    if (error.column > 0 && error.column <= text.size() + 1)
      at = llvm::SMLoc::getFromPointer(text.data() + error.column - 1);
    parser.emitError(at, "invalid layout: ") << error.message;
    return {};
  }
  return LayoutAttr::get(getContext(), *layout);
}

void GraphDialect::printAttribute(Attribute attr,
                                  DialectAsmPrinter &printer) const {
  if (auto layout = llvm::dyn_cast<LayoutAttr>(attr)) {
    printer << kLayoutPrefix << layout.getText() << ">";
    return;
  }
  llvm_unreachable("unknown mngraph attribute");
}

/// The element type as lib/layout names it, for the W check.
static std::optional<mncc::layout::DType> layoutDTypeOf(Type type) {
  using mncc::layout::DType;
  if (type.isF16()) return DType::F16;
  if (type.isBF16()) return DType::BF16;
  if (type.isF32()) return DType::F32;
  if (type.isF64()) return DType::F64;
  if (type.isInteger(1)) return DType::Bool;
  if (auto integer = llvm::dyn_cast<IntegerType>(type)) {
    bool isUnsigned = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 8: return isUnsigned ? DType::U8 : DType::I8;
    case 16: return isUnsigned ? DType::U16 : DType::I16;
    case 32: return isUnsigned ? DType::U32 : DType::I32;
    case 64: return isUnsigned ? DType::U64 : DType::I64;
    default: return std::nullopt;
    }
  }
  return std::nullopt;
}

llvm::hash_code mncc::layout::hash_value(const Layout &layout) {
  llvm::hash_code code = llvm::hash_value(layout.dims.size());
  for (const std::vector<Mode> &modes : layout.dims)
    for (const Mode &mode : modes)
      code = llvm::hash_combine(code, mode.size, mode.stride,
                                static_cast<int>(mode.axis));
  for (Axis axis : layout.broadcast)
    code = llvm::hash_combine(code, static_cast<int>(axis));
  if (layout.shape)
    code = llvm::hash_combine(
        code, llvm::hash_combine_range(layout.shape->begin(),
                                       layout.shape->end()));
  return code;
}

LogicalResult
LayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                           function_ref<InFlightDiagnostic()> emitError) const {
  const mncc::layout::Layout *layout = &getLayout();
  if (layout->dims.size() != shape.size())
    return emitError() << "layout " << getText() << " has "
                       << layout->dims.size()
                       << " dimension groups, but the tensor has rank "
                       << shape.size();
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(size))
      continue;
    if (layout->shape && (*layout->shape)[dim] != size)
      return emitError() << "layout " << getText() << " is for a tensor of "
                         << (*layout->shape)[dim] << " elements along "
                         << "dimension " << dim << ", this one has " << size;
    int64_t span = layout->span(dim);
    if (size > span)
      return emitError() << "layout " << getText() << " places " << span
                         << " elements along dimension " << dim
                         << ", but the tensor has " << size;
  }
  std::optional<mncc::layout::DType> dtype = layoutDTypeOf(elementType);
  if (!dtype)
    return emitError() << "element type " << elementType
                       << " cannot be placed on MN-Core 2";
  // Where the tensor lives (LM, DRAM) is decided later; here the layout must
  // fit the hardware's axes and the element type. DRAM is the largest
  // memory, so only those checks can fail.
  mncc::layout::ValidationOptions options;
  options.dtype = *dtype;
  options.memory = mncc::layout::MemoryKind::DRAM;
  for (const mncc::layout::LayoutError &error :
       mncc::layout::validateLayout(*layout, options)) {
    // Too large to check exhaustively is not an error of the layout.
    if (llvm::StringRef(error.message).starts_with("cannot verify"))
      continue;
    return emitError() << "layout " << getText() << ": " << error.str();
  }
  return success();
}

LayoutAttr mncc::graph::getLayout(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return llvm::dyn_cast_or_null<LayoutAttr>(tensor.getEncoding());
}

/// A tensor's encoding is either absent (the host's dense row-major order)
/// or an MN-Core 2 layout.
static LogicalResult verifyLayoutEncoding(Operation *op, Type type,
                                          StringRef role) {
  auto tensor = llvm::cast<RankedTensorType>(type);
  if (tensor.getEncoding() && !llvm::isa<LayoutAttr>(tensor.getEncoding()))
    return op->emitOpError()
           << role << " encoding must be a #mngraph.layout, got "
           << tensor.getEncoding();
  return success();
}

LogicalResult LayoutSwitchOp::verify() {
  if (failed(verifyLayoutEncoding(*this, getInput().getType(), "input")) ||
      failed(verifyLayoutEncoding(*this, getType(), "result")))
    return failure();
  return success();
}

OpFoldResult LayoutSwitchOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A -> B -> C moves the data once, straight from A to C.
  if (auto previous = getInput().getDefiningOp<LayoutSwitchOp>()) {
    getInputMutable().assign(previous.getInput());
    return getResult();
  }
  return {};
}
