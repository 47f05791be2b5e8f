//===- Reorder.cpp - Transposes, layout switches and repacks of any size --===//
//
// A reorder moves every element of a tensor to another place in DRAM: an
// ONNX Transpose, the planner's switch between two DRAM orders of one
// tensor (a Transpose with the identity perm, docs/codegen.md C4), or a
// Reshape / Flatten whose padded rows differ. The general kernel does them
// for small tensors in one PE; this kernel does them at any size, with the
// 64 L1Bs working on different pieces of the output at once.
//
// The output image (every group block, DramForm.h) is cut into *chunks*:
// 64-long-word-aligned ranges of a block, up to 1024 long words. A chunk
// needs a set of input long words, its *pieces* (runs of consecutive input
// long words), which the chunk's L1B gathers into a *window*:
//
//   DRAM --mvp--> L2BM --l2bmb@k--> L1BM window --l1bmp--> LM0 (every PE)
//   LM0 --element copies--> LM1 chunk --l1bmd (base 2 $peid)--> L1BM
//   L1BM --l2bm@k--> L2BM --mvp--> DRAM
//
// Every L1B runs the same instruction stream, so the L1Bs of one *round*
// take chunks with the same *signature*: the same piece lengths and the
// same map from chunk words to window words (a transpose's interior chunks
// all agree; block edges and row phases add a few classes). The L2BM holds
// piece i of L1B k at the same address in every L2B, piece-major, so that
// the pieces of consecutive chunks, adjacent in DRAM, arrive with one MV;
// the chunks of one L2B are consecutive in the output and leave with one.
//
// Costs (docs/codegen.md R decisions): the element copies take four words
// a step (more where runs align), the windows eight long words a step per
// PE, and every piece one MV issue slot (16 cycles) per L2B.
//
//===----------------------------------------------------------------------===//

#include "GeneralLowering.h"
#include "Generators.h"

#include "mncc/codegen/Transfer.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

namespace {

/// Long words of LM0 a window may take (below ElemProgram's scratch).
constexpr int64_t kWindowLimit = 1984;
/// Where the gathered chunk goes in the L1BM (above any window).
constexpr int64_t kL1bmChunk = 4096;
/// Chunk sizes tried, largest first.
constexpr int64_t kChunkSizes[] = {1024, 512, 256, 128, 64};
/// Requests whose images together fit this are left to the general
/// kernel, which does them in one PE without rounds.
constexpr int64_t kSmallLongWords = 2048;
constexpr unsigned kL1bsPerGroup = kL1bsPerL2b * kL2bsPerGroup;

/// An element's place in an image: group block, long word in the block,
/// and word in the long word (0 for 64-bit elements).
struct Place {
  unsigned group;
  int64_t longWord;
  unsigned word;
};

using SourceFn =
    std::function<std::vector<int64_t>(const std::vector<int64_t> &)>;

struct ChunkClass {
  int64_t longWords = 0;
  std::vector<int64_t> pieceLongWords;
  std::vector<int64_t> windowOffset;
  int64_t windowLongWords = 0;
  /// Per word of the chunk: the window word it copies, or -1 (zero).
  std::vector<int32_t> local;
};

struct Chunk {
  unsigned group = 0;
  int64_t first = 0;
  int64_t longWords = 0;
  int cls = 0;
  /// Per piece: the input group and first long word in its block.
  std::vector<std::pair<unsigned, int64_t>> pieces;
};

struct Plan {
  int64_t chunkLongWords = 0;
  std::vector<ChunkClass> classes;
  std::vector<Chunk> chunks;
  /// L2BM: piece i of L1B k at region[i] + k * pieceLongWords[i].
  std::vector<std::vector<int64_t>> regions; // per class
  size_t rounds = 0;
};

unsigned elementWords(DeviceType type) {
  return type == DeviceType::Double ? 2 : 1;
}

Place placeOf(const DramForm &form, const std::vector<int64_t> &index) {
  DramForm::Location at = form.locate(index);
  unsigned words = elementWords(form.type);
  return {at.group, at.address - form.base, words == 2 ? 0 : at.slot};
}

/// Plans the chunks for chunk size `size`; false when a window or the
/// L2BM staging of a class does not fit.
bool planChunks(const DramForm &in, const DramForm &out, const SourceFn &source,
                int64_t size, Plan &plan) {
  plan = Plan();
  plan.chunkLongWords = size;
  unsigned words = elementWords(out.type);
  int64_t block = out.groupLongWords();
  int64_t perGroup = ceilDiv(block, size);
  std::vector<Chunk> chunks(size_t(out.groups * perGroup));
  for (unsigned g = 0; g < out.groups; ++g)
    for (int64_t c = 0; c < perGroup; ++c) {
      Chunk &chunk = chunks[size_t(g * perGroup + c)];
      chunk.group = g;
      chunk.first = c * size;
      chunk.longWords = std::min(size, block - c * size);
    }
  // Per chunk: (chunk word, input place) of every element.
  struct Need {
    int32_t word;
    Place from;
  };
  std::vector<std::vector<Need>> needs(chunks.size());
  forEachIndex(out.shape, [&](const std::vector<int64_t> &index) {
    Place to = placeOf(out, index);
    size_t c = size_t(to.group * perGroup + to.longWord / size);
    int32_t word = int32_t(2 * (to.longWord % size) + to.word);
    needs[c].push_back({word, placeOf(in, source(index))});
  });
  std::map<std::pair<std::vector<int64_t>, std::vector<int32_t>>, int> classIds;
  for (size_t c = 0; c < chunks.size(); ++c) {
    Chunk &chunk = chunks[c];
    std::vector<std::pair<unsigned, int64_t>> longWords;
    for (const Need &need : needs[c])
      longWords.push_back({need.from.group, need.from.longWord});
    std::sort(longWords.begin(), longWords.end());
    longWords.erase(std::unique(longWords.begin(), longWords.end()),
                    longWords.end());
    ChunkClass cls;
    cls.longWords = chunk.longWords;
    // Runs of consecutive long words; short gaps join a run.
    for (size_t i = 0; i < longWords.size();) {
      size_t j = i + 1;
      while (j < longWords.size() && longWords[j].first == longWords[i].first &&
             longWords[j].second - longWords[j - 1].second <= 4)
        ++j;
      chunk.pieces.push_back(longWords[i]);
      cls.windowOffset.push_back(cls.windowLongWords);
      int64_t length = longWords[j - 1].second - longWords[i].second + 1;
      cls.pieceLongWords.push_back(length);
      cls.windowLongWords += length;
      i = j;
    }
    if (cls.windowLongWords > kWindowLimit)
      return false;
    cls.windowLongWords = roundUp(std::max<int64_t>(cls.windowLongWords, 1), 8);
    cls.local.assign(size_t(2 * chunk.longWords), -1);
    for (const Need &need : needs[c]) {
      // The piece holding the long word: the last starting at or before.
      auto it =
          std::upper_bound(chunk.pieces.begin(), chunk.pieces.end(),
                           std::make_pair(need.from.group, need.from.longWord));
      size_t piece = size_t(it - chunk.pieces.begin()) - 1;
      int64_t windowLongWord =
          cls.windowOffset[piece] +
          (need.from.longWord - chunk.pieces[piece].second);
      for (unsigned w = 0; w < words; ++w)
        cls.local[size_t(need.word) + w] =
            int32_t(2 * windowLongWord + need.from.word + w);
    }
    auto key = std::make_pair(cls.pieceLongWords, cls.local);
    auto [found, inserted] = classIds.emplace(key, int(plan.classes.size()));
    if (inserted)
      plan.classes.push_back(std::move(cls));
    chunk.cls = found->second;
  }
  plan.chunks = std::move(chunks);
  // The L2BM staging of each class: piece-major, a spare MV unit after each
  // piece's eight slots for the overrun of its last transfer; the chunks
  // come back through the same L2BM words afterwards.
  for (const ChunkClass &cls : plan.classes) {
    std::vector<int64_t> regions;
    int64_t next = 0;
    for (int64_t length : cls.pieceLongWords) {
      regions.push_back(next);
      next += int64_t(kL1bsPerL2b) * length + kMvUnitLongWords;
    }
    if (next > kL2bmLongWords ||
        int64_t(kL1bsPerL2b) * plan.chunkLongWords > kL2bmLongWords)
      return false;
    plan.regions.push_back(std::move(regions));
  }
  return true;
}

/// Emits one round: up to 16 chunks of class `cls` per group, chunk i of
/// group g on L2B i / 8, L1B i % 8 of that group.
void emitRound(
    VsmWriter &out, const DramForm &in, const DramForm &outForm,
    const Plan &plan, int cls,
    const std::array<std::vector<const Chunk *>, kDramGroups> &slots) {
  const ChunkClass &c = plan.classes[size_t(cls)];
  const std::vector<int64_t> &region = plan.regions[size_t(cls)];
  auto chunkAt = [&](unsigned g, unsigned l2b, unsigned k) -> const Chunk * {
    size_t i = l2b * kL1bsPerL2b + k;
    return i < slots[g].size() ? slots[g][i] : nullptr;
  };
  // Input pieces into every L2BM, consecutive L1Bs' pieces that continue
  // each other in one transfer. A transfer moves whole MV units, so a
  // short piece's transfer runs into the next slots; one that would write
  // where a transfer still in flight writes first waits for it, so the
  // later data always lands last.
  std::vector<unsigned> tags;
  struct InFlight {
    int64_t first, end;
    unsigned tag;
  };
  for (unsigned g = 0; g < kDramGroups; ++g)
    for (unsigned l2b = 0; l2b < kL2bsPerGroup; ++l2b) {
      std::vector<InFlight> inFlight;
      for (size_t i = 0; i < c.pieceLongWords.size(); ++i) {
        int64_t length = c.pieceLongWords[i];
        for (unsigned k = 0; k < kL1bsPerL2b;) {
          const Chunk *first = chunkAt(g, l2b, k);
          if (!first) {
            ++k;
            continue;
          }
          unsigned end = k + 1;
          while (end < kL1bsPerL2b) {
            const Chunk *next = chunkAt(g, l2b, end);
            if (!next || next->pieces[i].first != first->pieces[i].first ||
                next->pieces[i].second !=
                    first->pieces[i].second + int64_t(end - k) * length)
              break;
            ++end;
          }
          int64_t longWords =
              roundUp(int64_t(end - k) * length, kMvUnitLongWords);
          int64_t to = region[i] + int64_t(k) * length;
          for (auto it = inFlight.begin(); it != inFlight.end();) {
            if (it->first < to + longWords && to < it->end) {
              out.wait(it->tag);
              it = inFlight.erase(it);
            } else {
              ++it;
            }
          }
          unsigned tag = out.newTag();
          tags.push_back(tag);
          inFlight.push_back({to, to + longWords, tag});
          out.statement(
              "mvp/n" + std::to_string(longWords) + VsmWriter::tagName(tag) +
              " $d" + std::to_string(in.base + first->pieces[i].second) + "@" +
              std::to_string(first->pieces[i].first) + " " + l2bmOperand(to) +
              "@" + std::to_string(g) + "." + std::to_string(l2b));
          k = end;
        }
      }
    }
  for (unsigned tag : tags)
    out.wait(tag);
  // Each L1B's window, piece by piece in window order (a step's overrun
  // past a piece is overwritten by the next).
  for (unsigned k = 0; k < kL1bsPerL2b; ++k)
    for (size_t i = 0; i < c.pieceLongWords.size(); ++i)
      for (int64_t t = 0; t < c.pieceLongWords[i]; t += kL2bmStepLongWords)
        out.step(
            {"l2bmb@" + std::to_string(k) + " " +
             l2bmOperand(region[i] + int64_t(k) * c.pieceLongWords[i] + t) +
             " " + l1bmOperand(c.windowOffset[i] + t)});
  out.nop();
  for (int64_t j = 0; j < c.windowLongWords; j += 8)
    out.step({"l1bmp " + l1bmOperand(j, true) + " " +
              peOperand(PeMemory::LM0, Width::DoubleLong, int32_t(2 * j))});
  out.nop();
  // The chunk in LM1, word by word from the window in LM0.
  ElemProgram program;
  std::vector<std::pair<Slot, Slot>> copies;
  for (size_t w = 0; w < c.local.size();) {
    if (c.local[w] >= 0) {
      copies.push_back(
          {{PeMemory::LM1, int32_t(w)}, {PeMemory::LM0, c.local[w]}});
      ++w;
      continue;
    }
    size_t end = w;
    while (end < c.local.size() && c.local[end] < 0)
      ++end;
    program.zeroRange({PeMemory::LM1, int32_t(w)}, int32_t(end - w));
    w = end;
  }
  recordCopies(program, copies);
  program.flush(out);
  // Gather the chunk of every L1B into its L1BM: PE p reads long words
  // 64 j + p through a base address of 2 $peid (as the general kernel's
  // store does), then back to the L2BM, chunk k of an L2B at k * size.
  out.step({"imm i\"1\" " + peOperand(PeMemory::GRF0, Width::Word, 0, 0)});
  out.nop();
  out.step(
      {"ilsl $peid " + peOperand(PeMemory::GRF0, Width::Word, 0, 0) + " $nb"});
  out.nop(2);
  for (int64_t j = 0; j < c.longWords; j += 4 * kPesPerL1b)
    out.step(
        {"l1bmd " +
         peOperand(PeMemory::LM1, Width::Long, int32_t(2 * j), 2 * kPesPerL1b) +
         " " + l1bmOperand(kL1bmChunk + j)});
  out.step({"zero $nb"});
  for (unsigned k = 0; k < kL1bsPerL2b; ++k)
    for (int64_t t = 0; t < c.longWords; t += kL2bmStepLongWords)
      out.step({"l2bm@" + std::to_string(k) + " " +
                l1bmOperand(kL1bmChunk + t) + " " +
                l2bmOperand(int64_t(k) * plan.chunkLongWords + t)});
  out.nop(2);
  tags.clear();
  for (unsigned g = 0; g < kDramGroups; ++g)
    for (unsigned l2b = 0; l2b < kL2bsPerGroup; ++l2b)
      for (unsigned k = 0; k < kL1bsPerL2b;) {
        const Chunk *first = chunkAt(g, l2b, k);
        if (!first) {
          ++k;
          continue;
        }
        // Chunk k of an L2B lies at k * size in its L2BM: whole chunks
        // that follow each other in DRAM go in one transfer.
        unsigned end = k + 1;
        int64_t longWords = first->longWords;
        const Chunk *last = first;
        while (end < kL1bsPerL2b) {
          const Chunk *next = chunkAt(g, l2b, end);
          if (!next || last->longWords != plan.chunkLongWords ||
              next->first != last->first + last->longWords)
            break;
          longWords += next->longWords;
          last = next;
          ++end;
        }
        unsigned tag = out.newTag();
        tags.push_back(tag);
        out.statement("mvp/n" + std::to_string(longWords) +
                      VsmWriter::tagName(tag) + " " +
                      l2bmOperand(int64_t(k) * plan.chunkLongWords) + "@" +
                      std::to_string(g) + "." + std::to_string(l2b) + " $d" +
                      std::to_string(outForm.base + first->first) + "@" +
                      std::to_string(g));
        k = end;
      }
  for (unsigned tag : tags)
    out.wait(tag);
}

/// Whether the request is a reorder, and the index map of its elements.
bool reorderSource(const KernelRequest &request, SourceFn &source,
                   std::string &whyNot) {
  const DramForm &in = request.inputs[0].form, &out = request.outputs[0].form;
  if (elementCount(in.shape) != elementCount(out.shape)) {
    whyNot = "the output's element count differs from the input's";
    return false;
  }
  if (request.opType == "Transpose") {
    size_t rank = in.shape.size();
    std::vector<int64_t> perm = request.getInts("perm");
    if (perm.empty())
      for (size_t d = rank; d-- > 0;)
        perm.push_back(int64_t(d));
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) {
      whyNot = "perm does not match the rank";
      return false;
    }
    for (size_t k = 0; k < rank; ++k) {
      if (perm[k] < 0 || perm[k] >= int64_t(rank) || seen[size_t(perm[k])] ||
          out.shape[k] != in.shape[size_t(perm[k])]) {
        whyNot = "perm is not a permutation of the input into the output";
        return false;
      }
      seen[size_t(perm[k])] = true;
    }
    source = [perm, rank](const std::vector<int64_t> &index) {
      std::vector<int64_t> from(rank);
      for (size_t k = 0; k < rank; ++k)
        from[size_t(perm[k])] = index[k];
      return from;
    };
    return true;
  }
  // Reshape, Flatten, Identity: the same row-major order.
  std::vector<int64_t> inShape = in.shape, outShape = out.shape;
  source = [inShape, outShape](const std::vector<int64_t> &index) {
    int64_t position = 0;
    for (size_t d = 0; d < index.size(); ++d)
      position = position * outShape[d] + index[d];
    return unravel(position, inShape);
  };
  return true;
}

class ReorderGenerator : public KernelGenerator {
public:
  const char *name() const override { return "reorder"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    const std::string &op = request.opType;
    if (op != "Transpose" && op != "Reshape" && op != "Flatten" &&
        op != "Identity")
      return false;
    if (request.inputs.empty() || request.outputs.size() != 1 ||
        request.inputs[0].omitted) {
      whyNot = "a reorder has one data input and one output";
      return false;
    }
    const DramForm &in = request.inputs[0].form, &out = request.outputs[0].form;
    if (in.type != out.type || in.type == DeviceType::Half) {
      whyNot = "reorders move 32- and 64-bit elements of one type";
      return false;
    }
    PeImage inImage{in, PeMemory::LM0, 0}, outImage{out, PeMemory::LM0, 0};
    if (inImage.longWords() + outImage.longWords() <= kSmallLongWords) {
      whyNot = "small enough for the general kernel";
      return false;
    }
    SourceFn source;
    if (!reorderSource(request, source, whyNot))
      return false;
    Plan plan;
    if (!makePlan(in, out, source, plan)) {
      whyNot = "no chunk size gives windows of at most " +
               std::to_string(kWindowLimit) + " long words";
      return false;
    }
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    SourceFn source;
    if (!reorderSource(request, source, error))
      return false;
    const DramForm &in = request.inputs[0].form,
                   &outForm = request.outputs[0].form;
    Plan plan;
    if (!makePlan(in, outForm, source, plan)) {
      error = "no chunk size gives windows that fit";
      return false;
    }
    out.comment("reorder: " + request.opType + " " + request.nodeName + ", " +
                in.str() + " -> " + outForm.str());
    // Rounds: class by class, up to 16 chunks of each group at a time.
    size_t rounds = 0;
    for (size_t cls = 0; cls < plan.classes.size(); ++cls) {
      std::array<std::vector<const Chunk *>, kDramGroups> perGroup;
      for (const Chunk &chunk : plan.chunks)
        if (chunk.cls == int(cls))
          perGroup[chunk.group].push_back(&chunk);
      size_t most = 0;
      for (const auto &list : perGroup)
        most = std::max(most, list.size());
      for (size_t first = 0; first < most; first += kL1bsPerGroup) {
        std::array<std::vector<const Chunk *>, kDramGroups> slots;
        for (unsigned g = 0; g < kDramGroups; ++g)
          for (size_t i = first;
               i < std::min(perGroup[g].size(), first + kL1bsPerGroup); ++i)
            slots[g].push_back(perGroup[g][i]);
        emitRound(out, in, outForm, plan, int(cls), slots);
        ++rounds;
      }
    }
    description.generator = name();
    description.variant =
        request.opType + ", " + std::to_string(plan.chunks.size()) +
        " chunks of " + std::to_string(plan.chunkLongWords) +
        " long words in " + std::to_string(rounds) + " rounds";
    description.parameters.push_back(
        {"classes", std::to_string(plan.classes.size())});
    return true;
  }

private:
  static bool makePlan(const DramForm &in, const DramForm &out,
                       const SourceFn &source, Plan &plan) {
    for (int64_t size : kChunkSizes)
      if (planChunks(in, out, source, size, plan))
        return true;
    return false;
  }
};

std::unique_ptr<KernelGenerator> createReorderGenerator() {
  return std::make_unique<ReorderGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Reorder, 50, createReorderGenerator);
