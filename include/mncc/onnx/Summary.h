//===- Summary.h - What an imported ONNX model holds ---------*- C++ -*-===//

#ifndef MNCC_ONNX_SUMMARY_H
#define MNCC_ONNX_SUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <string>

namespace mncc {

struct ModelSummary {
  /// Nodes per operator type (onnx.Custom counted as domain.type).
  std::map<std::string, int64_t> operatorCounts;
  int64_t nodes = 0;
  int64_t parameters = 0;
  int64_t parameterBytes = 0;
  /// Floating-point operations of one inference, a multiply-add counting 2.
  int64_t flops = 0;
  /// Nodes whose cost is a guess (one operation per output element) or
  /// unknown (dynamic shapes).
  int64_t estimatedNodes = 0;
  int64_t unknownNodes = 0;
};

/// Floating-point operations of one node (a multiply-add counting 2), or
/// -1 when its shapes are unknown; `estimated` is set when the count is a
/// rule of thumb (one operation per output element).
int64_t nodeFlops(mlir::Operation *op, bool &estimated);

/// Counts operators, parameters (initializers) and FLOPs of the graph of
/// an imported model (the onnx dialect).
ModelSummary summarizeModel(mlir::ModuleOp module);

/// Prints the summary, with the graph's inputs and outputs, for a person.
void printModelSummary(mlir::ModuleOp module, const ModelSummary &summary,
                       llvm::raw_ostream &os);

} // namespace mncc

#endif // MNCC_ONNX_SUMMARY_H
