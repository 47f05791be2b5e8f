//===- Registration.h - Everything mncc registers ------------*- C++ -*-===//
//
// The dialects and passes of mncc, and the upstream ones its pipeline uses.
// Every tool registers through these two functions, so a pass run by
// mncc-opt in a lit test is the pass the driver runs.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REGISTRATION_H
#define MNCC_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mncc {

/// Adds the project dialects and the upstream dialects they build on.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers the project passes and the upstream passes the pipeline uses.
void registerAllPasses();

} // namespace mncc

#endif // MNCC_REGISTRATION_H
