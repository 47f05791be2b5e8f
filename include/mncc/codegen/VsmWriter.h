//===- VsmWriter.h - Building MN-Core 2 assembly text -----------*- C++ -*-===//
//
// Kernels write VSM, the assembly language of the MN-Core 2 manual, through
// this class: one statement per line, comments naming the graph node, MV
// tags handed out so that two kernels never wait on each other's. The text
// is what mncc-sim and PFN's assembler read (docs/target/mncore2.md).
//
// Operand helpers spell the operand syntax once: a PE memory operand is
// `$` + width (`` word, `l` long word, `ll` double long word) + memory
// letter (`m` LM0, `n` LM1, `r` GRF0, `s` GRF1) + word address, with `v`
// (one access per cycle) or `v<n>` (n words per cycle) for auto-stride, or
// `[a0,a1,a2,a3]` for flat addresses.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_CODEGEN_VSMWRITER_H
#define MNCC_CODEGEN_VSMWRITER_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace mncc::codegen {

/// The PE-local memories an instruction operand can name.
enum class PeMemory : uint8_t { LM0, LM1, GRF0, GRF1 };
/// Access width of a PE operand.
enum class Width : uint8_t { Word, Long, DoubleLong };

/// Words per access of a width (1, 2 or 4).
unsigned widthWords(Width width);
/// Long words each PE memory holds.
int64_t peMemoryLongWords(PeMemory memory);
const char *peMemoryName(PeMemory memory);

/// `$lm8v`: auto-stride, advancing one access per cycle.
std::string peOperand(PeMemory memory, Width width, int64_t wordAddress);
/// `$lm8v4`: auto-stride, advancing `wordsPerCycle` words per cycle (0: the
/// same address every cycle, written without `v`).
std::string peOperand(PeMemory memory, Width width, int64_t wordAddress,
                      unsigned wordsPerCycle);
/// `$lm[0,2,4,6]`: flat, one word address per cycle.
std::string peOperandFlat(PeMemory memory, Width width,
                          const std::array<int64_t, 4> &wordAddresses);
/// `$lb64` / `$llb64` (L1BM), `$lc64` (L2BM, in L2BM instructions).
std::string l1bmOperand(int64_t longWordAddress, bool doubleLong = false);
std::string l2bmOperand(int64_t longWordAddress);

class VsmWriter {
public:
  /// `# text` on its own line (several lines for a text with newlines).
  void comment(std::string_view text);
  /// A statement as written.
  void statement(std::string_view text);
  /// PE expressions issued in one step, joined with "; ".
  void step(std::initializer_list<std::string_view> expressions);
  /// `nop` or `nop/<count>`: count idle steps (nothing for 0).
  void nop(unsigned count = 1);
  /// A fresh MV tag, 1..63, cycling; a kernel waits on every tag it uses
  /// before the next kernel starts, so reuse after 63 is safe.
  unsigned newTag();
  /// `nop; wait i<tag>`: stalls PE and MV issue until the tagged transfer
  /// is done.
  void wait(unsigned tag);
  /// `i<tag>` as MV opcodes and `wait` spell it (hexadecimal).
  static std::string tagName(unsigned tag);
  /// Writes two independent runs side by side: step i of `first` issues
  /// with the next step of `second` where manual 3.6.4's issue rules take
  /// the two as one step (the emulator's parser decides; a nop of one goes
  /// under the other's step), so that work on different units (an L2BM
  /// copy and an L1BM broadcast, a constant stream beside the products)
  /// takes the longer run's steps instead of both. Statements that take
  /// no step (an MV, a comment) go out where their run reaches them, and a
  /// wait alone in its step. Each run's steps keep their order and at
  /// least their distances, so its latencies hold; the caller vouches that
  /// neither run reads or writes what the other writes. Tags: `first`
  /// branches from this writer and `second` from `first` (branch()), and
  /// this writer then continues after both.
  void sideBySide(const VsmWriter &first, const VsmWriter &second);
  /// An empty writer whose tags continue this one's.
  VsmWriter branch() const;
  /// Where the writer stands, for cut().
  struct Mark {
    size_t textSize = 0;
    uint64_t steps = 0;
    unsigned nextTag = 1, tagsTaken = 0;
  };
  Mark mark() const { return {Text.size(), Steps, NextTag, TagsTaken}; }
  /// Takes what was written since `at` out of this writer, as a run for
  /// sideBySide (with the tags it took: this writer gives them out again
  /// through sideBySide).
  VsmWriter cut(const Mark &at);

  /// PE steps written so far (`nop/<n>` counts n; MV statements and
  /// controls count none): a lower bound of the program's run time.
  uint64_t steps() const { return Steps; }
  const std::string &text() const { return Text; }
  std::string take() { return std::move(Text); }

private:
  std::string Text;
  uint64_t Steps = 0;
  unsigned NextTag = 1;
  /// Tags handed out by this writer (for sideBySide's bookkeeping).
  unsigned TagsTaken = 0;
};

} // namespace mncc::codegen

#endif // MNCC_CODEGEN_VSMWRITER_H
