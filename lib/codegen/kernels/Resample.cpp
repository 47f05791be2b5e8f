//===- Resample.cpp - Resize, ConvTranspose and Pad with a value ----------===//
//
// Small tensors of the operators that resample a grid with weights known
// at compile time, computed as the general kernel computes its nodes
// (GeneralLowering.h: every PE the whole node in its own copy, element
// operations list-scheduled):
//
//  * Resize in every mode: each output element is a constant plus a sum of
//    input elements times weights, which the host computes once in double
//    from the samples pfvm:cpu interpolates with (ResizeSamples.h) and
//    rounds once to the element type; a weight of 1 is a copy. The reorder
//    kernel takes the nearest modes first, at any size (an index map).
//  * ConvTranspose (1-3-D, strides, dilations, pads, output_padding,
//    output_shape, auto_pad, groups, bias): each output is a chain of
//    multiply-adds over the input elements whose scattered window covers
//    it; W may be a constant or known at run time.
//  * Pad in constant mode with a value other than 0 (the reorder kernel
//    fills the border with zeros only): copies and the value.
//
//===----------------------------------------------------------------------===//

#include "ConvTransposeShape.h"
#include "GeneralLowering.h"
#include "Generators.h"
#include "ResizeSamples.h"

#include "mncc/reference/PadSource.h"

#include <algorithm>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

namespace {

constexpr auto LM0 = PeMemory::LM0;
constexpr auto LM1 = PeMemory::LM1;
constexpr auto GRF0 = PeMemory::GRF0;
constexpr auto GRF1 = PeMemory::GRF1;

Slot at(const PeImage &image, const std::vector<int64_t> &index) {
  return {image.memory, image.wordOf(index)};
}

/// The integers of a constant input, or nullopt.
std::optional<std::vector<int64_t>> constantIntegers(const KernelTensor &t) {
  if (t.omitted || !t.constant)
    return std::nullopt;
  std::vector<int64_t> values;
  for (int64_t k = 0; k < t.constant->numElements(); ++k)
    values.push_back(t.constant->elementAsInt64(k));
  return values;
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

bool lowerResize(Lowering &l) {
  const KernelRequest &r = l.request();
  ResizeSamples samples;
  std::string whyNot;
  if (!resizeSamples(r, samples, whyNot))
    return l.fail(whyNot);
  int32_t inWords = l.inputWords(0), outWords = l.outputWords(0);
  const PeImage *x = nullptr, *y = nullptr;
  // The products read X, a weight from the constant pool (GRF1) and the
  // accumulator: three memories.
  if (l.fits({{LM0, inWords}, {LM1, outWords}})) {
    x = l.placeInput(0, {LM0});
    y = l.placeOutput(0, {LM1});
  } else if (l.fits({{GRF0, inWords}, {LM0, outWords}})) {
    x = l.placeInput(0, {GRF0});
    y = l.placeOutput(0, {LM0});
  } else {
    return l.fail("X (" + std::to_string(inWords) + " words) and Y (" +
                  std::to_string(outWords) + " words) do not fit one PE" +
                  l.roomLeft());
  }
  if (!x || !y)
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  std::vector<std::pair<Slot, Slot>> copies;
  forEachIndex(r.outputs[0].form.shape, [&](const std::vector<int64_t> &i) {
    ResizeTerms terms = resizeTerms(samples, i);
    Slot dst = at(*y, i);
    if (terms.constant == 0 && terms.taps.size() == 1 &&
        terms.taps.begin()->second == 1) {
      copies.push_back({dst, at(*x, terms.taps.begin()->first)});
      return;
    }
    bool first = true;
    if (terms.constant != 0 || terms.taps.empty()) {
      p.copy(dst, p.constant(terms.constant));
      first = false;
    }
    for (const auto &[from, weight] : terms.taps) {
      if (first)
        p.mul(dst, at(*x, from), p.constant(weight));
      else
        p.fma(dst, at(*x, from), p.constant(weight), dst);
      first = false;
    }
  });
  l.copyWords(copies);
  return true;
}

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

bool lowerConvTranspose(Lowering &l) {
  const KernelRequest &r = l.request();
  if (r.inputs.size() < 2 || r.inputs.size() > 3 || r.outputs.size() != 1 ||
      !r.hasInput(1))
    return l.fail("ConvTranspose takes X, W and an optional B, and one output");
  const std::vector<int64_t> &xs = r.inputs[0].form.shape,
                             &ws = r.inputs[1].form.shape,
                             &ys = r.outputs[0].form.shape;
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size())
    return l.fail("ConvTranspose needs 1 to 3 spatial dimensions");
  int64_t group = r.getInt("group", 1);
  int64_t channels = xs[1];
  if (group < 1 || channels % group || ws[0] != channels)
    return l.fail("ConvTranspose's group " + std::to_string(group) +
                  " does not fit X " + shapeText(xs) + " and W " +
                  shapeText(ws));
  int64_t perGroupOut = ws[1], filters = perGroupOut * group,
          perGroupIn = channels / group;
  Scatter s;
  std::string whyNot;
  if (!resolveScatter(r, xs, ws, s, whyNot))
    return l.fail(whyNot);
  std::vector<int64_t> expected = {xs[0], filters};
  expected.insert(expected.end(), s.out.begin(), s.out.end());
  if (expected != ys)
    return l.fail("the output shape " + shapeText(ys) +
                  " is not ConvTranspose's " + shapeText(expected));
  bool hasBias = r.hasInput(2);
  if (hasBias && r.inputs[2].form.shape != std::vector<int64_t>{filters})
    return l.fail("ConvTranspose's bias is an [M] vector");
  // The two factors and the accumulator in three memories, as the general
  // kernel's Conv: X and W in LM0 and GRF0 (either way), Y in LM1; else
  // dense accumulators in GRF0, copied to Y at the end.
  int32_t xWords = l.inputWords(0), wWords = l.inputWords(1),
          yWords = l.outputWords(0);
  const PeImage *x = nullptr, *w = nullptr, *y = nullptr;
  std::optional<Slot> accumulators;
  int32_t accWords = int32_t(elementCount(ys)) * l.elementWords();
  if (l.fits({{LM0, xWords}, {GRF0, wWords}, {LM1, yWords}})) {
    x = l.placeInput(0, {LM0});
    w = l.placeInput(1, {GRF0});
    y = l.placeOutput(0, {LM1});
  } else if (l.fits({{GRF0, xWords}, {LM0, wWords}, {LM1, yWords}})) {
    x = l.placeInput(0, {GRF0});
    w = l.placeInput(1, {LM0});
    y = l.placeOutput(0, {LM1});
  } else if (l.fits({{LM0, xWords}, {LM1, wWords}, {GRF0, accWords}}) &&
             (l.fits({{LM0, xWords + yWords}, {LM1, wWords}}) ||
              l.fits({{LM0, xWords}, {LM1, wWords + yWords}}))) {
    x = l.placeInput(0, {LM0});
    w = l.placeInput(1, {LM1});
    accumulators = l.allocate({GRF0}, accWords);
    y = l.placeOutput(0, {LM0, LM1});
  } else {
    return l.fail("X, W (" + std::to_string(xWords) + ", " +
                  std::to_string(wWords) + " words) and Y (" +
                  std::to_string(yWords) + " words) do not fit one PE" +
                  l.roomLeft());
  }
  if (!x || !w || !y)
    return false;
  const PeImage *bias = nullptr;
  if (hasBias && !(bias = l.placeInput(2, {GRF1, GRF0, LM0, LM1})))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  size_t rank = s.in.size();
  int32_t position = 0;
  forEachIndex(ys, [&](const std::vector<int64_t> &index) {
    int64_t batch = index[0], filter = index[1];
    int64_t g = filter / perGroupOut, m = filter % perGroupOut;
    std::vector<std::pair<Slot, Slot>> taps;
    std::vector<int64_t> xi(2 + rank), wi(2 + rank);
    xi[0] = batch;
    wi[1] = m;
    for (int64_t c = 0; c < perGroupIn; ++c) {
      xi[1] = wi[0] = g * perGroupIn + c;
      forEachIndex(s.kernel, [&](const std::vector<int64_t> &tap) {
        for (size_t d = 0; d < rank; ++d) {
          xi[2 + d] = s.source(d, index[2 + d], tap[d]);
          if (xi[2 + d] < 0)
            return;
          wi[2 + d] = tap[d];
        }
        taps.push_back({at(*x, xi), at(*w, wi)});
      });
    }
    Slot dst =
        accumulators ? l.element(*accumulators, position) : at(*y, index);
    size_t first = 0;
    if (bias) {
      p.copy(dst, at(*bias, {filter}));
    } else if (taps.empty()) {
      p.zero(dst);
    } else {
      p.mul(dst, taps[0].first, taps[0].second);
      first = 1;
    }
    for (size_t k = first; k < taps.size(); ++k)
      p.fma(dst, taps[k].first, taps[k].second, dst);
    if (accumulators)
      p.copy(at(*y, index), dst);
    ++position;
  });
  return true;
}

//===----------------------------------------------------------------------===//
// Pad with a value
//===----------------------------------------------------------------------===//

bool lowerPad(Lowering &l) {
  const KernelRequest &r = l.request();
  if (r.outputs.size() != 1 || r.inputs.empty() || r.inputs[0].omitted)
    return l.fail("Pad takes data, pads and an optional value");
  std::string mode = r.getString("mode", "constant");
  const std::vector<int64_t> &xs = r.inputs[0].form.shape,
                             &ys = r.outputs[0].form.shape;
  size_t rank = xs.size();
  std::optional<std::vector<int64_t>> pads;
  if (r.inputs.size() > 1)
    pads = constantIntegers(r.inputs[1]);
  if (!pads || pads->size() != 2 * rank || ys.size() != rank)
    return l.fail("Pad's pads must be a constant of twice the rank");
  if (r.hasInput(3))
    return l.fail("Pad with axes is not supported");
  double value = 0;
  if (r.hasInput(2)) {
    const reference::Tensor *given = r.inputs[2].constant;
    if (!given || given->numElements() != 1)
      return l.fail("Pad's constant_value must be a constant");
    value = given->elementAsDouble(0);
  }
  for (size_t d = 0; d < rank; ++d)
    if (ys[d] != xs[d] + (*pads)[d] + (*pads)[d + rank])
      return l.fail("the output " + shapeText(ys) + " is not the padded " +
                    shapeText(xs));
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return l.fail("Pad's " + mode + " mode is not supported");
  const PeImage *x = l.placeInput(0, {LM0, GRF0});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!x || !y)
    return l.fail("Pad's tensors do not fit one PE" + l.roomLeft());
  l.loadInputs();
  ElemProgram &p = l.program();
  std::vector<std::pair<Slot, Slot>> copies;
  forEachIndex(ys, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> from(rank);
    for (size_t d = 0; d < rank; ++d) {
      from[d] = reference::padSource(mode, index[d], (*pads)[d], xs[d]);
      if (from[d] < 0) {
        p.copy(at(*y, index), p.constant(value));
        return;
      }
    }
    copies.push_back({at(*y, index), at(*x, from)});
  });
  l.copyWords(copies);
  return true;
}

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

LoweringFn findResampleLowering(const std::string &opType) {
  if (opType == "Resize")
    return lowerResize;
  if (opType == "ConvTranspose")
    return lowerConvTranspose;
  if (opType == "Pad")
    return lowerPad;
  return nullptr;
}

/// The data tensors (X, W, B; Y) share one floating type; the others are
/// shapes, pads and scales known at compile time.
bool floatingData(const KernelRequest &request, std::string &whyNot) {
  size_t dataInputs = request.opType == "ConvTranspose" ? 3 : 1;
  std::optional<DeviceType> type;
  auto check = [&](const KernelTensor &tensor) {
    if (tensor.omitted)
      return true;
    if (!type)
      type = tensor.form.type;
    if (tensor.form.type != *type) {
      whyNot = "the data tensors have different element types";
      return false;
    }
    return true;
  };
  for (size_t i = 0; i < request.inputs.size() && i < dataInputs; ++i)
    if (!check(request.inputs[i]))
      return false;
  for (const KernelTensor &output : request.outputs)
    if (!check(output))
      return false;
  if (type && *type != DeviceType::Single && *type != DeviceType::Half &&
      *type != DeviceType::Double) {
    whyNot = "only floating-point tensors";
    return false;
  }
  return true;
}

class ResampleGenerator : public KernelGenerator {
public:
  const char *name() const override { return "resample"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    LoweringFn lower = findResampleLowering(request.opType);
    if (!lower || !floatingData(request, whyNot))
      return false;
    Lowering dry(request, nullptr);
    if (!lower(dry)) {
      whyNot = dry.error().empty() ? "not supported" : dry.error();
      return false;
    }
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    LoweringFn lower = findResampleLowering(request.opType);
    if (!lower) {
      error = "the resample kernel has no " + request.opType;
      return false;
    }
    description.generator = name();
    description.variant = request.opType + ", every PE computes the node";
    out.comment("resample kernel: " + request.opType + " " + request.nodeName);
    Lowering lowering(request, &out);
    if (!lower(lowering)) {
      error = lowering.error();
      return false;
    }
    lowering.finish(description);
    return true;
  }
};

std::unique_ptr<KernelGenerator> createResampleGenerator() {
  return std::make_unique<ResampleGenerator>();
}

} // namespace

// Above the general kernel (0), which has none of these operators, and
// below the reorder kernel (50), which takes the index maps at any size.
MNCC_KERNEL_GENERATOR(Resample, 10, createResampleGenerator);
