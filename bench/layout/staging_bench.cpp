//===- staging_bench.cpp - Layout staging throughput vs memcpy ------------===//
//
// Packs and unpacks two representative tensors with 2 threads and compares
// the throughput (host bytes per second) with a 2-thread memcpy of the same
// bytes; also unpackInto, which fills a caller's buffer as memcpy does.
// Usage: mncc-layout-staging-bench [repetitions]
//
//===----------------------------------------------------------------------===//

#include "mncc/layout/Staging.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace mncc::layout;

namespace {

constexpr unsigned kThreads = 2;

struct Workload {
  const char *name;
  const char *layout;
  DType dtype;
  MemoryKind memory;
};

// A GEMM weight (B transposed, 4096 x 1536 f16) kept in DRAM the way the
// MLSDK embed_tokens BT layout distributes it, and a convolution activation
// (N, C, H, W) = (16, 64, 64, 64) f16 in LM0 with the image width spread
// over L1B and PE.
const Workload kWorkloads[] = {
    {"gemm-weight (4096x1536 f16, DRAM)",
     "((2_Time:1, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (96:16, 4_W:1, 4_PE:1); "
     "B@[L1B])",
     DType::F16, MemoryKind::DRAM},
    {"conv-activation (16x64x64x64 f16, LM0)",
     "((8_L2B:1, 2_Time:1), (16:8, 4_W:1), (16_MAB:1, 4:2), (8_L1B:1, 2:1, "
     "4_PE:1))",
     DType::F16, MemoryKind::LM0},
};

double seconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

template <typename Body> double bestOf(int repetitions, Body body) {
  double best = 1e30;
  for (int i = 0; i < repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(best, seconds(std::chrono::steady_clock::now() - start));
  }
  return best;
}

void parallelMemcpy(uint8_t *destination, const uint8_t *source, size_t bytes) {
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < kThreads; ++t) {
    size_t first = bytes * t / kThreads, end = bytes * (t + 1) / kThreads;
    workers.emplace_back([=]() {
      std::memcpy(destination + first, source + first, end - first);
    });
  }
  for (std::thread &worker : workers)
    worker.join();
}

} // namespace

int main(int argc, char **argv) {
  int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::printf("staging with %u threads, best of %d\n", kThreads, repetitions);
  for (const Workload &workload : kWorkloads) {
    LayoutResult<Layout> layout = parseLayout(workload.layout);
    if (!layout) {
      std::fprintf(stderr, "error: %s\n", layout.error().str().c_str());
      return 1;
    }
    size_t bytes = layout->numElements() * dtypeBytes(workload.dtype);
    std::vector<uint8_t> host(bytes);
    std::mt19937_64 rng(1);
    for (uint8_t &byte : host)
      byte = static_cast<uint8_t>(rng());
    std::vector<uint8_t> copy(bytes);
    parallelMemcpy(copy.data(), host.data(), bytes); // touch the pages

    StagingOptions options;
    options.memory = workload.memory;
    options.numThreads = kThreads;
    LayoutResult<MemoryImage> image =
        pack(*layout, workload.dtype, host.data(), bytes, options);
    if (!image) {
      std::fprintf(stderr, "error: %s\n", image.error().str().c_str());
      return 1;
    }
    double packTime = bestOf(repetitions, [&]() {
      image = pack(*layout, workload.dtype, host.data(), bytes, options);
    });
    LayoutResult<std::vector<uint8_t>> back =
        unpack(*layout, workload.dtype, *image, options);
    double unpackTime = bestOf(repetitions, [&]() {
      back = unpack(*layout, workload.dtype, *image, options);
    });
    if (!back || *back != host) {
      std::fprintf(stderr, "error: %s does not round-trip\n", workload.name);
      return 1;
    }
    // unpackInto writes a caller's buffer, like the memcpy below, and so
    // skips the zero-fill of unpack's fresh vector.
    std::vector<uint8_t> into(bytes);
    double unpackIntoTime = bestOf(repetitions, [&]() {
      unpackInto(*layout, workload.dtype, *image, into.data(), bytes, options);
    });
    if (into != host) {
      std::fprintf(stderr, "error: %s does not round-trip through unpackInto\n",
                   workload.name);
      return 1;
    }
    double memcpyTime = bestOf(repetitions, [&]() {
      parallelMemcpy(copy.data(), host.data(), bytes);
    });
    double gb = static_cast<double>(bytes) / 1e9;
    std::printf("%s: %.1f MiB, %zu blocks\n", workload.name, bytes / 1048576.0,
                image->numBlocks());
    std::printf("  pack   %7.2f GB/s  (%.2fx memcpy)\n", gb / packTime,
                memcpyTime / packTime);
    std::printf("  unpack %7.2f GB/s  (%.2fx memcpy)\n", gb / unpackTime,
                memcpyTime / unpackTime);
    std::printf("  unpackInto %7.2f GB/s  (%.2fx memcpy)\n",
                gb / unpackIntoTime, memcpyTime / unpackIntoTime);
    std::printf("  memcpy %7.2f GB/s\n", gb / memcpyTime);
  }
  return 0;
}
