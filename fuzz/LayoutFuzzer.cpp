//===- LayoutFuzzer.cpp - libFuzzer target for the layout notation --------===//
//
// Any text must parse into a layout or give an error; a layout that parses
// must print canonically, parse back to the same layout, and answer the
// questions mncc-layout asks of it (validity, element places) without a
// crash, undefined behaviour or an unbounded allocation. Built by
// `make fuzz-layout`.
//
//===----------------------------------------------------------------------===//

#include "mncc/layout/Layout.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto layout = mncc::layout::parseLayout(text);
  if (!layout)
    return 0;
  std::string canonical = layout->str();
  auto again = mncc::layout::parseLayout(canonical);
  // The canonical text must reproduce the layout (Layout.h says so).
  if (!again || again->str() != canonical)
    std::abort();
  (void)mncc::layout::validateLayout(*layout, {});
  // The first element and the one whose index is each extent's last.
  std::vector<int64_t> first, last;
  for (int64_t extent : layout->logicalShape()) {
    first.push_back(0);
    last.push_back(extent > 0 ? extent - 1 : 0);
  }
  for (const auto &index : {first, last})
    if (auto places = mncc::layout::locate(*layout, index); places.ok())
      for (const auto &place : *places)
        (void)mncc::layout::elementAt(*layout, place);
  return 0;
}
