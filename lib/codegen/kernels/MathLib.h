//===- MathLib.h - Element-wise math on a block of PE memory ----*- C++ -*-===//
//
// Emits VSM that computes a function element by element over a block of
// long words of singles (two per long word) or doubles (one) in a PE
// memory, the same in every PE, with no communication: exp, log,
// reciprocal, division, square root, tanh, sigmoid, erf and softplus, and
// any short
// sequence of ALU and MAU vector operations a kernel builds with
// MathProgram.
//
// The ALU has no floating-point add or multiply; the MAU's vector mode
// does (fvfma, fvmul, fvadd, fvpassa), so the functions are polynomials and
// Newton iterations on the MAU, with range reduction and special values
// done by integer and select operations on the ALU, which runs beside the
// MAU in the same steps. Accuracy against IEEE single and double is
// measured by test/unit/codegen/MathLibTest.cpp and documented in
// docs/codegen.md (M decisions).
//
// Usage (the block form: counts a multiple of 4 long words, every operand
// auto-stride):
//
//   MathScratch scratch{{PeMemory::GRF0, 0, 128}, {PeMemory::GRF1, 0, 128}};
//   std::string error;
//   if (!emitMathFunction(out, MathFunction::Exp,
//                         {PeMemory::LM0, 0, 1024}, {PeMemory::LM1, 0, 1024},
//                         scratch, error))
//     return fail(error);
//
// The emitted code starts reading the source at once (the caller leaves it
// landed, as the transfer functions do) and ends with every write landed.
// It clobbers the scratch blocks, the T register (one constant) and the
// forwarding latches, and nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_MATHLIB_H
#define MNCC_LIB_CODEGEN_KERNELS_MATHLIB_H

#include "mncc/codegen/DeviceType.h"
#include "mncc/codegen/VsmWriter.h"
#include "mncc/reference/Kernel.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mncc::codegen {

/// The forms element-wise work of one floating device format takes on the
/// ALU and the MAU, for the vector kernels and MathLib (docs/codegen.md E6,
/// E8). Lanes are the format's elements of a long word (4 halves, 2
/// singles, 1 double): the ALU works in the format's precision (h, f, d)
/// or in the integer precision of the same lane width (s, i, l); the MAU's
/// vector operations round once into the format (half: the "r" forms, the
/// addend read as halves with "e"), and a double product takes two steps
/// (pairedProductSteps).
class VectorFormat {
public:
  explicit VectorFormat(DeviceType type) : Type(type) {}
  DeviceType type() const { return Type; }
  /// Elements a long word holds, and the bits of each.
  int64_t lanes() const { return elementsPerLongWord(Type); }
  unsigned bits() const { return deviceTypeBits(Type); }

  /// An ALU operation in the format's floating precision ("fmax",
  /// "dmax"), or in the integer precision of its lanes ("iand", "land").
  std::string alu(std::string_view name) const;
  std::string integer(std::string_view name) const;
  /// A MAU vector opcode ("vfma", "vmul", "vadd", "vpassa") in the format
  /// ("fvfma", "dvfma", "hvfmar").
  std::string mau(std::string_view name) const;
  /// The steps of a MAU vector operation over operand texts (a leading
  /// "-" negates one): one expression, or two for a double product.
  std::vector<std::string> mauSteps(std::string_view name,
                                    std::vector<std::string> sources,
                                    const std::string &destination) const;

  /// The lane's bits of `value` rounded to the format (DeviceType.h).
  uint64_t laneOf(double value) const;
  /// A long word holding lane(i) in lane i (lane 0 the most significant).
  uint64_t longWord(const std::function<uint64_t(unsigned)> &lane) const;
  /// A long word holding `value` in every lane.
  uint64_t splat(double value) const {
    uint64_t bits = laneOf(value);
    return longWord([bits](unsigned) { return bits; });
  }
  /// The sign bit of a lane, and the lane's bits but the sign.
  uint64_t signBit() const { return uint64_t(1) << (bits() - 1); }
  uint64_t magnitudeMask() const { return signBit() - 1; }
  /// Mantissa bits and exponent bias (docs/target/mncore2.md, "Number
  /// formats"); the lane patterns of +infinity, the largest finite and the
  /// smallest normal value.
  unsigned mantissaBits() const;
  int exponentBias() const;
  uint64_t infinity() const { return magnitudeMask() >> mantissaBits() << mantissaBits(); }
  uint64_t largest() const { return infinity() - 1; }
  uint64_t smallest() const { return uint64_t(1) << mantissaBits(); }

private:
  DeviceType Type;
};

/// The MAU multiplies doubles on one pair of PEs of a MAB per instruction
/// (manual 3.6.6: dvfma and dvmul take "u", PEs 0 and 1, or "d", PEs 2 and
/// 3, the other pair passing the addend). A double product over all four
/// PEs is the "u" form into $nowrite, then the "d" form in the next step
/// with the first step's result ($mauf) as its addend. Whether `opcode` is
/// one ("dvfma", "dvmul"), and its two expressions.
bool isPairedProduct(std::string_view opcode);
std::array<std::string, 2>
pairedProductSteps(std::string_view opcode,
                   const std::vector<std::string> &sources,
                   const std::string &destination);

/// `ui"0x..."`: an imm payload of 32 bits.
std::string immediatePayload(uint32_t bits);
/// Writes the 64 bits of `bits` into long word `longWord` of `memory` in
/// every PE (one imm, or one per word when they differ). The caller leaves
/// a step before reading it (ALU latency) and keeps LM0 out of the steps
/// (imm never issues beside an LM0 access).
void emitLongWordConstant(VsmWriter &out, PeMemory memory, int64_t longWord,
                          uint64_t bits);

/// A fused activation's clamp (KernelRequest::activation) in a format: the
/// operand texts of the long words holding its bounds, empty for a bound
/// that clamps nothing (Relu's +infinity, Clip's absent bounds).
struct ClampBounds {
  std::string lo, hi;
};
/// Writes the bounds, rounded to `format`, into long words `loLongWord` and
/// `hiLongWord` of `memory` (a bound of zero may name `zeroLongWord`, a
/// long word of zeros the kernel keeps anyway, or -1 for none).
ClampBounds emitClampBounds(VsmWriter &out, const VectorFormat &format,
                            const reference::FusedActivation &bounds,
                            PeMemory memory, int64_t loLongWord,
                            int64_t hiLongWord, int64_t zeroLongWord = -1);
/// Clamps `values` (operand texts of four long words each, read and written
/// in place) to the bounds on the ALU: max with lo over all of them, then
/// min with hi. Max keeps its first operand on a tie, so -0 stays -0 as
/// pfvm:cpu's (x < lo ? lo : x) keeps it. The caller leaves a step before
/// reading the results.
void emitClamp(VsmWriter &out, const VectorFormat &format,
               const ClampBounds &bounds,
               const std::vector<std::string> &values);

/// Long words [longWord, longWord + longWords) of a PE memory, in every PE.
struct PeBlock {
  PeMemory memory = PeMemory::LM0;
  int64_t longWord = 0;
  int64_t longWords = 0;
};

/// Where the functions keep their constants and intermediate values: two
/// blocks in two different memories (GRF0 and GRF1 in practice), neither
/// the memory of a source or of the destination. An operation reads up to
/// three operands and every memory has one read port per step (manual
/// 3.6.4), so the values of one operation are spread over the two blocks
/// and the destination's slot.
struct MathScratch {
  PeBlock first;
  PeBlock second;
};

enum class MathFunction : uint8_t {
  Exp,
  Log,
  Reciprocal,
  Sqrt,
  Tanh,
  Sigmoid,
  /// source / second source (two inputs).
  Divide,
  /// The error function (single only: the activation kernel refuses
  /// double, M9).
  Erf,
  /// log(1 + e^x) (single only, M12).
  Softplus,
};

const char *mathFunctionName(MathFunction function);
/// Inputs the function reads (2 for Divide, 1 otherwise).
unsigned mathFunctionInputs(MathFunction function);
/// Long words each scratch block needs for full speed; the functions also
/// run, slower, in as little as mathScratchMinimum.
int64_t mathScratchLongWords(MathFunction function,
                             DeviceType type = DeviceType::Single);
int64_t mathScratchMinimum(MathFunction function,
                           DeviceType type = DeviceType::Single);

/// Emits `function` over `sources` (one block, or two for Divide, each as
/// long as the destination) into `destination`, over singles or doubles.
/// A source may be the destination itself (in place). Returns false with
/// a message naming the problem for blocks that do not fit or overlap.
bool emitMathFunction(VsmWriter &out, MathFunction function,
                      const std::vector<PeBlock> &sources,
                      const PeBlock &destination, const MathScratch &scratch,
                      std::string &error,
                      DeviceType type = DeviceType::Single);

inline bool emitExp(VsmWriter &out, const PeBlock &source,
                    const PeBlock &destination, const MathScratch &scratch,
                    std::string &error) {
  return emitMathFunction(out, MathFunction::Exp, {source}, destination,
                          scratch, error);
}
inline bool emitLog(VsmWriter &out, const PeBlock &source,
                    const PeBlock &destination, const MathScratch &scratch,
                    std::string &error) {
  return emitMathFunction(out, MathFunction::Log, {source}, destination,
                          scratch, error);
}
inline bool emitReciprocal(VsmWriter &out, const PeBlock &source,
                           const PeBlock &destination,
                           const MathScratch &scratch, std::string &error) {
  return emitMathFunction(out, MathFunction::Reciprocal, {source}, destination,
                          scratch, error);
}
inline bool emitSqrt(VsmWriter &out, const PeBlock &source,
                     const PeBlock &destination, const MathScratch &scratch,
                     std::string &error) {
  return emitMathFunction(out, MathFunction::Sqrt, {source}, destination,
                          scratch, error);
}
inline bool emitTanh(VsmWriter &out, const PeBlock &source,
                     const PeBlock &destination, const MathScratch &scratch,
                     std::string &error) {
  return emitMathFunction(out, MathFunction::Tanh, {source}, destination,
                          scratch, error);
}
inline bool emitSigmoid(VsmWriter &out, const PeBlock &source,
                        const PeBlock &destination, const MathScratch &scratch,
                        std::string &error) {
  return emitMathFunction(out, MathFunction::Sigmoid, {source}, destination,
                          scratch, error);
}
inline bool emitDivide(VsmWriter &out, const PeBlock &numerator,
                       const PeBlock &denominator, const PeBlock &destination,
                       const MathScratch &scratch, std::string &error) {
  return emitMathFunction(out, MathFunction::Divide, {numerator, denominator},
                          destination, scratch, error);
}

/// A short element-wise program over 4-long-word chunks, for kernels that
/// need their own sequence (LeakyRelu, Clip, Abs, ...): values are the
/// results of ALU or MAU expressions, each kept in one of the homes below;
/// the scheduler interleaves chunks so that every result has landed before
/// it is read, pairs an ALU and a MAU expression in one step where their
/// ports allow, and hands out the slots.
class MathProgram {
public:
  /// Where a value lives: one of the two scratch blocks, the destination's
  /// slot of the chunk (one value at a time, the last being the result),
  /// or, for a single constant, the T register.
  enum class Home : uint8_t { First, Second, Destination, T };
  enum class Unit : uint8_t { Alu, Mau };

  struct Ref {
    int id = -1;
    bool negate = false;
    /// The same value, negated by the MAU operand option "-".
    Ref operator-() const { return Ref{id, !negate}; }
  };

  /// A program over long words of `type`'s elements (single or double).
  explicit MathProgram(DeviceType type = DeviceType::Single)
      : Format(type) {}
  const VectorFormat &format() const { return Format; }

  /// The chunk of source `index`.
  Ref input(unsigned index = 0);
  /// A constant long word holding `bits` in both words.
  Ref constantBits(uint32_t bits, Home home);
  /// A constant long word holding the lane `bits` in every lane of the
  /// format, or `value` rounded to the format.
  Ref constantLane(uint64_t bits, Home home);
  Ref constant(double value, Home home);
  /// A constant long word of 64 bits (lanes that differ).
  Ref constantLongWord(uint64_t bits, Home home) {
    return constantPair(uint32_t(bits >> 32), uint32_t(bits), home);
  }
  /// A constant long word of two different words (high first).
  Ref constantPair(uint32_t high, uint32_t low, Home home);
  /// A fixed input of the ALU ("$peid", "$subpeid", ...: manual 3.6.1),
  /// only ever the first operand of an ALU expression.
  Ref fixed(const std::string &name);
  /// `opcode <sources...> <result>`; ALU opcodes with their precision
  /// ("fmax", "iand"), MAU vector opcodes ("fvfma"; a double product,
  /// "dvfma" or "dvmul", takes two steps: pairedProductSteps).
  Ref alu(const std::string &opcode, std::vector<Ref> sources, Home home);
  Ref mau(const std::string &opcode, std::vector<Ref> sources, Home home);
  /// Marks the value the program computes; its expression writes the
  /// destination.
  void setResult(Ref value);

  /// Emits the program over the blocks (see emitMathFunction).
  bool emit(VsmWriter &out, const std::vector<PeBlock> &sources,
            const PeBlock &destination, const MathScratch &scratch,
            std::string &error) const;
  /// Long words per scratch block for `window` chunks in flight.
  int64_t scratchLongWords(unsigned window) const;

  struct Value {
    enum class Kind : uint8_t { Input, Constant, Computed, Fixed } kind;
    Home home = Home::First;
    uint32_t bits = 0;
    /// The low word of a constant (bits for both words but in a pair).
    uint32_t lowBits = 0;
    std::string name;
    unsigned input = 0;
    int producer = -1;
  };
  struct Operation {
    Unit unit;
    std::string opcode;
    std::vector<Ref> sources;
    int result;
  };
  const std::vector<Value> &values() const { return Values; }
  const std::vector<Operation> &operations() const { return Operations; }
  int result() const { return Result; }

private:
  Ref compute(Unit unit, const std::string &opcode, std::vector<Ref> sources,
              Home home);

  VectorFormat Format;
  std::vector<Value> Values;
  std::vector<Operation> Operations;
  int Result = -1;
};

/// scale (max(x, 0) + alpha expm1(min(x, 0))): Elu (scale 1) and Selu;
/// expm1 as tanh's (M5), the two terms never both non-zero, so the sum is
/// exact (M10).
MathProgram scaledEluProgram(double alpha, double scale,
                             DeviceType type = DeviceType::Single);

/// The program of a function over singles or doubles (for tests and for
/// kernels that extend it).
MathProgram mathFunctionProgram(MathFunction function,
                                DeviceType type = DeviceType::Single);

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_MATHLIB_H
