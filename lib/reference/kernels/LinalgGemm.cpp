//===- LinalgGemm.cpp - GEMM and the kernels' thread split ----------------===//
//
// Every kernel that needs a matrix product (MatMul, Gemm, Conv,
// ConvTranspose, ...) calls the GEMM here, which splits the output into
// blocks over the kernels' threads and multiplies each block on one thread:
// float with our own blocked GEMM, double with OpenBLAS.
//
// Why our own float GEMM: OpenBLAS picks its kernels from the CPU model,
// and under VMs that hide the model it falls back to SSE (about a third of
// what AVX-512 gives). We pick from the instruction sets the CPU reports
// instead. The library is built for baseline x86-64, so only the
// micro-kernels are compiled for AVX2/AVX-512, through target attributes
// on our own functions, and only called when __builtin_cpu_supports says
// the CPU runs them.
//
// The design is the classic one (Goto/BLIS): for each kc x nc block of
// op(B), pack it into kc x NR panels; for each mc x kc block of op(A),
// pack it into MR x kc panels; a register-blocked micro-kernel then
// computes each MR x NR tile of C from one A panel and one B panel. The
// transposes only change how the panels are packed.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"

#include <cblas.h>

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

/// A micro-kernel: the MR x NR tile acc = sum over p < kc of
/// ap[p * MR + i] * bp[p * NR + j], then c = alpha * acc, or
/// c = alpha * acc + beta * c when beta != 0 (c is not read when beta == 0,
/// so NaN there is ignored). Each element is summed over p in order, so the
/// result depends only on how k is cut into kc blocks, which depends only
/// on the shape. With an epilogue (on the last k block only; its rowBias
/// starts at the tile's first row) each value then gets its row's bias and
/// the clamp before it is stored.
using TileEpilogue = linalg::GemmEpilogue<float>;
using MicroKernel = void (*)(int64_t kc, const float *ap, const float *bp,
                             float *c, int64_t ldc, float alpha, float beta,
                             const TileEpilogue *epilogue);

/// The epilogue on one value of row i, as GemmEpilogue defines it.
inline float finishValue(float value, const TileEpilogue *epilogue, int64_t i) {
  if (!epilogue)
    return value;
  if (epilogue->rowBias)
    value += epilogue->rowBias[i];
  return epilogue->clamp ? epilogue->clamp->apply(value) : value;
}

/// A kernel that computes a full-height tile but stores only its first
/// `width` columns (0 < width < nr), each bit for bit what run() gives.
using ColumnsKernel = void (*)(int64_t kc, const float *ap, const float *bp,
                               float *c, int64_t ldc, float alpha, float beta,
                               const TileEpilogue *epilogue, int64_t width);

struct KernelInfo {
  int64_t mr, nr;
  MicroKernel run;
  ColumnsKernel runColumns = nullptr; // none: edge tiles use a buffer
};

// Largest tile of all the kernels (sizes the edge buffer).
constexpr int64_t kMaxMr = 8, kMaxNr = 32;

/// Portable kernel, for CPUs without AVX2: plain loops the compiler
/// vectorizes for the baseline (SSE2 on x86-64); 4 x 8 keeps the
/// accumulators in the 16 XMM registers. It runs near the SSE peak, as
/// OpenBLAS's SSE kernels do.
constexpr int64_t kPortableMr = 4, kPortableNr = 8;

void portableKernel(int64_t kc, const float *ap, const float *bp, float *c,
                    int64_t ldc, float alpha, float beta,
                    const TileEpilogue *epilogue) {
  float acc[kPortableMr][kPortableNr] = {};
  for (int64_t p = 0; p < kc; ++p, ap += kPortableMr, bp += kPortableNr)
    for (int64_t i = 0; i < kPortableMr; ++i)
      for (int64_t j = 0; j < kPortableNr; ++j)
        acc[i][j] += ap[i] * bp[j];
  for (int64_t i = 0; i < kPortableMr; ++i)
    for (int64_t j = 0; j < kPortableNr; ++j) {
      float value = alpha * acc[i][j];
      float &out = c[i * ldc + j];
      out = finishValue(beta == 0.0f ? value : value + beta * out, epilogue, i);
    }
}

#ifdef MNCC_GEMM_X86

/// AVX2 + FMA: 6 x 16 is 12 YMM accumulators, 2 for the B row and 1 for
/// the broadcast A value, within the 16 registers.
constexpr int64_t kAvx2Mr = 6, kAvx2Nr = 16;

__attribute__((target("avx2,fma"))) void
avx2Kernel(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc,
           float alpha, float beta, const TileEpilogue *epilogue) {
  __m256 acc[kAvx2Mr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Mr; ++i)
    acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, ap += kAvx2Mr, bp += kAvx2Nr) {
    __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kAvx2Mr; ++i) {
      __m256 a = _mm256_broadcast_ss(ap + i);
      acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
    }
  }
  __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  // Multiply and add with two roundings, as the scalar merge of the edge
  // tiles does, so edge and inner tiles round alike. (Were the compiler to
  // contract them into an FMA, only the last bit would change; results
  // would still not depend on the thread count.)
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Mr; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      float *out = c + i * ldc + 8 * h;
      __m256 value = _mm256_mul_ps(va, acc[i][h]);
      if (beta != 0.0f)
        value = _mm256_add_ps(value, _mm256_mul_ps(vb, _mm256_loadu_ps(out)));
      if (epilogue) {
        // max(lo, v) and min(hi, v) return v when v is NaN or when the
        // two compare equal: exactly finishValue's comparisons.
        if (epilogue->rowBias)
          value = _mm256_add_ps(value, _mm256_set1_ps(epilogue->rowBias[i]));
        if (epilogue->clamp)
          value = _mm256_min_ps(
              _mm256_set1_ps(epilogue->clamp->hi),
              _mm256_max_ps(_mm256_set1_ps(epilogue->clamp->lo), value));
      }
      _mm256_storeu_ps(out, value);
    }
}

/// AVX-512: 8 x 32 is 16 ZMM accumulators; the 2 B vectors and the
/// broadcasts leave registers free, and each k step issues 16 FMAs for
/// 10 loads, within what two FMA units and two load ports sustain.
constexpr int64_t kAvx512Mr = 8, kAvx512Nr = 32;

/// The 8 x 32 tile, or (Masked) only its first columns: `masks` select
/// the columns of each 16-wide half that are stored, and a tile of Halves
/// = 1 computes only the first half. Edge tiles of narrow outputs (7 x 7
/// and 14 x 14 feature maps leave 17 and 4 columns in the last panel) then
/// go straight into C, with only the FMAs their columns need, instead of
/// through a full tile in a buffer and a scalar merge.
template <int Halves, bool Masked>
__attribute__((target("avx512f"))) inline void
avx512Tile(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc,
           float alpha, float beta, const TileEpilogue *epilogue,
           const __mmask16 *masks) {
  __m512 acc[kAvx512Mr][Halves];
#pragma GCC unroll 8
  for (int i = 0; i < kAvx512Mr; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < Halves; ++h)
      acc[i][h] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, ap += kAvx512Mr, bp += kAvx512Nr) {
    __m512 b[Halves];
#pragma GCC unroll 2
    for (int h = 0; h < Halves; ++h)
      b[h] = _mm512_loadu_ps(bp + 16 * h);
#pragma GCC unroll 8
    for (int i = 0; i < kAvx512Mr; ++i) {
      __m512 a = _mm512_set1_ps(ap[i]);
#pragma GCC unroll 2
      for (int h = 0; h < Halves; ++h)
        acc[i][h] = _mm512_fmadd_ps(a, b[h], acc[i][h]);
    }
  }
  __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < kAvx512Mr; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < Halves; ++h) {
      float *out = c + i * ldc + 16 * h;
      __mmask16 mask = Masked ? masks[h] : __mmask16(0xffff);
      __m512 value = _mm512_mul_ps(va, acc[i][h]);
      if (beta != 0.0f) {
        __m512 old =
            Masked ? _mm512_maskz_loadu_ps(mask, out) : _mm512_loadu_ps(out);
        value = _mm512_add_ps(value, _mm512_mul_ps(vb, old));
      }
      if (epilogue) {
        // As in avx2Kernel: max and min keep v on NaN and on ties. (The
        // all-lanes masked forms say the same as _mm512_max_ps without
        // GCC 12's false "may be used uninitialized" on its undefined
        // pass-through operand.)
        if (epilogue->rowBias)
          value = _mm512_add_ps(value, _mm512_set1_ps(epilogue->rowBias[i]));
        if (epilogue->clamp) {
          value =
              _mm512_mask_max_ps(value, __mmask16(0xffff),
                                 _mm512_set1_ps(epilogue->clamp->lo), value);
          value =
              _mm512_mask_min_ps(value, __mmask16(0xffff),
                                 _mm512_set1_ps(epilogue->clamp->hi), value);
        }
      }
      if (Masked)
        _mm512_mask_storeu_ps(out, mask, value);
      else
        _mm512_storeu_ps(out, value);
    }
}

__attribute__((target("avx512f"))) void
avx512Kernel(int64_t kc, const float *ap, const float *bp, float *c,
             int64_t ldc, float alpha, float beta,
             const TileEpilogue *epilogue) {
  avx512Tile<2, false>(kc, ap, bp, c, ldc, alpha, beta, epilogue, nullptr);
}

__attribute__((target("avx512f"))) void
avx512ColumnsKernel(int64_t kc, const float *ap, const float *bp, float *c,
                    int64_t ldc, float alpha, float beta,
                    const TileEpilogue *epilogue, int64_t width) {
  auto lanes = [](int64_t count) {
    return count >= 16  ? __mmask16(0xffff)
           : count <= 0 ? __mmask16(0)
                        : __mmask16((1u << count) - 1);
  };
  const __mmask16 masks[2] = {lanes(width), lanes(width - 16)};
  if (width <= 16)
    avx512Tile<1, true>(kc, ap, bp, c, ldc, alpha, beta, epilogue, masks);
  else
    avx512Tile<2, true>(kc, ap, bp, c, ldc, alpha, beta, epilogue, masks);
}

#endif // MNCC_GEMM_X86

static_assert(kPortableMr <= kMaxMr && kPortableNr <= kMaxNr, "edge tile");
#ifdef MNCC_GEMM_X86
static_assert(kAvx2Mr <= kMaxMr && kAvx2Nr <= kMaxNr, "edge tile");
static_assert(kAvx512Mr <= kMaxMr && kAvx512Nr <= kMaxNr, "edge tile");
#endif

bool cpuRuns(linalg::GemmKernel kernel) {
  switch (kernel) {
  case linalg::GemmKernel::Auto:
  case linalg::GemmKernel::Portable:
    return true;
#ifdef MNCC_GEMM_X86
  case linalg::GemmKernel::Avx2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case linalg::GemmKernel::Avx512:
    return __builtin_cpu_supports("avx512f");
#else
  default:
    return false;
#endif
  }
  return false;
}

KernelInfo kernelInfo(linalg::GemmKernel kernel) {
  switch (kernel) {
#ifdef MNCC_GEMM_X86
  case linalg::GemmKernel::Avx512:
    return {kAvx512Mr, kAvx512Nr, avx512Kernel, avx512ColumnsKernel};
  case linalg::GemmKernel::Avx2:
    return {kAvx2Mr, kAvx2Nr, avx2Kernel};
#endif
  default:
    return {kPortableMr, kPortableNr, portableKernel};
  }
}

linalg::GemmKernel bestKernel() {
  static const linalg::GemmKernel best = [] {
    for (linalg::GemmKernel kernel :
         {linalg::GemmKernel::Avx512, linalg::GemmKernel::Avx2})
      if (cpuRuns(kernel))
        return kernel;
    return linalg::GemmKernel::Portable;
  }();
  return best;
}

/// The forced kernel (test hook), Auto when none.
std::atomic<int> forcedKernel{static_cast<int>(linalg::GemmKernel::Auto)};

KernelInfo currentKernel() {
  auto forced = static_cast<linalg::GemmKernel>(
      forcedKernel.load(std::memory_order_relaxed));
  return kernelInfo(forced == linalg::GemmKernel::Auto ? bestKernel() : forced);
}

// Cache blocking: a kc x NR panel of B (32 KiB at NR = 32) stays in L1
// while the micro-kernel sweeps the mc x kc block of A (at most 240 KiB)
// held in L2; the kc x nc block of B is for L3. mc is a multiple of every
// MR, nc of every NR.
constexpr int64_t kKc = 256, kMc = 240, kNc = 3072;

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

/// Per-thread packing buffer, 64-byte aligned, reused across calls: slot 0
/// for op(B) and 1 for op(A) inside gemmBlock, 2 for the whole op(B) that
/// gemmImpl packs once for blocks split along M.
float *packBuffer(int slot, int64_t count) {
  struct Buffer {
    std::unique_ptr<float[]> data;
    int64_t capacity = 0;
  };
  thread_local Buffer buffers[3];
  Buffer &buffer = buffers[slot];
  constexpr int64_t kAlign = 64 / sizeof(float);
  if (buffer.capacity < count + kAlign) {
    buffer.capacity = count + kAlign;
    buffer.data.reset(new float[buffer.capacity]);
  }
  auto address = reinterpret_cast<uintptr_t>(buffer.data.get());
  return buffer.data.get() + (roundUp(address, 64) - address) / sizeof(float);
}

/// dst[p * stride + i] = src[i * ld + p] for i < rows, p < cols: the
/// transposing copy of both packings. A block of C is often only ~50
/// columns wide, so each packed A element feeds only ~50 FMAs and scalar
/// strided stores would cost as much as the product: copy 4 x 4 at a time
/// with SSE, which baseline x86-64 has.
void transposeCopy(const float *src, int64_t ld, int64_t rows, int64_t cols,
                   float *dst, int64_t stride) {
  int64_t i = 0;
#ifdef MNCC_GEMM_X86
  for (; i + 4 <= rows; i += 4) {
    const float *in = src + i * ld;
    int64_t p = 0;
    for (; p + 4 <= cols; p += 4) {
      __m128 r0 = _mm_loadu_ps(in + p), r1 = _mm_loadu_ps(in + ld + p);
      __m128 r2 = _mm_loadu_ps(in + 2 * ld + p);
      __m128 r3 = _mm_loadu_ps(in + 3 * ld + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      float *out = dst + p * stride + i;
      _mm_storeu_ps(out, r0);
      _mm_storeu_ps(out + stride, r1);
      _mm_storeu_ps(out + 2 * stride, r2);
      _mm_storeu_ps(out + 3 * stride, r3);
    }
    for (; p < cols; ++p)
      for (int64_t q = 0; q < 4; ++q)
        dst[p * stride + i + q] = in[q * ld + p];
  }
#endif
  for (; i < rows; ++i)
    for (int64_t p = 0; p < cols; ++p)
      dst[p * stride + i] = src[i * ld + p];
}

/// Packs rows [row, row + rows) x columns [col, col + cols) of op(B) into
/// kc x nr panels, zero-padding the last panel's missing columns.
void packB(bool transB, const float *b, int64_t ldb, int64_t row, int64_t col,
           int64_t rows, int64_t cols, int64_t nr, float *dst) {
  for (int64_t j0 = 0; j0 < cols; j0 += nr, dst += rows * nr) {
    int64_t width = std::min(nr, cols - j0);
    if (!transB) {
      for (int64_t p = 0; p < rows; ++p) {
        const float *src = b + (row + p) * ldb + col + j0;
        float *out = dst + p * nr;
        for (int64_t j = 0; j < width; ++j)
          out[j] = src[j];
        for (int64_t j = width; j < nr; ++j)
          out[j] = 0.0f;
      }
      continue;
    }
    // op(B)(p, j) = b[j * ldb + p].
    transposeCopy(b + (col + j0) * ldb + row, ldb, width, rows, dst, nr);
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t j = width; j < nr; ++j)
        dst[p * nr + j] = 0.0f;
  }
}

/// Packs rows [row, row + rows) x columns [col, col + cols) of op(A) into
/// mr x kc panels (column p of the panel contiguous), zero-padding the last
/// panel's missing rows.
void packA(bool transA, const float *a, int64_t lda, int64_t row, int64_t col,
           int64_t rows, int64_t cols, int64_t mr, float *dst) {
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += cols * mr) {
    int64_t height = std::min(mr, rows - i0);
    if (transA) {
      for (int64_t p = 0; p < cols; ++p) {
        const float *src = a + (col + p) * lda + row + i0;
        float *out = dst + p * mr;
        for (int64_t i = 0; i < height; ++i)
          out[i] = src[i];
        for (int64_t i = height; i < mr; ++i)
          out[i] = 0.0f;
      }
      continue;
    }
    // op(A)(i, p) = a[i * lda + p].
    transposeCopy(a + (row + i0) * lda + col, lda, height, cols, dst, mr);
    for (int64_t p = 0; p < cols; ++p)
      for (int64_t i = height; i < mr; ++i)
        dst[p * mr + i] = 0.0f;
  }
}

/// Largest op(B), in floats, that is packed whole (64 MiB): the buffer
/// stays with the calling thread for later products.
constexpr int64_t kMaxWholeB = int64_t(1) << 24;

/// op(B), all of it, packed as gemmBlock packs it block by block: depth
/// block pc (kb rows) at pc * roundUp(n, nr), its panels kb * nr floats
/// apart. Packed once for all the blocks of a product split along M, which
/// would otherwise each pack all of op(B) again.
struct PackedB {
  const float *data;
  int64_t paddedCols;
  int64_t nr; // the panel width it was packed for

  /// Floats from `data` to the panel of columns [col, col + nr) of the
  /// depth block starting at pc (kb rows).
  int64_t offset(int64_t pc, int64_t col, int64_t kb) const {
    return pc * paddedCols + col * kb;
  }
  const float *block(int64_t pc, int64_t col, int64_t kb) const {
    return data + offset(pc, col, kb);
  }
};

PackedB packWholeB(const linalg::GemmOperands<float> &ops, int64_t n, int64_t k,
                   int64_t nr) {
  PackedB packed{nullptr, roundUp(n, nr), nr};
  float *data = packBuffer(2, packed.paddedCols * k);
  packed.data = data;
  // Tasks of a depth block times 8 panels, spread over the threads.
  constexpr int64_t kPanelsPerTask = 8;
  const int64_t depthBlocks = (k + kKc - 1) / kKc;
  const int64_t tasksPerBlock =
      (packed.paddedCols / nr + kPanelsPerTask - 1) / kPanelsPerTask;
  linalg::parallelFor(
      depthBlocks * tasksPerBlock, 1, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          int64_t pc = task / tasksPerBlock * kKc;
          int64_t col = task % tasksPerBlock * kPanelsPerTask * nr;
          int64_t kb = std::min(kKc, k - pc);
          int64_t cols = std::min(kPanelsPerTask * nr, n - col);
          float *dst = data + packed.offset(pc, col, kb);
          if (ops.packB)
            (*ops.packB)(pc, col, kb, cols, nr, dst);
          else
            packB(ops.transB, ops.b, ops.ldb, pc, col, kb, cols, nr, dst);
        }
      });
  return packed;
}

/// The block of the product at rows [rowBegin, rowBegin + m) and columns
/// [colBegin, colBegin + n), on one thread; c points at its first element.
/// alpha != 0 and k > 0 here. With `packedB` (the whole of op(B), for a
/// block of all the columns) nothing of op(B) is packed here.
void gemmBlock(const linalg::GemmOperands<float> &ops, int64_t rowBegin,
               int64_t colBegin, int64_t m, int64_t n, int64_t k, float alpha,
               float beta, float *c, int64_t ldc,
               const linalg::GemmEpilogue<float> &epilogue,
               const PackedB *packedB = nullptr) {
  const KernelInfo kernel = currentKernel();
  const int64_t mr = kernel.mr, nr = kernel.nr;
  // Packed for another micro-kernel (a test switched kernels): pack here.
  if (packedB && packedB->nr != nr)
    packedB = nullptr;
  const float *a =
      ops.a ? ops.a + (ops.transA ? rowBegin : rowBegin * ops.lda) : nullptr;
  const float *b =
      ops.b ? ops.b + (ops.transB ? colBegin * ops.ldb : colBegin) : nullptr;
  // Packed panels start every MR rows of the whole matrix, so a block can
  // use them when it starts on a panel (kMc is a multiple of every MR).
  const linalg::PackedA *packed =
      ops.packedA && ops.packedA->mr() == mr && rowBegin % mr == 0 ? ops.packedA
                                                                   : nullptr;
  float *bBuffer =
      packedB ? nullptr
              : packBuffer(0, roundUp(std::min(n, kNc), nr) * std::min(k, kKc));
  float *aPack =
      packBuffer(1, roundUp(std::min(m, kMc), mr) * std::min(k, kKc));
  alignas(64) float edge[kMaxMr * kMaxNr];
  bool hasEpilogue = !epilogue.empty();
  for (int64_t jc = 0; jc < n; jc += kNc) {
    int64_t nb = std::min(kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      int64_t kb = std::min(kKc, k - pc);
      // Later k blocks add onto what the first left in C.
      float betaNow = pc == 0 ? beta : 1.0f;
      bool lastK = pc + kb == k;
      const float *bPack = bBuffer;
      if (packedB)
        bPack = packedB->block(pc, jc, kb);
      else if (ops.packB)
        (*ops.packB)(pc, colBegin + jc, kb, nb, nr, bBuffer);
      else
        packB(ops.transB, b, ops.ldb, pc, jc, kb, nb, nr, bBuffer);
      for (int64_t ic = 0; ic < m; ic += kMc) {
        int64_t mb = std::min(kMc, m - ic);
        if (!packed)
          packA(ops.transA, a, ops.lda, ic, pc, mb, kb, mr, aPack);
        for (int64_t jr = 0; jr < nb; jr += nr) {
          int64_t width = std::min(nr, nb - jr);
          const float *bPanel = bPack + jr * kb;
          for (int64_t ir = 0; ir < mb; ir += mr) {
            int64_t height = std::min(mr, mb - ir);
            const float *aPanel =
                packed ? packed->panel(rowBegin + ic + ir, pc, kb)
                       : aPack + ir * kb;
            float *tile = c + (ic + ir) * ldc + jc + jr;
            TileEpilogue tileEpilogue{epilogue.rowBias ? epilogue.rowBias +
                                                             rowBegin + ic + ir
                                                       : nullptr,
                                      epilogue.clamp};
            const TileEpilogue *finish =
                hasEpilogue && lastK ? &tileEpilogue : nullptr;
            if (height == mr && width == nr) {
              kernel.run(kb, aPanel, bPanel, tile, ldc, alpha, betaNow, finish);
              continue;
            }
            if (height == mr && kernel.runColumns) {
              kernel.runColumns(kb, aPanel, bPanel, tile, ldc, alpha, betaNow,
                                finish, width);
              continue;
            }
            // Edge tile: the kernel writes alpha * acc to a full-size
            // buffer; the part inside C is merged with the same two
            // roundings the kernels use.
            kernel.run(kb, aPanel, bPanel, edge, nr, alpha, 0.0f, nullptr);
            for (int64_t i = 0; i < height; ++i)
              for (int64_t j = 0; j < width; ++j) {
                float &out = tile[i * ldc + j];
                float value = edge[i * nr + j];
                out = finishValue(
                    betaNow == 0.0f ? value : value + betaNow * out, finish, i);
              }
          }
        }
      }
    }
  }
}

/// Double stays on OpenBLAS (few kernels use it; speed matters less).
void gemmBlock(const linalg::GemmOperands<double> &ops, int64_t rowBegin,
               int64_t colBegin, int64_t m, int64_t n, int64_t k, double alpha,
               double beta, double *c, int64_t ldc,
               const linalg::GemmEpilogue<double> &epilogue) {
  const double *a = ops.a + (ops.transA ? rowBegin : rowBegin * ops.lda);
  const double *b = ops.b + (ops.transB ? colBegin * ops.ldb : colBegin);
  cblas_dgemm(CblasRowMajor, ops.transA ? CblasTrans : CblasNoTrans,
              ops.transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
              ops.lda, b, ops.ldb, beta, c, ldc);
  linalg::applyEpilogue(epilogue, rowBegin, m, n, c, ldc);
}

/// OpenBLAS's own threads would split the work differently for each thread
/// count; the kernels split it themselves, in shape-dependent blocks.
void singleThreadedBlas() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

/// One row times a matrix (m == 1: a fully connected layer at batch 1):
/// packing would copy all of B to use each element once, so read B in
/// place instead, over column blocks in parallel. Each output's sum runs in
/// a fixed order (16 interleaved partial sums for a transposed B, then a
/// fixed tree; plain order otherwise), so the bits depend neither on the
/// thread count nor, without FMA contraction, on the CPU.
void gemvRow(int64_t n, int64_t k, float alpha,
             const linalg::GemmOperands<float> &ops, float beta, float *c,
             const linalg::GemmEpilogue<float> &epilogue, bool parallel) {
  constexpr int64_t kLanes = 16, kBlock = 64;
  auto columns = [&](int64_t begin, int64_t end) {
    float sums[kBlock];
    int64_t count = end - begin;
    if (ops.transB) {
      for (int64_t j = 0; j < count; ++j) {
        const float *row = ops.b + (begin + j) * ops.ldb;
        float acc[kLanes] = {};
        int64_t p = 0;
        for (; p + kLanes <= k; p += kLanes)
          for (int64_t l = 0; l < kLanes; ++l)
            acc[l] += ops.a[p + l] * row[p + l];
        for (int64_t l = 0; p + l < k; ++l)
          acc[l] += ops.a[p + l] * row[p + l];
        for (int64_t width = kLanes / 2; width > 0; width /= 2)
          for (int64_t l = 0; l < width; ++l)
            acc[l] += acc[l + width];
        sums[j] = acc[0];
      }
    } else {
      std::fill(sums, sums + count, 0.0f);
      for (int64_t p = 0; p < k; ++p) {
        float x = ops.a[p];
        const float *row = ops.b + p * ops.ldb + begin;
        for (int64_t j = 0; j < count; ++j)
          sums[j] += x * row[j];
      }
    }
    const TileEpilogue *last = epilogue.empty() ? nullptr : &epilogue;
    for (int64_t j = 0; j < count; ++j) {
      float value = alpha * sums[j];
      float &out = c[begin + j];
      // The one row of C is row 0 of the bias.
      out = finishValue(beta == 0.0f ? value : value + beta * out, last, 0);
    }
  };
  if (parallel && n * k >= (int64_t(1) << 16))
    linalg::parallelFor(n, kBlock, columns);
  else
    for (int64_t begin = 0; begin < n; begin += kBlock)
      columns(begin, std::min(n, begin + kBlock));
}

template <typename T>
void gemmImpl(int64_t m, int64_t n, int64_t k, T alpha,
              const linalg::GemmOperands<T> &ops, T beta, T *c, int64_t ldc,
              bool parallel, const linalg::GemmEpilogue<T> &epilogue) {
  if (m <= 0 || n <= 0)
    return;
  singleThreadedBlas();
  if (alpha == T(0) && k > 0) {
    // BLAS skips the product when alpha is 0; ONNX's formula still has
    // 0 * inf = NaN in it.
    std::vector<T> product(m * n);
    gemmImpl(m, n, k, T(1), ops, T(0), product.data(), n, parallel,
             linalg::GemmEpilogue<T>());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T &out = c[i * ldc + j];
        out = T(0) * product[i * n + j] + (beta == T(0) ? T(0) : beta * out);
      }
    linalg::applyEpilogue(epilogue, 0, m, n, c, ldc);
    return;
  }
  if (k == 0) {
    // BLAS wants a leading dimension of at least 1; C = beta * C.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    linalg::applyEpilogue(epilogue, 0, m, n, c, ldc);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (m == 1 && !ops.packB && !ops.packedA && !ops.transA) {
      gemvRow(n, k, alpha, ops, beta, c, epilogue, parallel);
      return;
    }
  }
  // The output splits along its longer side into about 8 blocks whose
  // size depends only on the shape, never on the thread count: each block
  // is one BLAS product, so the summation order (hence the result) is the
  // same whatever the thread count, and blocks stay large enough for
  // the packing to pay off.
  bool large = m * n * std::max<int64_t>(k, 1) >= (int64_t(1) << 18);
  int64_t dim = std::max(m, n);
  int64_t block = std::max<int64_t>(64, (dim + 7) / 8);
  block = (block + 15) / 16 * 16;
  if (!parallel || !large || dim <= block) {
    gemmBlock(ops, 0, 0, m, n, k, alpha, beta, c, ldc, epilogue);
    return;
  }
  if (m >= n) {
    if constexpr (std::is_same_v<T, float>) {
      const int64_t nr = currentKernel().nr;
      if (roundUp(n, nr) * k <= kMaxWholeB) {
        PackedB packed = packWholeB(ops, n, k, nr);
        linalg::parallelFor(m, block, [&](int64_t begin, int64_t end) {
          gemmBlock(ops, begin, 0, end - begin, n, k, alpha, beta,
                    c + begin * ldc, ldc, epilogue, &packed);
        });
        return;
      }
    }
    linalg::parallelFor(m, block, [&](int64_t begin, int64_t end) {
      gemmBlock(ops, begin, 0, end - begin, n, k, alpha, beta, c + begin * ldc,
                ldc, epilogue);
    });
  } else {
    linalg::parallelFor(n, block, [&](int64_t begin, int64_t end) {
      gemmBlock(ops, 0, begin, m, end - begin, k, alpha, beta, c + begin, ldc,
                epilogue);
    });
  }
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

void linalg::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc, bool parallel,
                  const GemmEpilogue<float> &epilogue) {
  gemmImpl(m, n, k, alpha, plainOperands(transA, a, lda, transB, b, ldb), beta,
           c, ldc, parallel, epilogue);
}

void linalg::gemm(int64_t m, int64_t n, int64_t k, float alpha,
                  const GemmOperands<float> &operands, float beta, float *c,
                  int64_t ldc, bool parallel,
                  const GemmEpilogue<float> &epilogue) {
  gemmImpl(m, n, k, alpha, operands, beta, c, ldc, parallel, epilogue);
}

linalg::PackedA::PackedA(bool transA, const float *a, int64_t lda, int64_t m,
                         int64_t k)
    : rows_(m), depth_(k), mr_(currentKernel().mr),
      paddedRows_(roundUp(m, mr_)),
      data_(new float[std::max<int64_t>(1, paddedRows_ * k)]) {
  // Depth block pc of kb rows holds paddedRows_ * kb floats, panel after
  // panel, exactly as gemmBlock's packA lays out one block of A.
  for (int64_t pc = 0; pc < k; pc += kKc)
    packA(transA, a, lda, 0, pc, m, std::min(kKc, k - pc), mr_,
          data_.get() + pc * paddedRows_);
}

void linalg::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *a, int64_t lda, const double *b,
                  int64_t ldb, double beta, double *c, int64_t ldc,
                  bool parallel, const GemmEpilogue<double> &epilogue) {
  gemmImpl(m, n, k, alpha, plainOperands(transA, a, lda, transB, b, ldb), beta,
           c, ldc, parallel, epilogue);
}

bool linalg::forceGemmKernel(GemmKernel kernel) {
  if (!cpuRuns(kernel))
    return false;
  forcedKernel.store(static_cast<int>(kernel), std::memory_order_relaxed);
  return true;
}
