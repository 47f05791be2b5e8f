//===- DeviceType.cpp - Element formats on MN-Core 2 ----------------------===//

#include "mncc/codegen/DeviceType.h"

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mncc;
using namespace mncc::codegen;
using reference::DType;

unsigned codegen::deviceTypeBits(DeviceType type) {
  switch (type) {
  case DeviceType::Half:
    return 16;
  case DeviceType::Single:
  case DeviceType::Int32:
    return 32;
  case DeviceType::Double:
    return 64;
  }
  return 32;
}

std::string_view codegen::deviceTypeName(DeviceType type) {
  switch (type) {
  case DeviceType::Half:
    return "half";
  case DeviceType::Single:
    return "single";
  case DeviceType::Double:
    return "double";
  case DeviceType::Int32:
    return "int32";
  }
  return "single";
}

std::optional<DeviceType> codegen::parseDeviceTypeName(std::string_view name) {
  for (DeviceType type : {DeviceType::Half, DeviceType::Single,
                          DeviceType::Double, DeviceType::Int32})
    if (deviceTypeName(type) == name)
      return type;
  return std::nullopt;
}

bool codegen::isFloatingDeviceType(DeviceType type) {
  return type != DeviceType::Int32;
}

std::optional<DeviceType> codegen::defaultDeviceType(DType host) {
  switch (host) {
  // bfloat16 has single's exponent range, far beyond half's, and no
  // device format of its own (docs/target/mncore2.md, "Number formats").
  case DType::Float16:
    return DeviceType::Half;
  case DType::Float32:
    return DeviceType::Single;
  case DType::Float64:
    return DeviceType::Double;
  case DType::Int32:
  case DType::Int16:
  case DType::Int8:
  case DType::UInt8:
  case DType::UInt16:
  case DType::Bool:
    return DeviceType::Int32;
  default:
    return std::nullopt;
  }
}

bool codegen::deviceHolds(DType host) {
  return defaultDeviceType(host) || host == DType::Int64;
}

namespace {

/// A host floating value as the exact double it is (float16 and bfloat16
/// widen exactly).
double hostFloat(DType type, const void *source, int64_t i) {
  switch (type) {
  case DType::Float32:
    return static_cast<const float *>(source)[i];
  case DType::Float64:
    return static_cast<const double *>(source)[i];
  case DType::Float16:
    return float(static_cast<const reference::Float16 *>(source)[i]);
  case DType::BFloat16:
    return float(static_cast<const reference::BFloat16 *>(source)[i]);
  default:
    return 0;
  }
}

int64_t hostInteger(DType type, const void *source, int64_t i) {
  switch (type) {
  case DType::Int32:
    return static_cast<const int32_t *>(source)[i];
  case DType::Int16:
    return static_cast<const int16_t *>(source)[i];
  case DType::Int8:
    return static_cast<const int8_t *>(source)[i];
  case DType::UInt8:
    return static_cast<const uint8_t *>(source)[i];
  case DType::UInt16:
    return static_cast<const uint16_t *>(source)[i];
  case DType::Bool:
    return static_cast<const uint8_t *>(source)[i] != 0;
  case DType::Int64:
    return static_cast<const int64_t *>(source)[i];
  default:
    return 0;
  }
}

uint64_t doubleBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

double bitsDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// A device bit pattern as a host double. MN-Core reads an exponent field
/// of zero as zero and an all-ones field as an infinity whatever the
/// mantissa holds, so those patterns are normalised first.
double deviceFloat(DeviceType type, const void *source, int64_t i) {
  switch (type) {
  case DeviceType::Half: {
    uint16_t bits = static_cast<const uint16_t *>(source)[i];
    return bitsFloat(emu::halfToSingle(bits));
  }
  case DeviceType::Single: {
    uint32_t bits = static_cast<const uint32_t *>(source)[i];
    if (emu::Single::isZero(bits))
      bits &= emu::Single::SignMask;
    else if (emu::Single::isInf(bits))
      bits &= ~emu::Single::ManMask;
    return bitsFloat(bits);
  }
  case DeviceType::Double: {
    uint64_t bits = static_cast<const uint64_t *>(source)[i];
    if (emu::Double::isZero(bits))
      bits &= emu::Double::SignMask;
    else if (emu::Double::isInf(bits))
      bits &= ~emu::Double::ManMask;
    return bitsDouble(bits);
  }
  case DeviceType::Int32:
    return static_cast<const int32_t *>(source)[i];
  }
  return 0;
}

/// ONNX Cast of a floating value to an integer: toward zero, saturated at
/// int32's range (ONNX leaves values out of range undefined; the device's
/// integers are int32), NaN to zero.
int64_t truncatedInteger(double value) {
  if (std::isnan(value))
    return 0;
  double limited = std::min(std::max(std::trunc(value), -2147483648.0),
                            2147483647.0);
  return int64_t(limited);
}

} // namespace

bool codegen::hostToDevice(DType from, const void *source, DeviceType to,
                           void *destination, int64_t count) {
  if (!deviceHolds(from))
    return false;
  // Between an integer and a floating type the conversion is ONNX's Cast
  // (a Cast at the graph's edge is done here: passes/l3 LowerToL3).
  bool hostFloating = reference::isFloatingPoint(from);
  // Integers convert exactly to double (the device holds int32 values),
  // then round once into the device format.
  bool throughDouble = from == DType::Float64 || !hostFloating;
  auto value = [&](int64_t i) {
    return hostFloating ? hostFloat(from, source, i)
                        : double(hostInteger(from, source, i));
  };
  for (int64_t i = 0; i < count; ++i) {
    switch (to) {
    case DeviceType::Half: {
      // Through the wider of the two IEEE formats the host value fits, so
      // the value is rounded once, into the device's half.
      uint16_t bits = throughDouble
                          ? emu::reduceFormat<emu::Double, emu::Half>(
                                doubleBits(value(i)))
                          : emu::singleToHalf(floatBits(float(value(i))));
      static_cast<uint16_t *>(destination)[i] = bits;
      break;
    }
    case DeviceType::Single: {
      uint32_t bits = throughDouble ? emu::doubleToSingle(doubleBits(value(i)))
                                    : floatBits(float(value(i)));
      static_cast<uint32_t *>(destination)[i] = bits;
      break;
    }
    case DeviceType::Double:
      static_cast<uint64_t *>(destination)[i] = doubleBits(value(i));
      break;
    case DeviceType::Int32:
      static_cast<int32_t *>(destination)[i] = static_cast<int32_t>(
          hostFloating ? truncatedInteger(hostFloat(from, source, i))
                       : hostInteger(from, source, i));
      break;
    }
  }
  return true;
}

bool codegen::deviceToHost(DeviceType from, const void *source, DType to,
                           void *destination, int64_t count) {
  // Between an integer and a floating type the conversion is ONNX's Cast,
  // as in hostToDevice.
  bool hostFloating = reference::isFloatingPoint(to);
  bool deviceFloating = isFloatingDeviceType(from);
  for (int64_t i = 0; i < count; ++i) {
    if (!hostFloating) {
      double real = deviceFloating ? deviceFloat(from, source, i) : 0;
      int64_t value = !deviceFloating ? static_cast<const int32_t *>(source)[i]
                      // Cast to bool: any nonzero value, 0.5 included.
                      : to == DType::Bool ? int64_t(real != 0)
                                          : truncatedInteger(real);
      switch (to) {
      case DType::Int32:
        static_cast<int32_t *>(destination)[i] = int32_t(value);
        break;
      case DType::Int64:
        static_cast<int64_t *>(destination)[i] = value;
        break;
      case DType::Int16:
        static_cast<int16_t *>(destination)[i] = int16_t(value);
        break;
      case DType::Int8:
        static_cast<int8_t *>(destination)[i] = int8_t(value);
        break;
      case DType::UInt8:
        static_cast<uint8_t *>(destination)[i] = uint8_t(value);
        break;
      case DType::UInt16:
        static_cast<uint16_t *>(destination)[i] = uint16_t(value);
        break;
      case DType::Bool:
        static_cast<uint8_t *>(destination)[i] = value != 0;
        break;
      default:
        return false;
      }
      continue;
    }
    double value = deviceFloat(from, source, i);
    switch (to) {
    case DType::Float32:
      static_cast<float *>(destination)[i] = float(value);
      break;
    case DType::Float64:
      static_cast<double *>(destination)[i] = value;
      break;
    case DType::Float16:
      static_cast<reference::Float16 *>(destination)[i] =
          reference::Float16(float(value));
      break;
    case DType::BFloat16:
      static_cast<reference::BFloat16 *>(destination)[i] =
          reference::BFloat16(float(value));
      break;
    default:
      return false;
    }
  }
  return true;
}
