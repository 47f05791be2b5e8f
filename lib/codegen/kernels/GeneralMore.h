//===- GeneralMore.h - The general kernel's further operators ---*- C++ -*-===//
//
// Operators of the general kernel beyond GeneralOps and GeneralLinear, for
// the small tensors of ONNX's node tests and of models' shape arithmetic:
//
//  * GeneralMath.cpp: comparisons and logic (bool tensors are int32 0 / 1
//    on the device), Where, the variadic Max, Min, Sum and Mean, PRelu and
//    the piecewise activations, Round, Floor, Ceil, Pow,
//    LayerNormalization, the remaining reductions;
//  * GeneralIndex.cpp: selections by a runtime index (Gather,
//    GatherElements, ArgMax, ArgMin, Hardmax, the losses' target), Trilu,
//    the reshape-like and broadcasting copies;
//  * GeneralTrig.cpp: the trigonometric and hyperbolic functions,
//    Softsign and Celu.
//
// These operators mix element types (a bool condition beside float
// values, int32 indices beside float data), so each checks its own
// tensors' types; the generator's one-type rule does not apply to them.
//
// The device has no conditional move in the element program; a selection
// is made from `frelu x y` (y where x's sign bit is clear, else the
// pattern 0x80000000) and `ixor`, on the bits, so it is exact for any
// 32-bit element type (selectBySign).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GENERALMORE_H
#define MNCC_LIB_CODEGEN_KERNELS_GENERALMORE_H

#include "GeneralLowering.h"

#include <optional>
#include <string>
#include <vector>

namespace mncc::codegen::general {

/// The operators of GeneralMath.cpp, GeneralIndex.cpp and GeneralTrig.cpp.
LoweringFn findMathLowering(const std::string &opType);
LoweringFn findIndexLowering(const std::string &opType);
LoweringFn findTrigLowering(const std::string &opType);
/// Any of the three: the operators that check their own element types.
LoweringFn findMoreLowering(const std::string &opType);

namespace more {

/// The sign bit of a single (and of an int32): the pattern frelu writes
/// where its condition's sign is set.
constexpr uint32_t kSignBit = 0x80000000u;

/// How the operations see an element: a single (single and half tensors,
/// half widened, G12) or an int32 (ONNX's integers and bools).
enum class ElementKind { Float, Int };

/// The kind of a tensor; fails (with the reason) for double tensors,
/// unless `allowDouble` (an operator whose every operation has a double
/// form, G13: a double program then computes it in double).
std::optional<ElementKind> kindOf(Lowering &l, const KernelTensor &tensor,
                                  const std::string &what,
                                  bool allowDouble = false);

/// A ring of scratch elements for temporaries: reusing one waits for its
/// earlier readers (the program's dependences), so a ring of 64 lets that
/// many temporaries be in flight. In a double program each takes two
/// words.
class Ring {
public:
  bool allocate(Lowering &l, std::initializer_list<PeMemory> preference,
                int32_t elements = 64);
  Slot take();

private:
  Slot Base;
  int32_t Words = 0;
  int32_t Next = 0;
  int32_t Stride = 1;
};

/// dst = a where s's sign bit is clear, else b: frelu s a (a or the sign
/// pattern), frelu (s ^ sign) b (the sign pattern or b), and the two
/// xored with the sign pattern. Bit-exact for any 32-bit element.
void selectBySign(Lowering &l, Ring &ring, Slot dst, Slot s, Slot a, Slot b);

/// A condition word c (int32 0 or 1) as a sign condition for
/// selectBySign: clear where c is 1.
Slot conditionSign(Lowering &l, Ring &ring, Slot c);

/// The checks and placements of a unary float operator (one single or
/// half input, the output shaped alike): X in LM0, Y in LM1, a ring of
/// temporaries in a GRF. False (with the reason) when it does not apply.
bool placeFloatUnary(Lowering &l, const PeImage *&x, const PeImage *&y,
                     Ring &ring);

} // namespace more
} // namespace mncc::codegen::general

#endif // MNCC_LIB_CODEGEN_KERNELS_GENERALMORE_H
