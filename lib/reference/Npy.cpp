//===- Npy.cpp - NumPy .npy files for reference tensors -------------------===//
//
// The format: a magic string, a version, a header length, and a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded to 64 bytes, then the raw elements.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Npy.h"

#include <cerrno>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace mncc::reference;

namespace {

struct DescrEntry {
  const char *descr;
  DType dtype;
};

const DescrEntry kDescrs[] = {
    {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<f2", DType::Float16},
    {"|i1", DType::Int8},    {"<i2", DType::Int16},   {"<i4", DType::Int32},
    {"<i8", DType::Int64},   {"|u1", DType::UInt8},   {"<u2", DType::UInt16},
    {"<u4", DType::UInt32},  {"<u8", DType::UInt64},  {"|b1", DType::Bool},
    {"<c8", DType::Complex64}, {"<c16", DType::Complex128}};

/// The value of `key` in the header dict, as raw text up to the next
/// top-level comma or closing brace.
std::string headerField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  at = header.find(':', at);
  if (at == std::string::npos)
    return "";
  ++at;
  int depth = 0;
  size_t end = at;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string value = header.substr(at, end - at);
  size_t first = value.find_first_not_of(" ");
  size_t last = value.find_last_not_of(" ");
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}

} // namespace

Status mncc::reference::readNpy(const std::string &path, Tensor &tensor) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error(path + ": cannot open");
  char magic[8];
  if (!file.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY")
    return Status::error(path + ": not a .npy file (bad magic)");
  uint32_t headerLength = 0;
  if (magic[6] == 1) {
    unsigned char bytes[2];
    if (!file.read(reinterpret_cast<char *>(bytes), 2))
      return Status::error(path + ": truncated header");
    headerLength = bytes[0] | (bytes[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char bytes[4];
    if (!file.read(reinterpret_cast<char *>(bytes), 4))
      return Status::error(path + ": truncated header");
    headerLength = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) |
                   (uint32_t(bytes[3]) << 24);
  } else {
    return Status::error(path + ": unsupported .npy version " +
                         std::to_string(int(magic[6])));
  }
  if (headerLength > (1u << 20))
    return Status::error(path + ": header too large");
  std::string header(headerLength, '\0');
  if (!file.read(header.data(), headerLength))
    return Status::error(path + ": truncated header");

  std::string descr = headerField(header, "descr");
  if (descr.size() >= 2)
    descr = descr.substr(1, descr.size() - 2); // strip the quotes
  DType dtype = DType::Undefined;
  for (const DescrEntry &entry : kDescrs)
    if (descr == entry.descr)
      dtype = entry.dtype;
  if (dtype == DType::Undefined)
    return Status::error(path + ": unsupported dtype '" + descr + "'");
  if (headerField(header, "fortran_order") != "False")
    return Status::error(path + ": Fortran-ordered arrays are not supported");
  std::string shapeText = headerField(header, "shape");
  if (shapeText.size() < 2 || shapeText.front() != '(' ||
      shapeText.back() != ')')
    return Status::error(path + ": malformed shape '" + shapeText + "'");
  std::vector<int64_t> shape;
  std::stringstream dims(shapeText.substr(1, shapeText.size() - 2));
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    size_t first = dim.find_first_not_of(" ");
    if (first == std::string::npos)
      continue;
    char *end = nullptr;
    errno = 0;
    long long value = std::strtoll(dim.c_str() + first, &end, 10);
    if (value < 0 || end == dim.c_str() + first)
      return Status::error(path + ": malformed shape '" + shapeText + "'");
    if (errno == ERANGE)
      return Status::error(path + ": dimension '" + dim.substr(first) +
                           "' of shape " + shapeText + " is too large");
    shape.push_back(value);
  }
  // The header's shape is data: check its size, and that the file holds
  // that many bytes, before allocating anything.
  TensorSize size = checkTensorSize(dtype, shape);
  std::streampos start = file.tellg();
  file.seekg(0, std::ios::end);
  std::streampos end = file.tellg();
  file.seekg(start);
  if (!size.ok() && !size.bytes) // an overflow: the byte count is unknown
    return Status::error(path + ": shape " + shapeText + ": " + size.error);
  if (start < 0 || end < start || uint64_t(end - start) < size.bytes)
    return Status::error(path + ": the data is shorter than shape " +
                         shapeText + " needs");
  std::string error;
  std::optional<Tensor> allocated =
      Tensor::tryAllocate(dtype, shape, error, /*zero=*/false);
  if (!allocated)
    return Status::error(path + ": " + error);
  tensor = std::move(*allocated);
  if (!file.read(static_cast<char *>(tensor.raw()), tensor.byteSize()))
    return Status::error(path + ": the data is shorter than shape " +
                         shapeText + " needs");
  return Status::success();
}

Status mncc::reference::writeNpy(const std::string &path,
                                 const Tensor &tensor) {
  const char *descr = nullptr;
  for (const DescrEntry &entry : kDescrs)
    if (entry.dtype == tensor.dtype())
      descr = entry.descr;
  if (!descr)
    return Status::error(std::string("a ") + dtypeName(tensor.dtype()) +
                         " tensor has no .npy form");
  std::string shape = "(";
  for (int64_t dim : tensor.shape())
    shape += std::to_string(dim) + ", ";
  if (tensor.rank() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.rank() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  if (!file)
    return Status::error(path + ": cannot create");
  file.write("\x93NUMPY\x01\x00", 8);
  unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xff),
                             static_cast<unsigned char>(header.size() >> 8)};
  file.write(reinterpret_cast<const char *>(length), 2);
  file << header;
  file.write(static_cast<const char *>(tensor.raw()), tensor.byteSize());
  if (!file)
    return Status::error(path + ": write failed");
  return Status::success();
}
