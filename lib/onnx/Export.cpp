//===- Export.cpp - The onnx dialect back to ONNX models ------------------===//
//
// The inverse of the importer: graph inputs and outputs keep their
// `onnx.name`, initializers and nodes their names, ops their ONNX type,
// domain and attributes; omitted optional inputs and outputs become empty
// names again. Names of intermediate values are made up.
//
//===----------------------------------------------------------------------===//

#include "mncc/onnx/Export.h"

#include "OnnxLibrary.h"
#include "TensorData.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mncc;

namespace {

class Exporter {
public:
  Exporter(ModuleOp module, const OnnxExportOptions &options,
           llvm::raw_ostream *externalDataOut)
      : module(module), options(options), externalDataOut(externalDataOut) {}

  LogicalResult run(::onnx::ModelProto &model);

private:
  std::string uniqueName(llvm::StringRef base);
  LogicalResult exportType(Location loc, Type type, ::onnx::TypeProto &proto);
  LogicalResult exportTensor(Location loc, ElementsAttr value,
                             llvm::StringRef name, ::onnx::TensorProto &proto,
                             bool allowExternal);
  LogicalResult exportAttribute(Operation *op, llvm::StringRef name,
                                Attribute value, int expectedType,
                                ::onnx::AttributeProto &proto);
  LogicalResult exportBlock(Block &block, ::onnx::GraphProto &graph,
                            llvm::StringRef graphName);
  LogicalResult exportOp(Operation *op, ::onnx::GraphProto &graph);
  LogicalResult exportOutputs(Location loc, Block &block, ValueRange values,
                              llvm::ArrayRef<std::string> wantedNames,
                              ::onnx::GraphProto &graph);
  std::string nameOf(Value value) { return names.lookup(value); }
  int opsetOf(llvm::StringRef domain) {
    auto found = opsets.find(domain.empty() ? "ai.onnx" : domain.str());
    return found == opsets.end() ? mncc::onnx::kCanonicalOpset : found->second;
  }

  ModuleOp module;
  const OnnxExportOptions &options;
  llvm::raw_ostream *externalDataOut;
  uint64_t externalOffset = 0;
  std::map<std::string, int> opsets;
  llvm::DenseMap<Value, std::string> names;
  llvm::StringSet<> usedNames;
  unsigned nextName = 0;
  bool usesAiOnnx = false;
};

} // namespace

std::string Exporter::uniqueName(llvm::StringRef base) {
  std::string name = base.str();
  while (name.empty() || usedNames.contains(name))
    name = base.str() + "_" + std::to_string(nextName++);
  usedNames.insert(name);
  return name;
}

static std::string nodeNameOf(Location loc) {
  if (auto named = llvm::dyn_cast<NameLoc>(loc))
    return named.getName().str();
  return "";
}

LogicalResult Exporter::exportType(Location loc, Type type,
                                   ::onnx::TypeProto &proto) {
  if (llvm::isa<NoneType>(type))
    return success(); // an untyped value stays untyped
  if (auto tensor = llvm::dyn_cast<TensorType>(type)) {
    int32_t element = onnxDataTypeOf(tensor.getElementType());
    if (!element)
      return emitError(loc) << "element type " << tensor.getElementType()
                            << " has no ONNX equivalent";
    auto *tensorProto = proto.mutable_tensor_type();
    tensorProto->set_elem_type(element);
    if (auto ranked = llvm::dyn_cast<RankedTensorType>(type)) {
      auto *shape = tensorProto->mutable_shape();
      for (int64_t dim : ranked.getShape()) {
        auto *dimProto = shape->add_dim();
        if (!ShapedType::isDynamic(dim))
          dimProto->set_dim_value(dim);
      }
    }
    return success();
  }
  if (auto seq = llvm::dyn_cast<mncc::onnx::SeqType>(type))
    return exportType(loc, seq.getElementType(),
                      *proto.mutable_sequence_type()->mutable_elem_type());
  if (auto opt = llvm::dyn_cast<mncc::onnx::OptType>(type))
    return exportType(loc, opt.getElementType(),
                      *proto.mutable_optional_type()->mutable_elem_type());
  if (auto map = llvm::dyn_cast<mncc::onnx::MapType>(type)) {
    int32_t key = onnxDataTypeOf(map.getKeyType());
    if (!key)
      return emitError(loc) << "map key type " << map.getKeyType()
                            << " has no ONNX equivalent";
    proto.mutable_map_type()->set_key_type(key);
    return exportType(loc, map.getValueType(),
                      *proto.mutable_map_type()->mutable_value_type());
  }
  return emitError(loc) << "type " << type << " has no ONNX equivalent";
}

LogicalResult Exporter::exportTensor(Location loc, ElementsAttr value,
                                     llvm::StringRef name,
                                     ::onnx::TensorProto &proto,
                                     bool allowExternal) {
  auto type = llvm::cast<ShapedType>(value.getType());
  int32_t element = onnxDataTypeOf(type.getElementType());
  if (!element)
    return emitError(loc) << "tensor element type " << type.getElementType()
                          << " has no ONNX equivalent";
  if (!name.empty())
    proto.set_name(name.str());
  proto.set_data_type(element);
  for (int64_t dim : type.getShape())
    proto.add_dims(dim);
  if (element == ::onnx::TensorProto::STRING) {
    auto strings = llvm::dyn_cast<DenseElementsAttr>(value);
    if (!strings)
      return emitError(loc) << "string tensors must be dense literals";
    for (llvm::StringRef text : strings.getValues<llvm::StringRef>())
      proto.add_string_data(text.str());
    return success();
  }
  auto bytes = rawDataOf(value);
  if (!bytes)
    return emitError(loc) << llvm::toString(bytes.takeError());
  if (allowExternal && externalDataOut &&
      options.externalDataThresholdBytes &&
      bytes->size() >= options.externalDataThresholdBytes) {
    // Keep every tensor aligned in the file, so it can be mapped in place.
    constexpr uint64_t kAlignment = 64;
    uint64_t padding = (kAlignment - externalOffset % kAlignment) % kAlignment;
    externalDataOut->write_zeros(padding);
    externalOffset += padding;
    proto.set_data_location(::onnx::TensorProto::EXTERNAL);
    auto addEntry = [&](const char *key, const std::string &entryValue) {
      auto *entry = proto.add_external_data();
      entry->set_key(key);
      entry->set_value(entryValue);
    };
    addEntry("location", options.externalDataLocation);
    addEntry("offset", std::to_string(externalOffset));
    addEntry("length", std::to_string(bytes->size()));
    externalDataOut->write(bytes->data(), bytes->size());
    externalOffset += bytes->size();
    return success();
  }
  proto.set_raw_data(std::move(*bytes));
  return success();
}

LogicalResult Exporter::exportAttribute(Operation *op, llvm::StringRef name,
                                        Attribute value, int expectedType,
                                        ::onnx::AttributeProto &proto) {
  using ::onnx::AttributeProto;
  proto.set_name(name.str());
  Location loc = op->getLoc();
  if (auto integer = llvm::dyn_cast<IntegerAttr>(value)) {
    proto.set_type(AttributeProto::INT);
    proto.set_i(integer.getValue().getSExtValue());
  } else if (auto floating = llvm::dyn_cast<FloatAttr>(value)) {
    proto.set_type(AttributeProto::FLOAT);
    proto.set_f(floating.getValueAsDouble());
  } else if (auto text = llvm::dyn_cast<StringAttr>(value)) {
    proto.set_type(AttributeProto::STRING);
    proto.set_s(text.str());
  } else if (auto type = llvm::dyn_cast<TypeAttr>(value)) {
    proto.set_type(AttributeProto::TYPE_PROTO);
    return exportType(loc, type.getValue(), *proto.mutable_tp());
  } else if (auto sparse = llvm::dyn_cast<SparseElementsAttr>(value)) {
    proto.set_type(AttributeProto::SPARSE_TENSOR);
    auto *sparseProto = proto.mutable_sparse_tensor();
    for (int64_t dim : sparse.getType().getShape())
      sparseProto->add_dims(dim);
    if (failed(exportTensor(loc, sparse.getValues(), "",
                            *sparseProto->mutable_values(), false)))
      return failure();
    return exportTensor(loc, sparse.getIndices(), "",
                        *sparseProto->mutable_indices(), false);
  } else if (auto tensor = llvm::dyn_cast<ElementsAttr>(value)) {
    proto.set_type(AttributeProto::TENSOR);
    return exportTensor(loc, tensor, "", *proto.mutable_t(), false);
  } else if (auto array = llvm::dyn_cast<ArrayAttr>(value)) {
    // An empty list says nothing of its kind; the schema does.
    Attribute first = array.empty() ? Attribute() : array[0];
    int kind = expectedType;
    if (first)
      kind = llvm::isa<IntegerAttr>(first)   ? AttributeProto::INTS
             : llvm::isa<FloatAttr>(first)   ? AttributeProto::FLOATS
             : llvm::isa<StringAttr>(first)  ? AttributeProto::STRINGS
             : llvm::isa<TypeAttr>(first)    ? AttributeProto::TYPE_PROTOS
             : llvm::isa<ElementsAttr>(first) ? AttributeProto::TENSORS
                                              : AttributeProto::UNDEFINED;
    if (kind <= 0)
      kind = AttributeProto::INTS;
    proto.set_type(static_cast<AttributeProto::AttributeType>(kind));
    for (Attribute element : array) {
      if (kind == AttributeProto::INTS)
        proto.add_ints(llvm::cast<IntegerAttr>(element).getInt());
      else if (kind == AttributeProto::FLOATS)
        proto.add_floats(llvm::cast<FloatAttr>(element).getValueAsDouble());
      else if (kind == AttributeProto::STRINGS)
        proto.add_strings(llvm::cast<StringAttr>(element).str());
      else if (kind == AttributeProto::TYPE_PROTOS) {
        if (failed(exportType(loc, llvm::cast<TypeAttr>(element).getValue(),
                              *proto.add_type_protos())))
          return failure();
      } else if (kind == AttributeProto::TENSORS) {
        if (failed(exportTensor(loc, llvm::cast<ElementsAttr>(element), "",
                                *proto.add_tensors(), false)))
          return failure();
      } else {
        return op->emitError("attribute '")
               << name << "' mixes kinds ONNX cannot hold in one list";
      }
    }
  } else {
    return op->emitError("attribute '")
           << name << "' has no ONNX equivalent: " << value;
  }
  return success();
}

LogicalResult Exporter::exportOutputs(Location loc, Block &block,
                                      ValueRange values,
                                      llvm::ArrayRef<std::string> wantedNames,
                                      ::onnx::GraphProto &graph) {
  llvm::StringSet<> outputNames;
  for (auto [index, value] : llvm::enumerate(values)) {
    std::string name = nameOf(value);
    // A graph output must be a distinct name produced in this graph; an
    // input, an initializer, an outer value or a repeated output goes
    // through an Identity.
    Operation *producer = value.getDefiningOp();
    bool local = producer && producer->getBlock() == &block &&
                 !llvm::isa<mncc::onnx::InitializerOp>(producer);
    bool wantedMatches =
        wantedNames.empty() || wantedNames[index].empty() ||
        wantedNames[index] == name;
    if (name.empty() || !local || !outputNames.insert(name).second ||
        !wantedMatches) {
      std::string base = !wantedNames.empty() && !wantedNames[index].empty()
                             ? wantedNames[index]
                             : name + "_out";
      std::string fresh = uniqueName(base);
      auto *identity = graph.add_node();
      identity->set_op_type("Identity");
      usesAiOnnx = true;
      identity->add_input(name);
      identity->add_output(fresh);
      name = fresh;
      outputNames.insert(name);
    }
    auto *info = graph.add_output();
    info->set_name(name);
    if (failed(exportType(loc, value.getType(), *info->mutable_type())))
      return failure();
  }
  return success();
}

LogicalResult Exporter::exportOp(Operation *op, ::onnx::GraphProto &graph) {
  if (auto initializer = llvm::dyn_cast<mncc::onnx::InitializerOp>(op)) {
    std::string name = uniqueName(initializer.getName());
    names[initializer.getResult()] = name;
    return exportTensor(op->getLoc(), initializer.getValue(), name,
                        *graph.add_initializer(), true);
  }
  if (llvm::isa<mncc::onnx::NoneOp>(op)) {
    names[op->getResult(0)] = "";
    return success();
  }

  auto *node = graph.add_node();
  node->set_name(nodeNameOf(op->getLoc()));
  llvm::SmallVector<int32_t> inputSegments, outputSegments;
  onnxlib::SchemaInfo schema;
  llvm::SmallVector<std::string> graphNames;
  if (auto custom = llvm::dyn_cast<mncc::onnx::CustomOp>(op)) {
    node->set_domain(custom.getDomain().str());
    usesAiOnnx |= custom.getDomain().empty() ||
                  custom.getDomain() == "ai.onnx";
    node->set_op_type(custom.getOpType().str());
    for (NamedAttribute attribute : custom.getOnnxAttributes())
      if (failed(exportAttribute(op, attribute.getName(),
                                 attribute.getValue(), 0,
                                 *node->add_attribute())))
        return failure();
    for (Attribute name : custom.getGraphAttributeNames())
      graphNames.push_back(llvm::cast<StringAttr>(name).str());
  } else {
    llvm::StringRef opType = op->getName().stripDialect();
    const mncc::onnx::OnnxOpInfo *info = mncc::onnx::lookupOnnxOp(opType);
    if (!info)
      return op->emitError("is not an ONNX operator");
    node->set_op_type(opType.str());
    if (!info->domain.empty())
      node->set_domain(info->domain.str());
    usesAiOnnx |= info->domain.empty();
    schema = onnxlib::lookupSchema(opType, info->domain,
                                   opsetOf(info->domain));
    if (auto segments =
            op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes"))
      inputSegments.assign(segments.asArrayRef().begin(),
                           segments.asArrayRef().end());
    if (auto segments =
            op->getAttrOfType<DenseI32ArrayAttr>("resultSegmentSizes"))
      outputSegments.assign(segments.asArrayRef().begin(),
                            segments.asArrayRef().end());
    for (NamedAttribute attribute : op->getAttrs()) {
      llvm::StringRef name = attribute.getName();
      // A dotted name is a mark of mncc's passes (onnx.fused_activation,
      // mngraph.location), never an ONNX attribute.
      if (name == "operandSegmentSizes" || name == "resultSegmentSizes" ||
          name.contains('.'))
        continue;
      auto expected = schema.attributeTypes.find(name.str());
      if (failed(exportAttribute(
              op, name, attribute.getValue(),
              expected == schema.attributeTypes.end() ? 0 : expected->second,
              *node->add_attribute())))
        return failure();
    }
    for (const auto &[name, type] : schema.attributeTypes)
      if (type == ::onnx::AttributeProto::GRAPH ||
          type == ::onnx::AttributeProto::GRAPHS)
        graphNames.push_back(name);
  }

  // Inputs, with "" for each omitted optional input before a given one.
  if (inputSegments.empty()) {
    for (Value operand : op->getOperands())
      node->add_input(nameOf(operand));
  } else {
    unsigned next = 0;
    for (int32_t size : inputSegments) {
      if (size == 0)
        node->add_input("");
      for (int32_t i = 0; i < size; ++i)
        node->add_input(nameOf(op->getOperand(next++)));
    }
  }
  while (node->input_size() && node->input(node->input_size() - 1).empty())
    node->mutable_input()->RemoveLast();

  std::string base = node->name().empty() ? node->op_type() : node->name();
  auto nameResult = [&](Value result, unsigned index) {
    std::string name = nameOf(result);
    if (name.empty()) {
      name = uniqueName(base + "_output_" + std::to_string(index));
      names[result] = name;
    }
    return name;
  };
  bool custom = llvm::isa<mncc::onnx::CustomOp>(op);
  if (outputSegments.empty()) {
    for (auto [index, result] : llvm::enumerate(op->getResults()))
      node->add_output(custom && llvm::isa<NoneType>(result.getType()) &&
                               result.use_empty()
                           ? ""
                           : nameResult(result, index));
  } else {
    unsigned next = 0;
    for (int32_t size : outputSegments) {
      if (size == 0)
        node->add_output("");
      for (int32_t i = 0; i < size; ++i, ++next)
        node->add_output(nameResult(op->getResult(next), next));
    }
  }
  while (node->output_size() && node->output(node->output_size() - 1).empty())
    node->mutable_output()->RemoveLast();

  // Regions are graph attributes, in the order of their names.
  unsigned regionIndex = 0;
  for (const std::string &graphName : graphNames) {
    if (regionIndex >= op->getNumRegions())
      break;
    auto *attribute = node->add_attribute();
    attribute->set_name(graphName);
    bool several =
        !custom && schema.attributeTypes[graphName] ==
                       ::onnx::AttributeProto::GRAPHS;
    attribute->set_type(several ? ::onnx::AttributeProto::GRAPHS
                                : ::onnx::AttributeProto::GRAPH);
    std::string subgraphName = base + "_" + graphName;
    Region &region = op->getRegion(regionIndex++);
    if (region.empty())
      return op->emitError("graph attribute '") << graphName << "' is empty";
    if (failed(exportBlock(region.front(),
                           several ? *attribute->add_graphs()
                                   : *attribute->mutable_g(),
                           subgraphName)))
      return failure();
  }
  return success();
}

LogicalResult Exporter::exportBlock(Block &block, ::onnx::GraphProto &graph,
                                    llvm::StringRef graphName) {
  graph.set_name(graphName.str());
  for (BlockArgument argument : block.getArguments()) {
    std::string name =
        uniqueName(graphName.str() + "_input_" +
                   std::to_string(argument.getArgNumber()));
    names[argument] = name;
    auto *input = graph.add_input();
    input->set_name(name);
    if (failed(exportType(argument.getLoc(), argument.getType(),
                          *input->mutable_type())))
      return failure();
  }
  for (Operation &op : block) {
    if (auto yield = llvm::dyn_cast<mncc::onnx::YieldOp>(op))
      return exportOutputs(op.getLoc(), block, yield.getValues(), {}, graph);
    if (failed(exportOp(&op, graph)))
      return failure();
  }
  return emitError(block.getParent()->getLoc())
         << "a subgraph must end with onnx.Yield";
}

LogicalResult Exporter::run(::onnx::ModelProto &model) {
  func::FuncOp function;
  for (auto candidate : module.getOps<func::FuncOp>()) {
    if (function)
      return candidate.emitError(
          "an ONNX model has one main graph; this module has several "
          "functions");
    function = candidate;
  }
  if (!function || function.isExternal())
    return module.emitError("no function with a body to export as the graph");

  auto getInt = [&](llvm::StringRef name, int64_t fallback) {
    auto attribute = module->getAttrOfType<IntegerAttr>(name);
    return attribute ? attribute.getInt() : fallback;
  };
  auto getString = [&](llvm::StringRef name) {
    auto attribute = module->getAttrOfType<StringAttr>(name);
    return attribute ? attribute.str() : std::string();
  };
  model.set_ir_version(getInt("onnx.ir_version", 8));
  if (std::string producer = getString("onnx.producer_name"); !producer.empty())
    model.set_producer_name(producer);
  if (std::string version = getString("onnx.producer_version");
      !version.empty())
    model.set_producer_version(version);
  if (std::string domain = getString("onnx.domain"); !domain.empty())
    model.set_domain(domain);
  if (int64_t version = getInt("onnx.model_version", 0))
    model.set_model_version(version);
  if (auto metadata =
          module->getAttrOfType<DictionaryAttr>("onnx.metadata_props"))
    for (NamedAttribute entry : metadata) {
      auto *prop = model.add_metadata_props();
      prop->set_key(entry.getName().str());
      if (auto value = llvm::dyn_cast<StringAttr>(entry.getValue()))
        prop->set_value(value.str());
    }
  if (auto imports = module->getAttrOfType<DictionaryAttr>("onnx.opset_import"))
    for (NamedAttribute entry : imports)
      if (auto version = llvm::dyn_cast<IntegerAttr>(entry.getValue()))
        opsets[entry.getName().str()] = version.getInt();

  ::onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name(function.getName().str());
  Block &body = function.front();
  for (BlockArgument argument : body.getArguments()) {
    auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                      "onnx.name");
    std::string unique = uniqueName(
        name ? name.str() : "input_" + std::to_string(argument.getArgNumber()));
    names[argument] = unique;
    auto *input = graph.add_input();
    input->set_name(unique);
    if (failed(exportType(function.getLoc(), argument.getType(),
                          *input->mutable_type())))
      return failure();
    // The names of its dynamic dimensions, as the importer kept them.
    if (auto params = function.getArgAttrOfType<ArrayAttr>(
            argument.getArgNumber(), "onnx.dim_params");
        params && input->type().has_tensor_type()) {
      auto *shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (auto [d, param] : llvm::enumerate(params)) {
        auto text = llvm::dyn_cast<StringAttr>(param);
        if (text && !text.getValue().empty() && (int)d < shape->dim_size() &&
            !shape->dim(d).has_dim_value())
          shape->mutable_dim(d)->set_dim_param(text.str());
      }
    }
  }
  // Graph outputs keep their names: name the returned values first.
  auto returnOp = llvm::cast<func::ReturnOp>(body.getTerminator());
  llvm::SmallVector<std::string> outputNames;
  for (auto [index, value] : llvm::enumerate(returnOp.getOperands())) {
    auto name = function.getResultAttrOfType<StringAttr>(index, "onnx.name");
    outputNames.push_back(name ? name.str() : "output_" + std::to_string(index));
    Operation *producer = value.getDefiningOp();
    if (!names.count(value) && producer &&
        !llvm::isa<mncc::onnx::InitializerOp>(producer) &&
        !usedNames.contains(outputNames.back()))
      names[value] = uniqueName(outputNames.back());
  }
  for (Operation &op : body.without_terminator())
    if (failed(exportOp(&op, graph)))
      return failure();
  if (failed(exportOutputs(returnOp.getLoc(), body, returnOp.getOperands(),
                           outputNames, graph)))
    return failure();
  // A module made by hand may use ai.onnx without saying which opset.
  if (usesAiOnnx && !opsets.count("ai.onnx"))
    opsets["ai.onnx"] = mncc::onnx::kCanonicalOpset;
  for (const auto &[domain, version] : opsets) {
    auto *opset = model.add_opset_import();
    opset->set_domain(domain == "ai.onnx" ? "" : domain);
    opset->set_version(version);
  }
  // ONNX before IR version 4 lists every initializer as a graph input.
  if (model.ir_version() < 4)
    for (const auto &initializer : graph.initializer()) {
      auto *input = graph.add_input();
      input->set_name(initializer.name());
      auto *tensor = input->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(initializer.data_type());
      auto *shape = tensor->mutable_shape();
      for (int64_t dim : initializer.dims())
        shape->add_dim()->set_dim_value(dim);
    }
  return success();
}

LogicalResult mncc::exportOnnx(ModuleOp module, llvm::raw_ostream &modelOut,
                               const OnnxExportOptions &options,
                               llvm::raw_ostream *externalDataOut) {
  if (options.externalDataThresholdBytes &&
      (options.externalDataLocation.empty() || !externalDataOut))
    return module.emitError(
        "external data needs a file to write it to (--external-data-file)");
  ::onnx::ModelProto model;
  Exporter exporter(module, options, externalDataOut);
  if (failed(exporter.run(model)))
    return failure();
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return module.emitError("the model is too large for one protobuf (2 GiB); "
                            "use external data");
  modelOut.write(bytes.data(), bytes.size());
  return success();
}

std::string mncc::checkOnnxFile(llvm::StringRef path) {
  if (llvm::Error problem = onnxlib::checkModelFile(path))
    return llvm::toString(std::move(problem));
  return "";
}

std::string mncc::checkOnnxBytes(llvm::StringRef bytes) {
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return "the bytes do not parse as an ONNX model";
  if (llvm::Error problem = onnxlib::checkModel(model))
    return llvm::toString(std::move(problem));
  return "";
}
