//===- PadSource.h - Where Pad reads each output from -----------*- C++ -*-===//
//
// Pad's modes as index maps along one axis, shared by pfvm:cpu's kernel
// and the code generator's reorder kernel so that both agree.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_PADSOURCE_H
#define MNCC_REFERENCE_PADSOURCE_H

#include <cstdint>
#include <string>

namespace mncc::reference {

/// Where output index `out` of an axis of input extent `dim` padded by
/// `begin` before it reads in `mode` (constant, edge, reflect, wrap): an
/// input index, or -1 for the pad value (constant mode's border).
int64_t padSource(const std::string &mode, int64_t out, int64_t begin,
                  int64_t dim);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_PADSOURCE_H
