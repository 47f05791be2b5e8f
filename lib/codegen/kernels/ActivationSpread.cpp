//===- ActivationSpread.cpp - Flat spreads with periodic tables -----------===//

#include "ActivationSpread.h"

#include <algorithm>
#include <numeric>

using namespace mncc;
using namespace mncc::codegen;

namespace {
constexpr int64_t kL1bsPerGroup = kL1bsPerL2b * kL2bsPerGroup;
} // namespace

int64_t codegen::periodicTableLongWords(int64_t period) {
  int64_t rows = period / std::gcd(period, kPesPerL1b);
  return std::lcm(rows, int64_t(4));
}

AlignedSpread::AlignedSpread(const DramForm &form, int64_t align)
    : Form(form), Align(std::max<int64_t>(4, align)) {
  int64_t groupLongWords = form.rowsPerGroup() * form.rowLongWords();
  PeLongWords = roundUp(
      std::max<int64_t>(1, ceilDiv(groupLongWords, kL1bsPerGroup * kPesPerL1b)),
      Align);
}

int64_t AlignedSpread::passLongWords(int64_t limit) const {
  return std::min(limit, PeLongWords) / Align * Align;
}

L1bRanges AlignedSpread::rangesOf(int64_t first, int64_t count) const {
  L1bRanges ranges;
  int64_t share = PeLongWords * kPesPerL1b;
  ranges.base = Form.base + first * kPesPerL1b;
  ranges.l1bStride = share;
  ranges.l2bStride = share * kL1bsPerL2b;
  ranges.longWords = count * kPesPerL1b;
  ranges.limit = Form.groupLongWords() - first * kPesPerL1b;
  ranges.onlyGroup0 = Form.groups == 1;
  return ranges;
}

void AlignedSpread::emitLoad(VsmWriter &out, int64_t first, int64_t count,
                             PeMemory memory, int64_t lmLongWord) const {
  for (int64_t done = 0; done < count; done += kChunkLongWords) {
    int64_t chunk = std::min(kChunkLongWords, count - done);
    emitDramToL1bm(out, rangesOf(first + done, chunk), 0, 0);
    emitL1bmToPe(out, Spread::AllPes, 0, memory, lmLongWord + done, chunk);
  }
}

void AlignedSpread::emitStore(VsmWriter &out, int64_t first, int64_t count,
                              PeMemory memory, int64_t lmLongWord) const {
  for (int64_t done = 0; done < count; done += kChunkLongWords) {
    int64_t chunk = std::min(kChunkLongWords, count - done);
    emitPeToL1bm(out, Spread::AllPes, memory, lmLongWord + done, chunk, 0);
    emitL1bmToDram(out, rangesOf(first + done, chunk), 0, 0);
  }
}

DramImage codegen::packPeriodicTable(const DramForm &data,
                                     int64_t tableLongWords,
                                     const TableElement &element) {
  DramImage image;
  image.groups = data.groups;
  image.longWordsPerGroup = tableLongWords * kPesPerL1b;
  unsigned bits = deviceTypeBits(data.type);
  unsigned slots = unsigned(elementsPerLongWord(data.type));
  uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  for (unsigned g = 0; g < image.groups; ++g) {
    std::vector<uint64_t> &words = image.data[g];
    words.assign(size_t(image.longWordsPerGroup), 0);
    for (int64_t a = 0; a < image.longWordsPerGroup; ++a) {
      uint64_t word = 0;
      for (unsigned s = 0; s < slots; ++s)
        word |= (element(g, a, s) & mask) << (64 - bits * (s + 1));
      words[size_t(a)] = word;
    }
  }
  return image;
}

void codegen::emitLoadTable(VsmWriter &out, const DramForm &data, int64_t base,
                            int64_t tableLongWords, PeMemory memory,
                            int64_t lmLongWord) {
  for (int64_t done = 0; done < tableLongWords;
       done += AlignedSpread::kChunkLongWords) {
    int64_t chunk =
        std::min(AlignedSpread::kChunkLongWords, tableLongWords - done);
    L1bRanges ranges;
    ranges.base = base + done * kPesPerL1b;
    ranges.longWords = chunk * kPesPerL1b;
    ranges.onlyGroup0 = data.groups == 1;
    emitDramToL1bm(out, ranges, 0, 0);
    emitL1bmToPe(out, Spread::AllPes, 0, memory, lmLongWord + done, chunk);
  }
}

bool codegen::broadcastPattern(const DramForm &data,
                               const std::vector<int64_t> &operandShape,
                               BroadcastPattern &pattern, std::string &error) {
  size_t rank = data.shape.size();
  if (operandShape.size() > rank) {
    error = "the operand has more dimensions than the result";
    return false;
  }
  // The operand's extent along each logical dimension of the data.
  std::vector<int64_t> extent(rank, 1);
  size_t offset = rank - operandShape.size();
  for (size_t j = 0; j < operandShape.size(); ++j) {
    int64_t e = operandShape[j];
    if (e != 1 && e != data.shape[offset + j]) {
      error = "the operand's shape does not broadcast to the result's";
      return false;
    }
    extent[offset + j] = e;
  }
  std::vector<int64_t> operandStride(rank, 0);
  int64_t stride = 1;
  for (size_t i = rank; i-- > offset;) {
    operandStride[i] = extent[i] == 1 ? 0 : stride;
    stride *= extent[i];
  }
  std::vector<unsigned> order = data.order;
  if (order.empty())
    for (size_t i = 0; i < rank; ++i)
      order.push_back(unsigned(i));
  std::vector<int64_t> dram = data.dramShape();
  if (dram.empty()) {
    dram = {1};
    order = {0};
    extent = {1};
    operandStride = {0};
  }
  size_t n = dram.size();
  // The pattern spans the DRAM dimensions from the first along which the
  // operand varies; the innermost always, for its padding.
  size_t first = n - 1;
  for (size_t k = 0; k < n; ++k)
    if (extent[order[k]] != 1) {
      first = k;
      break;
    }
  int64_t rowLongWords = data.rowLongWords();
  int64_t period = rowLongWords;
  for (size_t k = first; k + 1 < n; ++k)
    period *= dram[k];
  pattern.periodLongWords = period;
  int64_t perLongWord = elementsPerLongWord(data.type);
  int64_t innerExtent = data.innerExtent();
  int64_t rowsPerGroup = data.rowsPerGroup();
  int64_t rows = data.rows();
  pattern.element = [=](unsigned group, int64_t a, unsigned slot) -> int64_t {
    int64_t flat = int64_t(group) * rowsPerGroup * rowLongWords + a;
    int64_t row = flat / rowLongWords;
    int64_t e = (flat % rowLongWords) * perLongWord + slot;
    if (e >= innerExtent || row >= rows)
      return -1;
    int64_t index = operandStride[order[n - 1]] * e;
    for (size_t k = n - 1; k-- > 0;) {
      int64_t digit = row % dram[k];
      row /= dram[k];
      index += operandStride[order[k]] * digit;
    }
    return index;
  };
  return true;
}

void codegen::emitTableKernel(
    VsmWriter &out, const DramForm &data, const DramForm &result,
    int64_t tableLongWords, const std::vector<TableOperand> &tables,
    const std::function<std::vector<std::string>(int64_t, int64_t)> &expression,
    bool mau) {
  for (const TableOperand &table : tables)
    emitLoadTable(out, data, table.dramBase, tableLongWords, table.memory, 0);
  AlignedSpread input(data, tableLongWords), output(result, tableLongWords);
  // LM0 holds a pass of the data, LM1 its result.
  int64_t pass = input.passLongWords(1024);
  for (int64_t first = 0; first < input.peLongWords(); first += pass) {
    int64_t count = std::min(pass, input.peLongWords() - first);
    input.emitLoad(out, first, count, PeMemory::LM0, 0);
    for (int64_t j = 0; j < count; j += 4)
      for (const std::string &step : expression(j, j % tableLongWords))
        out.step({step});
    // Results land 10 (MAU) or 6 (ALU) cycles after their step.
    out.nop(mau ? 2 : 1);
    output.emitStore(out, first, count, PeMemory::LM1, 0);
  }
}

std::vector<unsigned> codegen::channelsLastOrder(size_t rank) {
  if (rank < 3)
    return {};
  std::vector<unsigned> order = {0};
  for (unsigned d = 2; d < rank; ++d)
    order.push_back(d);
  order.push_back(1);
  return order;
}

KernelRequest codegen::withPreferredOrders(const KernelRequest &request,
                                           const KernelGenerator &generator) {
  KernelRequest ordered = request;
  size_t inputs = request.inputs.size();
  for (size_t i = 0; i < inputs + request.outputs.size(); ++i) {
    KernelTensor &tensor =
        i < inputs ? ordered.inputs[i] : ordered.outputs[i - inputs];
    std::vector<unsigned> order = generator.preferredOrder(request, i);
    if (order.empty() || order.size() != tensor.form.shape.size())
      continue;
    DramForm form =
        DramForm::canonical(tensor.form.type, tensor.form.shape, order);
    form.base = tensor.form.base;
    tensor.form = form;
  }
  return ordered;
}
