//===- mncc-sim.cpp - MN-Core 2 assembly emulator driver ------------------===//
//
// mncc-sim -i prog.vsm -d dump.txt [--stats] [--trace out.json]
//          [--check-hazards] [--fill-random=SEED]
//
// Parses and runs an MN-Core 2 assembly (VSM) program on the emulated board
// and writes the `d get` dump lines, in the official emulator's `-d` format,
// to the dump file. On any error the message goes to stderr as
// file:line:column: error: ..., the exit status is 1 and no dump file is
// left behind (the dump is written to a temporary name and renamed).
// --stats prints the step, cycle and busy counters of the run (Timing.h) to
// stdout after the dump; --trace writes them as a Chrome / Perfetto trace,
// also through a temporary name. --check-hazards first replays the program
// against the latency rules (Hazards.h) and, when any read comes before the
// write it depends on completes, prints one file:line:column: hazard: ...
// line each and exits with status 1 without running it. --fill-random=SEED
// starts the board with pseudo-random memories instead of zeros
// (Machine::fillRandom).
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Hazards.h"
#include "mncc/emu/Machine.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Timing.h"

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
  std::fputs("usage: mncc-sim -i <program.vsm> [-d <dump.txt>] [--stats]\n"
             "                [--trace <trace.json>] [--check-hazards]\n"
             "                [--fill-random=<seed>]\n"
             "  Runs an MN-Core 2 assembly program on the emulator and\n"
             "  writes the 'd get' dump lines to the dump file (stdout if\n"
             "  -d is not given). --stats prints steps, cycles and busy\n"
             "  cycles per unit; --trace writes a Chrome/Perfetto trace.\n"
             "  --check-hazards reports every read that comes before the\n"
             "  write it depends on completes, and fails if there is one.\n"
             "  --fill-random=<seed> starts every memory and register with\n"
             "  pseudo-random bytes from the seed (decimal or 0x...)\n"
             "  instead of zeros.\n",
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

/// Writes a regular file through a temporary name and a rename, so a failed
/// run never leaves a partial dump. A path that exists and is not a regular
/// file (a device such as /dev/null, a pipe) is written in place: renaming
/// over it would replace the device.
bool writeFileAtomically(const std::string &path, const std::string &text) {
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) &&
      !std::filesystem::is_regular_file(status))
    return writeDirectly(path, text);
  std::string temporary = path + ".tmp";
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fclose(file) == 0 && ok;
  if (ok && std::rename(temporary.c_str(), path.c_str()) == 0)
    return true;
  std::remove(temporary.c_str());
  return false;
}

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
  std::string input, dumpPath, tracePath;
  bool stats = false, checkHazardsFirst = false, fillRandom = false;
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "-i" || arg == "-d") && i + 1 < argc) {
      (arg == "-i" ? input : dumpPath) = argv[++i];
    } else if (arg == "--trace" && i + 1 < argc) {
      tracePath = argv[++i];
    } else if (arg == "--stats") {
      stats = true;
    } else if (arg == "--check-hazards") {
      checkHazardsFirst = true;
    } else if (arg.rfind("--fill-random", 0) == 0) {
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
    } else {
      std::fprintf(stderr, "mncc-sim: error: unexpected argument '%s'\n",
                   arg.c_str());
      usage(stderr);
      return 1;
    }
  }
  if (input.empty()) {
    std::fputs("mncc-sim: error: no input file (-i)\n", stderr);
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
  if (dumpPath.empty()) {
    std::fwrite(dump.data(), 1, dump.size(), stdout);
  } else if (!writeFileAtomically(dumpPath, dump)) {
    std::fprintf(stderr, "mncc-sim: error: cannot write '%s'\n",
                 dumpPath.c_str());
    return 1;
  }
  if (!tracePath.empty() &&
      !writeFileAtomically(tracePath, timing.traceJson())) {
    std::fprintf(stderr, "mncc-sim: error: cannot write '%s'\n",
                 tracePath.c_str());
    return 1;
  }
  if (stats) {
    std::string report = timing.report();
    std::fwrite(report.data(), 1, report.size(), stdout);
  }
  return 0;
}
