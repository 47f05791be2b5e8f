//===- Generators.h - The kernel generator families -------------*- C++ -*-===//
//
// One factory per family of kernels; kernelGeneratorFactories() lists them
// in the order findKernelGenerator tries them.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GENERATORS_H
#define MNCC_LIB_CODEGEN_KERNELS_GENERATORS_H

#include "mncc/codegen/Kernel.h"

#include <memory>
#include <vector>

namespace mncc::codegen {

using GeneratorFactory = std::unique_ptr<KernelGenerator> (*)();
std::vector<GeneratorFactory> kernelGeneratorFactories();

/// Element-wise operators over whole tensors of one shape, spread flat over
/// every PE (kernels/Elementwise.cpp).
std::unique_ptr<KernelGenerator> createElementwiseGenerator();

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_GENERATORS_H
