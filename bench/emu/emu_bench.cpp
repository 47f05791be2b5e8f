//===- emu_bench.cpp - mncc-sim emulation speed vs host GEMM --------------===//
//
// Runs generated VSM programs on the emulated MN-Core 2 board and reports
// emulated PE-cycles per host second (machine cycles x 4096 PEs) for an
// ALU-heavy, an MAU-heavy and a transfer-heavy program, and emulated MAU
// multiply-adds per host second for a dense half-precision matrix kernel
// (hmfma on the matrix registers, 256 multiply-adds per MAB and cycle). In
// the same run it times the host's FP32 GEMM through OpenBLAS
// (cblas_sgemm) and prints the ratio; the target is an emulated rate of at
// least 10% of the host's.
//
// Usage: mncc-sim-bench [steps-per-program [program]]
//   steps-per-program defaults to 512; program (alu, mau, transfer,
//   gemm-hx or gemm-h) runs only that one, for profiling.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Timing.h"

#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace mncc::emu;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Broadcast initial values (every PE): nonzero, finite operands so no
/// arithmetic takes a zero or special-value shortcut. The same values in
/// GRF0, GRF1, LM0 and LM1: an instruction reads each memory at one
/// address a step (manual 3.6.4), so the programs take their inputs from
/// several.
#define MNCC_BENCH_VALUES                                                      \
  " 8 l3FF0000000000001l4000000000000003l3FE0000000000005"                    \
  "l4008000000000007l3F80000140000002l3FC0000340400004l4010000000000009"      \
  "l3FF8000000000001\n"
const char *kPrologue = "d set $lr0" MNCC_BENCH_VALUES
                        "d set $lr16" MNCC_BENCH_VALUES
                        "d set $ls0" MNCC_BENCH_VALUES
                        "d set $ls16" MNCC_BENCH_VALUES
                        "d set $lm16" MNCC_BENCH_VALUES
                        "d set $ln0" MNCC_BENCH_VALUES;
#undef MNCC_BENCH_VALUES

/// A program of Steps PE steps cycling through Lines, with Prologue first.
std::string generate(const std::vector<const char *> &lines, unsigned steps,
                     const std::string &prologue = kPrologue) {
  std::string text = prologue;
  for (unsigned i = 0; i < steps; ++i) {
    text += lines[i % lines.size()];
    text += '\n';
  }
  return text;
}

struct Measured {
  double Seconds = 0;
  TimingStats Stats;
};

/// Parses once, then runs the program on a fresh board until at least
/// MinSeconds of host time have passed; stats are per run.
Measured measure(const char *name, const std::string &text, double minSeconds) {
  Program program;
  Diagnostic error;
  if (!parseProgram(text, name, program, error)) {
    std::fprintf(stderr, "%s\n", error.str().c_str());
    std::exit(1);
  }
  std::unique_ptr<Machine> machine(new Machine);
  Measured m;
  unsigned runs = 0;
  std::string dump;
  Clock::time_point start = Clock::now();
  do {
    Timing timing;
    machine->setTiming(&timing);
    if (!machine->run(program, dump, error)) {
      std::fprintf(stderr, "%s\n", error.str().c_str());
      std::exit(1);
    }
    m.Stats = timing.stats();
    ++runs;
  } while (secondsSince(start) < minSeconds);
  m.Seconds = secondsSince(start) / runs;
  machine->setTiming(nullptr);
  return m;
}

/// Host FP32 GEMM multiply-adds per second, C = A B + C with n x n.
double hostSgemmMacs(int n, double minSeconds) {
  std::vector<float> a(size_t(n) * n), b(a.size()), c(a.size(), 0.f);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(i % 7) * 0.25f - 0.5f;
    b[i] = float(i % 5) * 0.125f + 0.25f;
  }
  auto gemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f,
                a.data(), n, b.data(), n, 1.f, c.data(), n);
  };
  gemm(); // warm up the threads and caches
  unsigned runs = 0;
  Clock::time_point start = Clock::now();
  do {
    gemm();
    ++runs;
  } while (secondsSince(start) < minSeconds);
  double seconds = secondsSince(start);
  return double(n) * n * n * runs / seconds;
}

void printRow(const char *name, const Measured &m) {
  double peCycles = double(m.Stats.Cycles) * NumPes;
  std::printf("%-9s %7llu %9llu %9.4f %11.3e %11.3e %9.0fx\n", name,
              (unsigned long long)m.Stats.Steps,
              (unsigned long long)m.Stats.Cycles, m.Seconds * 1e3,
              peCycles / m.Seconds, double(m.Stats.MauMacs) / m.Seconds,
              m.Seconds / m.Stats.seconds());
}

} // namespace

int main(int argc, char **argv) {
  unsigned steps = argc > 1 ? unsigned(std::atoi(argv[1])) : 512;
  if (steps == 0)
    steps = 512;
  std::string only = argc > 2 ? argv[2] : "";
  auto selected = [&](const char *name) {
    return only.empty() || only == name;
  };
  const double minSeconds = 0.5;

  // ALU-heavy: one ALU expression per step, integer and floating point.
  std::string alu =
      generate({"ladd $lr0v $ls8v $lr32v", "dmax $lr16v $ls8v $lr40v",
                "lxor $lr32v $ls0v $lr48v", "fmax $lr40v $ls16v $lr56v",
                "linc $lr48v $ls0v", "dmin $ls0v $lr8v $ls8v"},
               steps);
  // MAU-heavy: vector mode fma / mul / add in double and single, with an
  // ALU expression alongside every other step.
  std::string mau =
      generate({"fvfma $lr0v $ls8v $lm16v $lr32v",
                "dvfmau $lr0v $ls8v $lm16v $lr40v ; linc $ln0v $ls0v",
                "fvmul $lr16v $ls8v $lr48v",
                "dvfmad $lr0v $ls8v $mauf $lr56v ; ladd $lr0v $ls8v $ls8v",
                "fvadd $lr32v $ls8v $ls16v"},
               steps);
  // Transfer-heavy: L1BM <-> PE, L2BM <-> L1BM and an MV transfer every
  // four lines (its slot rate).
  std::string transfer = generate(
      {"l1bmp $lb16 $lr32v", "l1bmm $llb64 $llr40v", "l2bmb $lc8 $lb16",
       "mvp/n64 $p0 $lc512", "l1bmrdfadd $lr8v $lb0", "l1bmd $lb128 $lr48",
       "l2bm@3 $lb16 $lc200", "l1bmm4 $lb256 $ls0v"},
      steps);
  // Dense half-precision kernel: both matrix registers of every MAB hold a
  // 16 x 16 block-float half matrix; each step multiplies one of them with
  // 4 vectors and accumulates in single (hmfma, 256 multiply-adds per MAB
  // and cycle). hbfn converts every long word the matrices and vectors are
  // read from (long words 0-11) into half block floats first.
  std::string gemmPrologue = std::string(kPrologue) + "hbfn $lr0v $lr0v\n"
                                                      "hbfn $lr8v $lr8v\n"
                                                      "hbfn $lr16v $lr16v\n"
                                                      "hmwrite $llr0v $llx0\n"
                                                      "hmwrite $llr0v $llx8\n"
                                                      "hmwrite $llr8v $lly0\n"
                                                      "hmwrite $llr8v $lly8\n";
  std::string gemm = generate(
      {"hmfma $lx $lr0v $lls32v $lls32v", "hmfma $ly $lr8v $lls48v $lls48v"},
      steps, gemmPrologue);
  // The same with long words 8-11 left as they are: half of the y rows
  // then hold elements with exponent field 0 and a non-zero mantissa,
  // which the MAU reads as the extended representation (products rounded
  // one by one, the slower path).
  std::string gemmExtendedPrologue = gemmPrologue;
  gemmExtendedPrologue.erase(gemmExtendedPrologue.find("hbfn $lr16v"),
                             std::string("hbfn $lr16v $lr16v\n").size());
  std::string gemmExtended = generate(
      {"hmfma $lx $lr0v $lls32v $lls32v", "hmfma $ly $lr8v $lls48v $lls48v"},
      steps, gemmExtendedPrologue);

  std::printf("mncc-sim bench: %u steps per program, emulated board of %u "
              "PEs at 750 MHz\n",
              steps, NumPes);
  std::printf("%-9s %7s %9s %9s %11s %11s %10s\n", "program", "steps", "cycles",
              "host-ms", "PE-cyc/s", "MAU-MAC/s", "slowdown");
  if (selected("alu"))
    printRow("alu", measure("alu.vsm", alu, minSeconds));
  if (selected("mau"))
    printRow("mau", measure("mau.vsm", mau, minSeconds));
  if (selected("transfer"))
    printRow("transfer", measure("transfer.vsm", transfer, minSeconds));
  if (selected("gemm-hx"))
    printRow("gemm-hx", measure("gemm-ext.vsm", gemmExtended, minSeconds));
  if (!selected("gemm-h"))
    return 0;
  Measured gemmM = measure("gemm.vsm", gemm, minSeconds);
  printRow("gemm-h", gemmM);

  double emulated = double(gemmM.Stats.MauMacs) / gemmM.Seconds;
  int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  double host1 = hostSgemmMacs(512, minSeconds);
  openblas_set_num_threads(threads);
  double hostN = hostSgemmMacs(512, minSeconds);
  // OpenBLAS picks its kernels from the CPU model; in some VMs it falls
  // back to old SSE kernels ("Prescott") and the host figure is several
  // times too low. Say which, so the ratio is read right (bench/README.md).
  std::printf("host OpenBLAS kernels: %s%s\n", openblas_get_corename(),
              std::getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)" : "");
  std::printf("host sgemm 512 (OpenBLAS, 1 thread):  %.3e MAC/s (%.1f "
              "GFLOP/s)\n",
              host1, 2 * host1 / 1e9);
  std::printf("host sgemm 512 (OpenBLAS, %d threads): %.3e MAC/s (%.1f "
              "GFLOP/s)\n",
              threads, hostN, 2 * hostN / 1e9);
  std::printf("emulated hmfma (gemm-h):               %.3e MAC/s\n", emulated);
  std::printf("emulated / host ratio: %.4f of 1 thread, %.4f of %d threads "
              "(%.1f%%, %.1f%%; target >= 10%%)\n",
              emulated / host1, emulated / hostN, threads,
              100 * emulated / host1, 100 * emulated / hostN);
  return 0;
}
