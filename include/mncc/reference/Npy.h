//===- Npy.h - NumPy .npy files for reference tensors ---------*- C++ -*-===//

#ifndef MNCC_REFERENCE_NPY_H
#define MNCC_REFERENCE_NPY_H

#include "mncc/reference/Kernel.h"

#include <string>

namespace mncc::reference {

/// Reads a .npy file (format 1.0-3.0, C order, little endian; numeric and
/// bool dtypes, float16 included). Errors say what in the file is wrong.
Status readNpy(const std::string &path, Tensor &tensor);

/// Writes `tensor` as a .npy file (format 1.0); bfloat16, complex and string
/// tensors have no .npy form and are refused.
Status writeNpy(const std::string &path, const Tensor &tensor);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_NPY_H
