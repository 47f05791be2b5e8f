//===- HostDevice.h - pfvm:cpu as a device, inside the runtime -*- C++ -*-===//

#ifndef MNCC_LIB_RUNTIME_HOSTDEVICE_H
#define MNCC_LIB_RUNTIME_HOSTDEVICE_H

#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/runtime/Runtime.h"

namespace mncc::runtime {

/// loadModelOnHost with the interpreter's options (the device reference
/// adds its rounding hook).
std::unique_ptr<Executable> loadModelOnHostWith(
    mlir::MLIRContext &context, const std::string &modelPath,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>
        &inputShapes,
    const PrepareOptions &prepareOptions, std::string &error);

} // namespace mncc::runtime

#endif // MNCC_LIB_RUNTIME_HOSTDEVICE_H
