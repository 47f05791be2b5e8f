//===- Parser.h - MN-Core 2 assembly (VSM) parser -------------*- C++ -*-===//
//
// Reads a .vsm file (manual 3, assembly language) into a Program. The parser
// never throws: an error is returned as a Diagnostic with the file, line and
// column of the offending token.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_PARSER_H
#define MNCC_EMU_PARSER_H

#include "mncc/emu/Program.h"

#include <string>
#include <string_view>

namespace mncc::emu {

/// A located error message.
struct Diagnostic {
  std::string File;
  uint32_t Line = 0;
  uint32_t Column = 0;
  std::string Message;

  /// "file:line:column: error: message".
  std::string str() const;
};

/// Parses the text of a .vsm file. On success fills Out and returns true; on
/// the first error fills Error and returns false.
bool parseProgram(std::string_view text, std::string_view fileName,
                  Program &out, Diagnostic &error);

} // namespace mncc::emu

#endif // MNCC_EMU_PARSER_H
