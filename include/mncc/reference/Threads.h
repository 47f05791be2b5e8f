//===- Threads.h - How many threads pfvm:cpu's kernels use ---*- C++ -*-===//
//
// The library does not read the environment: the tools read mncc's run-time
// variable MNCC_REFERENCE_THREADS once and pass its value here.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_THREADS_H
#define MNCC_REFERENCE_THREADS_H

namespace mncc::reference {

constexpr int kDefaultNumThreads = 2;
constexpr int kMaxNumThreads = 256;

/// Sets the threads of the kernels, clamped to [1, kMaxNumThreads]; the
/// default is kDefaultNumThreads.
void setNumThreads(int threads);

/// The threads of the kernels.
int getNumThreads();

/// The count MNCC_REFERENCE_THREADS's value (null when unset) asks for: a
/// positive integer, at most kMaxNumThreads; anything else is the default.
int threadCountFromText(const char *text);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_THREADS_H
