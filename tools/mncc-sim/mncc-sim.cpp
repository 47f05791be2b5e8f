//===- mncc-sim.cpp - MN-Core 2 assembly emulator driver ------------------===//
//
// mncc-sim [-i] prog.vsm -d dump.txt [--stats] [--trace out.json]
//          [--check-hazards] [--fill-random=SEED] [--all-groups]
//
// Parses and runs an MN-Core 2 assembly (VSM) program on the emulated board
// and writes the `d get` dump lines, in the official emulator's `-d` format,
// to the dump file. On any error the message goes to stderr as
// file:line:column: error: ..., the exit status is 1 and no dump file is
// left behind (the dump and the trace are written to temporary names and
// renamed only when both are written, so a failure of either leaves
// neither).
// --stats prints the step, cycle and busy counters of the run (Timing.h) to
// stdout after the dump; --trace writes them as a Chrome / Perfetto trace,
// also through a temporary name. --check-hazards first replays the program
// against the latency rules (Hazards.h) and, when any read comes before the
// write it depends on completes, prints one file:line:column: hazard: ...
// line each and exits with status 1 without running it. --fill-random=SEED
// starts the board with pseudo-random memories instead of zeros
// (Machine::fillRandom). --all-groups runs every group's PE steps also in
// the kernels (`#pragma mncc kernel`) whose transfers leave a group out,
// which the emulator otherwise skips (Machine::setSkipIdleGroups).
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Hazards.h"
#include "mncc/emu/Machine.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Timing.h"
#include "mncc/Version.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

using namespace mncc::emu;

namespace {

void usage(std::FILE *out) {
  std::fputs("usage: mncc-sim [-i] <program.vsm> [-d <dump.txt>] [--stats]\n"
             "                [--trace <trace.json>] [--check-hazards]\n"
             "                [--fill-random=<seed>] [--all-groups]\n"
             "  Runs an MN-Core 2 assembly program on the emulator and\n"
             "  writes the 'd get' dump lines to the dump file (stdout if\n"
             "  -d is not given). --stats prints steps, cycles and busy\n"
             "  cycles per unit; --trace writes a Chrome/Perfetto trace.\n"
             "  --check-hazards reports every read that comes before the\n"
             "  write it depends on completes, and fails if there is one.\n"
             "  --fill-random=<seed> starts every memory and register with\n"
             "  pseudo-random bytes from the seed (decimal or 0x...)\n"
             "  instead of zeros. --all-groups also runs the PE steps of\n"
             "  groups that a kernel's transfers leave out (skipped by\n"
             "  default). --version prints mncc's version.\n",
             out);
}

bool readFile(const std::string &path, std::string &text) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return false;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    text.append(buffer, n);
  bool ok = !std::ferror(file);
  std::fclose(file);
  return ok;
}

bool writeDirectly(const std::string &path, const std::string &text) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  return std::fclose(file) == 0 && ok;
}

/// An output written through a temporary name, renamed into place by
/// commit(): a failed run never leaves a partial file. A path that exists
/// and is not a regular file (a device such as /dev/null, a pipe) is
/// written in place at commit: renaming over it would replace the device.
struct PendingFile {
  std::string path, temporary;
  bool direct = false;
  std::string text;

  /// Writes the temporary file (or keeps the text for a device).
  bool prepare(const std::string &target, std::string content) {
    path = target;
    std::error_code ec;
    std::filesystem::file_status status = std::filesystem::status(path, ec);
    direct = !ec && std::filesystem::exists(status) &&
             !std::filesystem::is_regular_file(status);
    if (direct) {
      text = std::move(content);
      return true;
    }
    temporary = path + ".tmp";
    std::FILE *file = std::fopen(temporary.c_str(), "wb");
    if (!file)
      return false;
    bool ok =
        std::fwrite(content.data(), 1, content.size(), file) == content.size();
    ok = std::fclose(file) == 0 && ok;
    if (!ok)
      discard();
    return ok;
  }
  bool commit() {
    if (direct)
      return writeDirectly(path, text);
    if (std::rename(temporary.c_str(), path.c_str()) == 0) {
      temporary.clear();
      return true;
    }
    discard();
    return false;
  }
  void discard() {
    if (!temporary.empty())
      std::remove(temporary.c_str());
    temporary.clear();
  }
  ~PendingFile() { discard(); }
};

/// A seed: a decimal or 0x-prefixed hexadecimal 64-bit number, nothing
/// else.
bool parseSeed(const std::string &text, uint64_t &seed) {
  if (text.empty() || text[0] == '-' || text[0] == '+')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 0);
  if (errno || !end || *end || end == text.c_str())
    return false;
  seed = value;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  // mncc's own run-time variable for the emulator, read once, here.
  mncc::emu::setDefaultStepThreads(
      mncc::emu::stepThreadsFromText(std::getenv("MNCC_EMU_THREADS")));
  std::string input, dumpPath, tracePath;
  bool stats = false, checkHazardsFirst = false, fillRandom = false;
  uint64_t seed = 0;
  bool allGroups = false;
  // Each option once: a second value would silently replace the first.
  auto once = [&](bool given, const std::string &name) {
    if (given)
      std::fprintf(stderr, "mncc-sim: error: %s is given more than once\n",
                   name.c_str());
    return !given;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "-i" || arg == "-d") && i + 1 < argc) {
      std::string &target = arg == "-i" ? input : dumpPath;
      if (!once(!target.empty(), arg == "-i" ? "the program" : "-d"))
        return 1;
      target = argv[++i];
    } else if (arg == "--trace" && i + 1 < argc) {
      if (!once(!tracePath.empty(), arg))
        return 1;
      tracePath = argv[++i];
    } else if (arg == "--stats") {
      if (!once(stats, arg))
        return 1;
      stats = true;
    } else if (arg == "--check-hazards") {
      if (!once(checkHazardsFirst, arg))
        return 1;
      checkHazardsFirst = true;
    } else if (arg == "--all-groups") {
      if (!once(allGroups, arg))
        return 1;
      allGroups = true;
    } else if (arg == "--version") {
      std::printf("mncc version %s (MLIR %s)\n", MNCC_VERSION_STRING,
                  MNCC_LLVM_VERSION_STRING);
      return 0;
    } else if (arg.rfind("--fill-random", 0) == 0) {
      if (!once(fillRandom, "--fill-random"))
        return 1;
      std::string value;
      if (arg.size() > 13 && arg[13] == '=')
        value = arg.substr(14);
      else if (arg.size() == 13 && i + 1 < argc)
        value = argv[++i];
      if (!parseSeed(value, seed)) {
        std::fprintf(stderr,
                     "mncc-sim: error: --fill-random needs a seed, a "
                     "64-bit number (got '%s')\n",
                     value.c_str());
        return 1;
      }
      fillRandom = true;
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "mncc-sim: error: unexpected argument '%s'\n",
                   arg.c_str());
      usage(stderr);
      return 1;
    } else {
      // The program as a positional argument, like every other tool.
      if (!once(!input.empty(), "the program"))
        return 1;
      input = arg;
    }
  }
  if (input.empty()) {
    std::fputs("mncc-sim: error: no program (give prog.vsm or -i prog.vsm)\n",
               stderr);
    usage(stderr);
    return 1;
  }
  std::string text;
  if (!readFile(input, text)) {
    std::fprintf(stderr, "mncc-sim: error: cannot read '%s': %s\n",
                 input.c_str(), std::strerror(errno));
    return 1;
  }
  Program program;
  Diagnostic error;
  if (!parseProgram(text, input, program, error)) {
    std::fprintf(stderr, "%s\n", error.str().c_str());
    return 1;
  }
  if (checkHazardsFirst) {
    std::vector<Hazard> hazards = checkHazards(program);
    for (const Hazard &hazard : hazards)
      std::fprintf(stderr, "%s\n", hazard.str(input).c_str());
    if (!hazards.empty()) {
      std::fprintf(stderr, "mncc-sim: %zu hazard%s found\n", hazards.size(),
                   hazards.size() == 1 ? "" : "s");
      return 1;
    }
  }
  std::unique_ptr<Machine> machine(new Machine);
  machine->setSkipIdleGroups(!allGroups);
  if (fillRandom)
    machine->fillRandom(seed);
  Timing timing(!tracePath.empty());
  if (stats || !tracePath.empty())
    machine->setTiming(&timing);
  std::string dump;
  if (!machine->run(program, dump, error)) {
    std::fprintf(stderr, "%s\n", error.str().c_str());
    return 1;
  }
  // Both outputs are written before either is renamed into place (or the
  // dump printed), so a write error leaves neither.
  PendingFile dumpFile, traceFile;
  auto cannotWrite = [](const std::string &path) {
    std::fprintf(stderr, "mncc-sim: error: cannot write '%s': %s\n",
                 path.c_str(), std::strerror(errno));
    return 1;
  };
  if (!dumpPath.empty() && !dumpFile.prepare(dumpPath, dump))
    return cannotWrite(dumpPath);
  if (!tracePath.empty() && !traceFile.prepare(tracePath, timing.traceJson()))
    return cannotWrite(tracePath);
  if (!dumpPath.empty() && !dumpFile.commit())
    return cannotWrite(dumpPath);
  if (!tracePath.empty() && !traceFile.commit())
    return cannotWrite(tracePath);
  if (dumpPath.empty())
    std::fwrite(dump.data(), 1, dump.size(), stdout);
  if (stats) {
    std::string report = timing.report();
    std::fwrite(report.data(), 1, report.size(), stdout);
    std::printf("group steps left out: %llu of %llu\n",
                (unsigned long long)machine->groupStepsLeftOut(),
                (unsigned long long)machine->groupSteps());
  }
  return 0;
}
