//===- Generators.cpp - The order generators are tried in -----------------===//

#include "Generators.h"

using namespace mncc;
using namespace mncc::codegen;

std::vector<GeneratorFactory> codegen::kernelGeneratorFactories() {
  return {
      createElementwiseGenerator,
  };
}
