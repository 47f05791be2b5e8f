//===- ElementwiseConformanceTest.cpp - ONNX backend node tests -----------===//
//
// Runs the elementwise kernels and Cast on ONNX's own backend test data
// (libonnx-testdata: model.onnx with one node, input_N.pb, output_N.pb) and
// compares with ONNX's expected outputs. The few protobuf fields needed are
// read by hand, so the test needs no protobuf library.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace mncc::reference;

namespace {

const char *const kDataDir = "/usr/share/libonnx-testdata/data/node";

/// A protobuf message: each field number maps to its raw occurrences.
struct Message {
  struct Field {
    int wireType;
    uint64_t number;   // varint or fixed value
    std::string bytes; // length-delimited payload
  };
  std::multimap<int, Field> fields;

  static uint64_t varint(const std::string &data, size_t &pos) {
    uint64_t value = 0;
    for (int shift = 0; pos < data.size(); shift += 7) {
      uint8_t byte = data[pos++];
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        break;
    }
    return value;
  }

  static Message parse(const std::string &data) {
    Message message;
    size_t pos = 0;
    while (pos < data.size()) {
      uint64_t key = varint(data, pos);
      Field field{int(key & 7), 0, {}};
      if (field.wireType == 0) {
        field.number = varint(data, pos);
      } else if (field.wireType == 1 || field.wireType == 5) {
        size_t size = field.wireType == 1 ? 8 : 4;
        std::memcpy(&field.number, data.data() + pos, size);
        pos += size;
      } else if (field.wireType == 2) {
        size_t size = varint(data, pos);
        field.bytes = data.substr(pos, size);
        pos += size;
      } else {
        break; // groups: not used by ONNX
      }
      message.fields.emplace(int(key >> 3), std::move(field));
    }
    return message;
  }

  std::vector<const Field *> all(int number) const {
    std::vector<const Field *> result;
    auto range = fields.equal_range(number);
    for (auto it = range.first; it != range.second; ++it)
      result.push_back(&it->second);
    return result;
  }
  std::string string(int number) const {
    auto found = fields.find(number);
    return found == fields.end() ? "" : found->second.bytes;
  }
  /// Repeated scalars, packed (one length-delimited run) or not.
  template <typename T> std::vector<T> repeated(int number, int size) const {
    std::vector<T> values;
    for (const Field *field : all(number)) {
      if (field->wireType != 2) {
        T value;
        std::memcpy(&value, &field->number, sizeof(T));
        values.push_back(field->wireType == 0 ? T(field->number) : value);
        continue;
      }
      size_t pos = 0;
      while (pos < field->bytes.size()) {
        if (size == 0) { // varints
          values.push_back(T(varint(field->bytes, pos)));
        } else {
          T value;
          std::memcpy(&value, field->bytes.data() + pos, sizeof(T));
          values.push_back(value);
          pos += size;
        }
      }
    }
    return values;
  }
};

std::string readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The element type a ValueInfoProto declares (type.tensor_type.elem_type).
DType declaredType(const std::string &valueInfo) {
  Message type = Message::parse(Message::parse(valueInfo).string(2));
  auto elemType = Message::parse(type.string(1)).all(1);
  return elemType.empty() ? DType::Undefined
                          : static_cast<DType>(elemType[0]->number);
}

/// TensorProto -> Tensor (the element types Cast and the kernels use).
/// ONNX 1.12 stores its bfloat16 test data as uint16, so the type the model
/// declares wins when the element sizes agree.
Tensor toTensor(const Message &proto, DType declared) {
  std::vector<int64_t> shape = proto.repeated<int64_t>(1, 0);
  auto fields = proto.all(2);
  DType dtype =
      fields.empty() ? DType::Undefined : static_cast<DType>(fields[0]->number);
  if (declared != DType::Undefined && dtypeSize(declared) == dtypeSize(dtype))
    dtype = declared;
  Tensor tensor(dtype, shape);
  int64_t count = tensor.numElements();
  if (dtype == DType::String) {
    auto strings = proto.all(6);
    for (int64_t i = 0; i < count && i < int64_t(strings.size()); ++i)
      tensor.strings()[i] = strings[i]->bytes;
    return tensor;
  }
  std::string raw = proto.string(9);
  if (!raw.empty()) {
    std::memcpy(tensor.raw(), raw.data(),
                std::min(raw.size(), tensor.byteSize()));
    return tensor;
  }
  size_t size = dtypeSize(dtype);
  auto copy = [&](const auto &values) {
    for (int64_t i = 0; i < count && i < int64_t(values.size()); ++i) {
      // int32_data holds the narrow types (and float16 bits) widened.
      uint64_t bits = static_cast<uint64_t>(values[i]);
      if constexpr (std::is_floating_point_v<std::decay_t<decltype(values[0])>>)
        std::memcpy(static_cast<char *>(tensor.raw()) + i * size, &values[i],
                    size);
      else
        std::memcpy(static_cast<char *>(tensor.raw()) + i * size, &bits, size);
    }
  };
  switch (dtype) {
  case DType::Float32:
    copy(proto.repeated<float>(4, 4));
    break;
  case DType::Float64:
    copy(proto.repeated<double>(10, 8));
    break;
  case DType::Int64:
    copy(proto.repeated<int64_t>(7, 0));
    break;
  case DType::UInt32:
  case DType::UInt64:
    copy(proto.repeated<uint64_t>(11, 0));
    break;
  default:
    copy(proto.repeated<int32_t>(5, 0));
    break;
  }
  return tensor;
}

Attribute toAttribute(const Message &proto) {
  Attribute attribute;
  int type = 0;
  for (const Message::Field *field : proto.all(20))
    type = int(field->number);
  // AttributeProto.AttributeType: FLOAT=1, INT=2, STRING=3, TENSOR=4,
  // FLOATS=6, INTS=7.
  switch (type) {
  case 1: {
    attribute.kind = Attribute::Kind::Float;
    uint32_t bits = uint32_t(proto.all(2)[0]->number);
    std::memcpy(&attribute.f, &bits, 4);
    break;
  }
  case 2:
    attribute.kind = Attribute::Kind::Int;
    attribute.i = int64_t(proto.all(3)[0]->number);
    break;
  case 3:
    attribute.kind = Attribute::Kind::String;
    attribute.s = proto.string(4);
    break;
  case 7:
    attribute.kind = Attribute::Kind::Ints;
    attribute.ints = proto.repeated<int64_t>(8, 0);
    break;
  default:
    attribute.kind = Attribute::Kind::Graph; // not used by these operators
  }
  return attribute;
}

/// Empty if equal, else what differs. Floating values as ONNX's backend
/// runner compares them: rtol 1e-3, atol 1e-7, NaN equal to NaN.
std::string compare(const Tensor &actual, const Tensor &expected) {
  if (actual.dtype() != expected.dtype())
    return std::string("type ") + dtypeName(actual.dtype()) + " vs " +
           dtypeName(expected.dtype());
  if (actual.shape() != expected.shape())
    return "shape " + shapeToString(actual.shape()) + " vs " +
           shapeToString(expected.shape());
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    bool same;
    std::string a, e;
    if (expected.dtype() == DType::String) {
      a = actual.strings()[i];
      e = expected.strings()[i];
      same = a == e;
    } else if (isFloatingPoint(expected.dtype())) {
      double x = actual.elementAsDouble(i), y = expected.elementAsDouble(i);
      same = (std::isnan(x) && std::isnan(y)) || x == y ||
             std::fabs(x - y) <= 1e-7 + 1e-3 * std::fabs(y);
      a = std::to_string(x);
      e = std::to_string(y);
    } else {
      same = actual.elementAsInt64(i) == expected.elementAsInt64(i);
      a = std::to_string(actual.elementAsInt64(i));
      e = std::to_string(expected.elementAsInt64(i));
    }
    if (!same)
      return "element " + std::to_string(i) + ": " + a + " vs " + e;
  }
  return "";
}

const std::set<std::string> kOps = {"Abs",
                                    "Neg",
                                    "Reciprocal",
                                    "Floor",
                                    "Ceil",
                                    "Round",
                                    "Sign",
                                    "Sqrt",
                                    "Exp",
                                    "Log",
                                    "Sin",
                                    "Cos",
                                    "Tan",
                                    "Asin",
                                    "Acos",
                                    "Atan",
                                    "Sinh",
                                    "Cosh",
                                    "Asinh",
                                    "Acosh",
                                    "Atanh",
                                    "Erf",
                                    "Sigmoid",
                                    "HardSigmoid",
                                    "HardSwish",
                                    "Relu",
                                    "LeakyRelu",
                                    "Elu",
                                    "Selu",
                                    "Celu",
                                    "ThresholdedRelu",
                                    "Softplus",
                                    "Softsign",
                                    "Mish",
                                    "Shrink",
                                    "IsNaN",
                                    "IsInf",
                                    "Not",
                                    "Clip",
                                    "Add",
                                    "Sub",
                                    "Mul",
                                    "Div",
                                    "Pow",
                                    "Mod",
                                    "BitShift",
                                    "And",
                                    "Or",
                                    "Xor",
                                    "Equal",
                                    "Less",
                                    "LessOrEqual",
                                    "Greater",
                                    "GreaterOrEqual",
                                    "PRelu",
                                    "Sum",
                                    "Mean",
                                    "Max",
                                    "Min",
                                    "Where",
                                    "Cast",
                                    "CastLike",
                                    "Expand"};

/// Cases whose expected data ONNX itself has since corrected: 1.12 made
/// float -> bfloat16 by truncation, later releases (and Tensor.h, and
/// CastTest) round to nearest even.
const std::set<std::string> kOutdated = {
    "test_cast_FLOAT_to_BFLOAT16", "test_castlike_FLOAT_to_BFLOAT16",
    "test_castlike_FLOAT_to_BFLOAT16_expanded"};

TEST(ElementwiseConformance, OnnxBackendNodeTests) {
  DIR *dir = opendir(kDataDir);
  if (!dir)
    GTEST_SKIP() << kDataDir << " is not installed";
  std::vector<std::string> names;
  while (dirent *entry = readdir(dir))
    names.push_back(entry->d_name);
  closedir(dir);
  std::sort(names.begin(), names.end());
  int ran = 0;
  std::set<std::string> covered;
  for (const std::string &name : names) {
    std::string base = std::string(kDataDir) + "/" + name;
    std::string model = readFile(base + "/model.onnx");
    if (model.empty() || kOutdated.count(name))
      continue;
    Message graph = Message::parse(Message::parse(model).string(7));
    auto nodes = graph.all(1);
    if (nodes.size() != 1)
      continue; // expanded (function body) variants
    Message node = Message::parse(nodes[0]->bytes);
    std::string op = node.string(4);
    if (!kOps.count(op) || !node.string(7).empty())
      continue;
    // Node inputs name graph inputs (input_K.pb in graph order) or are
    // empty (omitted optional inputs).
    std::vector<std::string> graphInputs;
    for (const Message::Field *input : graph.all(11))
      graphInputs.push_back(Message::parse(input->bytes).string(1));
    std::vector<Value> inputs;
    std::vector<size_t> omitted;
    for (const Message::Field *input : node.all(1)) {
      auto found =
          std::find(graphInputs.begin(), graphInputs.end(), input->bytes);
      if (found == graphInputs.end()) {
        omitted.push_back(inputs.size());
        inputs.emplace_back();
        continue;
      }
      std::string path = base + "/test_data_set_0/input_" +
                         std::to_string(found - graphInputs.begin()) + ".pb";
      inputs.emplace_back(toTensor(
          Message::parse(readFile(path)),
          declaredType(graph.all(11)[found - graphInputs.begin()]->bytes)));
    }
    SimpleKernelContext context(op, inputs, node.all(2).size());
    for (size_t index : omitted)
      context.omitInput(index);
    for (const Message::Field *field : node.all(5)) {
      Message attribute = Message::parse(field->bytes);
      context.setAttribute(attribute.string(1), toAttribute(attribute));
    }
    Status status = context.run();
    ++ran;
    covered.insert(op);
    if (!status.ok()) {
      ADD_FAILURE() << name << ": " << status.message();
      continue;
    }
    auto graphOutputs = graph.all(12);
    for (size_t k = 0; k < context.outputs().size(); ++k) {
      Tensor expected = toTensor(
          Message::parse(readFile(base + "/test_data_set_0/output_" +
                                  std::to_string(k) + ".pb")),
          k < graphOutputs.size() ? declaredType(graphOutputs[k]->bytes)
                                  : DType::Undefined);
      std::string difference = compare(context.outputTensor(k), expected);
      EXPECT_EQ(difference, "") << name << " output " << k;
    }
  }
  // The data set covers nearly every operator of the family.
  std::string missing;
  for (const std::string &op : kOps)
    if (!covered.count(op))
      missing += " " + op;
  EXPECT_GE(ran, 230);
  EXPECT_GE(covered.size(), 55u) << "not covered:" << missing;
  std::printf("%d ONNX backend cases over %zu operators; none for:%s\n", ran,
              covered.size(), missing.c_str());
}

} // namespace
