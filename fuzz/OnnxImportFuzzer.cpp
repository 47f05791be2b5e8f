//===- OnnxImportFuzzer.cpp - libFuzzer target for the ONNX importer ------===//
//
// Any byte string must give either a verified module or diagnostics; never
// a crash, a hang, an abort or a leak. Built by `make fuzz-onnx` with
// clang-19 and run for a bounded time.
//
//===----------------------------------------------------------------------===//

#include "mncc/Registration.h"
#include "mncc/onnx/Import.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *result = new mlir::DialectRegistry();
    mncc::registerAllDialects(*result);
    return result;
  }();
  mlir::MLIRContext context(*registry);
  context.disableMultithreading();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  (void)mncc::importOnnxBytes(bytes, "fuzz.onnx", &context);
  return 0;
}
