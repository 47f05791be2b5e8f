//===- LayoutSpec.h - layout_spec.json / gemm_layout_spec.json --*- C++ -*-===//
//
// Loaders for the two JSON files MLSDK's compile options take to pin
// layouts: layout_spec (a layout for an operator's input or output) and
// gemm_layout_spec (the A, BT and C layouts of one GEMM).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LAYOUT_LAYOUTSPEC_H
#define MNCC_LAYOUT_LAYOUTSPEC_H

#include "mncc/layout/Layout.h"

#include <string>
#include <string_view>
#include <vector>

namespace mncc {
namespace layout {

/// Whether a layout_spec entry constrains an operator's input (the input is
/// switched to the layout) or its output (the output is produced in it).
enum class SpecTrigger : uint8_t { SwitchInput, FixOutput };
const char *specTriggerName(SpecTrigger trigger);

struct LayoutSpecEntry {
  SpecTrigger trigger = SpecTrigger::SwitchInput;
  std::string opType;
  std::vector<int64_t> shape;
  /// The parsed "layout" string. Its `(shape)/` prefix is set from
  /// "shape" when the string has none, so extents and padding are known.
  Layout layout;
};

struct GemmLayoutSpecEntry {
  std::string key;
  Layout a;
  Layout bt;
  Layout c;
};

/// Parses the text of a layout_spec.json file: a JSON array of objects
/// with "trigger", "op_type", "shape" and "layout". `fileName` prefixes
/// every error message ("layout_spec.json: entry 1: field 'layout': column
/// 5: ..."); the error's own column is 0.
LayoutResult<std::vector<LayoutSpecEntry>>
parseLayoutSpec(std::string_view jsonText,
                std::string_view fileName = "layout_spec.json");

/// Parses the text of a gemm_layout_spec.json file: a JSON array of
/// objects with "key", "A", "BT" and "C".
LayoutResult<std::vector<GemmLayoutSpecEntry>>
parseGemmLayoutSpec(std::string_view jsonText,
                    std::string_view fileName = "gemm_layout_spec.json");

/// Reads `path` and parses it; errors name the file by its path.
LayoutResult<std::vector<LayoutSpecEntry>>
loadLayoutSpec(const std::string &path);
LayoutResult<std::vector<GemmLayoutSpecEntry>>
loadGemmLayoutSpec(const std::string &path);

} // namespace layout
} // namespace mncc

#endif // MNCC_LAYOUT_LAYOUTSPEC_H
