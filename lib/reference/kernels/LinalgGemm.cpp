//===- LinalgGemm.cpp - GEMM and the kernels' thread split ----------------===//
//
// Every kernel that needs a matrix product (MatMul, Gemm, Conv,
// ConvTranspose, the RNNs, ...) calls the GEMM here. It runs Eigen's
// packing routines and block-panel kernel, in the Eigen build for the
// widest instruction set the CPU runs (lib/reference/eigen), with its own
// split of the output into tiles over the kernels' threads: each operand
// is packed once per product (a Conv's constant weights once per program),
// and the kernel starts each sum from its bias and clamps it as it loads
// and stores the output (Products.inc's EpilogueResult). A Conv's op(B), its
// input unfolded (im2col), is written by the Conv straight into the kernel's
// panels, tile by tile, just before the tile's product. Products with one row
// or one column use Eigen's matrix-vector product instead.
//
// Why Eigen rather than OpenBLAS: Debian's OpenBLAS picks its kernels from
// the CPU model and falls back to SSE kernels on models newer than itself
// (this host's Xeon runs at about a sixth of its AVX-512 speed that way
// unless OPENBLAS_CORETYPE is set). Eigen is compiled into the library, so
// the build the CPU's instruction sets allow is the one that runs.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"

#include "mncc/reference/Threads.h"

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

/// Thread count set by the tools (setNumThreads), and by the test hook (0
/// when none).
static std::atomic<int> configuredThreads{kDefaultNumThreads};
static std::atomic<int> forcedThreads{0};

void mncc::reference::setNumThreads(int threads) {
  configuredThreads.store(std::clamp(threads, 1, kMaxNumThreads),
                          std::memory_order_relaxed);
}

int mncc::reference::getNumThreads() {
  return configuredThreads.load(std::memory_order_relaxed);
}

int mncc::reference::threadCountFromText(const char *text) {
  int value = text ? std::atoi(text) : 0;
  return value > 0 ? std::min(value, kMaxNumThreads) : kDefaultNumThreads;
}

int linalg::numThreads() {
  int forced = forcedThreads.load(std::memory_order_relaxed);
  return forced > 0 ? forced : getNumThreads();
}

void linalg::forceNumThreads(int threads) {
  forcedThreads.store(std::clamp(threads, 0, kMaxNumThreads),
                      std::memory_order_relaxed);
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

int64_t linalg::balancedGrain(int64_t count, int64_t work) {
  constexpr int64_t kMinChunkWork = 16384;
  int64_t threads = numThreads();
  int64_t minGrain =
      std::max<int64_t>(1, kMinChunkWork / std::max<int64_t>(1, work));
  int64_t chunks =
      std::min<int64_t>(4 * threads, (count + minGrain - 1) / minGrain);
  if (chunks > threads)
    chunks = chunks / threads * threads;
  chunks = std::max<int64_t>(chunks, 1);
  return std::max<int64_t>(1, (count + chunks - 1) / chunks);
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

template <typename T> const eigen::TypedProducts<T> &products() {
  return currentProducts().of<T>();
}

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

/// The per-thread buffers of the products.
enum ScratchSlot {
  /// Columns of op(B) a packer writes as a plain block.
  kUnfolded,
  /// op(B) packed for the kernel: one tile's, or all of it.
  kPackedB,
  /// All of op(A) packed for the kernel.
  kPackedA,
  kScratchSlots
};

/// Per-thread buffer, 64-byte aligned, reused across calls. A product's
/// calling thread may share its buffers with the pool for the product.
template <typename T> T *scratch(ScratchSlot slot, int64_t count) {
  struct Buffer {
    std::unique_ptr<T[]> data;
    int64_t capacity = 0;
  };
  thread_local Buffer buffers[kScratchSlots];
  Buffer &buffer = buffers[slot];
  constexpr int64_t kAlign = 64 / sizeof(T);
  if (buffer.capacity < count + kAlign) {
    buffer.capacity = count + kAlign;
    buffer.data.reset(new T[buffer.capacity]);
  }
  auto address = reinterpret_cast<uintptr_t>(buffer.data.get());
  return buffer.data.get() + (roundUp(address, 64) - address) / sizeof(T);
}

/// Largest op(B), in elements, packed whole for the tiles of a row split
/// (64 MiB of floats); the buffer stays with the calling thread for later
/// products.
constexpr int64_t kMaxWholeB = int64_t(1) << 24;
/// Products with fewer multiply-adds run as one block on one thread.
constexpr int64_t kMinSplitProduct = int64_t(1) << 18;

/// Runs fn over [0, count) in chunks of `grain`, on the pool when
/// `parallel`; the chunks are the same either way.
void forBlocks(bool parallel, int64_t count, int64_t grain,
               const std::function<void(int64_t, int64_t)> &fn) {
  if (parallel) {
    linalg::parallelFor(count, grain, fn);
    return;
  }
  for (int64_t begin = 0; begin < count; begin += grain)
    fn(begin, std::min(count, begin + grain));
}

/// How far apart the depth blocks of a packed op(A) (M rows) are: 64-byte
/// multiples, for the blocks packWholeA writes.
int64_t packedAStride(int64_t depthBlock, int64_t m) {
  return roundUp(depthBlock * m, 16);
}

/// Packs all of op(A) (M x K) for `kernels`, depth block d at
/// packed + d * stride, the blocks on the pool when `parallel`.
template <typename T>
void packWholeA(const eigen::TypedProducts<T> &kernels, bool transA, const T *a,
                int64_t lda, int64_t m, int64_t k, int64_t depthBlock,
                T *packed, int64_t stride, bool parallel) {
  int64_t blocks = (k + depthBlock - 1) / depthBlock;
  forBlocks(parallel, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      int64_t row = block * depthBlock;
      kernels.packA(transA, transA ? a + row * lda : a + row, lda, m,
                    std::min(depthBlock, k - row), packed + block * stride);
    }
  });
}

/// The product as Eigen's general_matrix_matrix_product computes it, with
/// the kernels' own split: both operands are packed once per depth block,
/// and the output is cut into tiles that each run on one thread; the
/// kernel starts each tile's sums from their bias and clamps them as it
/// stores them.
/// op(A) is packed whole and shared by the tiles. A split along C's rows
/// shares all of op(B) packed too; a split along its columns packs each
/// tile's columns of op(B) as the tile runs. The tiles start on the
/// kernel's panels (rows at multiples of 16, columns at multiples of
/// kPanelColumns), so every element's sum is the same whatever the split.
template <typename T> class BlockedProduct {
public:
  BlockedProduct(int64_t m, int64_t n, int64_t k, T alpha,
                 const linalg::GemmOperands<T> &ops, T beta, T *c, int64_t ldc,
                 bool parallel, const linalg::GemmEpilogue<T> &epilogue)
      : kernels(products<T>()), ops(ops), epilogue(epilogue), m(m), n(n), k(k),
        alpha(alpha), beta(beta), c(c), ldc(ldc), parallel(parallel),
        depthBlock(kernels.depthBlock(k)),
        depthBlocks((k + depthBlock - 1) / depthBlock) {}

  void run() {
    const linalg::PackedA<T> *given = ops.packedA;
    if (given && given->build == &kernels && given->m == m && given->k == k) {
      packedA = given->data;
      strideA = given->stride;
    } else {
      strideA = packedAStride(depthBlock, m);
      T *packed = scratch<T>(kPackedA, strideA * depthBlocks);
      packWholeA(kernels, ops.transA, ops.a, ops.lda, m, k, depthBlock, packed,
                 strideA, parallel);
      packedA = packed;
    }
    // Tiles may be any size that starts on the panels, so their number
    // follows the threads: a few per thread, taken in turn, balance the
    // threads when they run at different speeds.
    int64_t tiles = m * n * k < kMinSplitProduct ? 1
                    : parallel ? kTilesPerThread * linalg::numThreads()
                               : kTilesPerThread;
    if (m >= n && k * n <= kMaxWholeB)
      splitRows(tileSize(m, tiles, kPanelRows));
    else
      splitColumns(tileSize(n, tiles, eigen::kPanelColumns));
  }

private:
  static constexpr int64_t kTilesPerThread = 4;
  /// Rows of C's tiles start at multiples of this (of Eigen's nr, 4).
  static constexpr int64_t kPanelRows = 16;

  /// The size of `tiles` tiles over `extent`, in whole panels.
  static int64_t tileSize(int64_t extent, int64_t tiles, int64_t panel) {
    return std::max(panel, roundUp((extent + tiles - 1) / tiles, panel));
  }

  int64_t depthOf(int64_t block) const {
    return std::min(depthBlock, k - block * depthBlock);
  }

  /// Columns [column, column + columns) of op(B), `column` on a panel,
  /// over depth block `block`, packed for the kernel at `packed`.
  void packColumnsOfB(int64_t block, int64_t column, int64_t columns,
                      T *packed) const {
    int64_t row = block * depthBlock, depth = depthOf(block);
    if (!ops.packB) {
      kernels.packB(ops.transB,
                    ops.transB ? ops.b + column * ops.ldb + row
                               : ops.b + row * ops.ldb + column,
                    ops.ldb, columns, depth, packed);
      return;
    }
    // The packer writes the whole panels where the kernel reads them; only
    // a last, partial panel goes through Eigen's packing.
    int64_t panel = kernels.panelColumns;
    int64_t whole = columns / panel * panel;
    if (whole > 0)
      (*ops.packB)(row, depth, column, whole, packed, panel, panel * depth);
    if (whole < columns) {
      int64_t rest = columns - whole;
      T *unfolded = scratch<T>(kUnfolded, depth * rest);
      (*ops.packB)(row, depth, column + whole, rest, unfolded, rest,
                   rest * depth);
      kernels.packB(false, unfolded, rest, rest, depth, packed + whole * depth);
    }
  }

  /// C's rows [row, row + rows) and columns [column, column + columns);
  /// packedBOf(block) gives op(B)'s columns packed for depth block `block`.
  template <typename PackedBOf>
  void tile(int64_t row, int64_t rows, int64_t column, int64_t columns,
            PackedBOf &&packedBOf) {
    T *out = c + row * ldc + column;
    const T *bias = epilogue.rowBias ? epilogue.rowBias + row : nullptr;
    // With beta 0 the kernel starts the sums from the bias (or 0) as it
    // first loads C, and clamps as it last stores it: no pass of their
    // own over the tile.
    bool startInKernel = beta == T(0);
    if (!startInKernel)
      kernels.startProduct(bias, rows, columns, beta, out, ldc);
    for (int64_t block = 0; block < depthBlocks; ++block) {
      int64_t depth = depthOf(block);
      eigen::PanelEpilogue<T> steps;
      steps.start = startInKernel && block == 0;
      steps.rowBias = bias;
      steps.clamp = epilogue.clamp && block == depthBlocks - 1;
      if (steps.clamp) {
        steps.lo = T(epilogue.clamp->lo);
        steps.hi = T(epilogue.clamp->hi);
      }
      kernels.multiply(packedA + block * strideA + row * depth,
                       packedBOf(block), rows, columns, depth, alpha, out, ldc,
                       steps);
    }
  }

  /// All of op(B), depth block `block` at packedB + block * strideB, in
  /// tasks small enough to keep every thread busy even when op(B) is
  /// narrow (a Conv's last layers): slices of rows of the whole panels a
  /// packer writes, and chunks of the other columns through Eigen's
  /// packing.
  void packAllOfB(T *packedB, int64_t strideB) {
    struct Task {
      int64_t block, begin, end;
      bool rowsOfPanels;
    };
    // Enough rows that a Conv's packer builds its segments once per tap
    // for several channels.
    constexpr int64_t kRowsPerTask = 128;
    constexpr int64_t kColumnsPerTask = 4 * eigen::kPanelColumns;
    int64_t panel = kernels.panelColumns;
    int64_t whole = ops.packB ? n / panel * panel : 0;
    std::vector<Task> tasks;
    for (int64_t block = 0; block < depthBlocks; ++block) {
      int64_t depth = depthOf(block);
      for (int64_t row = 0; whole > 0 && row < depth; row += kRowsPerTask)
        tasks.push_back(
            {block, row, std::min(depth, row + kRowsPerTask), true});
      for (int64_t column = whole; column < n; column += kColumnsPerTask)
        tasks.push_back(
            {block, column, std::min(n, column + kColumnsPerTask), false});
    }
    forBlocks(
        parallel, static_cast<int64_t>(tasks.size()), 1,
        [&](int64_t begin, int64_t end) {
          for (int64_t index = begin; index < end; ++index) {
            const Task &task = tasks[index];
            int64_t depth = depthOf(task.block);
            T *packed = packedB + task.block * strideB;
            if (task.rowsOfPanels)
              (*ops.packB)(task.block * depthBlock + task.begin,
                           task.end - task.begin, 0, whole,
                           packed + task.begin * panel, panel, panel * depth);
            else
              packColumnsOfB(task.block, task.begin, task.end - task.begin,
                             packed + task.begin * depth);
          }
        });
  }

  void splitRows(int64_t rowsPerTile) {
    int64_t strideB = roundUp(depthBlock * n, 16);
    T *packedB = scratch<T>(kPackedB, strideB * depthBlocks);
    packAllOfB(packedB, strideB);
    forBlocks(parallel, m, rowsPerTile, [&](int64_t begin, int64_t end) {
      tile(begin, end - begin, 0, n,
           [&](int64_t block) { return packedB + block * strideB; });
    });
  }

  void splitColumns(int64_t columnsPerTile) {
    forBlocks(parallel, n, columnsPerTile, [&](int64_t begin, int64_t end) {
      int64_t columns = end - begin;
      T *packedB = scratch<T>(kPackedB, depthBlock * columns);
      tile(0, m, begin, columns, [&](int64_t block) {
        packColumnsOfB(block, begin, columns, packedB);
        return packedB;
      });
    });
  }

  const eigen::TypedProducts<T> &kernels;
  const linalg::GemmOperands<T> &ops;
  const linalg::GemmEpilogue<T> &epilogue;
  int64_t m, n, k;
  T alpha, beta;
  T *c;
  int64_t ldc;
  bool parallel;
  int64_t depthBlock, depthBlocks;
  const T *packedA = nullptr;
  int64_t strideA = 0;
};

/// A product with one row or one column: Eigen's matrix-vector product,
/// which reads the matrix once instead of packing it first. Large ones
/// split along their longer side.
template <typename T>
void vectorProduct(int64_t m, int64_t n, int64_t k, T alpha,
                   const linalg::GemmOperands<T> &ops, T beta, T *c,
                   int64_t ldc, bool parallel,
                   const linalg::GemmEpilogue<T> &epilogue) {
  const eigen::TypedProducts<T> &kernels = products<T>();
  int64_t dim = std::max(m, n);
  int64_t block = m * n * k >= kMinSplitProduct
                      ? roundUp(std::max<int64_t>(64, (dim + 7) / 8), 16)
                      : dim;
  forBlocks(parallel, dim, block, [&](int64_t begin, int64_t end) {
    int64_t row = m == 1 ? 0 : begin, rows = m == 1 ? 1 : end - begin;
    int64_t column = m == 1 ? begin : 0, columns = m == 1 ? end - begin : 1;
    const T *b;
    int64_t ldb = ops.ldb;
    bool transB = ops.transB;
    if (ops.packB) {
      T *unfolded = scratch<T>(kUnfolded, k * columns);
      (*ops.packB)(0, k, column, columns, unfolded, columns, columns * k);
      b = unfolded;
      ldb = columns;
      transB = false;
    } else {
      b = transB ? ops.b + column * ldb : ops.b + column;
    }
    T *out = c + row * ldc + column;
    T start = beta;
    if (epilogue.rowBias) {
      kernels.startProduct(epilogue.rowBias + row, rows, columns, beta, out,
                           ldc);
      start = T(1);
    }
    kernels.gemm(ops.transA, transB, rows, columns, k, alpha,
                 ops.transA ? ops.a + row : ops.a + row * ops.lda, ops.lda, b,
                 ldb, start, out, ldc);
    if (epilogue.clamp)
      kernels.clamp(T(epilogue.clamp->lo), T(epilogue.clamp->hi), rows, columns,
                    out, ldc);
  });
}

template <typename T>
void gemmImpl(int64_t m, int64_t n, int64_t k, T alpha,
              const linalg::GemmOperands<T> &ops, T beta, T *c, int64_t ldc,
              bool parallel, const linalg::GemmEpilogue<T> &epilogue) {
  if (m <= 0 || n <= 0)
    return;
  const eigen::TypedProducts<T> &kernels = products<T>();
  if (alpha == T(0) || k == 0) {
    // No product to add (k == 0), or one that BLAS would skip but ONNX's
    // formula keeps, with its 0 * inf = NaN (alpha == 0).
    std::vector<T> product;
    if (k > 0) {
      product.resize(m * n);
      gemmImpl(m, n, k, T(1), ops, T(0), product.data(), n, parallel,
               linalg::GemmEpilogue<T>());
    }
    kernels.startProduct(epilogue.rowBias, m, n, beta, c, ldc);
    if (k > 0)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          c[i * ldc + j] += T(0) * product[i * n + j];
    if (epilogue.clamp)
      kernels.clamp(T(epilogue.clamp->lo), T(epilogue.clamp->hi), m, n, c, ldc);
    return;
  }
  if (m == 1 || n == 1) {
    vectorProduct(m, n, k, alpha, ops, beta, c, ldc, parallel, epilogue);
    return;
  }
  BlockedProduct<T>(m, n, k, alpha, ops, beta, c, ldc, parallel, epilogue)
      .run();
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
std::shared_ptr<const linalg::PackedA<T>>
linalg::packA(bool transA, const T *a, int64_t lda, int64_t m, int64_t k) {
  const eigen::TypedProducts<T> &kernels = products<T>();
  auto packed = std::make_shared<PackedA<T>>();
  packed->build = &kernels;
  packed->m = m;
  packed->k = k;
  packed->depthBlock = k > 0 ? kernels.depthBlock(k) : 1;
  packed->stride = packedAStride(packed->depthBlock, m);
  int64_t blocks = (k + packed->depthBlock - 1) / packed->depthBlock;
  std::shared_ptr<T[]> storage(new T[packed->stride * blocks + 1]);
  packWholeA(kernels, transA, a, lda, m, k, packed->depthBlock, storage.get(),
             packed->stride, true);
  packed->data = storage.get();
  packed->storage = std::move(storage);
  return packed;
}

namespace mncc::reference::linalg {
template std::shared_ptr<const PackedA<float>> packA(bool, const float *,
                                                     int64_t, int64_t, int64_t);
template std::shared_ptr<const PackedA<double>>
packA(bool, const double *, int64_t, int64_t, int64_t);
} // namespace mncc::reference::linalg

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
