//===- HostTarget.h - Host CPU variants of the emulator's loops -*- C++ -*-===//
//
// The per-PE loops of a step (ExecutePe.cpp, ExecuteTransfer.cpp) are plain
// integer loops over 4096 PEs. Built for the x86-64 baseline they run two
// 64-bit lanes at a time; MNCC_EMU_HOST_VARIANTS also builds them for
// x86-64-v4 (AVX-512) and lets the dynamic loader pick the variant the CPU
// runs (GCC's target_clones, an ifunc). Both variants are the same source:
// integer operations give the same bits at any vector width, and the
// library is built without floating-point contraction (CMakeLists.txt), so
// the few float operations round the same way too.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_HOSTTARGET_H
#define MNCC_EMU_HOSTTARGET_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&         \
    defined(__linux__)
#define MNCC_EMU_HOST_VARIANTS                                                 \
  __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define MNCC_EMU_HOST_VARIANTS
#endif

#endif // MNCC_EMU_HOSTTARGET_H
