//===- Diagnostics.cpp - How mncc tools print diagnostics -----------------===//

#include "mncc/support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// The file of a location and, for a node of a binary model, its name.
struct ModelPlace {
  std::string file;
  std::string node;
  bool inBinaryModel = false;
};

ModelPlace placeOf(Location loc) {
  ModelPlace place;
  if (auto named = llvm::dyn_cast<NameLoc>(loc)) {
    place = placeOf(named.getChildLoc());
    if (place.inBinaryModel)
      place.node = "node '" + named.getName().str() + "'";
    return place;
  }
  // An unnamed node of a model: its description is the metadata
  // ("node (index 3, Add)", lib/onnx/Import.cpp).
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    auto description = llvm::dyn_cast_or_null<StringAttr>(fused.getMetadata());
    if (fused.getLocations().empty())
      return place;
    place = placeOf(fused.getLocations().front());
    if (place.inBinaryModel && description &&
        description.getValue().starts_with("node ("))
      place.node = description.str();
    return place;
  }
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc)) {
    place.file = file.getFilename().str();
    place.inBinaryModel = file.getLine() == 0;
  }
  return place;
}

const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error: return "error";
  case DiagnosticSeverity::Warning: return "warning";
  case DiagnosticSeverity::Remark: return "remark";
  case DiagnosticSeverity::Note: return "note";
  }
  return "error";
}

} // namespace

mncc::ToolDiagnosticHandler::ToolDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                                                   MLIRContext *context)
    : SourceMgrDiagnosticHandler(sourceMgr, context) {
  // Replace the handler the base class registered; the base still prints
  // diagnostics located in text.
  setHandler([this](Diagnostic &diagnostic) {
    ModelPlace place = placeOf(diagnostic.getLocation());
    if (!place.inBinaryModel) {
      emitDiagnostic(diagnostic);
      return success();
    }
    llvm::raw_ostream &os = llvm::errs();
    os << place.file << ": " << severityName(diagnostic.getSeverity())
       << ": ";
    std::string message = diagnostic.str();
    if (!place.node.empty() && message.find("node '") == std::string::npos &&
        message.find("node (") == std::string::npos)
      os << place.node << ": ";
    os << message << "\n";
    for (const Diagnostic &note : diagnostic.getNotes())
      os << place.file << ": note: " << note.str() << "\n";
    return success();
  });
}
