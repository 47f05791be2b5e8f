//===- LinalgGemm.cpp - GEMM and the kernels' thread split ----------------===//
//
// Every kernel that needs a matrix product (MatMul, Gemm, Conv,
// ConvTranspose, the RNNs, ...) calls the GEMM here. It splits the output
// into blocks over the kernels' threads and multiplies each block with
// Eigen, on one thread, in the Eigen build for the widest instruction set
// the CPU runs (lib/reference/eigen). A Conv's op(B), its input unfolded
// (im2col), is written block by block into a per-thread buffer just before
// the block's product, so the whole unfolded input is never in memory
// unless the blocks all share it.
//
// Why Eigen rather than OpenBLAS: Debian's OpenBLAS picks its kernels from
// the CPU model and falls back to SSE kernels on models newer than itself
// (this host's Xeon runs at about a sixth of its AVX-512 speed that way
// unless OPENBLAS_CORETYPE is set). Eigen is compiled into the library, so
// the build the CPU's instruction sets allow is the one that runs.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"

#include "../eigen/EigenProducts.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MNCC_GEMM_X86 1
#endif

using namespace mncc::reference;

/// Thread count set by the test hook, 0 when none.
static std::atomic<int> forcedThreads{0};

int linalg::numThreads() {
  static const int threads = [] {
    const char *text = std::getenv("MNCC_REFERENCE_THREADS");
    int value = text ? std::atoi(text) : 0;
    return value > 0 ? std::min(value, 256) : 2;
  }();
  int forced = forcedThreads.load(std::memory_order_relaxed);
  return forced > 0 ? forced : threads;
}

void linalg::forceNumThreads(int threads) {
  forcedThreads.store(std::clamp(threads, 0, 256), std::memory_order_relaxed);
}

namespace {

/// Spins while `busy()` holds, for at most about `limit` iterations (a few
/// tens of microseconds); returns whether it stopped holding.
template <typename Busy> bool spinWhile(Busy &&busy, int limit) {
  for (int i = 0; i < limit; ++i) {
    if (!busy())
      return true;
#ifdef MNCC_GEMM_X86
    _mm_pause();
#endif
  }
  return !busy();
}

/// The helper threads of parallelFor, started once and kept: starting
/// threads on every call cost ~50-80 us, and a network runs hundreds of
/// parallel kernels per inference. One job runs at a time; the caller works
/// on it too. Waking a thread blocked on a condition variable takes tens of
/// microseconds in a VM, about as long as a small kernel, so helpers spin
/// a while on the job counter before they block, and the caller spins on
/// the helpers' completion before it blocks (as OpenMP runtimes do).
class ThreadPool {
public:
  /// Runs chunks [0, chunks) of `job` on the caller and up to `helpers`
  /// pool threads; returns once every chunk has finished.
  void run(int64_t chunks, int helpers,
           const std::function<void(int64_t)> &job) {
    std::unique_lock<std::mutex> lock(mutex);
    // A new helper starts at the current generation, so it takes this job.
    for (; started < helpers; ++started)
      std::thread([this, seen = generation.load()] { work(seen); }).detach();
    current = &job;
    total = chunks;
    next = 0;
    wanted = helpers;
    joined = 0;
    generation.fetch_add(1, std::memory_order_release);
    bool anyAsleep = sleepers > 0;
    lock.unlock();
    if (anyAsleep)
      wake.notify_all();
    drain();
    lock.lock();
    // No helper may join after this; wait for those that did.
    wanted = 0;
    lock.unlock();
    if (!spinWhile([&] { return running.load(std::memory_order_acquire) != 0; },
                   kSpinLimit)) {
      lock.lock();
      callerAsleep = true;
      done.wait(lock, [&] { return running.load() == 0; });
      callerAsleep = false;
      lock.unlock();
    }
    current = nullptr;
  }

private:
  static constexpr int kSpinLimit = 20000;

  void drain() {
    for (int64_t chunk = next++; chunk < total; chunk = next++)
      (*current)(chunk);
  }

  void work(uint64_t seen) {
    for (;;) {
      auto unchanged = [&] {
        return generation.load(std::memory_order_acquire) == seen;
      };
      std::unique_lock<std::mutex> lock(mutex);
      if (unchanged()) {
        lock.unlock();
        if (!spinWhile(unchanged, kSpinLimit)) {
          lock.lock();
          ++sleepers;
          wake.wait(lock, [&] { return !unchanged(); });
          --sleepers;
        } else {
          lock.lock();
        }
      }
      seen = generation.load(std::memory_order_acquire);
      if (joined >= wanted)
        continue; // The job needs fewer helpers, or is over.
      ++joined;
      running.fetch_add(1, std::memory_order_acq_rel);
      lock.unlock();
      drain();
      if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        lock.lock();
        if (callerAsleep)
          done.notify_all();
      }
    }
  }

  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *current = nullptr;
  int64_t total = 0;
  std::atomic<int64_t> next{0};
  std::atomic<uint64_t> generation{0};
  std::atomic<int> running{0};
  int started = 0, wanted = 0, joined = 0, sleepers = 0;
  bool callerAsleep = false;
};

/// Whether the pool is running a job; a parallelFor that finds it busy
/// (nested in a job, or from another thread) runs its chunks serially.
std::atomic<bool> poolBusy{false};

} // namespace

void linalg::parallelFor(int64_t count, int64_t grain,
                         const std::function<void(int64_t, int64_t)> &fn) {
  if (count <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = (count + grain - 1) / grain;
  int64_t threads = std::min<int64_t>(numThreads(), chunks);
  bool idle = false;
  if (threads <= 1 || !poolBusy.compare_exchange_strong(idle, true)) {
    // Same chunks as the threaded path, so results match it bit for bit.
    for (int64_t begin = 0; begin < count; begin += grain)
      fn(begin, std::min(count, begin + grain));
    return;
  }
  // Leaked on purpose: its threads never exit, so it must outlive them.
  static ThreadPool *pool = new ThreadPool;
  pool->run(chunks, static_cast<int>(threads - 1), [&](int64_t chunk) {
    int64_t begin = chunk * grain;
    fn(begin, std::min(count, begin + grain));
  });
  poolBusy.store(false);
}

namespace {

std::atomic<int> forcedIsa{static_cast<int>(linalg::GemmIsa::Auto)};

linalg::GemmIsa bestIsa() {
  static const linalg::GemmIsa best =
      eigen::cpuRunsAvx512() ? linalg::GemmIsa::Avx512
      : eigen::cpuRunsAvx2() ? linalg::GemmIsa::Avx2
                             : linalg::GemmIsa::Baseline;
  return best;
}

bool cpuRuns(linalg::GemmIsa isa) {
  switch (isa) {
  case linalg::GemmIsa::Avx512:
    return eigen::cpuRunsAvx512();
  case linalg::GemmIsa::Avx2:
    return eigen::cpuRunsAvx2();
  default:
    return true;
  }
}

const eigen::Products &currentProducts() {
  auto isa =
      static_cast<linalg::GemmIsa>(forcedIsa.load(std::memory_order_relaxed));
  switch (isa == linalg::GemmIsa::Auto ? bestIsa() : isa) {
  case linalg::GemmIsa::Avx512:
    return eigen::avx512Products();
  case linalg::GemmIsa::Avx2:
    return eigen::avx2Products();
  default:
    return eigen::baselineProducts();
  }
}

template <typename T> eigen::GemmFn<T> gemmFn() {
  if constexpr (std::is_same_v<T, float>)
    return currentProducts().sgemm;
  else
    return currentProducts().dgemm;
}

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

/// Per-thread buffer, 64-byte aligned, reused across calls: slot 0 for the
/// block of op(B) a packer writes for one block's product, 1 for the whole
/// op(B) the blocks of an M split share.
template <typename T> T *scratch(int slot, int64_t count) {
  struct Buffer {
    std::unique_ptr<T[]> data;
    int64_t capacity = 0;
  };
  thread_local Buffer buffers[2];
  Buffer &buffer = buffers[slot];
  constexpr int64_t kAlign = 64 / sizeof(T);
  if (buffer.capacity < count + kAlign) {
    buffer.capacity = count + kAlign;
    buffer.data.reset(new T[buffer.capacity]);
  }
  auto address = reinterpret_cast<uintptr_t>(buffer.data.get());
  return buffer.data.get() + (roundUp(address, 64) - address) / sizeof(T);
}

/// Largest op(B), in elements, that a packer writes whole for the blocks
/// of an M split (64 MiB of floats); the buffer stays with the calling
/// thread for later products.
constexpr int64_t kMaxWholeB = int64_t(1) << 24;
/// Largest block of op(B), in elements, that a packer writes for one
/// block of an N split (16 MiB of floats).
constexpr int64_t kMaxBlockB = int64_t(1) << 22;

template <typename T>
void startFromBias(const T *rowBias, int64_t m, int64_t n, T beta, T *c,
                   int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    currentProducts().startFromBiasFloat(rowBias, m, n, beta, c, ldc);
  else
    currentProducts().startFromBiasDouble(rowBias, m, n, beta, c, ldc);
}

template <typename T>
void clampBlock(const FusedActivation &clamp, int64_t m, int64_t n, T *c,
                int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    currentProducts().clampFloat(clamp.lo, clamp.hi, m, n, c, ldc);
  else
    currentProducts().clampDouble(clamp.lo, clamp.hi, m, n, c, ldc);
}

/// The block of the product at rows [rowBegin, rowBegin + m) and columns
/// [colBegin, colBegin + n), on one thread; c points at its first element.
/// With `wholeB` (all of op(B), row-major, ldWhole apart) op(B) is read
/// from there.
template <typename T>
void productBlock(const linalg::GemmOperands<T> &ops, int64_t rowBegin,
                  int64_t colBegin, int64_t m, int64_t n, int64_t k, T alpha,
                  T beta, T *c, int64_t ldc,
                  const linalg::GemmEpilogue<T> &epilogue,
                  const T *wholeB = nullptr, int64_t ldWhole = 0) {
  const T *a = ops.a + (ops.transA ? rowBegin : rowBegin * ops.lda);
  bool transB = ops.transB;
  const T *b = nullptr;
  int64_t ldb = ops.ldb;
  if (wholeB) {
    b = wholeB + colBegin;
    ldb = ldWhole;
    transB = false;
  } else if (ops.packB) {
    T *block = scratch<T>(0, k * n);
    (*ops.packB)(colBegin, n, block, n);
    b = block;
    ldb = n;
    transB = false;
  } else {
    b = ops.b + (transB ? colBegin * ldb : colBegin);
  }
  if (epilogue.rowBias) {
    startFromBias(epilogue.rowBias + rowBegin, m, n, beta, c, ldc);
    beta = T(1);
  }
  gemmFn<T>()(ops.transA, transB, m, n, k, alpha, a, ops.lda, b, ldb, beta, c,
              ldc);
  if (epilogue.clamp)
    clampBlock(*epilogue.clamp, m, n, c, ldc);
}

template <typename T>
void gemmImpl(int64_t m, int64_t n, int64_t k, T alpha,
              const linalg::GemmOperands<T> &ops, T beta, T *c, int64_t ldc,
              bool parallel, const linalg::GemmEpilogue<T> &epilogue) {
  if (m <= 0 || n <= 0)
    return;
  if (alpha == T(0) || k == 0) {
    // No product to add (k == 0), or one that BLAS would skip but ONNX's
    // formula keeps, with its 0 * inf = NaN (alpha == 0).
    if (epilogue.rowBias) {
      startFromBias(epilogue.rowBias, m, n, beta, c, ldc);
      beta = T(1);
    }
    std::vector<T> product;
    if (k > 0) {
      product.resize(m * n);
      gemmImpl(m, n, k, T(1), ops, T(0), product.data(), n, parallel,
               linalg::GemmEpilogue<T>());
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T &out = c[i * ldc + j];
        T start = beta == T(0) ? T(0) : beta * out;
        out = k > 0 ? T(0) * product[i * n + j] + start : start;
      }
    if (epilogue.clamp)
      clampBlock(*epilogue.clamp, m, n, c, ldc);
    return;
  }
  // The output splits along its longer side into about 8 blocks whose
  // size depends only on the shape, never on the thread count nor on
  // `parallel` (which only says whether the blocks may run on the pool):
  // Eigen's summation order depends on the shape of each product it is
  // given, so the result is the same whatever the thread count.
  auto forBlocks = [&](int64_t count, int64_t grain,
                       const std::function<void(int64_t, int64_t)> &fn) {
    if (parallel) {
      linalg::parallelFor(count, grain, fn);
      return;
    }
    for (int64_t begin = 0; begin < count; begin += grain)
      fn(begin, std::min(count, begin + grain));
  };
  bool large = m * n * k >= (int64_t(1) << 18);
  int64_t dim = std::max(m, n);
  int64_t block = roundUp(std::max<int64_t>(64, (dim + 7) / 8), 16);
  if (!large || dim <= block) {
    productBlock(ops, 0, 0, m, n, k, alpha, beta, c, ldc, epilogue);
    return;
  }
  if (m >= n && (!ops.packB || k * n <= kMaxWholeB)) {
    // Every block of rows needs all of op(B): a packer writes it once.
    const T *wholeB = nullptr;
    if (ops.packB) {
      T *data = scratch<T>(1, k * n);
      constexpr int64_t kColumnsPerTask = 64;
      forBlocks(n, kColumnsPerTask, [&](int64_t begin, int64_t end) {
        (*ops.packB)(begin, end - begin, data + begin, n);
      });
      wholeB = data;
    }
    forBlocks(m, block, [&](int64_t begin, int64_t end) {
      productBlock(ops, begin, 0, end - begin, n, k, alpha, beta,
                   c + begin * ldc, ldc, epilogue, wholeB, n);
    });
    return;
  }
  if (ops.packB && k * block > kMaxBlockB)
    block = std::max<int64_t>(16, kMaxBlockB / k / 16 * 16);
  forBlocks(n, block, [&](int64_t begin, int64_t end) {
    productBlock(ops, 0, begin, m, end - begin, k, alpha, beta, c + begin, ldc,
                 epilogue);
  });
}

/// The operands of the classic GEMM call: two plain matrices.
template <typename T>
linalg::GemmOperands<T> plainOperands(bool transA, const T *a, int64_t lda,
                                      bool transB, const T *b, int64_t ldb) {
  linalg::GemmOperands<T> ops;
  ops.transA = transA;
  ops.a = a;
  ops.lda = lda;
  ops.transB = transB;
  ops.b = b;
  ops.ldb = ldb;
  return ops;
}

} // namespace

template <typename T>
void linalg::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  T alpha, const T *a, int64_t lda, const T *b, int64_t ldb,
                  T beta, T *c, int64_t ldc, bool parallel,
                  const GemmEpilogue<T> &epilogue) {
  gemmImpl(m, n, k, alpha, plainOperands(transA, a, lda, transB, b, ldb), beta,
           c, ldc, parallel, epilogue);
}

template <typename T>
void linalg::gemm(int64_t m, int64_t n, int64_t k, T alpha,
                  const GemmOperands<T> &operands, T beta, T *c, int64_t ldc,
                  bool parallel, const GemmEpilogue<T> &epilogue) {
  gemmImpl(m, n, k, alpha, operands, beta, c, ldc, parallel, epilogue);
}

namespace mncc::reference::linalg {
template void gemm(bool, bool, int64_t, int64_t, int64_t, float, const float *,
                   int64_t, const float *, int64_t, float, float *, int64_t,
                   bool, const GemmEpilogue<float> &);
template void gemm(bool, bool, int64_t, int64_t, int64_t, double,
                   const double *, int64_t, const double *, int64_t, double,
                   double *, int64_t, bool, const GemmEpilogue<double> &);
template void gemm(int64_t, int64_t, int64_t, float,
                   const GemmOperands<float> &, float, float *, int64_t, bool,
                   const GemmEpilogue<float> &);
template void gemm(int64_t, int64_t, int64_t, double,
                   const GemmOperands<double> &, double, double *, int64_t,
                   bool, const GemmEpilogue<double> &);
} // namespace mncc::reference::linalg

template <typename U>
void linalg::integerGemm(bool transA, bool transB, int64_t m, int64_t n,
                         int64_t k, const U *a, int64_t lda, const U *b,
                         int64_t ldb, U *c) {
  if (m <= 0 || n <= 0)
    return;
  if (k == 0) {
    std::fill(c, c + m * n, U(0));
    return;
  }
  eigen::integerGemm(transA, transB, m, n, k, a, lda, b, ldb, c);
}

namespace mncc::reference::linalg {
template void integerGemm(bool, bool, int64_t, int64_t, int64_t,
                          const uint32_t *, int64_t, const uint32_t *, int64_t,
                          uint32_t *);
template void integerGemm(bool, bool, int64_t, int64_t, int64_t,
                          const uint64_t *, int64_t, const uint64_t *, int64_t,
                          uint64_t *);
} // namespace mncc::reference::linalg

bool linalg::forceGemmIsa(GemmIsa isa) {
  if (!cpuRuns(isa))
    return false;
  forcedIsa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

const char *linalg::gemmIsaName() { return currentProducts().name; }
