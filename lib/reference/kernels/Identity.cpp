//===- Identity.cpp - Identity --------------------------------------------===//
//
// The pattern every kernel file follows: one family of operators, each a
// function over a KernelContext, registered by MNCC_REFERENCE_KERNEL.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Kernel.h"

using namespace mncc::reference;

namespace {

/// Identity: the output is the input (tensor, sequence or optional),
/// sharing its storage.
Status identityKernel(KernelContext &context) {
  const Value *input = context.input(0);
  if (!input)
    return Status::error("Identity needs an input");
  context.setOutput(0, *input);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", Identity, identityKernel);
