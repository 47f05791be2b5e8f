//===- Import.cpp - ONNX models into the onnx dialect ---------------------===//
//
// The importer checks a model's structure itself first, so that every error
// a user can make names the file and the node, then lets libonnx convert it
// to the canonical opset and infer its shapes, then builds the module.
//
// Weights are read from the file once, by protobuf, into strings that the
// MLIR resources then own: no weight byte is copied after parsing. Before
// the version converter and shape inference, which copy a model whole, the
// large tensors are taken out of the model and put back afterwards.
//
//===----------------------------------------------------------------------===//

#include "mncc/onnx/Import.h"
#include "mncc/onnx/TensorIo.h"

#include "OnnxLibrary.h"
#include "TensorData.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/ScopedHashTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fcntl.h>
#include <queue>
#include <unistd.h>

using namespace mlir;
using namespace mncc;

llvm::Expected<std::pair<std::string, std::vector<int64_t>>>
mncc::parseInputShape(llvm::StringRef spec) {
  auto [name, dims] = spec.rsplit(':');
  if (name.empty() || !spec.contains(':'))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--input-shape '%s': expected NAME:D0,D1,... (e.g. input:1,3,224,224)",
        spec.str().c_str());
  std::vector<int64_t> shape;
  if (!dims.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    dims.split(parts, ',');
    for (llvm::StringRef part : parts) {
      int64_t dim;
      if (part.trim().getAsInteger(10, dim) || dim < 0)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "--input-shape '%s': '%s' is not a dimension (a whole number >= 0)",
            spec.str().c_str(), part.str().c_str());
      shape.push_back(dim);
    }
  }
  return std::make_pair(name.str(), shape);
}

namespace {

/// A node's place, for diagnostics: "node 'conv1' (index 3, Conv)".
std::string describeNode(const ::onnx::NodeProto &node, int index,
                         llvm::StringRef graphPath) {
  std::string text = "node ";
  if (!node.name().empty())
    text += "'" + node.name() + "' ";
  text += "(index " + std::to_string(index) + ", " + node.op_type();
  if (!graphPath.empty())
    text += ", in " + graphPath.str();
  return text + ")";
}

bool isAiOnnx(llvm::StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

class Importer {
public:
  Importer(llvm::StringRef path, MLIRContext *context,
           const OnnxImportOptions &options)
      : path(path.str()), context(context), options(options),
        builder(context), fileLoc(FileLineColLoc::get(context, path, 0, 0)) {
    context->loadDialect<mncc::onnx::OnnxDialect, func::FuncDialect>();
  }

  OwningOpRef<ModuleOp> run(::onnx::ModelProto &model);

private:
  InFlightDiagnostic error() { return emitError(fileLoc); }

  // Checks before libonnx sees the model.
  LogicalResult checkOpsets(const ::onnx::ModelProto &model);
  LogicalResult checkGraph(::onnx::GraphProto &graph,
                           const llvm::StringSet<> &outerNames,
                           llvm::StringRef graphPath);
  LogicalResult checkInitializers(const ::onnx::GraphProto &graph);
  LogicalResult applyInputShapes(::onnx::GraphProto &graph);
  LogicalResult checkNodeTypes(const ::onnx::GraphProto &graph,
                               llvm::StringRef graphPath);
  void collectValueTypes(const ::onnx::GraphProto &graph);
  bool needsConversion(const ::onnx::GraphProto &graph, int opset);
  LogicalResult convertToCanonicalOpset(::onnx::ModelProto &model, int opset);

  // Building the module.
  Type convertType(const ::onnx::TypeProto &type);
  Type elementType(int32_t onnxType);
  FailureOr<ElementsAttr> convertTensor(::onnx::TensorProto &tensor,
                                        llvm::StringRef what);
  FailureOr<Attribute> convertAttribute(::onnx::AttributeProto &attribute,
                                        llvm::StringRef what);
  LogicalResult importNodes(::onnx::GraphProto &graph,
                            llvm::StringRef graphPath);
  LogicalResult importNode(::onnx::NodeProto &node, int index,
                           llvm::StringRef graphPath);
  LogicalResult importSubgraph(::onnx::GraphProto &graph, Region &region,
                               llvm::StringRef graphPath);
  FailureOr<Type> typeOfValue(const std::string &name,
                              const std::string &where);

  std::string path;
  MLIRContext *context;
  const OnnxImportOptions &options;
  OpBuilder builder;
  /// Diagnostics about the model as a whole point at the file.
  Location fileLoc;
  std::map<std::string, int> opsets;
  /// Every typed value of every graph, by name (names are unique in a
  /// model, subgraphs included).
  llvm::StringMap<const ::onnx::TypeProto *> valueTypes;
  llvm::ScopedHashTable<llvm::StringRef, Value> values;
  /// Large tensors set aside while libonnx copies the model around.
  TensorStash stash;
};

} // namespace

LogicalResult Importer::checkOpsets(const ::onnx::ModelProto &model) {
  if (model.opset_import_size() == 0)
    return error() << "the model imports no opset (opset_import is empty)";
  for (const auto &opset : model.opset_import()) {
    std::string domain = isAiOnnx(opset.domain()) ? "" : opset.domain();
    int maxVersion = onnxlib::maxKnownOpset(domain);
    if (maxVersion >= 0 && (opset.version() < 1 || opset.version() > maxVersion))
      return error() << "opset_import: version " << opset.version()
                     << " of domain '"
                     << (domain.empty() ? "ai.onnx" : domain)
                     << "' is not known to this ONNX library (it knows 1 to "
                     << maxVersion << ")";
    if (!opsets.emplace(domain, opset.version()).second)
      return error() << "opset_import: domain '"
                     << (domain.empty() ? "ai.onnx" : domain)
                     << "' is imported twice";
  }
  return success();
}

LogicalResult Importer::checkGraph(::onnx::GraphProto &graph,
                                   const llvm::StringSet<> &outerNames,
                                   llvm::StringRef graphPath) {
  // Every name a node may read: outer scopes, inputs, initializers, and the
  // outputs of nodes.
  llvm::StringSet<> defined = outerNames;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &initializer : graph.initializer())
    defined.insert(initializer.name());
  llvm::StringMap<int> producer;
  for (int index = 0; index < graph.node_size(); ++index)
    for (const std::string &output : graph.node(index).output()) {
      if (output.empty())
        continue;
      if (defined.contains(output) || !producer.try_emplace(output, index).second)
        return error() << describeNode(graph.node(index), index, graphPath)
                       << ": output '" << output
                       << "' is already defined elsewhere in the graph";
    }

  for (int index = 0; index < graph.node_size(); ++index) {
    const ::onnx::NodeProto &node = graph.node(index);
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.contains(input) &&
          !producer.contains(input))
        return error() << describeNode(node, index, graphPath) << ": input '"
                       << input
                       << "' is not a graph input, an initializer, or the "
                          "output of any node";
    // A tensor attribute's data is checked against its dims before libonnx
    // sees it: shape inference reads a Constant's value (a Range on a
    // Constant with dims and no data read through a null pointer; found
    // by fuzzing).
    for (const auto &attribute : node.attribute()) {
      auto checkTensor =
          [&](const ::onnx::TensorProto &tensor) -> LogicalResult {
        if (std::string problem = checkTensorData(tensor, path);
            !problem.empty())
          return error() << describeNode(node, index, graphPath)
                         << ": attribute '" << attribute.name()
                         << "': " << problem;
        return success();
      };
      if (attribute.has_t() && failed(checkTensor(attribute.t())))
        return failure();
      for (const auto &tensor : attribute.tensors())
        if (failed(checkTensor(tensor)))
          return failure();
      const auto &sparse = attribute.sparse_tensor();
      if ((sparse.has_values() && failed(checkTensor(sparse.values()))) ||
          (sparse.has_indices() && failed(checkTensor(sparse.indices()))))
        return failure();
    }
    std::string domain = isAiOnnx(node.domain()) ? "" : node.domain();
    auto opset = opsets.find(domain);
    if (opset == opsets.end())
      return error() << describeNode(node, index, graphPath) << ": its domain '"
                     << (domain.empty() ? "ai.onnx" : domain)
                     << "' is not in the model's opset_import";
    if (domain.empty() || domain == kTrainingDomain) {
      onnxlib::SchemaInfo schema =
          onnxlib::lookupSchema(node.op_type(), domain, opset->second);
      if (!schema.found)
        return error() << describeNode(node, index, graphPath)
                       << ": there is no operator '" << node.op_type()
                       << "' in domain '"
                       << (domain.empty() ? "ai.onnx" : domain)
                       << "' at opset " << opset->second;
      // libonnx's version converter and shape inference trust the node's
      // input and output lists (the Add adapter reads a second input that
      // a one-input Add does not have): check them against the schema.
      auto count = [](int n, const char *what) {
        return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
      };
      auto range = [&](int lo, int hi, const char *what) {
        if (lo == hi)
          return count(lo, what);
        if (hi >= (1 << 20))
          return "at least " + count(lo, what);
        return std::to_string(lo) + " to " + count(hi, what);
      };
      if (node.input_size() < schema.minInputs ||
          node.input_size() > schema.maxInputs)
        return error() << describeNode(node, index, graphPath) << ": "
                       << node.op_type() << " at opset " << opset->second
                       << " takes "
                       << range(schema.minInputs, schema.maxInputs, "input")
                       << ", the node has " << node.input_size();
      if (node.output_size() < schema.minOutputs ||
          node.output_size() > schema.maxOutputs)
        return error() << describeNode(node, index, graphPath) << ": "
                       << node.op_type() << " at opset " << opset->second
                       << " has "
                       << range(schema.minOutputs, schema.maxOutputs, "output")
                       << ", the node lists " << node.output_size();
      for (int i = 0; i < node.input_size(); ++i) {
        size_t formal = std::min<size_t>(i, schema.inputs.size() - 1);
        if (node.input(i).empty() && !schema.inputs.empty() &&
            !schema.inputs[formal].optional)
          return error() << describeNode(node, index, graphPath)
                         << ": input " << i << " ('"
                         << schema.inputs[formal].name
                         << "') is required, the node leaves it empty";
      }
      // libonnx's shape inference divides by some attributes (a Conv or
      // pool with strides 0 stopped mncc with SIGFPE, found by fuzzing):
      // they must be positive.
      for (const auto &attribute : node.attribute()) {
        const std::string &name = attribute.name();
        bool divisorList = name == "strides" || name == "dilations" ||
                           name == "kernel_shape";
        bool divisor = name == "blocksize" || name == "group";
        if (divisorList)
          for (int64_t value : attribute.ints())
            if (value < 1)
              return error() << describeNode(node, index, graphPath)
                             << ": attribute '" << name
                             << "' must be positive, it has " << value;
        if (divisor && attribute.i() < 1)
          return error() << describeNode(node, index, graphPath)
                         << ": attribute '" << name
                         << "' must be positive, it is " << attribute.i();
      }
      // libonnx's converter and inference trust the attributes; check them.
      for (const auto &attribute : node.attribute())
        if (!schema.attributeTypes.count(attribute.name()))
          return error() << describeNode(node, index, graphPath) << ": "
                         << node.op_type() << " at opset " << opset->second
                         << " has no attribute '" << attribute.name() << "'";
      for (const std::string &required : schema.requiredAttributes)
        if (llvm::none_of(node.attribute(), [&](const auto &attribute) {
              return attribute.name() == required;
            }))
          return error() << describeNode(node, index, graphPath)
                         << ": the required attribute '" << required
                         << "' is missing";
    }
  }
  for (const auto &output : graph.output())
    if (!defined.contains(output.name()) && !producer.contains(output.name()))
      return error() << (graphPath.empty() ? std::string("graph")
                                           : graphPath.str())
                     << " output '" << output.name()
                     << "' is not a graph input, an initializer, or the "
                        "output of any node";

  // Order the nodes so that each comes after the producers of its inputs
  // (ONNX asks for it; exporters do not always comply). What cannot be
  // ordered is a cycle.
  std::vector<int> pending(graph.node_size(), 0);
  std::vector<std::vector<int>> consumers(graph.node_size());
  for (int index = 0; index < graph.node_size(); ++index) {
    llvm::StringSet<> seen;
    for (const std::string &input : graph.node(index).input()) {
      auto found = producer.find(input);
      if (input.empty() || found == producer.end() || !seen.insert(input).second)
        continue;
      ++pending[index];
      consumers[found->second].push_back(index);
    }
  }
  // Kahn's algorithm, always taking the earliest ready node, keeps a
  // sorted graph as it is and moves as little as possible otherwise.
  std::vector<int> order;
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int index = 0; index < graph.node_size(); ++index)
    if (pending[index] == 0)
      ready.push(index);
  while (!ready.empty()) {
    int next = ready.top();
    ready.pop();
    order.push_back(next);
    for (int consumer : consumers[next])
      if (--pending[consumer] == 0)
        ready.push(consumer);
  }
  if (order.size() != static_cast<size_t>(graph.node_size())) {
    int index = 0;
    while (pending[index] == 0)
      ++index;
    const ::onnx::NodeProto &node = graph.node(index);
    std::string through;
    for (const std::string &input : node.input())
      if (producer.contains(input) && pending[producer.lookup(input)] != 0)
        through = input;
    return error() << describeNode(node, index, graphPath)
                   << ": the graph has a cycle through this node (its input '"
                   << through << "' depends on its own output)";
  }
  if (!std::is_sorted(order.begin(), order.end())) {
    google::protobuf::RepeatedPtrField<::onnx::NodeProto> sorted;
    for (int index : order)
      sorted.Add()->Swap(graph.mutable_node(index));
    graph.mutable_node()->Swap(&sorted);
  }

  // Subgraphs see everything defined in this graph.
  llvm::StringSet<> visible = defined;
  for (const auto &entry : producer)
    visible.insert(entry.getKey());
  for (int index = 0; index < graph.node_size(); ++index) {
    ::onnx::NodeProto &node = *graph.mutable_node(index);
    for (auto &attribute : *node.mutable_attribute()) {
      std::string where = describeNode(node, index, graphPath) + " attribute '" +
                          attribute.name() + "'";
      if (attribute.has_g() &&
          failed(checkGraph(*attribute.mutable_g(), visible, where)))
        return failure();
      for (auto &graphAttribute : *attribute.mutable_graphs())
        if (failed(checkGraph(graphAttribute, visible, where)))
          return failure();
    }
  }
  return success();
}

LogicalResult Importer::checkInitializers(const ::onnx::GraphProto &graph) {
  for (const auto &tensor : graph.initializer()) {
    if (tensor.name().empty())
      return error() << "an initializer has no name";
    if (std::string problem = checkTensorData(tensor, path); !problem.empty())
      return error() << "initializer '" << tensor.name() << "': " << problem;
  }
  if (graph.sparse_initializer_size())
    return error() << "sparse initializers are not supported (initializer '"
                   << graph.sparse_initializer(0).values().name() << "')";
  return success();
}

LogicalResult Importer::applyInputShapes(::onnx::GraphProto &graph) {
  for (const auto &[name, dims] : options.inputShapes) {
    auto input = llvm::find_if(*graph.mutable_input(),
                               [&](const auto &info) { return info.name() == name; });
    if (input == graph.mutable_input()->end())
      return error() << "--input-shape: the model has no input '" << name
                     << "'";
    if (!input->type().has_tensor_type())
      return error() << "--input-shape: input '" << name
                     << "' is not a tensor";
    auto *shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && shape->dim_size() != (int)dims.size())
      return error() << "--input-shape: input '" << name << "' has rank "
                     << shape->dim_size() << ", the shape given has rank "
                     << dims.size();
    shape->clear_dim();
    for (int64_t dim : dims)
      shape->add_dim()->set_dim_value(dim);
  }
  return success();
}

void Importer::collectValueTypes(const ::onnx::GraphProto &graph) {
  for (const auto &info : graph.input())
    valueTypes[info.name()] = &info.type();
  for (const auto &info : graph.value_info())
    valueTypes[info.name()] = &info.type();
  for (const auto &info : graph.output())
    if (info.has_type() || !valueTypes.count(info.name()))
      valueTypes[info.name()] = &info.type();
  for (const auto &node : graph.node())
    for (const auto &attribute : node.attribute()) {
      if (attribute.has_g())
        collectValueTypes(attribute.g());
      for (const auto &subgraph : attribute.graphs())
        collectValueTypes(subgraph);
    }
}

LogicalResult Importer::checkNodeTypes(const ::onnx::GraphProto &graph,
                                       llvm::StringRef graphPath) {
  llvm::StringMap<std::string> initializerTypes;
  for (const auto &tensor : graph.initializer())
    initializerTypes[tensor.name()] =
        "tensor(" + tensorElementTypeName(tensor.data_type()) + ")";
  for (int index = 0; index < graph.node_size(); ++index) {
    const ::onnx::NodeProto &node = graph.node(index);
    std::string domain = isAiOnnx(node.domain()) ? "" : node.domain();
    if (!domain.empty() && domain != kTrainingDomain)
      continue;
    onnxlib::SchemaInfo schema =
        onnxlib::lookupSchema(node.op_type(), domain, opsets[domain]);
    // The first input bound to each type parameter fixes it.
    llvm::StringMap<std::pair<std::string, int>> bound;
    for (int position = 0; position < node.input_size(); ++position) {
      const std::string &input = node.input(position);
      if (input.empty() || schema.inputs.empty())
        continue;
      // Arity is the checker's business; only the declared inputs are typed.
      if (position >= (int)schema.inputs.size() &&
          !schema.inputs.back().variadic)
        continue;
      const onnxlib::FormalInput &formal =
          schema.inputs[std::min<size_t>(position, schema.inputs.size() - 1)];
      std::string type;
      if (auto found = valueTypes.find(input);
          found != valueTypes.end() && found->second->value_case() !=
                                           ::onnx::TypeProto::VALUE_NOT_SET)
        type = onnxlib::typeString(*found->second);
      else if (initializerTypes.count(input))
        type = initializerTypes[input];
      if (type.empty() || type == "unknown")
        continue;
      if (!llvm::is_contained(formal.allowedTypes, type))
        return error() << describeNode(node, index, graphPath) << ": input "
                       << position << " '" << input << "' has type " << type
                       << ", but " << node.op_type() << " takes "
                       << llvm::join(formal.allowedTypes, ", ") << " there";
      auto [entry, inserted] =
          bound.try_emplace(formal.typeParameter, type, position);
      if (!inserted && entry->second.first != type && formal.homogeneous)
        return error() << describeNode(node, index, graphPath) << ": input "
                       << position << " '" << input << "' has type " << type
                       << ", but input " << entry->second.second
                       << " has type " << entry->second.first << " and "
                       << node.op_type() << " needs both to be the same "
                       << formal.typeParameter;
    }
    for (const auto &attribute : node.attribute()) {
      std::string where = describeNode(node, index, graphPath) +
                          " attribute '" + attribute.name() + "'";
      if (attribute.has_g() && failed(checkNodeTypes(attribute.g(), where)))
        return failure();
      for (const auto &subgraph : attribute.graphs())
        if (failed(checkNodeTypes(subgraph, where)))
          return failure();
    }
  }
  return success();
}

Type Importer::elementType(int32_t onnxType) {
  return elementTypeOfOnnx(onnxType, context);
}

Type Importer::convertType(const ::onnx::TypeProto &type) {
  switch (type.value_case()) {
  case ::onnx::TypeProto::kTensorType:
  case ::onnx::TypeProto::kSparseTensorType: {
    bool sparse = type.has_sparse_tensor_type();
    int32_t element = sparse ? type.sparse_tensor_type().elem_type()
                             : type.tensor_type().elem_type();
    const ::onnx::TensorShapeProto *shape = nullptr;
    if (sparse ? type.sparse_tensor_type().has_shape()
               : type.tensor_type().has_shape())
      shape = sparse ? &type.sparse_tensor_type().shape()
                     : &type.tensor_type().shape();
    Type elementTy = elementType(element);
    if (!elementTy)
      return {};
    if (!shape)
      return UnrankedTensorType::get(elementTy);
    llvm::SmallVector<int64_t> dims;
    for (const auto &dim : shape->dim())
      dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                         ? dim.dim_value()
                         : ShapedType::kDynamic);
    return RankedTensorType::get(dims, elementTy);
  }
  case ::onnx::TypeProto::kSequenceType: {
    Type element = convertType(type.sequence_type().elem_type());
    return element ? mncc::onnx::SeqType::get(context, element) : Type();
  }
  case ::onnx::TypeProto::kOptionalType: {
    Type element = convertType(type.optional_type().elem_type());
    return element ? mncc::onnx::OptType::get(context, element) : Type();
  }
  case ::onnx::TypeProto::kMapType: {
    Type key = elementType(type.map_type().key_type());
    Type value = convertType(type.map_type().value_type());
    return key && value ? mncc::onnx::MapType::get(context, key, value) : Type();
  }
  default:
    return {};
  }
}

FailureOr<Type> Importer::typeOfValue(const std::string &name,
                                      const std::string &where) {
  auto found = valueTypes.find(name);
  if (found == valueTypes.end() ||
      found->second->value_case() == ::onnx::TypeProto::VALUE_NOT_SET)
    // ONNX could not infer it (an operator of an unknown domain): the value
    // is carried untyped.
    return Type(builder.getNoneType());
  Type type = convertType(*found->second);
  if (!type)
    return error() << where << ": '" << name
                   << "' has a type mncc does not support ("
                   << onnxlib::typeString(*found->second) << ")";
  return type;
}

FailureOr<ElementsAttr> Importer::convertTensor(::onnx::TensorProto &tensor,
                                                llvm::StringRef what) {
  Type element = elementType(tensor.data_type());
  if (!element)
    return error() << what << ": unsupported tensor element type "
                   << tensor.data_type();
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(dims, element);
  auto attribute = buildElementsAttr(tensor, type, stash, path,
                                     options.resourceThresholdBytes);
  if (!attribute)
    return error() << what << ": " << llvm::toString(attribute.takeError());
  return *attribute;
}

FailureOr<Attribute>
Importer::convertAttribute(::onnx::AttributeProto &attribute,
                           llvm::StringRef what) {
  using ::onnx::AttributeProto;
  switch (attribute.type()) {
  case AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(attribute.f()));
  case AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(attribute.i()));
  case AttributeProto::STRING:
    return Attribute(builder.getStringAttr(attribute.s()));
  case AttributeProto::FLOATS:
    return Attribute(builder.getF32ArrayAttr(llvm::SmallVector<float>(
        attribute.floats().begin(), attribute.floats().end())));
  case AttributeProto::INTS:
    return Attribute(builder.getI64ArrayAttr(llvm::SmallVector<int64_t>(
        attribute.ints().begin(), attribute.ints().end())));
  case AttributeProto::STRINGS: {
    llvm::SmallVector<llvm::StringRef> strings(attribute.strings().begin(),
                                               attribute.strings().end());
    return Attribute(builder.getStrArrayAttr(strings));
  }
  case AttributeProto::TENSOR: {
    auto tensor = convertTensor(*attribute.mutable_t(), what);
    if (failed(tensor))
      return failure();
    return Attribute(*tensor);
  }
  case AttributeProto::TENSORS: {
    llvm::SmallVector<Attribute> tensors;
    for (auto &tensor : *attribute.mutable_tensors()) {
      auto converted = convertTensor(tensor, what);
      if (failed(converted))
        return failure();
      tensors.push_back(*converted);
    }
    return Attribute(builder.getArrayAttr(tensors));
  }
  case AttributeProto::SPARSE_TENSOR: {
    auto sparse = buildSparseElementsAttr(*attribute.mutable_sparse_tensor(),
                                          context, stash, path);
    if (!sparse)
      return error() << what << ": " << llvm::toString(sparse.takeError());
    return Attribute(*sparse);
  }
  case AttributeProto::TYPE_PROTO: {
    Type type = convertType(attribute.tp());
    if (!type)
      return error() << what << ": unsupported type "
                     << onnxlib::typeString(attribute.tp());
    return Attribute(TypeAttr::get(type));
  }
  case AttributeProto::TYPE_PROTOS: {
    llvm::SmallVector<Type> types;
    for (const auto &proto : attribute.type_protos()) {
      Type type = convertType(proto);
      if (!type)
        return error() << what << ": unsupported type "
                       << onnxlib::typeString(proto);
      types.push_back(type);
    }
    return Attribute(builder.getTypeArrayAttr(types));
  }
  default:
    return error() << what << ": unsupported attribute kind "
                   << static_cast<int>(attribute.type());
  }
}

LogicalResult Importer::importSubgraph(::onnx::GraphProto &graph,
                                       Region &region,
                                       llvm::StringRef graphPath) {
  llvm::ScopedHashTableScope<llvm::StringRef, Value> scope(values);
  Block *block = new Block();
  region.push_back(block);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  for (const auto &input : graph.input()) {
    Type type = convertType(input.type());
    if (!type)
      return error() << graphPath << ": input '" << input.name()
                     << "' has no supported type";
    values.insert(input.name(), block->addArgument(type, fileLoc));
  }
  if (failed(importNodes(graph, graphPath)))
    return failure();
  llvm::SmallVector<Value> results;
  for (const auto &output : graph.output()) {
    Value value = values.lookup(output.name());
    if (!value)
      return error() << graphPath << ": output '" << output.name()
                     << "' is not computed by the subgraph";
    results.push_back(value);
  }
  builder.create<mncc::onnx::YieldOp>(fileLoc, results);
  return success();
}

LogicalResult Importer::importNodes(::onnx::GraphProto &graph,
                                    llvm::StringRef graphPath) {
  for (auto &initializer : *graph.mutable_initializer()) {
    auto value = convertTensor(initializer,
                               "initializer '" + initializer.name() + "'");
    if (failed(value))
      return failure();
    auto op = builder.create<mncc::onnx::InitializerOp>(
        NameLoc::get(builder.getStringAttr(initializer.name()), fileLoc),
        initializer.name(), *value);
    values.insert(initializer.name(), op.getResult());
  }
  for (int index = 0; index < graph.node_size(); ++index)
    if (failed(importNode(*graph.mutable_node(index), index, graphPath)))
      return failure();
  return success();
}

LogicalResult Importer::importNode(::onnx::NodeProto &node, int index,
                                   llvm::StringRef graphPath) {
  std::string where = describeNode(node, index, graphPath);
  // A named node's ops are located by its name; an unnamed one's by its
  // description, "node (index 3, Add)", as the fused location's metadata,
  // so a verifier error or a run-time error can still say which node
  // (mncc/support/Diagnostics.h, nodeDescriptionOf). Neither changes the
  // exported model: only a NameLoc becomes a node name.
  Location loc =
      node.name().empty()
          ? FusedLoc::get(context, {fileLoc}, builder.getStringAttr(where))
          : Location(NameLoc::get(builder.getStringAttr(node.name()),
                                  fileLoc));
  std::string domain = isAiOnnx(node.domain()) ? "" : node.domain();
  std::optional<RegisteredOperationName> typedName;
  if (domain.empty() || domain == kTrainingDomain)
    typedName = RegisteredOperationName::lookup("onnx." + node.op_type(),
                                                context);

  auto lookupInput = [&](const std::string &name) -> Value {
    return values.lookup(name);
  };

  OperationState state(loc, typedName ? typedName->getStringRef()
                                      : llvm::StringRef("onnx.Custom"));
  // Graph attributes become regions, in the order the op declares them.
  llvm::SmallVector<std::pair<std::string, ::onnx::AttributeProto *>> graphs;
  NamedAttrList attributes;
  for (auto &attribute : *node.mutable_attribute()) {
    if (attribute.type() == ::onnx::AttributeProto::GRAPH ||
        attribute.type() == ::onnx::AttributeProto::GRAPHS) {
      graphs.emplace_back(attribute.name(), &attribute);
      continue;
    }
    auto converted = convertAttribute(
        attribute, where + " attribute '" + attribute.name() + "'");
    if (failed(converted))
      return failure();
    attributes.append(attribute.name(), *converted);
  }
  llvm::sort(graphs, [](const auto &a, const auto &b) { return a.first < b.first; });

  llvm::SmallVector<Type> resultTypes;
  if (typedName) {
    onnxlib::SchemaInfo schema =
        onnxlib::lookupSchema(node.op_type(), domain, opsets[domain]);
    for (const std::string &input : node.input())
      if (!input.empty())
        state.operands.push_back(lookupInput(input));
    if (typedName->hasTrait<OpTrait::AttrSizedOperandSegments>()) {
      // One segment per formal input: its operands, 0 when omitted.
      llvm::SmallVector<int32_t> segments;
      for (size_t formal = 0; formal < schema.inputs.size(); ++formal) {
        if (schema.inputs[formal].variadic) {
          int32_t count = 0;
          for (size_t at = formal; at < (size_t)node.input_size(); ++at)
            count += !node.input(at).empty();
          segments.push_back(count);
        } else {
          segments.push_back(formal < (size_t)node.input_size() &&
                             !node.input(formal).empty());
        }
      }
      attributes.append("operandSegmentSizes",
                        builder.getDenseI32ArrayAttr(segments));
    } else if (llvm::any_of(llvm::drop_end(node.input()),
                            [](const std::string &name) { return name.empty(); })) {
      return error() << where
                     << ": an optional input is omitted before a given one, "
                        "which this operator's form cannot express";
    }
    llvm::SmallVector<int32_t> resultSegments;
    for (const std::string &output : node.output()) {
      resultSegments.push_back(!output.empty());
      if (output.empty())
        continue;
      auto type = typeOfValue(output, where);
      if (failed(type))
        return failure();
      resultTypes.push_back(*type);
    }
    if (typedName->hasTrait<OpTrait::AttrSizedResultSegments>()) {
      // The ops with several optional outputs have no variadic one: a
      // segment per formal output, 0 for each omitted one.
      resultSegments.resize(std::max<size_t>(resultSegments.size(),
                                             schema.outputCount),
                            0);
      attributes.append("resultSegmentSizes",
                        builder.getDenseI32ArrayAttr(resultSegments));
    } else if (llvm::any_of(llvm::drop_end(node.output()),
                            [](const std::string &name) { return name.empty(); })) {
      return error() << where
                     << ": an optional output is omitted before a given one, "
                        "which this operator's form cannot express";
    }
  } else {
    for (const std::string &input : node.input()) {
      if (input.empty()) {
        state.operands.push_back(
            builder.create<mncc::onnx::NoneOp>(loc, builder.getNoneType())
                .getResult());
        continue;
      }
      state.operands.push_back(lookupInput(input));
    }
    for (const std::string &output : node.output()) {
      auto type = output.empty() ? FailureOr<Type>(builder.getNoneType())
                                 : typeOfValue(output, where);
      if (failed(type))
        return failure();
      resultTypes.push_back(*type);
    }
    NamedAttrList custom;
    for (const NamedAttribute &attribute : attributes)
      custom.append(attribute);
    attributes.clear();
    attributes.append("domain", builder.getStringAttr(node.domain()));
    attributes.append("op_type", builder.getStringAttr(node.op_type()));
    attributes.append("onnx_attributes", custom.getDictionary(context));
    llvm::SmallVector<llvm::StringRef> graphNames;
    for (const auto &graph : graphs)
      graphNames.push_back(graph.first);
    attributes.append("graph_attribute_names",
                      builder.getStrArrayAttr(graphNames));
  }
  if (llvm::is_contained(state.operands, Value()))
    return error() << where << ": an input is used before it is defined";

  state.addTypes(resultTypes);
  state.addAttributes(attributes);
  for (auto &[name, attribute] : graphs) {
    std::string subgraphPath = where + " attribute '" + name + "'";
    if (attribute->has_g()) {
      Region *region = state.addRegion();
      if (failed(importSubgraph(*attribute->mutable_g(), *region, subgraphPath)))
        return failure();
    }
    for (auto &graph : *attribute->mutable_graphs()) {
      Region *region = state.addRegion();
      if (failed(importSubgraph(graph, *region, subgraphPath)))
        return failure();
    }
  }
  Operation *op = builder.create(state);
  unsigned resultIndex = 0;
  for (const std::string &output : node.output()) {
    if (output.empty()) {
      resultIndex += !typedName;
      continue;
    }
    values.insert(output, op->getResult(resultIndex++));
  }
  return success();
}

bool Importer::needsConversion(const ::onnx::GraphProto &graph, int opset) {
  for (const auto &node : graph.node()) {
    if (isAiOnnx(node.domain()) &&
        onnxlib::lookupSchema(node.op_type(), "", opset).sinceVersion !=
            onnxlib::lookupSchema(node.op_type(), "",
                                  mncc::onnx::kCanonicalOpset)
                .sinceVersion)
      return true;
    for (const auto &attribute : node.attribute()) {
      if (attribute.has_g() && needsConversion(attribute.g(), opset))
        return true;
      for (const auto &subgraph : attribute.graphs())
        if (needsConversion(subgraph, opset))
          return true;
    }
  }
  return false;
}

LogicalResult Importer::convertToCanonicalOpset(::onnx::ModelProto &model,
                                                int opset) {
  // The converter works on tensor types only and wants shapes: infer them
  // first, and give back the graph's non-tensor input and output types.
  // Old exporters wrote types their opset did not allow yet (int64
  // constants at opset 6); only the converted model is checked strictly.
  if (llvm::Error problem = onnxlib::inferShapes(model, /*checkTypes=*/false))
    return error() << "shape inference failed at opset " << opset << ": "
                   << llvm::toString(std::move(problem));
  ::onnx::GraphProto before = model.graph();
  before.clear_node();
  before.clear_initializer();
  if (llvm::Error problem =
          onnxlib::convertVersion(model, mncc::onnx::kCanonicalOpset))
    return error() << "cannot convert the model from opset " << opset
                   << " to opset " << mncc::onnx::kCanonicalOpset << ": "
                   << llvm::toString(std::move(problem));
  auto restore = [](auto &converted, const auto &original) {
    for (auto &info : converted)
      for (const auto &old : original)
        if (old.name() == info.name() &&
            info.type().value_case() != old.type().value_case())
          *info.mutable_type() = old.type();
  };
  restore(*model.mutable_graph()->mutable_input(), before.input());
  restore(*model.mutable_graph()->mutable_output(), before.output());
  return success();
}

OwningOpRef<ModuleOp> Importer::run(::onnx::ModelProto &model) {
  if (!model.has_graph())
    return (error() << "not an ONNX model: it has no graph", nullptr);
  if (model.ir_version() <= 0)
    return (error() << "not an ONNX model: ir_version is missing", nullptr);
  if (failed(checkOpsets(model)))
    return nullptr;
  ::onnx::GraphProto &graph = *model.mutable_graph();
  if (failed(checkInitializers(graph)) ||
      failed(checkGraph(graph, llvm::StringSet<>(), "")) ||
      failed(applyInputShapes(graph)))
    return nullptr;

  // Types the model declares are checked before libonnx sees them, so that
  // a mismatch is reported with its node; inferred ones are checked after.
  collectValueTypes(graph);
  if (failed(checkNodeTypes(graph, "")))
    return nullptr;
  valueTypes.clear();

  // libonnx copies the model whole; large tensors wait outside.
  stash.takeLargeTensors(model, options.resourceThresholdBytes);
  if (auto opset = opsets.find(""); opset != opsets.end() &&
                                    opset->second != mncc::onnx::kCanonicalOpset) {
    if (needsConversion(graph, opset->second) &&
        failed(convertToCanonicalOpset(model, opset->second)))
      return nullptr;
    // Every operator means the same at both opsets, or has been converted.
    for (auto &import : *model.mutable_opset_import())
      if (isAiOnnx(import.domain()))
        import.set_version(mncc::onnx::kCanonicalOpset);
    opset->second = mncc::onnx::kCanonicalOpset;
  }
  // Types are checked node by node below, with better messages than
  // libonnx's; its inference only has to fill them in.
  if (llvm::Error problem = onnxlib::inferShapes(model, /*checkTypes=*/false))
    return (error() << "shape inference failed: "
                    << llvm::toString(std::move(problem)),
            nullptr);
  ::onnx::GraphProto &inferred = *model.mutable_graph();
  collectValueTypes(inferred);
  if (failed(checkNodeTypes(inferred, "")))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  llvm::SmallVector<NamedAttribute> opsetEntries;
  for (const auto &[domain, version] : opsets)
    opsetEntries.emplace_back(
        builder.getStringAttr(domain.empty() ? "ai.onnx" : domain),
        builder.getI64IntegerAttr(version));
  (*module)->setAttr("onnx.ir_version",
                     builder.getI64IntegerAttr(model.ir_version()));
  (*module)->setAttr("onnx.opset_import",
                     builder.getDictionaryAttr(opsetEntries));
  if (!model.producer_name().empty())
    (*module)->setAttr("onnx.producer_name",
                       builder.getStringAttr(model.producer_name()));
  if (!model.producer_version().empty())
    (*module)->setAttr("onnx.producer_version",
                       builder.getStringAttr(model.producer_version()));
  if (!model.domain().empty())
    (*module)->setAttr("onnx.domain", builder.getStringAttr(model.domain()));
  if (model.model_version())
    (*module)->setAttr("onnx.model_version",
                       builder.getI64IntegerAttr(model.model_version()));
  if (model.metadata_props_size()) {
    llvm::SmallVector<NamedAttribute> metadata;
    for (const auto &entry : model.metadata_props())
      if (!entry.key().empty())
        metadata.emplace_back(builder.getStringAttr(entry.key()),
                              builder.getStringAttr(entry.value()));
    (*module)->setAttr("onnx.metadata_props",
                       builder.getDictionaryAttr(metadata));
  }
  if (model.functions_size())
    return (error() << "model-local functions are not supported (function '"
                    << model.functions(0).name() << "')",
            nullptr);

  // Graph inputs with an initializer are defaults (ONNX IR < 4 lists every
  // weight as an input); they stay initializers.
  llvm::StringSet<> initializerNames;
  for (const auto &initializer : inferred.initializer())
    initializerNames.insert(initializer.name());
  llvm::SmallVector<Type> inputTypes, outputTypes;
  llvm::SmallVector<const ::onnx::ValueInfoProto *> inputs;
  for (const auto &input : inferred.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    Type type = convertType(input.type());
    if (!type)
      return (error() << "graph input '" << input.name()
                      << "' has no supported type ("
                      << onnxlib::typeString(input.type()) << ")",
              nullptr);
    inputTypes.push_back(type);
    inputs.push_back(&input);
  }
  for (const auto &output : inferred.output()) {
    auto type = typeOfValue(output.name(), "graph output");
    if (failed(type))
      return nullptr;
    outputTypes.push_back(*type);
  }

  builder.setInsertionPointToEnd(module->getBody());
  std::string name = inferred.name().empty() ? "main_graph" : inferred.name();
  auto function = builder.create<func::FuncOp>(
      fileLoc, name, builder.getFunctionType(inputTypes, outputTypes));
  for (auto [index, input] : llvm::enumerate(inputs)) {
    function.setArgAttr(index, "onnx.name",
                        builder.getStringAttr(input->name()));
    // The names of dynamic dimensions ("N"), so that a tool can say which
    // one needs a value; export writes them back.
    const auto &type = input->type();
    if (type.has_tensor_type() && type.tensor_type().has_shape()) {
      llvm::SmallVector<Attribute> params;
      bool any = false;
      for (const auto &dim : type.tensor_type().shape().dim()) {
        params.push_back(builder.getStringAttr(
            dim.has_dim_value() ? "" : dim.dim_param()));
        any |= !dim.has_dim_value() && !dim.dim_param().empty();
      }
      if (any)
        function.setArgAttr(index, "onnx.dim_params",
                            builder.getArrayAttr(params));
    }
  }
  for (auto [index, output] : llvm::enumerate(inferred.output()))
    function.setResultAttr(index, "onnx.name",
                           builder.getStringAttr(output.name()));

  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  llvm::ScopedHashTableScope<llvm::StringRef, Value> scope(values);
  for (auto [index, input] : llvm::enumerate(inputs))
    values.insert(input->name(), entry->getArgument(index));
  if (failed(importNodes(inferred, "")))
    return nullptr;
  llvm::SmallVector<Value> results;
  for (const auto &output : inferred.output()) {
    Value value = values.lookup(output.name());
    if (!value)
      return (error() << "graph output '" << output.name()
                      << "' is not computed by any node",
              nullptr);
    results.push_back(value);
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

/// The ONNX text syntax starts with the model header, '<'; anything else is
/// read as binary protobuf.
static bool isTextSyntax(llvm::StringRef head) {
  return head.ltrim().starts_with("<");
}

bool mncc::looksLikeMlir(llvm::StringRef head) {
  head = head.ltrim();
  for (llvm::StringRef start : {"module", "func.func", "//", "#", "!",
                                "{-#", "\"builtin.module\"", "\"func.func\""})
    if (head.starts_with(start))
      return true;
  return false;
}

OwningOpRef<ModuleOp> mncc::importOnnxFile(llvm::StringRef path,
                                           MLIRContext *context,
                                           const OnnxImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  if (llvm::sys::fs::is_directory(path))
    return (emitError(fileLoc) << "is a folder, not an ONNX model", nullptr);
  auto head = llvm::MemoryBuffer::getFileSlice(path, 256, 0);
  if (!head)
    return (emitError(fileLoc) << "cannot read: " << head.getError().message(),
            nullptr);
  if (looksLikeMlir((*head)->getBuffer()))
    return (emitError(fileLoc)
                << "is MLIR, not an ONNX model: give the .onnx it came from "
                   "(mncc run and mncc summary also read the onnx dialect's "
                   "IR, mncc compile with --compile-from)",
            nullptr);
  if (isTextSyntax((*head)->getBuffer())) {
    auto text = llvm::MemoryBuffer::getFile(path);
    if (!text)
      return (emitError(fileLoc) << "cannot read: "
                                 << text.getError().message(),
              nullptr);
    return importOnnxBytes((*text)->getBuffer(), path, context, options);
  }
  // Binary models are parsed straight from the file descriptor, so that the
  // weights are read exactly once, into the strings the resources keep.
  ::onnx::ModelProto model;
  int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return (emitError(fileLoc) << "cannot open: " << strerror(errno),
            nullptr);
  {
    google::protobuf::io::FileInputStream stream(fd);
    stream.SetCloseOnDelete(true);
    if (!model.ParseFromZeroCopyStream(&stream))
      return (emitError(fileLoc)
                  << "not a valid ONNX model: the file is truncated or "
                     "corrupt (it does not parse as an ONNX protobuf)",
              nullptr);
  }
  Importer importer(path, context, options);
  return importer.run(model);
}

OwningOpRef<ModuleOp> mncc::importOnnxBytes(llvm::StringRef bytes,
                                            llvm::StringRef name,
                                            MLIRContext *context,
                                            const OnnxImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(context, name, 0, 0);
  ::onnx::ModelProto model;
  if (isTextSyntax(bytes.take_front(64))) {
    if (llvm::Error problem = onnxlib::parseText(bytes, model))
      return (emitError(fileLoc) << "not a valid ONNX text model: "
                                 << llvm::toString(std::move(problem)),
              nullptr);
  } else if (bytes.size() > INT_MAX ||
             !model.ParseFromArray(bytes.data(),
                                   static_cast<int>(bytes.size()))) {
    return (emitError(fileLoc)
                << "not a valid ONNX model: the file is truncated or corrupt "
                   "(it does not parse as an ONNX protobuf)",
            nullptr);
  }
  Importer importer(name, context, options);
  return importer.run(model);
}

std::string mncc::onnxNodeIdentity(Location loc) {
  if (auto named = llvm::dyn_cast<NameLoc>(loc))
    return named.getName().str();
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
    if (auto text = llvm::dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      if (text.getValue().starts_with("node ("))
        return text.str();
  return "";
}
