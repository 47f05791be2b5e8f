//===- Simulator.cpp - mncc-sim as a library ------------------------------===//
//
// Checked bulk access, program loading and counters over Machine.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Simulator.h"

#include "mncc/emu/Parser.h"

#include <cstring>
#include <vector>

namespace mncc::emu {

namespace {

const char *memoryName(Space memory) {
  switch (memory) {
  case Space::LM0:
    return "LM0";
  case Space::LM1:
    return "LM1";
  case Space::GRF0:
    return "GRF0";
  case Space::GRF1:
    return "GRF1";
  case Space::L1BM:
    return "L1BM";
  case Space::L2BM:
    return "L2BM";
  case Space::PDM:
    return "PDM";
  case Space::DRAM:
    return "DRAM";
  default:
    return nullptr;
  }
}

const char *instanceName(Space memory) {
  switch (memory) {
  case Space::L1BM:
    return "L1B";
  case Space::L2BM:
    return "L2B";
  case Space::PDM:
  case Space::DRAM:
    return "group";
  default:
    return "PE";
  }
}

/// A long word from elementBytes-byte elements in host byte order, the
/// first element the most significant.
uint64_t packLongWord(const uint8_t *bytes, unsigned elementBytes) {
  uint64_t word = 0;
  for (unsigned offset = 0; offset < 8; offset += elementBytes) {
    uint64_t element = 0;
    switch (elementBytes) {
    case 1:
      element = bytes[offset];
      break;
    case 2: {
      uint16_t value;
      std::memcpy(&value, bytes + offset, sizeof(value));
      element = value;
      break;
    }
    case 4: {
      uint32_t value;
      std::memcpy(&value, bytes + offset, sizeof(value));
      element = value;
      break;
    }
    default:
      std::memcpy(&element, bytes + offset, sizeof(element));
      break;
    }
    word |= element << (64 - 8 * (offset + elementBytes));
  }
  return word;
}

void unpackLongWord(uint64_t word, uint8_t *bytes, unsigned elementBytes) {
  for (unsigned offset = 0; offset < 8; offset += elementBytes) {
    uint64_t element = word >> (64 - 8 * (offset + elementBytes));
    switch (elementBytes) {
    case 1:
      bytes[offset] = uint8_t(element);
      break;
    case 2: {
      uint16_t value = uint16_t(element);
      std::memcpy(bytes + offset, &value, sizeof(value));
      break;
    }
    case 4: {
      uint32_t value = uint32_t(element);
      std::memcpy(bytes + offset, &value, sizeof(value));
      break;
    }
    default:
      std::memcpy(bytes + offset, &word, sizeof(word));
      break;
    }
  }
}

bool validElementBytes(unsigned elementBytes) {
  return elementBytes == 1 || elementBytes == 2 || elementBytes == 4 ||
         elementBytes == 8;
}

} // namespace

Simulator::Simulator() : Board(new Machine) {}
Simulator::~Simulator() = default;

bool Simulator::load(std::string_view text, std::string_view fileName,
                     std::string &error) {
  Program program;
  Diagnostic diagnostic;
  if (!parseProgram(text, fileName, program, diagnostic)) {
    error = diagnostic.str();
    return false;
  }
  load(std::move(program));
  return true;
}

void Simulator::load(Program program) {
  Code = std::move(program);
  HasProgram = true;
}

bool Simulator::run(std::string &error, std::string *dump) {
  if (!HasProgram) {
    error = "no program loaded";
    return false;
  }
  Timing timing;
  Board->setTiming(&timing);
  Diagnostic diagnostic;
  bool ok = Board->run(Code, dump, diagnostic);
  Board->setTiming(nullptr);
  Stats = timing.stats();
  ++Runs;
  if (!ok)
    error = diagnostic.str();
  return ok;
}

void Simulator::setSkipIdleGroups(bool skip) {
  SkipIdleGroups = skip;
  Board->setSkipIdleGroups(skip);
}

bool Simulator::computed(const Region &region, std::string &error) const {
  uint8_t stale = Board->staleGroups();
  if (stale == 0 || region.Memory == Space::PDM ||
      region.Memory == Space::DRAM || region.Count == 0)
    return true;
  // Instances per group of the on-chip memories.
  unsigned perGroup = instanceCount(region.Memory) / NumGroups;
  for (unsigned group = 0; group < NumGroups; ++group) {
    bool wanted =
        region.Instance == AllInstances || region.Instance / perGroup == group;
    if (wanted && (stale >> group & 1)) {
      error = std::string(memoryName(region.Memory)) + " of group " +
              std::to_string(group) +
              " was not computed: kernels that no transfer of theirs ties "
              "to that group left its PE work out (skip idle groups off "
              "computes it)";
      return false;
    }
  }
  return true;
}

void Simulator::reset() {
  // A new board: its memories come from calloc, so this costs no more than
  // the pages the old one had touched, and no state can be forgotten.
  Board.reset(new Machine);
  Board->setSkipIdleGroups(SkipIdleGroups);
  Stats = TimingStats();
}

void Simulator::fillRandom(uint64_t seed) {
  // A new board first, so nothing an earlier run left (the DRAM pages
  // above all) survives the fill.
  reset();
  Board->fillRandom(seed);
}

unsigned Simulator::instanceCount(Space memory) {
  switch (memory) {
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1:
    return NumPes;
  case Space::L1BM:
    return NumL1bs;
  case Space::L2BM:
    return NumL2bs;
  case Space::PDM:
  case Space::DRAM:
    return NumGroups;
  default:
    return 0;
  }
}

uint64_t Simulator::longWordCount(Space memory) {
  switch (memory) {
  case Space::LM0:
  case Space::LM1:
    return LmWords / 2;
  case Space::GRF0:
  case Space::GRF1:
    return GrfWords / 2;
  case Space::L1BM:
    return L1bmLongWords;
  case Space::L2BM:
    return L2bmLongWords;
  case Space::PDM:
    return PdmLongWords;
  case Space::DRAM:
    return DramLongWords;
  default:
    return 0;
  }
}

bool Simulator::check(const Region &region, bool broadcast,
                      std::string &error) const {
  const char *name = memoryName(region.Memory);
  if (!name) {
    error = "bulk access covers LM0, LM1, GRF0, GRF1, L1BM, L2BM, PDM and "
            "DRAM only";
    return false;
  }
  unsigned instances = instanceCount(region.Memory);
  if (region.Instance != AllInstances && region.Instance >= instances) {
    error = std::string(name) + ": " + instanceName(region.Memory) + " " +
            std::to_string(region.Instance) + " does not exist (there are " +
            std::to_string(instances) + ")";
    return false;
  }
  if (broadcast && region.Instance != AllInstances) {
    error = std::string(name) + ": a broadcast needs AllInstances";
    return false;
  }
  uint64_t size = longWordCount(region.Memory);
  // Written so that no sum can wrap around.
  if (region.Address > size || region.Count > size - region.Address) {
    error = std::string(name) + ": long words [" +
            std::to_string(region.Address) + ", " +
            std::to_string(region.Address) + " + " +
            std::to_string(region.Count) + ") are outside the memory (" +
            std::to_string(size) + " long words)";
    return false;
  }
  return true;
}

bool Simulator::write(const Region &region, const uint64_t *data,
                      std::string &error, bool broadcast) {
  if (!check(region, broadcast, error))
    return false;
  if (region.Count == 0)
    return true;
  if (!data) {
    error = "no data to write";
    return false;
  }
  if (region.Instance == AllInstances)
    Board->writeLongWordsOfAll(region.Memory, region.Address, data,
                               region.Count, broadcast);
  else
    Board->writeLongWords(region.Memory, region.Instance, region.Address, data,
                          region.Count);
  return true;
}

bool Simulator::read(const Region &region, uint64_t *data,
                     std::string &error) const {
  if (!check(region, false, error))
    return false;
  if (!computed(region, error))
    return false;
  if (region.Count == 0)
    return true;
  if (!data) {
    error = "no buffer to read into";
    return false;
  }
  if (region.Instance == AllInstances)
    Board->readLongWordsOfAll(region.Memory, region.Address, data,
                              region.Count);
  else
    Board->readLongWords(region.Memory, region.Instance, region.Address, data,
                         region.Count);
  return true;
}

namespace {

/// Bytes a region takes on the host: 8 per long word of every instance
/// it covers (of one, for a broadcast).
uint64_t regionBytes(const Region &region, bool broadcast) {
  uint64_t instances = region.Instance == AllInstances && !broadcast
                           ? Simulator::instanceCount(region.Memory)
                           : 1;
  return instances * region.Count * 8;
}

} // namespace

bool Simulator::checkBytes(const Region &region, bool broadcast,
                           uint64_t numBytes, unsigned elementBytes,
                           std::string &error) const {
  if (!check(region, broadcast, error))
    return false;
  if (!validElementBytes(elementBytes)) {
    error = "element size " + std::to_string(elementBytes) +
            " is not 1, 2, 4 or 8 bytes";
    return false;
  }
  uint64_t expected = regionBytes(region, broadcast);
  if (numBytes != expected) {
    error = std::to_string(numBytes) + " bytes given for a region of " +
            std::to_string(expected);
    return false;
  }
  return true;
}

bool Simulator::writeBytes(const Region &region, const void *bytes,
                           uint64_t numBytes, unsigned elementBytes,
                           std::string &error, bool broadcast) {
  if (!checkBytes(region, broadcast, numBytes, elementBytes, error))
    return false;
  if (numBytes == 0)
    return true;
  if (!bytes) {
    error = "no data to write";
    return false;
  }
  std::vector<uint64_t> words(numBytes / 8);
  const uint8_t *source = static_cast<const uint8_t *>(bytes);
  for (size_t i = 0; i < words.size(); ++i)
    words[i] = packLongWord(source + 8 * i, elementBytes);
  return write(region, words.data(), error, broadcast);
}

bool Simulator::readBytes(const Region &region, void *bytes, uint64_t numBytes,
                          unsigned elementBytes, std::string &error) const {
  if (!checkBytes(region, false, numBytes, elementBytes, error))
    return false;
  if (numBytes == 0)
    return true;
  if (!bytes) {
    error = "no buffer to read into";
    return false;
  }
  std::vector<uint64_t> words(numBytes / 8);
  if (!read(region, words.data(), error))
    return false;
  uint8_t *target = static_cast<uint8_t *>(bytes);
  for (size_t i = 0; i < words.size(); ++i)
    unpackLongWord(words[i], target + 8 * i, elementBytes);
  return true;
}

} // namespace mncc::emu
