//===- Generators.cpp - Registering kernel generator families -------------===//

#include "Generators.h"

#include <algorithm>
#include <string>
#include <utility>

using namespace mncc;
using namespace mncc::codegen;

namespace {
std::vector<std::pair<int, GeneratorFactory>> &registry() {
  static std::vector<std::pair<int, GeneratorFactory>> factories;
  return factories;
}
} // namespace

void codegen::registerKernelGenerator(int priority, GeneratorFactory factory) {
  registry().push_back({priority, factory});
}

std::vector<GeneratorFactory> codegen::kernelGeneratorFactories() {
  // Registration order follows static initialisation, which the linker
  // decides; sort by priority, then by name, so the order never changes.
  std::vector<std::pair<std::pair<int, std::string>, GeneratorFactory>> all;
  for (auto &[priority, factory] : registry())
    all.push_back({{-priority, factory()->name()}, factory});
  std::sort(all.begin(), all.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<GeneratorFactory> result;
  for (auto &entry : all)
    result.push_back(entry.second);
  return result;
}
