//===- DeviceType.h - Element formats on MN-Core 2 --------------*- C++ -*-===//
//
// The element formats a tensor can have on the device, and the one mapping
// between them and the host's ONNX element types. MN-Core 2's half is not
// IEEE binary16 (1 sign, 6 exponent, 9 mantissa bits, bias 31; no
// subnormals, no NaN: docs/target/mncore2.md, "Number formats"), so every
// host <-> device copy of a floating-point tensor goes through the
// conversions here.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_CODEGEN_DEVICETYPE_H
#define MNCC_CODEGEN_DEVICETYPE_H

#include "mncc/reference/Tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace mncc::codegen {

/// Device element formats. Half, Single and Double are MN-Core's floating
/// formats; Int32 is a 32-bit two's-complement word.
enum class DeviceType : uint8_t { Half, Single, Double, Int32 };

unsigned deviceTypeBits(DeviceType type);
inline unsigned deviceTypeBytes(DeviceType type) {
  return deviceTypeBits(type) / 8;
}
/// Elements per 64-bit long word.
inline int64_t elementsPerLongWord(DeviceType type) {
  return 64 / deviceTypeBits(type);
}
/// "half", "single", "double", "int32".
std::string_view deviceTypeName(DeviceType type);
std::optional<DeviceType> parseDeviceTypeName(std::string_view name);
bool isFloatingDeviceType(DeviceType type);

/// The device format that holds a host type exactly or, for float16, as
/// closely as MN-Core's half does; nullopt for types the device does not
/// hold (strings, complex, 64-bit integers, bfloat16: its exponent range is
/// single's, and mncc-compiled kernels take no bfloat16).
std::optional<DeviceType> defaultDeviceType(reference::DType host);
/// Whether the device holds tensors of `host`: those with a default device
/// type, and 64-bit integers, held as int32 (their values must fit).
bool deviceHolds(reference::DType host);

/// Converts `count` host elements of type `from` into device elements of
/// `to`, written as raw bit patterns of deviceTypeBits(to) bits each
/// (uint16_t, uint32_t or uint64_t per element, host byte order). Floating
/// values round to nearest even; values past the format's range become
/// infinities, values below it zero (the device has no subnormals).
/// Between integers and floating types the conversion is ONNX's Cast (a
/// graph's edge Cast is done here): floating to integer toward zero,
/// saturated at int32's range, to bool any nonzero value. Returns false
/// when the pair is not convertible.
bool hostToDevice(reference::DType from, const void *source, DeviceType to,
                  void *destination, int64_t count);
/// The inverse: device bit patterns to host elements (exact for every pair
/// where the host type is at least as wide).
bool deviceToHost(DeviceType from, const void *source, reference::DType to,
                  void *destination, int64_t count);

} // namespace mncc::codegen

#endif // MNCC_CODEGEN_DEVICETYPE_H
