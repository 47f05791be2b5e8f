//===- staging_bench.cpp - Layout staging throughput vs memcpy ------------===//
//
// Packs and unpacks two representative tensors with 2 threads and compares
// the throughput (host bytes per second) with a 2-thread memcpy of the same
// bytes: packInto and unpackInto, which fill existing storage, against
// memcpy into an existing buffer; pack and unpack, which return fresh
// storage, against memcpy into a freshly allocated one.
// Usage: mncc-layout-staging-bench [rounds]
//
//===----------------------------------------------------------------------===//

#include "mncc/layout/Staging.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
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

// One measured operation and the memcpy it is compared with.
struct Variant {
  const char *name;
  std::function<void()> run;
  int peer; // index of the memcpy variant it is compared with; -1: none
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  constexpr int kPerRound = 3;
  std::printf("staging with %u threads: %d rounds, each variant best of %d "
              "per round; ratios are per round (median, range)\n",
              kThreads, rounds, kPerRound);
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
    LayoutResult<MemoryImage> packed = image;
    LayoutResult<HostBytes> back =
        unpack(*layout, workload.dtype, *image, options);
    std::vector<uint8_t> into(bytes);
    // packInto and unpackInto fill existing storage, as a runtime reusing
    // its staging buffers does, and are compared with memcpy into an
    // existing buffer; pack and unpack return fresh storage and are
    // compared with memcpy into a buffer allocated for it.
    const std::vector<Variant> variants = {
        {"memcpy", [&]() { parallelMemcpy(copy.data(), host.data(), bytes); },
         -1},
        {"memcpy new",
         [&]() {
           std::unique_ptr<uint8_t[]> fresh(new uint8_t[bytes]);
           parallelMemcpy(fresh.get(), host.data(), bytes);
         },
         -1},
        {"packInto",
         [&]() {
           if (!packInto(*layout, workload.dtype, host.data(), bytes, *image,
                         options)) {
             std::fprintf(stderr, "error: packInto failed\n");
             std::exit(1);
           }
         },
         0},
        {"unpackInto",
         [&]() {
           unpackInto(*layout, workload.dtype, *image, into.data(), bytes,
                      options);
         },
         0},
        {"pack",
         [&]() {
           packed = pack(*layout, workload.dtype, host.data(), bytes, options);
         },
         1},
        {"unpack",
         [&]() { back = unpack(*layout, workload.dtype, *image, options); }, 1},
    };
    std::vector<std::vector<double>> times(variants.size());
    for (int round = 0; round < rounds; ++round)
      // Rotate the order so that no variant always runs right after
      // another's allocations.
      for (size_t k = 0; k < variants.size(); ++k) {
        size_t v = (k + round) % variants.size();
        times[v].push_back(bestOf(kPerRound, variants[v].run));
      }
    if (!back ||
        !std::equal(back->begin(), back->end(), host.begin(), host.end()) ||
        into != host || !packed) {
      std::fprintf(stderr, "error: %s does not round-trip\n", workload.name);
      return 1;
    }
    double gb = static_cast<double>(bytes) / 1e9;
    std::printf("%s: %.1f MiB, %zu blocks\n", workload.name, bytes / 1048576.0,
                image->numBlocks());
    for (size_t v = 0; v < variants.size(); ++v) {
      std::printf("  %-11s %6.2f GB/s", variants[v].name,
                  gb / median(times[v]));
      int peer = variants[v].peer;
      if (peer >= 0) {
        std::vector<double> ratios;
        for (int round = 0; round < rounds; ++round)
          ratios.push_back(times[peer][round] / times[v][round]);
        std::printf("  %.2fx %s (%.2f-%.2f)", median(ratios),
                    variants[peer].name,
                    *std::min_element(ratios.begin(), ratios.end()),
                    *std::max_element(ratios.begin(), ratios.end()));
      }
      std::printf("\n");
    }
  }
  return 0;
}
