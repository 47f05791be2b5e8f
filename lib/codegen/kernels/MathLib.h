//===- MathLib.h - Element-wise math on a block of PE memory ----*- C++ -*-===//
//
// Emits VSM that computes a function element by element over a block of
// long words of singles (two per long word) in a PE memory, the same in
// every PE, with no communication: exp, log, reciprocal, division, square
// root, tanh and sigmoid, and any short sequence of ALU and MAU vector
// operations a kernel builds with MathProgram.
//
// The ALU has no floating-point add or multiply; the MAU's vector mode
// does (fvfma, fvmul, fvadd, fvpassa), so the functions are polynomials and
// Newton iterations on the MAU, with range reduction and special values
// done by integer and select operations on the ALU, which runs beside the
// MAU in the same steps. Accuracy against IEEE single is measured by
// test/unit/codegen/MathLibTest.cpp and documented in docs/codegen.md (M
// decisions).
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

#include "mncc/codegen/VsmWriter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mncc::codegen {

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
};

const char *mathFunctionName(MathFunction function);
/// Inputs the function reads (2 for Divide, 1 otherwise).
unsigned mathFunctionInputs(MathFunction function);
/// Long words each scratch block needs for full speed; the functions also
/// run, slower, in as little as mathScratchMinimum.
int64_t mathScratchLongWords(MathFunction function);
int64_t mathScratchMinimum(MathFunction function);

/// Emits `function` over `sources` (one block, or two for Divide, each as
/// long as the destination) into `destination`. A source may be the
/// destination itself (in place). Returns false with a message naming the
/// problem for blocks that do not fit or overlap.
bool emitMathFunction(VsmWriter &out, MathFunction function,
                      const std::vector<PeBlock> &sources,
                      const PeBlock &destination, const MathScratch &scratch,
                      std::string &error);

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

  /// The chunk of source `index`.
  Ref input(unsigned index = 0);
  /// A constant long word holding `bits` in both words.
  Ref constantBits(uint32_t bits, Home home);
  Ref constant(float value, Home home);
  /// A constant long word of two different words (high first).
  Ref constantPair(uint32_t high, uint32_t low, Home home);
  /// A fixed input of the ALU ("$peid", "$subpeid", ...: manual 3.6.1),
  /// only ever the first operand of an ALU expression.
  Ref fixed(const std::string &name);
  /// `opcode <sources...> <result>`; ALU opcodes with their precision
  /// ("fmax", "iand"), MAU vector opcodes ("fvfma").
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

  std::vector<Value> Values;
  std::vector<Operation> Operations;
  int Result = -1;
};

/// The program of a function (for tests and for kernels that extend it).
MathProgram mathFunctionProgram(MathFunction function);

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_MATHLIB_H
