//===- GeneralProgram.h - Element operations, list-scheduled ----*- C++ -*-===//
//
// The general kernel (General.cpp) gives every PE the same copy of a small
// node's tensors and computes it element by element in that copy: a
// flat-addressed operand (`$m[a0,a1,a2,a3]`) names one word per cycle, so
// any static index map (broadcasting, windows, transposes) costs nothing
// beyond the operation itself. This file holds the operations and their
// schedule:
//
//  * an ElemOp is one element (or a long word, or a double long word) of
//    one instruction: `fvfma`, `fmax`, `lpassa`, ...;
//  * ElemProgram records them in program order and derives, word by word,
//    the dependences between them (read after write with the producer's
//    latency, write after read, write after write);
//  * flush() list-schedules them: each step issues up to four operations
//    of the same kind as one instruction (one per cycle), and an ALU and a
//    MAU instruction together when the issue rules allow (docs/codegen.md
//    C8), highest critical path first.
//
// The issue rules per operation are met when it is recorded: sources in
// one memory read one word, an LM destination is not read elsewhere in its
// memory; a source that breaks them is first copied to a scratch word of
// another memory.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GENERALPROGRAM_H
#define MNCC_LIB_CODEGEN_KERNELS_GENERALPROGRAM_H

#include "mncc/codegen/VsmWriter.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mncc::codegen::general {

constexpr unsigned kPeMemories = 4;

/// One word of a PE memory (word addresses, as the operands count).
struct Slot {
  PeMemory memory = PeMemory::LM0;
  int32_t word = 0;

  Slot offset(int32_t words) const { return {memory, word + words}; }
  bool operator==(const Slot &o) const {
    return memory == o.memory && word == o.word;
  }
  bool operator!=(const Slot &o) const { return !(*this == o); }
};

enum class ElemOpcode : uint8_t {
  // MAU, single precision (fv*): 10 cycles.
  Add,  // x + y
  Mul,  // x * y
  Fma,  // x * y + z
  Pass, // x, normalised
  // ALU: 6 cycles.
  Max,   // fmax x y
  Min,   // fmin x y
  Relu,  // frelu x y: y where x >= 0, else -0
  Rsqrt, // frsqrt x (about 5 bits)
  Copy,  // lpassa x (a bit copy of the operand's width)
  Zero,  // zero
  Imm,   // imm: the 32-bit immediate in every word of the destination
  // ALU, 32-bit integers (int32 tensors).
  IAdd,  // iadd x y
  ISub,  // isub x y
  IMax,  // imax x y
  IMin,  // imin x y
  IXor,  // ixor x y
  ILsl,  // ilsl x y: x shifted left by y
  ILNot, // ilnot x: 1 where x is 0, else 0
  IAnd,  // iand x y
  IOr,   // ior x y
  ILsrU, // uilsr x y: x shifted right by y, zeros shifted in
  FToI,  // fftoi x: a single to an integer, towards zero
  // MAU format conversions (half tensors, computed in single).
  HalfToSingle, // hvpassa: a long word of four halves to four singles
  SingleToHalf, // fvpassar: a long word of two singles to a word of halves
  // Double precision, one double a long word (a double program's Add, Mul,
  // ... become these when recorded). The MAU multiplies doubles on one
  // pair of PEs of a MAB at a time: a product is DFmaU (or DMulU) into a
  // scratch long word, then DFmaD with that as its addend.
  DAdd,   // dvadd x y
  DMulU,  // dvmulu x y: x * y on PEs 0 and 1 of a MAB, 0 on PEs 2 and 3
  DFmaU,  // dvfmau x y z: x * y + z on PEs 0 and 1, z on PEs 2 and 3
  DFmaD,  // dvfmad x y z: x * y + z on PEs 2 and 3, z on PEs 0 and 1
  DPass,  // dvpassa x
  DMax,   // dmax x y
  DMin,   // dmin x y
  DRelu,  // drelu x y
  DRsqrt, // drsqrt x
};

bool isMauOpcode(ElemOpcode opcode);
unsigned sourceCount(ElemOpcode opcode);

struct ElemOp {
  ElemOpcode opcode = ElemOpcode::Copy;
  /// The operands' width; the conversions read and write other widths
  /// (sourceWidth, destinationWidth).
  Width width = Width::Word;
  Slot dst;
  std::array<Slot, 3> src{};
  /// Bit k negates source k (MAU operations only).
  uint8_t negate = 0;
  uint32_t immediate = 0;
};

struct ScheduleStats {
  uint64_t operations = 0;
  uint64_t steps = 0;
  /// Steps that issued an ALU and a MAU instruction together.
  uint64_t dualIssueSteps = 0;
  /// Sources copied to resolve an issue-rule conflict.
  uint64_t conflictCopies = 0;
};

class ElemProgram {
public:
  ElemProgram();

  /// A double program: every element is a double in a long word (its
  /// first word's address names it). The floating operations (add, mul,
  /// fma, max, min, relu, rsqrt, copy, zero) of any width then act on the
  /// long word at the address given, in double precision, and constant()
  /// gives doubles; products take two MAU operations (DFmaU, DFmaD).
  void setDouble(bool isDouble) { Double = isDouble; }
  bool isDouble() const { return Double; }

  /// Words of a memory not yet allocated.
  int32_t freeWords(PeMemory memory) const;
  /// `words` words of `memory`, `align`-word aligned; nullopt when full.
  std::optional<Slot> allocate(PeMemory memory, int32_t words,
                               int32_t align = 8);
  /// Allocates in the first memory of `preference` with room.
  std::optional<Slot> allocateIn(std::initializer_list<PeMemory> preference,
                                 int32_t words, int32_t align = 8);

  /// Records one operation (resolving issue-rule conflicts with copies).
  void record(ElemOp op);
  void add(Slot dst, Slot x, Slot y, bool negateY = false,
           Width width = Width::Word);
  void mul(Slot dst, Slot x, Slot y, Width width = Width::Word);
  void fma(Slot dst, Slot x, Slot y, Slot z, uint8_t negate = 0,
           Width width = Width::Word);
  void max(Slot dst, Slot x, Slot y, Width width = Width::Word);
  void min(Slot dst, Slot x, Slot y, Width width = Width::Word);
  void relu(Slot dst, Slot x, Width width = Width::Word);
  void rsqrt(Slot dst, Slot x);
  void copy(Slot dst, Slot x, Width width = Width::Word);
  /// Integer and conversion operations on words (int32 tensors).
  void integer(ElemOpcode opcode, Slot dst, Slot x, Slot y,
               Width width = Width::Word);
  void toInteger(Slot dst, Slot x, Width width = Width::Word);
  /// dst (four words) = the singles of the four halves at x (a long word).
  void halfToSingle(Slot dst, Slot x);
  /// dst (a word) = the two singles at x (a long word) as halves.
  void singleToHalf(Slot dst, Slot x);
  void zero(Slot dst, Width width = Width::Word);
  /// Zeroes words [first, first + count) of a memory with the widest
  /// aligned operations.
  void zeroRange(Slot first, int32_t count);
  /// The words of the constant pool (GRF1) holding `value` as an element
  /// (a single, or in a double program a double: high word first), written
  /// by `imm`s the first time it is asked for.
  Slot constant(double value);
  /// A 32-bit pattern in every word of a pool entry (integers, masks).
  Slot constantBits(uint32_t bits);

  /// Schedules every operation recorded since the last flush and writes
  /// the steps, then the idle steps until every result has landed, so that
  /// whatever follows may read any word.
  void flush(VsmWriter &out);

  const ScheduleStats &stats() const { return Stats; }

  /// While off, operations are not recorded and flush() writes nothing:
  /// matches() runs a kernel's lowering this way to learn whether its
  /// tensors fit.
  void setRecording(bool recording) { Recording = recording; }
  bool recording() const { return Recording; }

private:
  Slot scratch(PeMemory memory, Width width);
  void addEdge(int from, int to, int latency);
  /// A double program's floating operation as the double operations
  /// that compute it; false for an operation that stays as it is.
  bool recordAsDouble(const ElemOp &op);
  void recordOne(ElemOp op);
  /// The pool entry holding `key` (see Constants), or a new one (with
  /// `fresh` set) whose words the caller writes.
  Slot poolEntry(std::pair<bool, uint64_t> key, bool &fresh);

  std::array<int32_t, kPeMemories> Next{};
  std::array<int32_t, kPeMemories> Limit{};
  // Scratch rings for conflict copies (one per memory).
  std::array<int32_t, kPeMemories> ScratchBase{};
  std::array<int32_t, kPeMemories> ScratchNext{};
  int32_t ConstantBase = 0;
  int32_t ConstantNext = 0;
  /// Pool entries by content: (false, a 32-bit pattern in every word) or
  /// (true, a double's bits).
  std::map<std::pair<bool, uint64_t>, Slot> Constants;
  bool Double = false;

  // Operations since the last flush, and their dependences.
  std::vector<ElemOp> Ops;
  struct Edge {
    int to;
    int latency;
  };
  std::vector<std::vector<Edge>> Succs;
  std::vector<int> PredCount;
  // Per word of each memory: the last writer and the readers since then
  // (operation indices of the current block).
  std::array<std::vector<int>, kPeMemories> LastWriter;
  std::array<std::vector<std::vector<int>>, kPeMemories> Readers;
  std::vector<int32_t> TouchedWords[kPeMemories];

  ScheduleStats Stats;
  bool Recording = true;
};

Width sourceWidth(const ElemOp &op);
Width destinationWidth(const ElemOp &op);

/// Records dst[i] = src[i] for each pair, merging runs into long and
/// double long word copies where both sides are aligned alike.
void recordCopies(ElemProgram &program,
                  const std::vector<std::pair<Slot, Slot>> &dstSrc);

/// The VSM text of the instruction that issues ops[0..3] in cycles 0..3.
std::string instructionText(const ElemOp *const *ops);

} // namespace mncc::codegen::general

#endif // MNCC_LIB_CODEGEN_KERNELS_GENERALPROGRAM_H
