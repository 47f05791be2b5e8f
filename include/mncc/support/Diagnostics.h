//===- Diagnostics.h - How mncc tools print diagnostics ------*- C++ -*-===//

#ifndef MNCC_SUPPORT_DIAGNOSTICS_H
#define MNCC_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"

namespace mncc {

/// Prints diagnostics as `file:line:col: error: message`, with the source
/// line and a caret when the location is in a text file that was loaded,
/// and as `file: error: node 'name': message` (a node without a name:
/// `node (index 3, Add)`) for locations inside a model (line 0), where a
/// line number means nothing.
class ToolDiagnosticHandler : public mlir::SourceMgrDiagnosticHandler {
public:
  ToolDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                        mlir::MLIRContext *context);
};

} // namespace mncc

#endif // MNCC_SUPPORT_DIAGNOSTICS_H
