//===- GraphDialect.cpp - MNGraph dialect ----------------------------------===//

#include "mncc/dialects/graph/GraphDialect.h"

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
  StringRef text =
      spec.drop_front(kLayoutPrefix.size()).drop_back().trim();
  if (text.empty()) {
    parser.emitError(parser.getNameLoc(), "empty layout");
    return {};
  }
  return LayoutAttr::get(getContext(), text);
}

void GraphDialect::printAttribute(Attribute attr,
                                  DialectAsmPrinter &printer) const {
  if (auto layout = llvm::dyn_cast<LayoutAttr>(attr)) {
    printer << kLayoutPrefix << layout.getText() << ">";
    return;
  }
  llvm_unreachable("unknown mngraph attribute");
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
