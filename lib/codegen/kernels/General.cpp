//===- General.cpp - The general kernel for small tensors ----------------===//
//
// Takes any of its operators, whatever the shapes and attributes, when the
// node's tensors fit one PE: every PE loads the same copy of each input's
// DRAM image, computes the outputs element by element with flat-addressed
// instructions (GeneralProgram.h), and the PEs of one L1B per group store
// the result (GeneralTransfer.h). Registered with priority 0, below every
// specialised kernel.
//
// The limit: the images of the inputs, the outputs and the scratch an
// operator needs must fit a PE's LM0 and LM1 (4096 words each) and GRF0
// and GRF1 (512 words each, less the constant pool and scratch): about
// 8 Ki single-precision elements in all, counted with the row padding of
// the DRAM form (each row padded to 8 elements).
//
//===----------------------------------------------------------------------===//

#include "GeneralLowering.h"
#include "GeneralMore.h"
#include "Generators.h"

#include <algorithm>
#include <numeric>
#include <sstream>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

void general::forEachIndex(
    const std::vector<int64_t> &shape,
    const std::function<void(const std::vector<int64_t> &)> &fn) {
  int64_t count = elementCount(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t position = 0; position < count; ++position) {
    fn(index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

std::vector<int64_t>
general::broadcastIndex(const std::vector<int64_t> &index,
                        const std::vector<int64_t> &shape) {
  std::vector<int64_t> result(shape.size(), 0);
  size_t offset = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    result[d] = shape[d] == 1 ? 0 : index[offset + d];
  return result;
}

std::vector<int64_t> general::unravel(int64_t position,
                                      const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : position % shape[d];
    position = shape[d] == 0 ? 0 : position / shape[d];
  }
  return index;
}

int64_t general::elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

std::string general::shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

namespace {
/// The GRF0 word the store's constant goes to.
constexpr int32_t kStoreScratchWords = 8;
} // namespace

Lowering::Lowering(const KernelRequest &request, VsmWriter *out)
    : Request(request), Out(out), Inputs(request.inputs.size()),
      Outputs(request.outputs.size()), RawInputs(request.inputs.size()),
      RawOutputs(request.outputs.size()),
      OutputAliased(request.outputs.size(), false) {
  Program.setRecording(out != nullptr);
  Program.setDouble(computeType() == DeviceType::Double);
  Program.allocate(PeMemory::GRF0, kStoreScratchWords);
}

DeviceType Lowering::computeType() const {
  return !Request.outputs.empty() &&
                 Request.outputs[0].form.type == DeviceType::Double
             ? DeviceType::Double
             : DeviceType::Single;
}

int32_t Lowering::elementWords() const {
  return computeType() == DeviceType::Double ? 2 : 1;
}

bool Lowering::integerTensors() const {
  return !Request.outputs.empty() &&
         Request.outputs[0].form.type == DeviceType::Int32;
}

std::string Lowering::roomLeft() const {
  std::string text = " (the general kernel computes in one PE: ";
  for (unsigned m = 0; m < kPeMemories; ++m)
    text += std::string(m ? ", " : "") + peMemoryName(PeMemory(m)) + " " +
            std::to_string(Program.freeWords(PeMemory(m)));
  return text + " words left)";
}

bool Lowering::fail(std::string message) {
  if (Error.empty())
    Error = std::move(message);
  return false;
}

namespace {
/// The image the operations see: a half tensor's widened to singles.
PeImage widened(const DramForm &form) {
  return PeImage{form, PeMemory::LM0, 0, form.type == DeviceType::Half ? 4 : 2};
}

/// Places a half tensor's image as it moves in the first memory of
/// `preference` other than `widenedIn` with room.
std::optional<PeImage> placeRaw(ElemProgram &program, const DramForm &form,
                                PeMemory widenedIn,
                                std::initializer_list<PeMemory> preference) {
  PeImage raw{form, PeMemory::LM0, 0, 2};
  for (PeMemory memory : preference) {
    if (memory == widenedIn)
      continue;
    if (std::optional<Slot> slot = program.allocate(memory, raw.words())) {
      raw.memory = slot->memory;
      raw.word = slot->word;
      return raw;
    }
  }
  return std::nullopt;
}
} // namespace

int32_t Lowering::inputWords(size_t input) const {
  return widened(Request.inputs[input].form).words();
}

int32_t Lowering::outputWords(size_t output) const {
  return widened(Request.outputs[output].form).words();
}

const PeImage *
Lowering::placeInput(size_t input, std::initializer_list<PeMemory> preference) {
  const KernelTensor &tensor = Request.inputs[input];
  PeImage image = widened(tensor.form);
  std::optional<Slot> slot = Program.allocateIn(preference, image.words());
  if (slot && tensor.form.type == DeviceType::Half) {
    RawInputs[input] = placeRaw(
        Program, tensor.form, slot->memory,
        {PeMemory::LM1, PeMemory::LM0, PeMemory::GRF0, PeMemory::GRF1});
    if (!RawInputs[input])
      slot.reset();
  }
  if (!slot) {
    fail("input " + std::to_string(input) + " (" + tensor.form.str() + ", " +
         std::to_string(image.words()) +
         " words) does not fit the PE memories left" + roomLeft());
    return nullptr;
  }
  image.memory = slot->memory;
  image.word = slot->word;
  Inputs[input] = image;
  return &*Inputs[input];
}

const PeImage *
Lowering::placeOutput(size_t output,
                      std::initializer_list<PeMemory> preference) {
  const KernelTensor &tensor = Request.outputs[output];
  PeImage image = widened(tensor.form);
  bool half = tensor.form.type == DeviceType::Half;
  for (PeMemory memory : preference) {
    if (memory != PeMemory::LM0 && memory != PeMemory::LM1)
      continue;
    if (std::optional<Slot> slot = Program.allocate(memory, image.words())) {
      if (half) {
        // The store reads LM: the halves go to the other LM.
        RawOutputs[output] = placeRaw(Program, tensor.form, slot->memory,
                                      {PeMemory::LM0, PeMemory::LM1});
        if (!RawOutputs[output])
          break;
      }
      image.memory = slot->memory;
      image.word = slot->word;
      Outputs[output] = image;
      return &*Outputs[output];
    }
  }
  fail("output " + std::to_string(output) + " (" + tensor.form.str() + ", " +
       std::to_string(image.words()) +
       " words) does not fit LM0 or LM1 beside the inputs" + roomLeft());
  return nullptr;
}

void Lowering::aliasOutput(size_t output, const PeImage &input) {
  PeImage image{Request.outputs[output].form, input.memory, input.word,
                input.longWordWords};
  Outputs[output] = image;
  OutputAliased[output] = true;
}

std::optional<Slot>
Lowering::allocate(std::initializer_list<PeMemory> preference, int32_t words,
                   int32_t align) {
  std::optional<Slot> slot = Program.allocateIn(preference, words, align);
  if (!slot)
    fail("a scratch array of " + std::to_string(words) +
         " words does not fit the PE memories left" + roomLeft());
  return slot;
}

bool Lowering::fits(
    const std::vector<std::pair<PeMemory, int32_t>> &requests) const {
  std::array<int64_t, kPeMemories> need{};
  for (const auto &[memory, words] : requests)
    need[unsigned(memory)] += (words + 7) / 8 * 8;
  for (unsigned m = 0; m < kPeMemories; ++m)
    if (need[m] > Program.freeWords(PeMemory(m)))
      return false;
  return true;
}

void Lowering::loadInputs() {
  std::vector<PeImage> images;
  for (size_t i = 0; i < Inputs.size(); ++i)
    if (Inputs[i])
      images.push_back(RawInputs[i] ? *RawInputs[i] : *Inputs[i]);
  if (!dryRun())
    emitLoadToEveryPe(*Out, images);
  // Half inputs widen to singles, four a long word (hvpassa).
  for (size_t i = 0; i < Inputs.size(); ++i)
    if (RawInputs[i])
      for (int64_t j = 0; j < RawInputs[i]->longWords(); ++j)
        Program.halfToSingle(
            {Inputs[i]->memory, Inputs[i]->word + int32_t(4 * j)},
            {RawInputs[i]->memory, RawInputs[i]->word + int32_t(2 * j)});
}

bool Lowering::reserveMath(std::initializer_list<MathFunction> functions) {
  int64_t want = 0, least = 0;
  for (MathFunction function : functions) {
    want = std::max(want, mathScratchLongWords(function, computeType()));
    least = std::max(least, mathScratchMinimum(function, computeType()));
  }
  std::array<PeBlock, 2> blocks;
  PeMemory memories[2] = {PeMemory::GRF0, PeMemory::GRF1};
  for (unsigned b = 0; b < 2; ++b) {
    int64_t room = Program.freeWords(memories[b]) / 8 * 4;
    int64_t longWords = std::min(want, room) / 4 * 4;
    if (longWords < least)
      return fail(std::string("MathLib needs ") + std::to_string(least) +
                  " long words of scratch in " + peMemoryName(memories[b]) +
                  ", " + std::to_string(room) + " are left");
    std::optional<Slot> slot =
        Program.allocate(memories[b], int32_t(2 * longWords));
    blocks[b] = {memories[b], slot->word / 2, longWords};
  }
  Scratch = MathScratch{blocks[0], blocks[1]};
  return true;
}

bool Lowering::math(MathFunction function, const std::vector<Slot> &sources,
                    Slot destination, int32_t words) {
  if (!Scratch)
    return fail("MathLib's scratch is not reserved");
  if (dryRun())
    return true;
  Program.flush(*Out);
  auto block = [&](Slot slot) {
    return PeBlock{slot.memory, slot.word / 2, (words + 7) / 8 * 4};
  };
  std::vector<PeBlock> blocks;
  for (Slot source : sources)
    blocks.push_back(block(source));
  std::string error;
  if (!emitMathFunction(*Out, function, blocks, block(destination), *Scratch,
                        error, computeType()))
    return fail(error);
  return true;
}

void Lowering::fold(Slot dst, const std::vector<Slot> &sources, Fold kind) {
  if (sources.empty()) {
    Program.zero(dst);
    return;
  }
  Program.copy(dst, sources[0]);
  bool integer = integerTensors();
  for (size_t i = 1; i < sources.size(); ++i) {
    switch (kind) {
    case Fold::Sum:
      if (integer)
        Program.integer(ElemOpcode::IAdd, dst, dst, sources[i]);
      else
        Program.add(dst, dst, sources[i]);
      break;
    case Fold::Max:
      if (integer)
        Program.integer(ElemOpcode::IMax, dst, dst, sources[i]);
      else
        Program.max(dst, dst, sources[i]);
      break;
    case Fold::Min:
      if (integer)
        Program.integer(ElemOpcode::IMin, dst, dst, sources[i]);
      else
        Program.min(dst, dst, sources[i]);
      break;
    }
  }
}

void Lowering::copyWords(const std::vector<std::pair<Slot, Slot>> &dstSrc) {
  if (elementWords() == 1) {
    recordCopies(Program, dstSrc);
    return;
  }
  std::vector<std::pair<Slot, Slot>> words;
  for (const auto &[dst, src] : dstSrc)
    for (int32_t w = 0; w < elementWords(); ++w)
      words.push_back({dst.offset(w), src.offset(w)});
  recordCopies(Program, words);
}

void Lowering::finish(KernelDescription &description) {
  // Words of the output images that hold no element: the row padding and
  // the tail of each group block. Consumers may read the padding (decision
  // C2), so it is zero whatever the operator computed there.
  for (size_t o = 0; o < Outputs.size(); ++o) {
    if (!Outputs[o] || OutputAliased[o])
      continue;
    const PeImage &image = *Outputs[o];
    const DramForm &form = image.form;
    int32_t perLongWord = image.longWordWords;
    int64_t rowWords = perLongWord * form.rowLongWords();
    int64_t elementWords = perLongWord / elementsPerLongWord(form.type);
    int64_t data = form.innerExtent();
    if (form.shape.empty() || elementCount(form.shape) == 0)
      data = form.shape.empty() ? 1 : 0;
    data *= elementWords;
    for (unsigned g = 0; g < form.groups; ++g) {
      int32_t block =
          image.word + int32_t(perLongWord * g * form.groupLongWords());
      int64_t rows = form.rowsInGroup(g);
      for (int64_t r = 0; r < rows; ++r)
        if (rowWords > data)
          Program.zeroRange(
              {image.memory, block + int32_t(r * rowWords + data)},
              int32_t(rowWords - data));
      int64_t used = rows * rowWords;
      int64_t blockWords = perLongWord * form.groupLongWords();
      if (blockWords > used)
        Program.zeroRange({image.memory, block + int32_t(used)},
                          int32_t(blockWords - used));
    }
  }
  // Half outputs narrow back, two singles to a word (fvpassar), each
  // rounded once.
  for (size_t o = 0; o < Outputs.size(); ++o)
    if (Outputs[o] && RawOutputs[o])
      for (int64_t j = 0; j < RawOutputs[o]->longWords(); ++j)
        for (int32_t half = 0; half < 2; ++half)
          Program.singleToHalf({RawOutputs[o]->memory,
                                RawOutputs[o]->word + int32_t(2 * j) + half},
                               {Outputs[o]->memory,
                                Outputs[o]->word + int32_t(4 * j) + 2 * half});
  if (dryRun())
    return;
  Program.flush(*Out);
  for (size_t o = 0; o < Outputs.size(); ++o)
    if (Outputs[o])
      emitStoreFromEveryPe(*Out, RawOutputs[o] ? *RawOutputs[o] : *Outputs[o],
                           0);
  const ScheduleStats &stats = Program.stats();
  description.parameters.push_back(
      {"elements", std::to_string(stats.operations) + " operations in " +
                       std::to_string(stats.steps) + " steps"});
  description.parameters.push_back(
      {"dual issue", std::to_string(stats.dualIssueSteps) + " steps"});
  if (stats.conflictCopies)
    description.parameters.push_back(
        {"conflict copies", std::to_string(stats.conflictCopies)});
}

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

namespace {

LoweringFn findLowering(const std::string &opType) {
  if (LoweringFn fn = findElementLowering(opType))
    return fn;
  if (LoweringFn fn = findMoreLowering(opType))
    return fn;
  return findLinearLowering(opType);
}

/// Input roles that are not element data (shapes, axes, bounds given as
/// integers) and so may have a non-floating device type or none.
bool isIndexInput(const std::string &opType, size_t input) {
  return input == 1 && (opType == "Reshape" || opType == "ReduceSum" ||
                        opType == "ReduceMean" || opType == "ReduceMax");
}

/// Operators the general kernel also runs on int32 tensors (ONNX's
/// integer types): data movement, and what the ALU's integer add, subtract,
/// max and min make of the rest (Mul through single precision, exact while
/// the operands and products stay below 2^24).
bool hasIntegerForm(const std::string &opType) {
  static const char *const kIntegerOps[] = {
      "Identity", "Reshape", "Flatten", "Transpose", "Add",       "Sub",
      "Mul",      "Clip",    "Relu",    "MaxPool",   "ReduceSum", "ReduceMax"};
  for (const char *op : kIntegerOps)
    if (opType == op)
      return true;
  return false;
}

class GeneralGenerator : public KernelGenerator {
public:
  const char *name() const override { return "general"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    LoweringFn lower = findLowering(request.opType);
    if (!lower)
      return false;
    // GeneralMore.h's operators mix element types (bool conditions, int32
    // indices) and check their own.
    if (findMoreLowering(request.opType)) {
      Lowering dry(request, nullptr);
      if (lower(dry))
        return true;
      whyNot = dry.error().empty() ? "not supported" : dry.error();
      return false;
    }
    // One element type for every data tensor: single, or int32 for the
    // operators that have integer forms.
    std::optional<DeviceType> type;
    auto check = [&](const KernelTensor &tensor, const std::string &what) {
      if (!type)
        type = tensor.form.type;
      if (tensor.form.type == *type)
        return true;
      whyNot = what + " is " + std::string(deviceTypeName(tensor.form.type)) +
               " beside " + std::string(deviceTypeName(*type));
      return false;
    };
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      const KernelTensor &tensor = request.inputs[i];
      if (tensor.omitted || isIndexInput(request.opType, i))
        continue;
      if (!check(tensor, "input " + std::to_string(i)))
        return false;
    }
    for (size_t o = 0; o < request.outputs.size(); ++o) {
      // MaxPool's indices are integers whatever the values are.
      if (request.opType == "MaxPool" && o == 1)
        continue;
      const KernelTensor &tensor = request.outputs[o];
      if (!tensor.omitted && !check(tensor, "the output"))
        return false;
    }
    bool integerForm =
        type == DeviceType::Int32 && hasIntegerForm(request.opType);
    // Half tensors widen to singles on the way in and narrow back on the
    // way out (G12); doubles compute in double (G13).
    bool floating = type == DeviceType::Single || type == DeviceType::Half ||
                    type == DeviceType::Double;
    if (type && !floating && !integerForm) {
      whyNot = "only floating-point tensors";
      if (type == DeviceType::Int32)
        whyNot += " (" + request.opType + " has no int32 form)";
      else
        whyNot += " (" + std::string(deviceTypeName(*type)) + " given)";
      return false;
    }
    Lowering dry(request, nullptr);
    if (!lower(dry)) {
      whyNot = dry.error().empty() ? "not supported" : dry.error();
      return false;
    }
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    LoweringFn lower = findLowering(request.opType);
    if (!lower) {
      error = "the general kernel has no " + request.opType;
      return false;
    }
    description.generator = name();
    description.variant = request.opType + ", every PE computes the node";
    out.comment("general kernel: " + request.opType + " " + request.nodeName);
    Lowering lowering(request, &out);
    if (!lower(lowering)) {
      error = lowering.error();
      return false;
    }
    lowering.finish(description);
    return true;
  }
};

std::unique_ptr<KernelGenerator> createGeneralGenerator() {
  return std::make_unique<GeneralGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(General, 0, createGeneralGenerator);
