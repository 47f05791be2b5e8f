//===- DramForm.cpp - How a tensor lies in DRAM between kernels -----------===//

#include "mncc/codegen/DramForm.h"

#include <algorithm>
#include <numeric>
#include <sstream>

using namespace mncc;
using namespace mncc::codegen;

namespace {
/// Below this many long words a tensor stays in group 0: spreading a few
/// kilobytes over four DRAMs saves nothing and costs every kernel that
/// reads it a transfer per group.
constexpr int64_t kSpreadThresholdLongWords = 1024;
} // namespace

DramForm DramForm::canonical(DeviceType type, std::vector<int64_t> shape,
                             std::vector<unsigned> order) {
  DramForm form;
  form.type = type;
  form.shape = std::move(shape);
  if (order.empty()) {
    order.resize(form.shape.size());
    std::iota(order.begin(), order.end(), 0u);
  }
  form.order = std::move(order);
  // The split dimension is what the groups split, so that each group's
  // block is a whole number of its indices (and the form has a layout in
  // the MLSDK notation, `4_L2B:2` on that dimension).
  int64_t outer =
      form.order.size() >= 2 ? form.shape[form.order[form.splitPosition()]] : 1;
  form.groups = outer >= kDramGroups &&
                        form.rows() * form.rowLongWords() >=
                            kSpreadThresholdLongWords
                    ? kDramGroups
                    : 1;
  return form;
}

int64_t DramForm::innerExtent() const {
  return shape.empty() ? 1 : shape[order.back()];
}

int64_t DramForm::innerPadded() const {
  int64_t quadElements = kQuadLongWords * elementsPerLongWord(type);
  return roundUp(std::max<int64_t>(innerExtent(), 1), quadElements);
}

int64_t DramForm::rows() const {
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < order.size(); ++k)
    rows *= shape[order[k]];
  return rows;
}

size_t DramForm::splitPosition() const {
  // Images (rank 4) only: a batch-1 activation spreads by its next
  // dimension, which the convolutions, pools and residual adds take in
  // blocks of rows (the images read the rows next to a block from the
  // groups holding them, GemmLoad.cpp). Embedding tables, token rows and
  // matrices keep the outermost, which their kernels split.
  if (order.size() != 4)
    return 0;
  for (size_t k = 0; k + 1 < order.size(); ++k)
    if (shape[order[k]] != 1)
      return k;
  return 0;
}

int64_t DramForm::rowsPerGroup() const {
  if (groups <= 1 || order.size() < 2)
    return rows();
  int64_t outer = shape[order[splitPosition()]];
  if (outer == 0)
    return 0;
  return ceilDiv(outer, groups) * (rows() / outer);
}

int64_t DramForm::rowsInGroup(unsigned g) const {
  int64_t first = int64_t(g) * rowsPerGroup();
  return std::clamp<int64_t>(rows() - first, 0, rowsPerGroup());
}

int64_t DramForm::groupLongWords() const {
  return roundUp(std::max<int64_t>(rowsPerGroup() * rowLongWords(), 1),
                 kMvUnitLongWords);
}

int64_t DramForm::numElements() const {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

std::vector<int64_t> DramForm::dramShape() const {
  std::vector<int64_t> result;
  for (unsigned dim : order)
    result.push_back(shape[dim]);
  return result;
}

DramForm::Location DramForm::locate(const std::vector<int64_t> &index) const {
  int64_t row = 0;
  for (size_t k = 0; k + 1 < order.size(); ++k)
    row = row * shape[order[k]] + index[order[k]];
  int64_t column = order.empty() ? 0 : index[order.back()];
  int64_t perLongWord = elementsPerLongWord(type);
  int64_t perGroup = std::max<int64_t>(rowsPerGroup(), 1);
  Location location;
  location.group = unsigned(row / perGroup);
  location.address =
      base + (row % perGroup) * rowLongWords() + column / perLongWord;
  location.slot = unsigned(column % perLongWord);
  return location;
}

std::string DramForm::str() const {
  std::ostringstream os;
  os << deviceTypeName(type) << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "," : "") << shape[i];
  os << "] rows " << rows() << " x " << rowLongWords() << " lw, order (";
  for (size_t i = 0; i < order.size(); ++i)
    os << (i ? "," : "") << order[i];
  os << "), " << groups << (groups == 1 ? " group" : " groups") << " @"
     << base;
  return os.str();
}

namespace {

/// Calls fn(logicalIndex, rowMajorPosition) for every element, in the
/// tensor's own row-major order.
template <typename Fn>
void forEachElement(const std::vector<int64_t> &shape, Fn &&fn) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t position = 0; position < count; ++position) {
    fn(index, position);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

uint64_t elementBits(const void *elements, unsigned bits, int64_t i) {
  switch (bits) {
  case 16:
    return static_cast<const uint16_t *>(elements)[i];
  case 32:
    return static_cast<const uint32_t *>(elements)[i];
  default:
    return static_cast<const uint64_t *>(elements)[i];
  }
}

void setElementBits(void *elements, unsigned bits, int64_t i, uint64_t value) {
  switch (bits) {
  case 16:
    static_cast<uint16_t *>(elements)[i] = uint16_t(value);
    break;
  case 32:
    static_cast<uint32_t *>(elements)[i] = uint32_t(value);
    break;
  default:
    static_cast<uint64_t *>(elements)[i] = value;
    break;
  }
}

} // namespace

bool codegen::packHost(const DramForm &form, const reference::Tensor &host,
                       DramImage &image, std::string &error) {
  if (host.numElements() != form.numElements()) {
    error = "the tensor has " + std::to_string(host.numElements()) +
            " elements where its DRAM form holds " +
            std::to_string(form.numElements());
    return false;
  }
  unsigned bits = deviceTypeBits(form.type);
  std::vector<uint64_t> converted(size_t(host.numElements()));
  if (!hostToDevice(host.dtype(), host.raw(), form.type, converted.data(),
                    host.numElements())) {
    error = std::string("cannot convert ") +
            reference::dtypeName(host.dtype()) + " to the device's " +
            std::string(deviceTypeName(form.type));
    return false;
  }
  image.groups = form.groups;
  image.longWordsPerGroup = form.groupLongWords();
  for (unsigned g = 0; g < kDramGroups; ++g)
    image.data[g].assign(g < form.groups ? size_t(image.longWordsPerGroup) : 0,
                         0);
  int64_t perLongWord = elementsPerLongWord(form.type);
  forEachElement(form.shape, [&](const std::vector<int64_t> &index,
                                 int64_t position) {
    DramForm::Location at = form.locate(index);
    unsigned shift = unsigned(perLongWord - 1 - at.slot) * bits;
    image.data[at.group][size_t(at.address - form.base)] |=
        elementBits(converted.data(), bits, position) << shift;
  });
  return true;
}

bool codegen::unpackHost(const DramForm &form, const DramImage &image,
                         reference::DType hostType, reference::Tensor &host,
                         std::string &error) {
  for (unsigned g = 0; g < form.groups; ++g)
    if (int64_t(image.data[g].size()) < form.groupLongWords()) {
      error = "the DRAM image of group " + std::to_string(g) + " is short";
      return false;
    }
  unsigned bits = deviceTypeBits(form.type);
  uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  std::vector<uint64_t> device(size_t(form.numElements()));
  int64_t perLongWord = elementsPerLongWord(form.type);
  forEachElement(form.shape, [&](const std::vector<int64_t> &index,
                                 int64_t position) {
    DramForm::Location at = form.locate(index);
    unsigned shift = unsigned(perLongWord - 1 - at.slot) * bits;
    setElementBits(device.data(), bits, position,
                   (image.data[at.group][size_t(at.address - form.base)] >>
                    shift) &
                       mask);
  });
  host = reference::Tensor(hostType, form.shape);
  if (!deviceToHost(form.type, device.data(), hostType, host.raw(),
                    form.numElements())) {
    error = std::string("cannot convert the device's ") +
            std::string(deviceTypeName(form.type)) + " to " +
            reference::dtypeName(hostType);
    return false;
  }
  return true;
}
