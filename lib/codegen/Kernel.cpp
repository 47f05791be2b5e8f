//===- Kernel.cpp - Kernel generators: the registry -----------------------===//

#include "mncc/codegen/Kernel.h"

#include "kernels/Generators.h"

using namespace mncc;
using namespace mncc::codegen;

KernelGenerator::~KernelGenerator() = default;

bool KernelGenerator::fusesActivation(const KernelRequest &) const {
  return false;
}

bool KernelGenerator::writesNarrowedCopy(const KernelRequest &) const {
  return false;
}

std::vector<unsigned>
KernelGenerator::preferredOrder(const KernelRequest &, size_t) const {
  return {};
}

std::optional<int64_t>
KernelGenerator::constantLongWords(const KernelRequest &, size_t) const {
  return std::nullopt;
}

bool KernelGenerator::packConstant(const KernelRequest &, size_t, DramImage &,
                                   std::string &error) const {
  error = std::string(name()) + " packs no constant of its own";
  return false;
}

int64_t KernelRequest::getInt(const std::string &name,
                              int64_t fallback) const {
  auto it = attributes.find(name);
  return it == attributes.end() ? fallback : it->second.i;
}

float KernelRequest::getFloat(const std::string &name, float fallback) const {
  auto it = attributes.find(name);
  return it == attributes.end() ? fallback : it->second.f;
}

std::vector<int64_t>
KernelRequest::getInts(const std::string &name,
                       std::vector<int64_t> fallback) const {
  auto it = attributes.find(name);
  return it == attributes.end() ? fallback : it->second.ints;
}

std::string KernelRequest::getString(const std::string &name,
                                     std::string fallback) const {
  auto it = attributes.find(name);
  return it == attributes.end() ? fallback : it->second.s;
}

const std::vector<std::unique_ptr<KernelGenerator>> &
codegen::kernelGenerators() {
  static const std::vector<std::unique_ptr<KernelGenerator>> generators =
      [] {
        std::vector<std::unique_ptr<KernelGenerator>> list;
        // Most specialised first; the general kernel for small tensors
        // catches what nothing else takes (Generators.h).
        for (auto create : kernelGeneratorFactories())
          list.push_back(create());
        return list;
      }();
  return generators;
}

namespace {

/// The first generator that matches (and, with `mustEmit`, emits the
/// request into a scratch writer); every other one's reason in whyNot.
const KernelGenerator *firstGenerator(const KernelRequest &request,
                                      bool mustEmit, std::string &whyNot) {
  whyNot.clear();
  for (const auto &generator : kernelGenerators()) {
    std::string reason;
    if (generator->matches(request, reason)) {
      if (!mustEmit)
        return generator.get();
      VsmWriter scratch;
      KernelDescription description;
      if (generator->emit(request, scratch, description, reason))
        return generator.get();
      reason = "matches, but " + reason;
    }
    if (!reason.empty())
      whyNot += (whyNot.empty() ? "" : "; ") + std::string(generator->name()) +
                ": " + reason;
  }
  if (whyNot.empty())
    whyNot = "no kernel generator handles " + request.opType;
  return nullptr;
}

} // namespace

const KernelGenerator *codegen::findKernelGenerator(
    const KernelRequest &request, std::string &whyNot) {
  return firstGenerator(request, /*mustEmit=*/false, whyNot);
}

const KernelGenerator *
codegen::findEmittingKernelGenerator(const KernelRequest &request,
                                     std::string &whyNot) {
  return firstGenerator(request, /*mustEmit=*/true, whyNot);
}
