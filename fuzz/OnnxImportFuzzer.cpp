//===- OnnxImportFuzzer.cpp - libFuzzer target for the ONNX importer ------===//
//
// Any byte string must give either a verified module or diagnostics; never
// a crash, a hang, an abort or a leak. Built by `make fuzz-onnx` with
// clang-19 and run for a bounded time.
//
//===----------------------------------------------------------------------===//

#include "mncc/onnx/Import.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The importer loads the dialects it needs, so the fuzzer links only it.
  mlir::MLIRContext context;
  context.disableMultithreading();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  (void)mncc::importOnnxBytes(bytes, "fuzz.onnx", &context);
  return 0;
}
