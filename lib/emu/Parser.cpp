//===- Parser.cpp - MN-Core 2 assembly (VSM) parser -----------------------===//
//
// Turns each line of a .vsm file into a pre-decoded Statement (manual 3.1-3.6:
// comment, control, MV and PE statements). Every error carries the column of
// the token at fault; nothing here throws.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Parser.h"

#include "mncc/emu/Numerics.h"

#include <cstdlib>
#include <cstring>
#include <memory>

namespace mncc::emu {

std::string Diagnostic::str() const {
  return File + ":" + std::to_string(Line) + ":" + std::to_string(Column) +
         ": error: " + Message;
}

namespace {

constexpr uint64_t NumGroupsForParser = target::NumGroups;

/// A whitespace-separated piece of a line and its 1-based column.
struct Token {
  std::string_view Text;
  uint32_t Column;
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
unsigned hexValue(char c) {
  if (isDigit(c))
    return unsigned(c - '0');
  if (c >= 'a' && c <= 'f')
    return unsigned(c - 'a' + 10);
  return unsigned(c - 'A' + 10);
}

std::vector<Token> splitTokens(std::string_view text, uint32_t firstColumn) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && isSpace(text[i]))
      ++i;
    size_t start = i;
    while (i < text.size() && !isSpace(text[i]))
      ++i;
    if (i > start)
      tokens.push_back(
          {text.substr(start, i - start), firstColumn + uint32_t(start)});
  }
  return tokens;
}

/// A mask written apart from its operand or opcode ("$lr0v /$imr1", as the
/// manual's example of 3.6.4 writes it) belongs to the token before it; the
/// joined text is kept in storage.
void joinMaskTokens(std::vector<Token> &tokens,
                    std::vector<std::unique_ptr<std::string>> &storage) {
  std::vector<Token> joined;
  for (const Token &token : tokens) {
    if (!joined.empty() && !token.Text.empty() && token.Text[0] == '/') {
      storage.push_back(std::make_unique<std::string>(
          std::string(joined.back().Text) + std::string(token.Text)));
      joined.back().Text = *storage.back();
      continue;
    }
    joined.push_back(token);
  }
  tokens = std::move(joined);
}

/// A cursor over one token, for the operand grammar.
class Cursor {
public:
  Cursor(std::string_view text) : Text(text) {}
  bool atEnd() const { return Pos >= Text.size(); }
  char peek(size_t ahead = 0) const {
    return Pos + ahead < Text.size() ? Text[Pos + ahead] : '\0';
  }
  bool consume(char c) {
    if (atEnd() || peek() != c)
      return false;
    ++Pos;
    return true;
  }
  bool consume(std::string_view prefix) {
    if (Text.substr(Pos, prefix.size()) != prefix)
      return false;
    Pos += prefix.size();
    return true;
  }
  /// Reads a decimal (or 0x hexadecimal) unsigned number.
  bool number(uint64_t &value) {
    if (!isDigit(peek()))
      return false;
    value = 0;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X') &&
        isHexDigit(peek(2))) {
      Pos += 2;
      while (isHexDigit(peek()))
        value = value * 16 + hexValue(Text[Pos++]);
      return true;
    }
    while (isDigit(peek()))
      value = value * 10 + unsigned(Text[Pos++] - '0');
    return true;
  }
  /// Reads a hexadecimal number without prefix: MV and wait tags
  /// (decision S25).
  bool hexNumber(uint64_t &value) {
    if (!isHexDigit(peek()))
      return false;
    value = 0;
    while (isHexDigit(peek()) && value < (uint64_t(1) << 32))
      value = value * 16 + hexValue(Text[Pos++]);
    return true;
  }
  size_t position() const { return Pos; }
  std::string_view rest() const {
    return Pos < Text.size() ? Text.substr(Pos) : std::string_view();
  }

private:
  std::string_view Text;
  size_t Pos = 0;
};

/// Word address space of each PE memory (manual 3.3.2): addresses wrap.
uint32_t wordSpaceSize(Space space) {
  switch (space) {
  case Space::LM0:
  case Space::LM1:
    return target::LmWords;
  case Space::GRF0:
  case Space::GRF1:
    return target::GrfWords;
  default:
    return 0;
  }
}

class LineParser {
public:
  LineParser(std::string_view file, uint32_t line, Diagnostic &error)
      : File(file), Line(line), Error(error) {}

  bool fail(uint32_t column, std::string message) {
    Error.File = std::string(File);
    Error.Line = Line;
    Error.Column = column;
    Error.Message = std::move(message);
    return false;
  }

  bool parseMaskSuffix(std::string_view text, uint32_t column, MaskSpec &mask,
                       bool zeroFlush);
  bool parseOperand(Token token, Operand &operand, bool allowHierarchy,
                    DebugAccess *debug);
  bool parseExpression(const std::vector<Token> &tokens, Expression &expr,
                       uint32_t &repeat);
  bool parseDebug(const std::vector<Token> &tokens, Statement &stmt);
  bool parseTransfer(const std::vector<Token> &tokens, Expression &expr);
  bool parseMv(const std::vector<Token> &tokens, Statement &stmt);
  bool parseDramLoad(const std::vector<Token> &tokens, Statement &stmt);
  bool parseMaskControl(const std::vector<Token> &tokens, Statement &stmt);

private:
  bool parseOpcode(Token token, Expression &expr, uint32_t &repeat,
                   std::string_view &base);

  std::string_view File;
  uint32_t Line;
  Diagnostic &Error;
};

/// "/1000", "/ll0111", "/$imr3", "/$llimr3", optionally followed by the
/// word-length safety suffix "t" or "p" (manual 3.6.2), which only guards
/// assembly-time checks and is accepted and ignored here.
bool LineParser::parseMaskSuffix(std::string_view text, uint32_t column,
                                 MaskSpec &mask, bool zeroFlush) {
  Cursor cur(text);
  if (cur.consume('$')) {
    mask.DoubleLong = cur.consume("ll");
    if (!cur.consume("imr"))
      return fail(column, "expected a mask register '$imr<n>' after '/'");
    uint64_t entry;
    if (!cur.number(entry) || entry < 1 || entry > 15)
      return fail(column, "mask register entry must be 1 to 15");
    mask.MaskKind = MaskSpec::Register;
    mask.Entry = uint8_t(entry);
  } else {
    mask.DoubleLong = cur.consume("ll");
    unsigned bits = 0, count = 0;
    while (cur.peek() == '0' || cur.peek() == '1') {
      bits = bits * 2 + unsigned(cur.consume('1') ? 1 : (cur.consume('0'), 0));
      ++count;
    }
    if (count != 4)
      return fail(column, "a mask pattern has one bit for each of 4 cycles");
    mask.MaskKind = MaskSpec::Pattern;
    mask.CyclePattern = uint8_t(bits);
  }
  if (!zeroFlush)
    (void)(cur.consume('t') || cur.consume('p'));
  if (!cur.atEnd())
    return fail(column + uint32_t(cur.position()),
                "unexpected '" + std::string(cur.rest()) + "' after mask");
  return true;
}

struct NamedSpace {
  const char *Name;
  Space Where;
};

const NamedSpace FixedOperands[] = {
    {"mauf", Space::ForwardMau},  {"aluf", Space::ForwardAlu},
    {"lbf", Space::ForwardLb},    {"mreadf", Space::ForwardMread},
    {"nowrite", Space::NoWrite},  {"l2bid", Space::FixedL2bId},
    {"l1bid", Space::FixedL1bId}, {"mabid", Space::FixedMabId},
    {"peid", Space::FixedPeId},   {"subpeid", Space::FixedSubPeId},
    {"msb1", Space::FixedMsb1},
};

bool LineParser::parseOperand(Token token, Operand &op, bool allowHierarchy,
                              DebugAccess *debug) {
  std::string_view text = token.Text;
  op.Column = token.Column;
  uint32_t col = token.Column;
  // A destination's write mask follows the operand after '/'.
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    if (!parseMaskSuffix(text.substr(slash + 1), col + uint32_t(slash) + 1,
                         op.WriteMask, false))
      return false;
    text = text.substr(0, slash);
  }
  Cursor cur(text);
  op.Negate = cur.consume('-');
  if (!cur.consume('$'))
    return fail(col, "expected an operand starting with '$', got '" +
                         std::string(text) + "'");
  auto at = [&]() { return col + uint32_t(cur.position()); };

  // Fixed names come first: "$mauf" must not read as LM0, "$l2bid" not as
  // a long-word operand.
  // Forwarding paths may carry the MAU modifiers "e" and "r".
  bool named = false;
  for (const NamedSpace &fixed : FixedOperands) {
    std::string_view name(fixed.Name);
    std::string_view rest = cur.rest();
    if (rest.substr(0, name.size()) != name)
      continue;
    std::string_view tail = rest.substr(name.size());
    bool forwarding =
        fixed.Where >= Space::ForwardMau && fixed.Where <= Space::ForwardMread;
    if (!tail.empty() && !(forwarding && (tail == "e" || tail == "r")))
      continue;
    cur.consume(name);
    op.Where = fixed.Where;
    op.Size = Width::DoubleLong;
    op.Extend = cur.consume('e');
    op.Reduce = cur.consume('r');
    named = true;
    break;
  }
  if (named)
    return true;

  if (cur.consume("omr")) {
    uint64_t entry;
    if (!cur.number(entry) || entry > 31)
      return fail(at(), "mask register entry must be 0 to 31");
    op.Where = Space::MaskReg;
    op.Address[0] = uint32_t(entry);
    op.Size = Width::DoubleLong;
  } else {
    op.Size = cur.consume("ll")  ? Width::DoubleLong
              : cur.consume('l') ? Width::Long
                                 : Width::Word;
    char letter = cur.peek();
    bool needsAddress = true;
    switch (letter) {
    case 'm':
      op.Where = Space::LM0;
      break;
    case 'n':
      op.Where = Space::LM1;
      break;
    case 'r':
      op.Where = Space::GRF0;
      break;
    case 's':
      op.Where = Space::GRF1;
      break;
    case 't':
      op.Where = Space::T;
      needsAddress = false;
      break;
    case 'x':
      op.Where = Space::MatX;
      needsAddress = false;
      break;
    case 'y':
      op.Where = Space::MatY;
      needsAddress = false;
      break;
    case 'b':
      op.Where = Space::L1BM;
      break;
    case 'c':
      op.Where = Space::L2BM;
      break;
    case 'd':
      op.Where = Space::DRAM;
      break;
    case 'p':
      op.Where = Space::PDM;
      break;
    default:
      return fail(at(), "unknown operand '" + std::string(text) + "'");
    }
    cur.consume(letter);
    // "$lbi" / "$llbi": the L1BM turnaround register (manual 3.3.1).
    if (op.Where == Space::L1BM && cur.peek() == 'i') {
      cur.consume('i');
      if (allowHierarchy)
        return fail(at(), "the turnaround register '$lbi' cannot be "
                          "set or dumped");
      if (!cur.atEnd())
        return fail(at(), "'$lbi' takes no address");
      op.Turnaround = true;
      return true;
    }
    if ((op.Where == Space::LM0 || op.Where == Space::LM1) &&
        cur.peek() == 'b' && !isDigit(cur.peek(1))) {
      cur.consume('b');
      op.Where = op.Where == Space::LM0 ? Space::BarLM0 : Space::BarLM1;
      needsAddress = false;
    } else if (op.Where == Space::LM0 && cur.peek() == 't' &&
               (!allowHierarchy || cur.peek(1) != 'n')) {
      cur.consume('t');
      op.ThroughT = true;
      needsAddress = false;
    }
    uint64_t value;
    if (cur.consume('[')) {
      op.Flat = true;
      for (int c = 0; c < 4; ++c) {
        if (c > 0 && !cur.consume(','))
          return fail(at(), "a flat address lists 4 addresses");
        if (!cur.number(value))
          return fail(at(), "expected an address");
        op.Address[c] = uint32_t(value);
      }
      if (!cur.consume(']'))
        return fail(at(), "expected ']' after 4 flat addresses");
    } else if (cur.number(value)) {
      if (value > 0xffffffffu)
        return fail(at(), "address out of range (at most 0xffffffff; "
                          "addresses wrap at the memory's size)");
      op.Address[0] = uint32_t(value);
      for (int c = 1; c < 4; ++c)
        op.Address[c] = op.Address[0];
    } else if (needsAddress && !op.ThroughT) {
      return fail(at(), "expected an address in '" + std::string(text) + "'");
    }
    // Auto-stride: "v" advances one access width per cycle, "v<n>" n
    // words (docs/target/mncore2.md decision S22).
    if (!op.Flat && cur.consume('v')) {
      op.Stride = uint16_t(op.Size);
      if (cur.number(value)) {
        if (value > target::LmWords)
          return fail(at(), "stride out of range (at most " +
                                std::to_string(target::LmWords) + " words)");
        op.Stride = uint16_t(value);
      }
    }
    if (cur.consume('j')) {
      if (!cur.number(value) || value > 3)
        return fail(at(), "'j' takes a PE number 0 to 3");
      op.MabAdjust = true;
      op.MaPe = uint8_t(value);
    }
    uint32_t space = wordSpaceSize(op.Where);
    if (space && !op.ThroughT) {
      for (uint32_t &address : op.Address)
        address %= space;
    }
  }

  if (allowHierarchy && debug) {
    struct Level {
      char Letter;
      int8_t *Index;
      unsigned Limit;
    } levels[] = {{'n', &debug->Group, 4},
                  {'c', &debug->L2b, 2},
                  {'b', &debug->L1b, 8},
                  {'m', &debug->Mab, 16},
                  {'p', &debug->Pe, 4}};
    for (Level &level : levels) {
      if (!cur.consume(level.Letter))
        continue;
      uint64_t index;
      if (!cur.number(index) || index >= level.Limit)
        return fail(at(), std::string("index after '") + level.Letter +
                              "' must be below " + std::to_string(level.Limit));
      *level.Index = int8_t(index);
    }
  } else {
    if (cur.consume('e'))
      op.Extend = true;
    else if (cur.consume('r'))
      op.Reduce = true;
  }
  if (!cur.atEnd())
    return fail(at(), "unexpected '" + std::string(cur.rest()) +
                          "' in operand '" + std::string(text) + "'");
  return true;
}

struct AluName {
  const char *Name;
  Opcode Op;
  /// Precision letters allowed ("" = untyped).
  const char *Precisions;
  /// Number of sources.
  unsigned Sources;
  bool AllowsUnsigned;
};

const AluName AluNames[] = {
#define MNCC_ALU_NAME(Mnemonic, Op, Precisions, Sources, AllowsUnsigned)       \
  {Mnemonic, Opcode::Op, Precisions, Sources, AllowsUnsigned},
#include "mncc/target/Instructions.def"
};

Precision precisionOf(char c) {
  switch (c) {
  case 'd':
    return Precision::D;
  case 'f':
    return Precision::F;
  case 'g':
    return Precision::G;
  case 'h':
    return Precision::H;
  case 'l':
    return Precision::L;
  case 'i':
    return Precision::I;
  case 's':
    return Precision::S;
  default:
    return Precision::None;
  }
}

/// <rrn_opcode>: (d|f|h)(fadd|max|min) or (l|i|s)(iadd|band|and|bor|or)
/// (manual 3.5). Precision reductions ("r") are not modelled.
bool parseRrnOpcode(std::string_view text, RrnOp &op, Precision &prec) {
  if (text.empty())
    return false;
  char letter = text[0];
  std::string_view name = text.substr(1);
  struct {
    const char *Name;
    RrnOp Op;
    bool Float;
  } rrn[] = {{"fadd", RrnOp::FAdd, true},  {"max", RrnOp::Max, true},
             {"min", RrnOp::Min, true},    {"iadd", RrnOp::IAdd, false},
             {"band", RrnOp::BAnd, false}, {"and", RrnOp::And, false},
             {"bor", RrnOp::BOr, false},   {"or", RrnOp::Or, false}};
  for (auto &r : rrn) {
    if (name != r.Name)
      continue;
    if (!std::strchr(r.Float ? "dfh" : "lis", letter))
      return false;
    op = r.Op;
    prec = precisionOf(letter);
    return true;
  }
  return false;
}

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

bool LineParser::parseOpcode(Token token, Expression &expr, uint32_t &repeat,
                             std::string_view &base) {
  std::string_view text = token.Text;
  if (text.substr(0, 5) == "l2bmi") {
    // l2bmi@k/m (manual 3.6.7.9): the L1Bs whose number agrees with k
    // outside the bits of the immode m read; each L1B b receives from the
    // one with the same bits m. "@k" alone is "@k/0": L1B k to every L1B.
    // m = 7 would leave nothing to send and is refused, as in the manual.
    expr.Column = token.Column;
    base = text;
    Cursor cur(text.substr(5));
    uint64_t k = 0, m = 0;
    if (!cur.consume('@') || !cur.number(k) || k >= target::L1bsPerL2b ||
        (cur.consume('/') && (!cur.number(m) || m > 6)) || !cur.atEnd())
      return fail(token.Column, "'l2bmi' takes '@<l1b>' or '@<l1b>/<immode>' "
                                "with an L1B 0 to 7 and an immode 0 to 6");
    expr.Op = Opcode::L2bmI;
    expr.ImMode = uint8_t(m);
    expr.Target = int8_t(k & ~m);
    return true;
  }
  size_t slash = text.find('/');
  std::string_view suffix;
  if (slash != std::string_view::npos) {
    suffix = text.substr(slash + 1);
    text = text.substr(0, slash);
  }
  expr.Column = token.Column;
  base = text;
  uint32_t suffixColumn = token.Column + uint32_t(slash) + 1;

  if (text == "nop" || text == "noforward" || text == "wait") {
    expr.Op = text == "nop"         ? Opcode::Nop
              : text == "noforward" ? Opcode::NoForward
                                    : Opcode::Wait;
    if (!suffix.empty()) {
      Cursor cur(suffix);
      uint64_t count;
      if (expr.Op != Opcode::Nop || !cur.number(count) || !cur.atEnd() ||
          count == 0 || count > 1000000)
        return fail(suffixColumn, "'nop/<n>' takes a repeat count");
      repeat = uint32_t(count);
    }
    return true;
  }
  if (!suffix.empty() &&
      !parseMaskSuffix(suffix, suffixColumn, expr.ZeroFlush, true))
    return false;
  if (text == "zero") {
    expr.Op = Opcode::Zero;
    return true;
  }
  if (text == "imm" || text == "immu") {
    expr.Op = Opcode::Imm;
    expr.Unsigned = text == "immu";
    return true;
  }

  // L1BM and L2BM transfers (manual 3.6.7-3.6.8).
  if (text.substr(0, 4) == "l1bm" || text.substr(0, 4) == "l2bm") {
    Cursor cur(text);
    bool l1 = text[1] == '1';
    cur.consume(l1 ? "l1bm" : "l2bm");
    auto target = [&](int limit) {
      uint64_t value;
      if (!cur.consume('@'))
        return true;
      if (!cur.number(value) || value >= uint64_t(limit))
        return fail(token.Column,
                    "'@' takes a number below " + std::to_string(limit));
      expr.Target = int8_t(value);
      return true;
    };
    if (l1) {
      bool four = false;
      if (cur.consume('p')) {
        expr.Op = Opcode::L1bmP;
      } else if (cur.consume('d')) {
        expr.Op = Opcode::L1bmD;
        // l1bmd+n / l1bmd-n rotate the MABs by n, 0 to 15, the sign
        // required (manual 3.6.8.20).
        bool plus = cur.consume('+');
        if (plus || cur.consume('-')) {
          uint64_t shift;
          if (!cur.number(shift) || shift >= target::MabsPerL1b)
            return fail(token.Column,
                        "'l1bmd' takes a MAB shift of +0 to +15 or -0 to -15");
          expr.MabShift = int8_t(plus ? int(shift) : -int(shift));
        }
      } else if (cur.consume('m')) {
        four = cur.consume('4');
        if (cur.peek() == '@') {
          expr.Op = four ? Opcode::L1bmM4At : Opcode::L1bmMAt;
          if (!target(four ? 4 : 16))
            return false;
          if (expr.Target < 0)
            return fail(token.Column, "expected a MAB after '@'");
        } else {
          expr.Op = four ? Opcode::L1bmM4 : Opcode::L1bmM;
        }
      } else if (cur.consume('r')) {
        four = cur.consume('4');
        expr.Op = four ? Opcode::L1bmR4 : Opcode::L1bmR;
        std::string_view rrn = cur.rest();
        // The single reductions' output precision reduction "r" (manual
        // 3.6.8); parseTransfer accepts it only as the hfadd alias.
        if (endsWith(rrn, "r") &&
            parseRrnOpcode(rrn.substr(0, rrn.size() - 1), expr.Reduction,
                           expr.Prec) &&
            expr.Prec == Precision::F) {
          expr.ReduceOutput = true;
        } else if (!parseRrnOpcode(rrn, expr.Reduction, expr.Prec)) {
          return fail(token.Column, "unknown or unsupported reduction '" +
                                        std::string(text) + "'");
        }
        cur.consume(rrn);
      }
      if (expr.Op == Opcode::Nop || !cur.atEnd())
        return fail(token.Column, "unknown or unsupported L1BM instruction '" +
                                      std::string(text) + "'");
    } else {
      if (cur.consume('b')) {
        expr.Op = cur.consume('2') ? Opcode::L2bmB2 : Opcode::L2bmB;
        if (!target(8))
          return false;
      } else if (cur.peek() == '@') {
        expr.Op = Opcode::L2bmAt;
        if (!target(8))
          return false;
      } else if (cur.consume('d')) {
        expr.Op = Opcode::L2bmD;
        if (!target(8))
          return false;
      } else if (cur.consume('r')) {
        // l2bmr2<rrn> reduces pairs of L1Bs and takes no '@'.
        bool pairs = cur.consume('2');
        expr.Op = pairs ? Opcode::L2bmR2 : Opcode::L2bmR;
        std::string_view rest = cur.rest();
        size_t at = rest.find('@');
        if (!parseRrnOpcode(rest.substr(0, at), expr.Reduction, expr.Prec))
          return fail(token.Column, "unknown or unsupported reduction '" +
                                        std::string(text) + "'");
        cur.consume(rest.substr(0, at));
        if (pairs && at != std::string_view::npos)
          return fail(token.Column, "'l2bmr2' takes no '@'");
        if (!target(8))
          return false;
      }
      if (expr.Op == Opcode::Nop || !cur.atEnd())
        return fail(token.Column, "unknown or unsupported L2BM instruction '" +
                                      std::string(text) + "'");
    }
    return true;
  }

  // Matrix registers (manual 3.6.6): (d|f|g|h)mwrite, (d|f|g|h)mread,
  // dmfma(u|d), dmmul(u|d), (f|g|h)mfma, (f|g|h)mmul.
  if (text.size() > 2 && text[1] == 'm' &&
      (text[0] == 'd' || text[0] == 'f' || text[0] == 'g' || text[0] == 'h')) {
    std::string_view rest = text.substr(2);
    Opcode op = Opcode::Nop;
    char half = 0;
    if (rest == "write")
      op = Opcode::MWrite;
    else if (rest == "read")
      op = Opcode::MRead;
    else if (rest.substr(0, 3) == "fma" && rest.size() <= 4)
      op = Opcode::MFma;
    else if (rest.substr(0, 3) == "mul" && rest.size() <= 4)
      op = Opcode::MMul;
    if (op != Opcode::Nop) {
      bool product = op == Opcode::MFma || op == Opcode::MMul;
      if (product && rest.size() == 4)
        half = rest.back();
      if (product && text[0] == 'd' && half != 'u' && half != 'd')
        return fail(token.Column, "'" + std::string(text) +
                                      "' needs 'u' (rows 0, 1) or 'd' "
                                      "(rows 2, 3)");
      if (product && text[0] != 'd' && half)
        return fail(token.Column, "only dmfma and dmmul take 'u' or 'd'");
      expr.Op = op;
      expr.Prec = precisionOf(text[0]);
      if (half)
        expr.DoubleHalf = half == 'u' ? 1 : 2;
      return true;
    }
  }

  // MAU vector mode: (d|f|h)v(fma|mul|add|passa)[u|d][r] (manual 3.6.6).
  if (text.size() > 2 && text[1] == 'v' &&
      (text[0] == 'd' || text[0] == 'f' || text[0] == 'h')) {
    std::string_view rest = text.substr(2);
    struct {
      const char *Name;
      Opcode Op;
    } mau[] = {{"fma", Opcode::VFma},
               {"mul", Opcode::VMul},
               {"add", Opcode::VAdd},
               {"passa", Opcode::VPassa}};
    for (auto &m : mau) {
      std::string_view name(m.Name);
      if (rest.substr(0, name.size()) != name)
        continue;
      std::string_view tail = rest.substr(name.size());
      expr.Op = m.Op;
      expr.Prec = precisionOf(text[0]);
      bool halfAllowed =
          text[0] == 'd' && (m.Op == Opcode::VFma || m.Op == Opcode::VMul);
      for (char c : tail) {
        if ((c == 'u' || c == 'd') && halfAllowed && !expr.DoubleHalf)
          expr.DoubleHalf = c == 'u' ? 1 : 2;
        else if (c == 'r' && !expr.ReduceOutput)
          expr.ReduceOutput = true;
        else
          return fail(token.Column,
                      "unknown MAU opcode '" + std::string(text) + "'");
      }
      if (halfAllowed && !expr.DoubleHalf)
        return fail(token.Column, "'" + std::string(text) +
                                      "' needs 'u' (PEs 0, 1) or 'd' (PEs "
                                      "2, 3)");
      if (expr.ReduceOutput && text[0] == 'h' && m.Op != Opcode::VFma &&
          m.Op != Opcode::VMul && m.Op != Opcode::VAdd &&
          m.Op != Opcode::VPassa)
        return fail(token.Column, "no output reduction for this opcode");
      return true;
    }
  }

  // ALU: [u][precision]<name>. A name can end another one ("lnot" is both
  // "lnot" and "l"+"not"), so every name matching the end is tried and the
  // reading with a valid, required precision wins.
  for (const AluName &alu : AluNames) {
    std::string_view name(alu.Name);
    if (!endsWith(text, name))
      continue;
    std::string_view prefix = text.substr(0, text.size() - name.size());
    bool isUnsigned = false;
    if (!prefix.empty() && prefix[0] == 'u') {
      isUnsigned = true;
      prefix.remove_prefix(1);
    }
    if (prefix.size() > 1)
      continue;
    Precision prec = Precision::None;
    if (prefix.size() == 1) {
      if (!std::strchr(alu.Precisions, prefix[0]) || prefix[0] == '\0')
        continue;
      prec = precisionOf(prefix[0]);
    } else if (alu.Precisions[0] != '\0') {
      continue; // precision required
    }
    if (isUnsigned && !alu.AllowsUnsigned)
      continue;
    expr.Op = alu.Op;
    expr.Prec = prec;
    expr.Unsigned = isUnsigned;
    return true;
  }
  return fail(token.Column,
              "unknown or unsupported instruction '" + std::string(text) + "'");
}

unsigned sourceCount(const Expression &expr) {
  switch (expr.Op) {
  case Opcode::Zero:
  case Opcode::Imm:
    return 0;
  case Opcode::VFma:
    return 3;
  case Opcode::VMul:
  case Opcode::VAdd:
    return 2;
  case Opcode::VPassa:
    return 1;
  default:
    for (const AluName &alu : AluNames)
      if (alu.Op == expr.Op)
        return alu.Sources;
    return 0;
  }
}

bool isSourceSpace(Space s) {
  return s != Space::NoWrite && s != Space::MaskReg && s != Space::BarLM0 &&
         s != Space::BarLM1;
}
bool isDestinationSpace(Space s) {
  switch (s) {
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1:
  case Space::T:
  case Space::MaskReg:
  case Space::BarLM0:
  case Space::BarLM1:
  case Space::NoWrite:
    return true;
  default:
    return false;
  }
}
bool isFixedSpace(Space s) {
  return s >= Space::FixedL2bId && s <= Space::FixedMsb1;
}

/// An integer literal of an immediate: decimal, 0x hexadecimal or 0b
/// binary, with a sign only when `signedType`.
bool parseIntegerLiteral(std::string_view text, bool signedType,
                         int64_t &value) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    if (!signedType)
      return false;
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    base = 16;
  else if (text.size() > 2 && text[0] == '0' &&
           (text[1] == 'b' || text[1] == 'B'))
    base = 2;
  if (base != 10)
    text.remove_prefix(2);
  if (text.empty())
    return false;
  uint64_t magnitude = 0;
  for (char c : text) {
    unsigned digit = isDigit(c)      ? unsigned(c - '0')
                     : isHexDigit(c) ? hexValue(c)
                                     : 99;
    if (digit >= base || magnitude > (uint64_t(1) << 40))
      return false;
    magnitude = magnitude * base + digit;
  }
  value = negative ? -int64_t(magnitude) : int64_t(magnitude);
  return true;
}

/// imm payloads (manual 3.2.2): (f|h)"<real>" or (i|s|ui|us)"<integer>",
/// the quotes required. The literal gives a word: f the single strtof
/// reads, h that value rounded to half and repeated in both halves of the
/// word, i and ui a 32-bit integer, s and us a 16-bit one repeated; a value
/// outside its type's range is an error (docs/target/mncore2.md, S14).
bool parseImmediate(std::string_view text, uint32_t &value) {
  size_t quote = text.find('"');
  if (quote == std::string_view::npos || text.size() < quote + 3 ||
      text.back() != '"')
    return false;
  std::string_view type = text.substr(0, quote);
  std::string body(text.substr(quote + 1, text.size() - quote - 2));
  if (body.empty() || body.find('"') != std::string::npos)
    return false;
  if (type == "f" || type == "h") {
    char *end = nullptr;
    float f = std::strtof(body.c_str(), &end);
    if (*end)
      return false;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (type == "f") {
      value = bits;
      return true;
    }
    uint32_t half = singleToHalf(bits);
    value = half << 16 | half;
    return true;
  }
  bool signedType = type == "i" || type == "s";
  bool halfType = type == "s" || type == "us";
  if (!signedType && type != "ui" && type != "us")
    return false;
  int64_t v;
  if (!parseIntegerLiteral(body, signedType, v))
    return false;
  int64_t low = signedType ? (halfType ? -32768 : -2147483648LL) : 0;
  int64_t high = signedType ? (halfType ? 32767 : 2147483647LL)
                            : (halfType ? 65535 : 4294967295LL);
  if (v < low || v > high)
    return false;
  if (halfType) {
    uint32_t half = uint32_t(v) & 0xffffu;
    value = half << 16 | half;
  } else {
    value = uint32_t(v);
  }
  return true;
}

bool LineParser::parseExpression(const std::vector<Token> &tokens,
                                 Expression &expr, uint32_t &repeat) {
  std::string_view base;
  if (!parseOpcode(tokens[0], expr, repeat, base))
    return false;
  size_t next = 1;
  if (expr.Op == Opcode::Nop || expr.Op == Opcode::NoForward) {
    if (tokens.size() > 1)
      return fail(tokens[1].Column,
                  "'" + std::string(base) + "' takes no operands");
    return true;
  }
  if (expr.Op == Opcode::Wait) {
    if (tokens.size() != 2)
      return fail(tokens[0].Column, "'wait' takes one tag");
    Cursor cur(tokens[1].Text);
    uint64_t tag;
    if (!cur.consume('i') || !cur.hexNumber(tag) || !cur.atEnd())
      return fail(tokens[1].Column, "expected a hexadecimal tag 'i<n>'");
    if (tag == 0)
      return fail(tokens[1].Column, "tag 0 cannot be waited for");
    expr.Tag = uint32_t(tag);
    return true;
  }
  if (expr.Op == Opcode::Imm) {
    if (tokens.size() < 2 || !parseImmediate(tokens[1].Text, expr.Immediate))
      return fail(tokens.size() < 2 ? tokens[0].Column : tokens[1].Column,
                  "expected an immediate payload: (f|h)\"<real>\" or "
                  "(i|s|ui|us)\"<integer>\" within its type's range");
    next = 2;
  }
  if (expr.Op >= Opcode::L1bmP)
    return parseTransfer(tokens, expr);
  unsigned sources = sourceCount(expr);
  if (tokens.size() < next + sources + 1)
    return fail(tokens[0].Column, "'" + std::string(base) + "' takes " +
                                      std::to_string(sources) +
                                      " source(s) and at least one "
                                      "destination");
  for (size_t i = next; i < tokens.size(); ++i) {
    Operand op;
    if (!parseOperand(tokens[i], op, false, nullptr))
      return false;
    bool isSource = i < next + sources;
    if (isSource) {
      if (!isSourceSpace(op.Where) || op.Where == Space::L1BM ||
          op.Where == Space::L2BM || op.Where == Space::DRAM ||
          op.Where == Space::PDM || op.Where == Space::MatX ||
          op.Where == Space::MatY)
        return fail(op.Column, "'" + std::string(tokens[i].Text) +
                                   "' cannot be read by this instruction");
      if (op.WriteMask.MaskKind != MaskSpec::Default)
        return fail(op.Column, "a write mask belongs to a destination");
      bool isMau = expr.Op >= Opcode::VFma;
      if (isFixedSpace(op.Where) && (isMau || i != next))
        return fail(op.Column, "fixed inputs are only the first ALU input");
      if (op.Where == Space::ForwardMread && (isMau || i != next))
        return fail(op.Column, "$mreadf is only the first ALU input");
      if ((op.Negate || op.Extend || op.Reduce) && !isMau &&
          !(op.Reduce && expr.Prec == Precision::H))
        return fail(op.Column, "operand modifiers '-', 'e' and 'r' are for "
                               "MAU inputs (and 'r' for half ALU inputs)");
      if (isMau) {
        // 'e' extends from one format lower, so not into half; 'r' reduces
        // a single to a half input only (manual 3.6.6).
        unsigned index = unsigned(i - next);
        bool halfInput =
            expr.Prec == Precision::H &&
            (index == 0 || (index == 1 && expr.Op != Opcode::VAdd &&
                            expr.Op != Opcode::VPassa));
        if (op.Extend && halfInput)
          return fail(op.Column, "'e' cannot extend into a half input");
        if (op.Reduce && !halfInput)
          return fail(op.Column, "'r' only reduces a single to a half input");
      }
      expr.Sources.push_back(op);
    } else {
      if (!isDestinationSpace(op.Where))
        return fail(op.Column, "'" + std::string(tokens[i].Text) +
                                   "' cannot be written by this "
                                   "instruction");
      if (op.Negate || op.Extend || op.Reduce)
        return fail(op.Column, "a destination takes no modifier");
      if (op.Where == Space::MaskReg &&
          (op.Address[0] == 0 || op.Address[0] > 15))
        return fail(op.Column, "only mask register entries 1 to 15 are "
                               "writable");
      expr.Destinations.push_back(op);
    }
  }
  if (expr.Destinations.size() > 1) {
    for (const Operand &dst : expr.Destinations)
      if (dst.Where == Space::NoWrite)
        return fail(dst.Column, "$nowrite cannot be combined with other "
                                "destinations");
  }
  return true;
}

bool isPeSourceSpace(Space s) {
  switch (s) {
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1:
  case Space::T:
  case Space::ForwardMau:
  case Space::ForwardAlu:
  case Space::ForwardLb:
  case Space::ForwardMread:
    return true;
  default:
    return false;
  }
}

/// Operands of the L1BM, L2BM and matrix register instructions: which end
/// is a PE operand, an upper memory or a matrix register depends on the
/// instruction and, for l1bmd, on the operand order (manual 3.6.6-3.6.8).
bool LineParser::parseTransfer(const std::vector<Token> &tokens,
                               Expression &expr) {
  std::vector<Operand> ops;
  bool singleReduction =
      (expr.Op == Opcode::L1bmR || expr.Op == Opcode::L1bmR4) &&
      expr.Prec == Precision::F;
  for (size_t i = 1; i < tokens.size(); ++i) {
    Operand op;
    if (!parseOperand(tokens[i], op, false, nullptr))
      return false;
    // The half input extension "e" of the single reductions (manual
    // 3.6.8) and the single-to-half reduction "r" of the hmwrite source
    // (decision S35) are the only operand modifiers of a transfer.
    bool halfInput =
        singleReduction && i == 1 && op.Extend && !op.Reduce && !op.Negate;
    bool halfMatrixInput = expr.Op == Opcode::MWrite &&
                           expr.Prec == Precision::H && i == 1 && op.Reduce &&
                           !op.Extend && !op.Negate;
    if ((op.Extend || op.Reduce || op.Negate) && !halfInput && !halfMatrixInput)
      return fail(op.Column, "no operand modifiers on transfers (only 'e' on "
                             "single reductions, 'r' on hmwrite)");
    ops.push_back(op);
  }
  if (singleReduction &&
      (expr.ReduceOutput || (!ops.empty() && ops[0].Extend))) {
    // "l1bmrffaddr <src>e" is l1bmrhfadd (manual 3.6.8); the other
    // combinations need a placement of halves and singles in the long
    // words that the manual does not give (docs/target/mncore2.md,
    // instruction audit).
    if (!expr.ReduceOutput || ops.empty() || !ops[0].Extend ||
        expr.Reduction != RrnOp::FAdd)
      return fail(tokens[0].Column,
                  "the single reduction options 'e' and 'r' are only "
                  "supported together on ffadd (the hfadd alias)");
    expr.Prec = Precision::H;
    expr.ReduceOutput = false;
    ops[0].Extend = false;
  }
  uint32_t col = tokens[0].Column;
  auto need = [&](size_t min, size_t max) {
    if (ops.size() < min || ops.size() > max)
      return fail(col, "wrong number of operands for '" +
                           std::string(tokens[0].Text) + "'");
    return true;
  };
  auto upper = [&](const Operand &op, Space where) {
    if (op.Where != where)
      return fail(op.Column, std::string("expected ") +
                                 (where == Space::L1BM ? "an L1BM operand "
                                                         "'$lb<addr>'"
                                                       : "an L2BM operand "
                                                         "'$lc<addr>'"));
    if (op.Size == Width::Word)
      return fail(op.Column, "upper memories move long words ('$l' or "
                             "'$ll')");
    if (op.WriteMask.MaskKind != MaskSpec::Default)
      return fail(op.Column, "no write mask on an upper memory");
    // The turnaround register pairs the PE -> L1BM and L1BM -> PE
    // transfers of one layout; l1bmp and the L2BM instructions have none.
    if (op.Turnaround &&
        (expr.Op == Opcode::L1bmP ||
         (expr.Op >= Opcode::L2bmB && expr.Op <= Opcode::L2bmI)))
      return fail(op.Column, "'" + std::string(tokens[0].Text) +
                                 "' cannot use the turnaround register");
    return true;
  };
  auto peSource = [&](const Operand &op) {
    if (!isPeSourceSpace(op.Where) ||
        op.WriteMask.MaskKind != MaskSpec::Default)
      return fail(op.Column, "expected a PE source operand");
    // MNCore2.md 4.18: the matrix read latch feeds the ALU's first input
    // only.
    if (op.Where == Space::ForwardMread)
      return fail(op.Column, "$mreadf is only the first ALU input");
    return true;
  };
  auto peDestinations = [&](size_t from) {
    if (from >= ops.size())
      return fail(col, "expected a destination");
    for (size_t i = from; i < ops.size(); ++i) {
      if (!isDestinationSpace(ops[i].Where))
        return fail(ops[i].Column, "expected a PE destination operand");
      bool raisesFlags = expr.Op == Opcode::MFma || expr.Op == Opcode::MMul;
      if (ops[i].Where == Space::MaskReg && !raisesFlags)
        return fail(ops[i].Column, "transfers raise no mask flags");
      if (ops[i].Where == Space::MaskReg &&
          (ops[i].Address[0] == 0 || ops[i].Address[0] > 15))
        return fail(ops[i].Column, "only mask register entries 1 to 15 are "
                                   "writable");
    }
    if (ops.size() - from > 1)
      for (size_t i = from; i < ops.size(); ++i)
        if (ops[i].Where == Space::NoWrite)
          return fail(ops[i].Column, "$nowrite cannot be combined with "
                                     "other destinations");
    return true;
  };
  auto matrix = [&](const Operand &op) {
    if (op.Where != Space::MatX && op.Where != Space::MatY)
      return fail(op.Column, "expected a matrix register '$lx' or '$ly'");
    return true;
  };
  bool ok = true;
  size_t firstDest = ops.size();
  size_t sources = 0;
  switch (expr.Op) {
  case Opcode::L1bmP:
  case Opcode::L1bmM:
  case Opcode::L1bmM4:
    ok = need(2, 8) && upper(ops[0], Space::L1BM) && peDestinations(1);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::L1bmD:
    if (!ops.empty() && ops[0].Where == Space::L1BM) {
      ok = need(2, 8) && upper(ops[0], Space::L1BM) && peDestinations(1);
      sources = 1;
      firstDest = 1;
    } else {
      expr.ToUpper = true;
      ok = need(2, 2) && peSource(ops[0]) && upper(ops[1], Space::L1BM);
      sources = 1;
      firstDest = 1;
    }
    break;
  case Opcode::L1bmMAt:
  case Opcode::L1bmM4At:
  case Opcode::L1bmR:
  case Opcode::L1bmR4:
    expr.ToUpper = true;
    ok = need(2, 2) && peSource(ops[0]) && upper(ops[1], Space::L1BM);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::L2bmB:
  case Opcode::L2bmB2:
    ok = need(2, 2) && upper(ops[0], Space::L2BM) && upper(ops[1], Space::L1BM);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::L2bmD:
    expr.ToUpper = !ops.empty() && ops[0].Where == Space::L1BM;
    ok = need(2, 2) &&
         (expr.ToUpper
              ? upper(ops[0], Space::L1BM) && upper(ops[1], Space::L2BM)
              : upper(ops[0], Space::L2BM) && upper(ops[1], Space::L1BM));
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::L2bmI:
    ok = need(2, 2) && upper(ops[0], Space::L1BM) && upper(ops[1], Space::L1BM);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::L2bmAt:
  case Opcode::L2bmR:
  case Opcode::L2bmR2:
    ok = need(2, 2) && upper(ops[0], Space::L1BM) && upper(ops[1], Space::L2BM);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::MWrite:
    ok = need(2, 2) && peSource(ops[0]) && matrix(ops[1]);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::MRead:
    ok = need(2, 8) && matrix(ops[0]) && peDestinations(1);
    sources = 1;
    firstDest = 1;
    break;
  case Opcode::MFma:
    ok = need(4, 10) && matrix(ops[0]) && peSource(ops[1]) &&
         peSource(ops[2]) && peDestinations(3);
    sources = 3;
    firstDest = 3;
    break;
  case Opcode::MMul:
    ok = need(3, 9) && matrix(ops[0]) && peSource(ops[1]) && peDestinations(2);
    sources = 2;
    firstDest = 2;
    break;
  default:
    return fail(col, "internal: not a transfer");
  }
  if (!ok)
    return false;
  // hmread always moves two columns ("$llx"), and a two-row or two-column
  // access starts at an even row (manual 3.6.6).
  if (expr.Op == Opcode::MWrite || expr.Op == Opcode::MRead) {
    const Operand &m = expr.Op == Opcode::MWrite ? ops[1] : ops[0];
    if (expr.Op == Opcode::MRead && expr.Prec == Precision::H &&
        m.Size != Width::DoubleLong)
      return fail(m.Column, "hmread reads '$llx' or '$lly'");
    if (m.Size == Width::DoubleLong && expr.Prec != Precision::H)
      return fail(m.Column, "only hmwrite and hmread move two rows a cycle");
    if (m.Size == Width::DoubleLong && (m.Address[0] & 1))
      return fail(m.Column, "a two-row access starts at an even row");
  }
  for (size_t i = 0; i < ops.size(); ++i)
    (i < sources || i < firstDest ? expr.Sources : expr.Destinations)
        .push_back(ops[i]);
  return true;
}

/// An MV operand: $p<addr>[@<group>], $d<addr>[@<group>],
/// $lc<addr>[@[<group>].<l2b>] (manual 3.3.1, 3.5).
bool parseMvOperand(std::string_view text, Space &where, uint64_t &address,
                    int8_t &group, int8_t &l2b) {
  Cursor cur(text);
  if (!cur.consume('$'))
    return false;
  if (cur.consume('p'))
    where = Space::PDM;
  else if (cur.consume('d'))
    where = Space::DRAM;
  else if (cur.consume("lc"))
    where = Space::L2BM;
  else
    return false;
  if (!cur.number(address))
    return false;
  group = -1;
  l2b = -1;
  uint64_t value;
  if (cur.consume('@')) {
    if (cur.number(value)) {
      if (value >= NumGroupsForParser)
        return false;
      group = int8_t(value);
    }
    if (where == Space::L2BM && cur.consume('.')) {
      if (!cur.number(value) || value >= target::L2bsPerGroup)
        return false;
      l2b = int8_t(value);
    } else if (group < 0) {
      return false;
    }
  }
  return cur.atEnd();
}

/// mvnop, and (mvp|mvr<rrn>)/n<size>[i<tag>][nd<N>][p<priority>] <src>
/// <dst>.
bool LineParser::parseMv(const std::vector<Token> &tokens, Statement &stmt) {
  stmt.StmtKind = Statement::Mv;
  MvTransfer &mv = stmt.Transfer;
  std::string_view op = tokens[0].Text;
  if (op == "mvnop") {
    if (tokens.size() != 1)
      return fail(tokens[1].Column, "'mvnop' takes no operands");
    return true;
  }
  size_t slash = op.find('/');
  std::string_view mode = op.substr(0, slash);
  // The MV instructions (Instructions.def), the reductions followed by
  // their RRN opcode.
  struct MvMode {
    std::string_view Mnemonic;
    MvTransfer::Kind TransferKind;
    bool TakesRrn;
  };
  static constexpr MvMode Modes[] = {
#define MNCC_MV_MODE(Kind, Mnemonic, TakesRrn)                                 \
  {Mnemonic, MvTransfer::Kind, TakesRrn},
#include "mncc/target/Instructions.def"
  };
  bool known = false;
  for (const MvMode &m : Modes) {
    if (m.TakesRrn ? mode.size() > m.Mnemonic.size() &&
                         mode.substr(0, m.Mnemonic.size()) == m.Mnemonic &&
                         parseRrnOpcode(mode.substr(m.Mnemonic.size()),
                                        mv.Reduction, mv.Prec)
                   : mode == m.Mnemonic) {
      mv.TransferKind = m.TransferKind;
      known = true;
      break;
    }
  }
  if (!known)
    return fail(tokens[0].Column, "MV transfer '" + std::string(op) +
                                      "' is not supported by mncc-sim yet");
  if (slash == std::string_view::npos)
    return fail(tokens[0].Column,
                "'" + std::string(mode) + "' needs '/n<size>'");
  // The parameters n<size>, i<tag>, nd<N>, p<priority> in any order, each
  // once (manual 3.5.1 writes n first, the open SDK's examples also
  // "mvp/i02n64"); the size is required (MNCore2.md 6.1).
  Cursor cur(op.substr(slash + 1));
  bool haveSize = false, haveTag = false, haveRepeat = false,
       havePriority = false;
  uint64_t value;
  while (!cur.atEnd()) {
    if (cur.consume("nd")) {
      if (haveRepeat || !cur.number(value))
        return fail(tokens[0].Column, "expected one count after 'nd'");
      haveRepeat = true;
    } else if (cur.consume('n')) {
      if (haveSize)
        return fail(tokens[0].Column,
                    "'" + std::string(mode) + "' takes one '/n<size>'");
      if (!cur.number(value) || value == 0 || value > (1u << 24))
        return fail(tokens[0].Column,
                    "'" + std::string(mode) + "': the size after 'n' must be " +
                        std::to_string(MvUnitLongWords) + " to " +
                        std::to_string(1u << 24) +
                        " long words, a multiple of " +
                        std::to_string(MvUnitLongWords));
      haveSize = true;
      mv.Size = uint32_t(value);
    } else if (cur.consume('i')) {
      // Tags are hexadecimal: compiler output tags transfers i19, i1a, ...
      if (haveTag || !cur.hexNumber(value))
        return fail(tokens[0].Column, "expected one tag after 'i'");
      haveTag = true;
      mv.Tag = uint32_t(value);
    } else if (cur.consume('p')) {
      if (havePriority || !cur.number(value) || value > 3)
        return fail(tokens[0].Column, "priority must be 0 to 3");
      havePriority = true;
    } else {
      return fail(tokens[0].Column,
                  "unexpected '" + std::string(cur.rest()) + "' in MV opcode");
    }
  }
  if (!haveSize)
    return fail(tokens[0].Column,
                "'" + std::string(mode) + "' needs '/n<size>'");
  // Every mode moves whole units of 64 long words (manual 3.5.8: "size が
  // 単位動作の倍数でないとエラー").
  if (mv.Size % MvUnitLongWords != 0)
    return fail(tokens[0].Column,
                "'" + std::string(mode) + "' moves a multiple of " +
                    std::to_string(MvUnitLongWords) + " long words");
  if (tokens.size() != 3)
    return fail(tokens[0].Column,
                "'" + std::string(mode) + "' takes a source and a destination");
  mv.FromColumn = tokens[1].Column;
  mv.ToColumn = tokens[2].Column;
  for (size_t i = 1; i < tokens.size(); ++i)
    if (tokens[i].Text.substr(0, 3) == "$di")
      return fail(tokens[i].Column, "DRAM indirection through the DAR is not "
                                    "supported by mncc-sim yet");
  if (!parseMvOperand(tokens[1].Text, mv.From, mv.FromAddress, mv.FromGroup,
                      mv.FromL2b))
    return fail(tokens[1].Column,
                "bad MV operand '" + std::string(tokens[1].Text) + "'");
  if (!parseMvOperand(tokens[2].Text, mv.To, mv.ToAddress, mv.ToGroup,
                      mv.ToL2b))
    return fail(tokens[2].Column,
                "bad MV operand '" + std::string(tokens[2].Text) + "'");
  if (mv.TransferKind == MvTransfer::Broadcast ||
      mv.TransferKind == MvTransfer::Broadcast2) {
    bool two = mv.TransferKind == MvTransfer::Broadcast2;
    // mvb: one source (PDM or DRAM of a named group) to the L2BMs; mvb2:
    // each group's DRAM to its own two L2BMs (manual 3.5).
    if (two ? mv.From != Space::DRAM
            : (mv.From == Space::L2BM || mv.FromGroup < 0))
      return fail(tokens[1].Column,
                  two ? "'mvb2' reads DRAM"
                      : "'mvb' reads PDM or DRAM of a named group");
    if (two && mv.FromGroup >= 0)
      return fail(tokens[1].Column, "'mvb2' works in every group");
    if (mv.To != Space::L2BM || mv.ToGroup >= 0 || mv.ToL2b >= 0)
      return fail(tokens[2].Column, "'" + std::string(mode) +
                                        "' writes '$lc<addr>' of the L2BMs");
    return true;
  }
  bool anyPlace = mv.FromGroup < 0 && mv.FromL2b < 0;
  bool allTo = mv.ToGroup < 0 && mv.ToL2b < 0;
  if (mv.TransferKind == MvTransfer::Broadcast4 ||
      mv.TransferKind == MvTransfer::Reduce4) {
    // mvb4 $d<addr> $lc<addr> (manual 3.5.8.16), mvr4<rrn> $lc<addr>
    // $d<addr> (3.5.8.17): every group and L2B, no group named.
    bool broadcast = mv.TransferKind == MvTransfer::Broadcast4;
    if (mv.From != (broadcast ? Space::DRAM : Space::L2BM) || !anyPlace)
      return fail(tokens[1].Column,
                  broadcast ? "'mvb4' reads '$d<addr>' of every DRAM"
                            : "'" + std::string(mode) +
                                  "' reads '$lc<addr>' of every L2BM");
    if (mv.To != (broadcast ? Space::L2BM : Space::DRAM) || !allTo)
      return fail(tokens[2].Column,
                  broadcast ? "'mvb4' writes '$lc<addr>' of every L2BM"
                            : "'" + std::string(mode) +
                                  "' writes '$d<addr>' of every DRAM");
    return true;
  }
  if (mv.TransferKind == MvTransfer::Distribute) {
    // mvd: a named group's PDM spread over the eight L2BMs or the four
    // DRAMs, or gathered back (manual 3.5.8.22-25, decision S36).
    bool fromPdm = mv.From == Space::PDM;
    Space other = fromPdm ? mv.To : mv.From;
    bool pdmNamed = fromPdm ? mv.FromGroup >= 0 : mv.ToGroup >= 0;
    bool otherAll = fromPdm ? allTo : anyPlace;
    if ((!fromPdm && mv.To != Space::PDM) ||
        (other != Space::L2BM && other != Space::DRAM) || !pdmNamed ||
        !otherAll)
      return fail(tokens[1].Column,
                  "'mvd' moves between '$p<addr>@<group>' and '$lc<addr>' or "
                  "'$d<addr>' of every L2BM or DRAM");
    if (other == Space::L2BM && mv.Size % MvDistributeL2bmUnit != 0)
      return fail(tokens[0].Column,
                  "'mvd' between PDM and L2BM moves a multiple of " +
                      std::to_string(MvDistributeL2bmUnit) + " long words");
    return true;
  }
  if (mv.TransferKind == MvTransfer::Reduce2) {
    // mvr2 reduces the two L2BMs of a group (every group without one) into
    // the group's PDM or DRAM (decision S28).
    if (mv.From != Space::L2BM || mv.FromL2b >= 0)
      return fail(tokens[1].Column,
                  "'" + std::string(mode) +
                      "' reads '$lc<addr>[@<group>]' of both L2BMs of a group");
    if (mv.To == Space::L2BM)
      return fail(tokens[2].Column,
                  "'" + std::string(mode) + "' writes PDM or DRAM");
    if (mv.FromGroup < 0 && mv.ToGroup >= 0)
      return fail(tokens[2].Column, "without a source group every group "
                                    "writes its own memory");
    return true;
  }
  if (mv.TransferKind == MvTransfer::Reduce) {
    // mvr reduces one address of the eight L2BMs into PDM or DRAM.
    if (mv.From != Space::L2BM || mv.FromGroup >= 0 || mv.FromL2b >= 0)
      return fail(tokens[1].Column, "'" + std::string(mode) +
                                        "' reads '$lc<addr>' of every L2BM");
    if (mv.To == Space::L2BM)
      return fail(tokens[2].Column,
                  "'" + std::string(mode) + "' writes PDM or DRAM");
    return true;
  }
  if ((mv.FromGroup < 0) != (mv.ToGroup < 0))
    return fail(tokens[1].Column, "either both ends name a group or "
                                  "neither does");
  return true;
}

/// Payload of `d set`: hexadecimal long words, either one run of 16 digits
/// per long word or each long word introduced by 'l'.
bool parsePayload(std::string_view text, uint32_t count,
                  std::vector<uint64_t> &out) {
  out.clear();
  if (!text.empty() && text[0] == 'l') {
    size_t i = 0;
    while (i < text.size()) {
      if (text[i] != 'l')
        return false;
      ++i;
      uint64_t value = 0;
      unsigned digits = 0;
      while (i < text.size() && isHexDigit(text[i])) {
        value = value << 4 | hexValue(text[i++]);
        if (++digits > 16)
          return false;
      }
      if (digits == 0)
        return false;
      out.push_back(value);
    }
  } else {
    if (text.size() % 16 != 0)
      return false;
    for (size_t i = 0; i < text.size(); i += 16) {
      uint64_t value = 0;
      for (size_t j = i; j < i + 16; ++j) {
        if (!isHexDigit(text[j]))
          return false;
        value = value << 4 | hexValue(text[j]);
      }
      out.push_back(value);
    }
  }
  return out.size() == count;
}

bool LineParser::parseDebug(const std::vector<Token> &tokens, Statement &stmt) {
  if (tokens.size() < 2)
    return fail(tokens[0].Column, "expected 'set' or 'get' after 'd'");
  std::string_view verb = tokens[1].Text;
  DebugAccess &debug = stmt.Debug;
  if (verb == "set") {
    stmt.StmtKind = Statement::DebugSet;
  } else if (verb.substr(0, 3) == "get") {
    stmt.StmtKind = Statement::DebugGet;
    std::string_view type = verb.substr(3);
    if (type.empty())
      debug.Type = DumpType::Raw;
    else if (type == "d")
      debug.Type = DumpType::D;
    else if (type == "f")
      debug.Type = DumpType::F;
    else if (type == "h")
      debug.Type = DumpType::H;
    else if (type == "bd")
      debug.Type = DumpType::BD;
    else if (type == "bf")
      debug.Type = DumpType::BF;
    else if (type == "bg")
      debug.Type = DumpType::BG;
    else if (type == "bh")
      debug.Type = DumpType::BH;
    else
      return fail(tokens[1].Column,
                  "unknown dump type '" + std::string(type) + "'");
  } else {
    return fail(tokens[1].Column, "expected 'set' or 'get' after 'd'");
  }
  if (tokens.size() < 4)
    return fail(tokens[1].Column, "expected '<memory> <count>'");
  Operand op;
  if (!parseOperand(tokens[2], op, true, &debug))
    return false;
  if (op.Negate || op.Flat || op.Stride || op.ThroughT || op.MabAdjust ||
      op.WriteMask.MaskKind != MaskSpec::Default)
    return fail(tokens[2].Column, "'d set' and 'd get' take a plain address");
  switch (op.Where) {
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1:
  case Space::T:
  case Space::MaskReg:
  case Space::L1BM:
  case Space::L2BM:
  case Space::DRAM:
  case Space::PDM:
    break;
  default:
    return fail(tokens[2].Column, "this memory cannot be dumped or loaded");
  }
  if (op.Where == Space::MaskReg && stmt.StmtKind == Statement::DebugSet)
    return fail(tokens[2].Column, "mask registers are written by ALU/MAU "
                                  "instructions only");
  debug.Where = op.Where;
  debug.Address = op.Address[0];
  Cursor cur(tokens[3].Text);
  uint64_t count;
  if (!cur.number(count) || !cur.atEnd() || count == 0 || count > (1u << 20))
    return fail(tokens[3].Column, "expected a word count, 1 to " +
                                      std::to_string(1u << 20));
  debug.Count = uint32_t(count);
  if (stmt.StmtKind == Statement::DebugSet) {
    if (tokens.size() < 5)
      return fail(tokens[3].Column, "'d set' needs a payload");
    std::string payload;
    for (size_t i = 4; i < tokens.size(); ++i)
      payload += tokens[i].Text;
    if (!parsePayload(payload, debug.Count, debug.Payload))
      return fail(tokens[4].Column, "the payload must be " +
                                        std::to_string(count) +
                                        " long word(s) of hexadecimal digits");
  } else if (tokens.size() > 4) {
    return fail(tokens[4].Column,
                "unexpected '" + std::string(tokens[4].Text) + "'");
  }
  return true;
}

/// "r <group> <address> <count> <payload>": DRAM contents given with the
/// program, as the public test inputs do. Address and count are
/// hexadecimal long words, the payload 16 hexadecimal digits per long word
/// (docs/target/mncore2.md decision S24).
bool LineParser::parseDramLoad(const std::vector<Token> &tokens,
                               Statement &stmt) {
  if (tokens.size() < 5)
    return fail(tokens[0].Column,
                "expected 'r <group> <address> <count> <payload>'");
  auto hex = [](std::string_view text, uint64_t &value) {
    if (text.empty() || text.size() > 16)
      return false;
    value = 0;
    for (char c : text) {
      if (!isHexDigit(c))
        return false;
      value = value << 4 | hexValue(c);
    }
    return true;
  };
  uint64_t group, address, count;
  if (!hex(tokens[1].Text, group) || group >= NumGroupsForParser)
    return fail(tokens[1].Column, "group must be 0 to 3");
  if (!hex(tokens[2].Text, address))
    return fail(tokens[2].Column, "expected a hexadecimal address");
  if (!hex(tokens[3].Text, count) || count == 0 || count > (1u << 20))
    return fail(tokens[3].Column,
                "expected a hexadecimal long word count, 1 to 100000 (2^20)");
  stmt.StmtKind = Statement::DebugSet;
  DebugAccess &access = stmt.Debug;
  access.Where = Space::DRAM;
  access.Address = address;
  access.Group = int8_t(group);
  access.Count = uint32_t(count);
  std::string payload;
  for (size_t i = 4; i < tokens.size(); ++i)
    payload += tokens[i].Text;
  if (!parsePayload(payload, access.Count, access.Payload))
    return fail(tokens[4].Column, "the payload must be " +
                                      std::to_string(count) +
                                      " long word(s) of hexadecimal digits");
  return true;
}

/// mask[l|ll][r][s][t][m][n][k] <entry> (manual 3.6.2.1).
bool LineParser::parseMaskControl(const std::vector<Token> &tokens,
                                  Statement &stmt) {
  stmt.StmtKind = Statement::SetMask;
  Cursor cur(tokens[0].Text);
  cur.consume("mask");
  if (cur.consume("ll"))
    stmt.Mask.DoubleLong = true;
  else
    cur.consume('l');
  uint8_t targets = 0;
  while (!cur.atEnd()) {
    char c = cur.peek();
    uint8_t bit = c == 'r'   ? MaskGrf0
                  : c == 's' ? MaskGrf1
                  : c == 't' ? MaskT
                  : c == 'm' ? MaskLm0
                  : c == 'n' ? MaskLm1
                  : c == 'k' ? MaskMaskReg
                             : 0;
    if (!bit || (targets & bit))
      return fail(tokens[0].Column + uint32_t(cur.position()),
                  std::string("unexpected '") + c + "' in mask statement");
    targets |= bit;
    cur.consume(c);
  }
  stmt.Mask.Targets = targets ? targets : uint8_t(MaskAll);
  if (tokens.size() != 2)
    return fail(tokens[0].Column, "'mask' takes one mask register entry");
  Cursor entry(tokens[1].Text);
  uint64_t value;
  if (!entry.number(value) || !entry.atEnd() || value > 31)
    return fail(tokens[1].Column, "mask register entry must be 0 to 31");
  stmt.Mask.Entry = uint8_t(value);
  return true;
}

/// The issue group of an expression (manual 3.6.4).
using target::IssueGroup;

IssueGroup issueGroup(Opcode op) { return target::opcodeInfo(op).Group; }

/// The turnaround transfer, an L1BM -> PE expression that reads "$lbi",
/// is the l1bm-turnaround group (manual 3.6.4); a PE -> L1BM expression
/// that writes "$lbi" stays in the l1bm group, so that it issues beside
/// the turnaround read, as manual 3.6.8.2 and PFN's tools allow
/// (decision S30).
IssueGroup issueGroup(const Expression &expr) {
  IssueGroup group = issueGroup(expr.Op);
  if (group != IssueGroup::L1bm)
    return group;
  for (const Operand &op : expr.Sources)
    if (op.Turnaround)
      return IssueGroup::L1bmTurnaround;
  return group;
}

unsigned isMauGroup(Opcode op) {
  IssueGroup group = issueGroup(op);
  return group == IssueGroup::MauCalc || group == IssueGroup::MauWrite ||
         group == IssueGroup::MauRead;
}

/// What one operand of a PE memory touches in one cycle: the memory, the
/// word address aligned to the access width and the width, and the
/// addressing modes that move it at run time (T, j<madpe>).
struct PeAccess {
  Space Where = Space::None;
  uint32_t Address = 0;
  Width Size = Width::Word;
  bool ThroughT = false;
  bool MabAdjust = false;
  uint8_t MaPe = 0;

  bool operator==(const PeAccess &o) const {
    return Where == o.Where && Address == o.Address && Size == o.Size &&
           ThroughT == o.ThroughT && MabAdjust == o.MabAdjust && MaPe == o.MaPe;
  }
  bool operator!=(const PeAccess &o) const { return !(*this == o); }
};

bool isPeMemory(Space s) {
  return s == Space::LM0 || s == Space::LM1 || s == Space::GRF0 ||
         s == Space::GRF1;
}

PeAccess peAccess(const Operand &op, unsigned cycle) {
  PeAccess a;
  a.Where = op.Where;
  a.Size = op.Size;
  a.ThroughT = op.ThroughT;
  a.MabAdjust = op.MabAdjust;
  a.MaPe = op.MaPe;
  uint32_t words = uint32_t(op.Size);
  uint32_t address =
      op.Flat ? op.Address[cycle] : op.Address[0] + uint32_t(op.Stride) * cycle;
  a.Address = (address % wordSpaceSize(op.Where)) & ~(words - 1);
  return a;
}

bool sameRegion(const Operand &a, const Operand &b) {
  for (unsigned cycle = 0; cycle < 4; ++cycle)
    if (peAccess(a, cycle) != peAccess(b, cycle))
      return false;
  return true;
}

/// The PE storage a destination writes through its own port: the four
/// memories, T, the mask registers and each base address register.
const char *writePortName(Space s) {
  switch (s) {
  case Space::LM0:
    return "LM0";
  case Space::LM1:
    return "LM1";
  case Space::GRF0:
    return "GRF0";
  case Space::GRF1:
    return "GRF1";
  case Space::T:
    return "T";
  case Space::MaskReg:
    return "the mask registers";
  case Space::BarLM0:
    return "the LM0 base address register";
  case Space::BarLM1:
    return "the LM1 base address register";
  default:
    return nullptr;
  }
}

bool usesLm0(const Operand &op) { return op.Where == Space::LM0; }

/// The parallel issue conditions of manual 3.6.4 (restated in MNCore2.md
/// 7.1.1) beyond one instruction per group: what the expressions of one
/// step may share. The assembler checks each of them (docs/target/
/// mncore2.md, decision S34, lists them and how PFN's programs settle
/// each reading).
bool checkIssueRules(LineParser &parser, const Statement &stmt) {
  const std::vector<Expression> &exprs = stmt.Expressions;
  const Expression *mau = nullptr, *vectorProduct = nullptr,
                   *matrixWrite = nullptr, *zeroFlush = nullptr,
                   *immediate = nullptr;
  const Operand *matrixUse[2] = {nullptr, nullptr};
  const Operand *firstRead[4] = {nullptr, nullptr, nullptr, nullptr};
  const MaskSpec *firstMaskSpec = nullptr;
  struct Writer {
    Space Where;
    const Expression *Expr;
  };
  std::vector<Writer> writers;
  std::vector<const Operand *> lmWrites;
  const Operand *lm0Access = nullptr;
  auto memoryIndex = [](Space s) {
    return s == Space::LM0 ? 0 : s == Space::LM1 ? 1 : s == Space::GRF0 ? 2 : 3;
  };
  // Every mask application reads one entry through one port: they must
  // read the same entry, with the same word length (manual 3.6.2, 3.6.4).
  auto checkMask = [&](const MaskSpec &mask, uint32_t column) {
    if (mask.MaskKind == MaskSpec::Default)
      return true;
    if (!firstMaskSpec) {
      firstMaskSpec = &mask;
      return true;
    }
    if (mask.DoubleLong != firstMaskSpec->DoubleLong)
      return parser.fail(column, "every mask of a step applies with the same "
                                 "word length (manual 3.6.4)");
    if (mask.MaskKind == MaskSpec::Register &&
        firstMaskSpec->MaskKind == MaskSpec::Register &&
        mask.Entry != firstMaskSpec->Entry)
      return parser.fail(column, "the masks of a step read one mask register "
                                 "entry (manual 3.6.4)");
    return true;
  };
  for (const Expression &expr : exprs) {
    IssueGroup group = issueGroup(expr);
    bool isMau = group == IssueGroup::MauCalc ||
                 group == IssueGroup::MauWrite || group == IssueGroup::MauRead;
    if (isMau) {
      // fmwrite and gmwrite are the same instruction under the name of the
      // product they issue with (MNCore2.md 7.6).
      if (mau && mau->Prec != expr.Prec)
        return parser.fail(expr.Column, "MAU instructions issued together "
                                        "have the same precision (manual "
                                        "3.6.4)");
      mau = &expr;
    }
    if (expr.Op == Opcode::VFma || expr.Op == Opcode::VMul)
      vectorProduct = &expr;
    if (expr.Op == Opcode::MWrite)
      matrixWrite = &expr;
    if (expr.Op == Opcode::Imm)
      immediate = &expr;
    if (expr.ZeroFlush.MaskKind != MaskSpec::Default) {
      if (zeroFlush)
        return parser.fail(expr.Column, "one zero-flush mask a step (manual "
                                        "3.6.4)");
      zeroFlush = &expr;
      if (!checkMask(expr.ZeroFlush, expr.Column))
        return false;
    }
    for (const Operand &op : expr.Sources) {
      if (op.Where == Space::MatX || op.Where == Space::MatY) {
        const Operand *&use = matrixUse[op.Where == Space::MatY];
        if (use)
          return parser.fail(op.Column, "a matrix register is used once a "
                                        "step (manual 3.6.4)");
        use = &op;
      }
      if (usesLm0(op) && !lm0Access)
        lm0Access = &op;
      if (!isPeMemory(op.Where))
        continue;
      // One read port per memory: every read of a step touches the same
      // words in every cycle (manual 3.6.4; PFN's assembler reports two
      // GRF0 operands of one iadd as a field conflict).
      const Operand *&first = firstRead[memoryIndex(op.Where)];
      if (!first)
        first = &op;
      else if (!sameRegion(*first, op))
        return parser.fail(
            op.Column, std::string("the reads of ") + writePortName(op.Where) +
                           " in a step touch the same words in every "
                           "cycle (manual 3.6.4)");
    }
    for (const Operand &op : expr.Destinations) {
      if (op.Where == Space::MatX || op.Where == Space::MatY) {
        const Operand *&use = matrixUse[op.Where == Space::MatY];
        if (use)
          return parser.fail(op.Column, "a matrix register is used once a "
                                        "step (manual 3.6.4)");
        use = &op;
      }
      if (usesLm0(op) && !lm0Access)
        lm0Access = &op;
      if (!checkMask(op.WriteMask, op.Column))
        return false;
      const char *port = writePortName(op.Where);
      if (!port)
        continue;
      for (const Writer &w : writers)
        if (w.Where == op.Where && w.Expr != &expr)
          return parser.fail(op.Column,
                             std::string("two instructions of a step write ") +
                                 port + " (manual 3.6.4)");
      writers.push_back({op.Where, &expr});
      if (op.Where == Space::LM0 || op.Where == Space::LM1)
        lmWrites.push_back(&op);
    }
  }
  // LM0 and LM1 have one port for reads and writes: a step that does both
  // touches the same words with them (manual 3.6.4).
  for (const Operand *w : lmWrites) {
    const Operand *read = firstRead[memoryIndex(w->Where)];
    if (read && !sameRegion(*read, *w))
      return parser.fail(w->Column, std::string("a step that reads and "
                                                "writes ") +
                                        writePortName(w->Where) +
                                        " touches the same words with both "
                                        "(manual 3.6.4)");
  }
  if (immediate && lm0Access)
    return parser.fail(lm0Access->Column,
                       "'imm' does not issue with an LM0 access (manual "
                       "3.6.4)");
  // vfma / vmul with mwrite share the second input's path: the same
  // operand with the same modifiers (manual 3.6.4).
  if (vectorProduct && matrixWrite && vectorProduct->Sources.size() > 1 &&
      !matrixWrite->Sources.empty()) {
    const Operand &a = vectorProduct->Sources[1], &b = matrixWrite->Sources[0];
    bool same = a.Where == b.Where && a.Negate == b.Negate &&
                a.Extend == b.Extend && a.Reduce == b.Reduce;
    if (same && isPeMemory(a.Where))
      same = sameRegion(a, b);
    if (!same)
      return parser.fail(b.Column, "an mwrite issued with vfma or vmul reads "
                                   "the product's second input, modifiers "
                                   "included (manual 3.6.4)");
  }
  return true;
}

/// `pragma mncc kernel` after the '#', spaces around it allowed.
bool isKernelPragma(std::string_view comment) {
  size_t first = 0, last = comment.size();
  while (first < last && isSpace(comment[first]))
    ++first;
  while (last > first && isSpace(comment[last - 1]))
    --last;
  return comment.substr(first, last - first) == "pragma mncc kernel";
}

} // namespace

bool parseProgram(std::string_view text, std::string_view fileName,
                  Program &out, Diagnostic &error) {
  out.FileName = std::string(fileName);
  out.Statements.clear();
  out.KernelStarts.clear();
  uint32_t lineNumber = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNumber;
    // '#' starts a comment anywhere on the line (manual 3.1).
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) {
      // A line of its own: the kernel begins at the next statement.
      bool alone = line.find_first_not_of(" \t") == hash;
      if (alone && isKernelPragma(line.substr(hash + 1)))
        out.KernelStarts.push_back(uint32_t(out.Statements.size()));
      line = line.substr(0, hash);
    }
    size_t last = line.size();
    while (last > 0 && isSpace(line[last - 1]))
      --last;
    line = line.substr(0, last);
    size_t first = 0;
    while (first < line.size() && isSpace(line[first]))
      ++first;
    if (first == line.size())
      continue;
    std::string_view body = line.substr(first);
    LineParser parser(fileName, lineNumber, error);
    std::vector<Token> tokens = splitTokens(body, uint32_t(first) + 1);
    if (tokens[0].Text == "quit" && tokens.size() == 1)
      break;

    Statement stmt;
    stmt.Line = lineNumber;
    stmt.Text = std::string(body);
    if (tokens[0].Text == "d") {
      if (!parser.parseDebug(tokens, stmt))
        return false;
    } else if (tokens[0].Text == "r") {
      if (!parser.parseDramLoad(tokens, stmt))
        return false;
    } else if (tokens[0].Text.substr(0, 4) == "mask") {
      if (!parser.parseMaskControl(tokens, stmt))
        return false;
    } else if (tokens[0].Text.substr(0, 2) == "mv") {
      if (!parser.parseMv(tokens, stmt))
        return false;
    } else {
      // A PE statement: expressions joined by ';' issue in one step.
      stmt.StmtKind = Statement::Pe;
      std::vector<std::unique_ptr<std::string>> joinedTokens;
      size_t start = 0;
      bool hasNop = false, hasWait = false, hasOther = false;
      while (start <= body.size()) {
        size_t semi = body.find(';', start);
        if (semi == std::string_view::npos)
          semi = body.size();
        std::vector<Token> exprTokens = splitTokens(
            body.substr(start, semi - start), uint32_t(first + start) + 1);
        joinMaskTokens(exprTokens, joinedTokens);
        if (!exprTokens.empty()) {
          Expression expr;
          if (!parser.parseExpression(exprTokens, expr, stmt.Repeat))
            return false;
          if (expr.Op == Opcode::Nop)
            hasNop = true;
          else if (expr.Op == Opcode::Wait)
            hasWait = true;
          else
            hasOther = true;
          // manual 3.6.4: at most one expression of each group, and at
          // most two of MAU calc / mwrite / mread.
          unsigned mauGroups = 0;
          for (const Expression &prev : stmt.Expressions) {
            if (issueGroup(prev) == issueGroup(expr))
              return parser.fail(expr.Column,
                                 "at most one instruction of each group "
                                 "issues in a step (manual 3.6.4)");
            mauGroups += isMauGroup(prev.Op);
          }
          if (isMauGroup(expr.Op) && mauGroups >= 2)
            return parser.fail(expr.Column,
                               "at most two of MAU calc, mwrite and mread "
                               "issue in a step (manual 3.6.4)");
          stmt.Expressions.push_back(std::move(expr));
        }
        start = semi + 1;
      }
      if (hasNop && hasOther)
        return parser.fail(tokens[0].Column,
                           "'nop' issues only together with 'wait'");
      if (hasWait && !hasNop && !hasOther)
        return parser.fail(tokens[0].Column,
                           "'wait' must issue with another instruction");
      if (!checkIssueRules(parser, stmt))
        return false;
      for (const Expression &expr : stmt.Expressions)
        for (const Operand &dst : expr.Destinations)
          if (dst.WriteMask.MaskKind != MaskSpec::Default)
            stmt.CancelsDefaultMask = true;
    }
    out.Statements.push_back(std::move(stmt));
  }
  return true;
}

} // namespace mncc::emu
