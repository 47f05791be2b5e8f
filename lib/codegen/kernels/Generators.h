//===- Generators.h - Registering kernel generator families -----*- C++ -*-===//
//
// Each family registers itself from its own file:
//
//   MNCC_KERNEL_GENERATOR(Elementwise, 100, createElementwiseGenerator);
//
// findKernelGenerator tries them by descending priority, so a specialised
// kernel (priority 100 and up) is preferred over the general small-tensor
// kernel (priority 0).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GENERATORS_H
#define MNCC_LIB_CODEGEN_KERNELS_GENERATORS_H

#include "mncc/codegen/Kernel.h"

#include <memory>
#include <vector>

namespace mncc::codegen {

using GeneratorFactory = std::unique_ptr<KernelGenerator> (*)();
void registerKernelGenerator(int priority, GeneratorFactory factory);
/// The registered factories, highest priority first (ties in name order
/// of the generators they make).
std::vector<GeneratorFactory> kernelGeneratorFactories();

} // namespace mncc::codegen

#define MNCC_KERNEL_GENERATOR(NAME, PRIORITY, FACTORY)                         \
  static const bool mnccKernelGenerator_##NAME##_registered = [] {             \
    ::mncc::codegen::registerKernelGenerator(PRIORITY, FACTORY);               \
    return true;                                                               \
  }()

#endif // MNCC_LIB_CODEGEN_KERNELS_GENERATORS_H
