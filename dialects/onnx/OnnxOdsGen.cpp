//===- OnnxOdsGen.cpp - ODS for the onnx dialect from libonnx's schemas ---===//
//
// Writes one ODS op per operator of the ONNX library the project builds
// against (ai.onnx up to opset 17 and ai.onnx.preview.training), with its
// operands, results, attributes, defaults and documentation, and a table of
// (op, domain, since-version) rows for the importer and exporter. It runs at
// build time, so the dialect always matches the installed libonnx.
//
//===----------------------------------------------------------------------===//

#include "onnx/defs/schema.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kCanonicalOpset = 17;

struct Domain {
  const char *name;
  int maxVersion;
};

// The domains that get typed ops; every other domain imports as onnx.Custom.
const Domain kDomains[] = {{"", kCanonicalOpset},
                           {"ai.onnx.preview.training", 1}};

const std::set<std::string> kCxxReserved = {
    "and",      "auto",     "bool",    "break",  "case",   "char",
    "class",    "const",    "continue", "default", "delete", "do",
    "double",   "else",     "enum",    "explicit", "float", "for",
    "if",       "int",      "long",    "namespace", "new", "not",
    "operator", "or",       "private", "public", "return", "short",
    "signed",   "sizeof",   "static",  "struct", "switch", "template",
    "this",     "typename", "union",   "unsigned", "using", "void",
    "while",    "xor",      "operands", "results", "attributes", "regions",
    "name",     "type",     "properties", "context", "loc", "location"};

// Ops whose results are not a function of their inputs.
const std::set<std::string> kNotPure = {
    "Bernoulli", "Dropout", "Multinomial", "RandomNormal",
    "RandomNormalLike", "RandomUniform", "RandomUniformLike"};

std::string odsName(const std::string &onnxName) {
  std::string name;
  for (char c : onnxName)
    name += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (name.empty() || isdigit(static_cast<unsigned char>(name[0])))
    name = "_" + name;
  if (kCxxReserved.count(name))
    name += "_";
  return name;
}

std::string escapeString(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string escapeCode(std::string text) {
  // "}]" would end an ODS code block.
  for (size_t at = text.find("}]"); at != std::string::npos;
       at = text.find("}]", at))
    text.replace(at, 2, "} ]");
  return text;
}

std::string summaryOf(const char *doc, const std::string &opName) {
  if (!doc)
    return "ONNX " + opName + " operator";
  std::string text = doc;
  // The first sentence, flattened to one line.
  size_t end = text.find(". ");
  size_t paragraph = text.find("\n\n");
  end = std::min(end == std::string::npos ? text.size() : end + 1,
                 paragraph == std::string::npos ? text.size() : paragraph);
  std::string sentence = text.substr(0, end);
  std::string flat;
  bool space = false;
  for (char c : sentence) {
    if (isspace(static_cast<unsigned char>(c))) {
      space = !flat.empty();
      continue;
    }
    if (space)
      flat += ' ';
    space = false;
    flat += c;
  }
  if (flat.size() > 160)
    flat = flat.substr(0, 157) + "...";
  return flat.empty() ? "ONNX " + opName + " operator" : flat;
}

/// The ODS element type of an ONNX tensor element type name, or "".
std::string elementTypeOf(const std::string &onnxType) {
  static const std::map<std::string, std::string> types = {
      {"float16", "F16"},   {"float", "F32"},     {"double", "F64"},
      {"bfloat16", "BF16"}, {"int8", "I8"},       {"int16", "I16"},
      {"int32", "I32"},     {"int64", "I64"},     {"uint8", "UI8"},
      {"uint16", "UI16"},   {"uint32", "UI32"},   {"uint64", "UI64"},
      {"bool", "I1"},       {"string", "Onnx_StringType"},
      {"complex64", "Complex<F32>"}, {"complex128", "Complex<F64>"}};
  auto found = types.find(onnxType);
  return found == types.end() ? "" : found->second;
}

/// ODS constraint for a list of allowed ONNX type strings: TensorOf<...>
/// when all are tensors of known element types, AnyType otherwise
/// (sequences, maps, optionals, sparse tensors).
std::string constraintOf(const std::vector<std::string> &allowed) {
  std::vector<std::string> elements;
  for (const std::string &type : allowed) {
    const std::string prefix = "tensor(";
    if (type.compare(0, prefix.size(), prefix) != 0 || type.back() != ')')
      return "AnyType";
    std::string element =
        elementTypeOf(type.substr(prefix.size(), type.size() - prefix.size() - 1));
    if (element.empty())
      return "AnyType";
    if (std::find(elements.begin(), elements.end(), element) == elements.end())
      elements.push_back(element);
  }
  if (elements.empty())
    return "AnyType";
  std::string out = "TensorOf<[";
  for (size_t i = 0; i < elements.size(); ++i)
    out += (i ? ", " : "") + elements[i];
  return out + "]>";
}

std::string parameterConstraint(const onnx::OpSchema &schema,
                                const onnx::OpSchema::FormalParameter &param) {
  for (const auto &constraint : schema.typeConstraintParams())
    if (constraint.type_param_str == param.GetTypeStr())
      return constraintOf(constraint.allowed_type_strs);
  return constraintOf({param.GetTypeStr()});
}

std::string wrapOption(const onnx::OpSchema::FormalParameter &param,
                       const std::string &constraint) {
  switch (param.GetOption()) {
  case onnx::OpSchema::Optional:
    return "Optional<" + constraint + ">";
  case onnx::OpSchema::Variadic:
    return "Variadic<" + constraint + ">";
  default:
    return constraint;
  }
}

std::string floatLiteral(float value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  std::string text = buffer;
  if (text.find_first_of(".eEn") == std::string::npos)
    text += ".0";
  return text;
}

/// ODS attribute constraint for an ONNX attribute, with its default.
/// Returns "" for graph attributes, which become regions.
std::string attributeConstraint(const onnx::OpSchema::Attribute &attr) {
  using onnx::AttributeProto;
  std::string base;
  switch (attr.type) {
  case AttributeProto::FLOAT: base = "F32Attr"; break;
  case AttributeProto::INT: base = "I64Attr"; break;
  case AttributeProto::STRING: base = "StrAttr"; break;
  case AttributeProto::TENSOR: base = "ElementsAttr"; break;
  case AttributeProto::SPARSE_TENSOR: base = "ElementsAttr"; break;
  case AttributeProto::TYPE_PROTO: base = "TypeAttr"; break;
  case AttributeProto::FLOATS: base = "F32ArrayAttr"; break;
  case AttributeProto::INTS: base = "I64ArrayAttr"; break;
  case AttributeProto::STRINGS: base = "StrArrayAttr"; break;
  case AttributeProto::TENSORS:
    base = "TypedArrayAttrBase<ElementsAttr, \"array of tensors\">";
    break;
  case AttributeProto::TYPE_PROTOS: base = "TypeArrayAttr"; break;
  case AttributeProto::GRAPH:
  case AttributeProto::GRAPHS:
    return "";
  default:
    base = "AnyAttr";
    break;
  }
  if (attr.required)
    return base;
  const AttributeProto &value = attr.default_value;
  bool hasDefault = value.has_f() || value.has_i() || value.has_s() ||
                    value.floats_size() || value.ints_size() ||
                    value.strings_size();
  if (!hasDefault)
    return "OptionalAttr<" + base + ">";
  std::ostringstream def;
  switch (attr.type) {
  case AttributeProto::FLOAT:
    def << floatLiteral(value.f());
    break;
  case AttributeProto::INT:
    def << value.i();
    break;
  case AttributeProto::STRING:
    return "DefaultValuedStrAttr<StrAttr, \"" + escapeString(value.s()) +
           "\">";
  case AttributeProto::FLOATS:
    def << "{";
    for (int i = 0; i < value.floats_size(); ++i)
      def << (i ? ", " : "") << floatLiteral(value.floats(i)) << "f";
    def << "}";
    break;
  case AttributeProto::INTS:
    def << "{";
    for (int i = 0; i < value.ints_size(); ++i)
      def << (i ? ", " : "") << value.ints(i);
    def << "}";
    break;
  case AttributeProto::STRINGS:
    def << "{";
    for (int i = 0; i < value.strings_size(); ++i)
      def << (i ? ", " : "") << "\\\"" << escapeString(value.strings(i))
          << "\\\"";
    def << "}";
    break;
  default:
    return "OptionalAttr<" + base + ">";
  }
  return "DefaultValuedAttr<" + base + ", \"" + def.str() + "\">";
}

/// What an op gets beyond its schema, as onnx-mlir's generator gives it
/// (OpsWithFolder, OpsWithCanonicalizer, OpsWithVerifier, ...): the C++
/// lives in dialects/onnx (OnnxFolders.cpp, OnnxCanonicalize.cpp,
/// OnnxVerifiers.cpp). A hook never changes what the op means: folders and
/// canonicalizers rewrite to an equal value, verifiers reject only what
/// ONNX rejects, and extra traits only state what holds for every model.
struct OpHooks {
  bool folder = false;
  bool canonicalizer = false;
  bool verifier = false;
  /// Traits beyond Pure and the segment sizes ("Commutative").
  std::vector<std::string> traits;
  /// Interfaces, as ODS names them
  /// ("DeclareOpInterfaceMethods<InferTypeOpInterface>").
  std::vector<std::string> interfaces;
  /// C++ added to the op class.
  std::string extraClassDeclaration;
};

const std::map<std::string, OpHooks> &opHooks() {
  static const std::map<std::string, OpHooks> hooks = [] {
    std::map<std::string, OpHooks> table;
    // Values equal to an operand when the op changes nothing (same type).
    for (const char *name : {"Identity", "Expand", "Flatten", "Squeeze"})
      table[name].folder = true;
    // Cast: same type folds; Cast(Cast(x)) through a type that holds every
    // value of x's becomes one Cast.
    table["Cast"].folder = true;
    table["Cast"].canonicalizer = true;
    // Reshape: same type folds; Reshape(Reshape(x)) is one Reshape.
    table["Reshape"].folder = true;
    table["Reshape"].canonicalizer = true;
    // Transpose: the identity permutation folds; pairs compose; perm must
    // be a permutation of the input's dimensions.
    table["Transpose"].folder = true;
    table["Transpose"].canonicalizer = true;
    table["Transpose"].verifier = true;
    table["Transpose"].extraClassDeclaration =
        "/// The permutation, the default (reversed dimensions) filled in;\n"
        "    /// empty when the input is unranked.\n"
        "    ::llvm::SmallVector<int64_t> getPermutation();";
    // Dropout in inference is its input.
    table["Dropout"].canonicalizer = true;
    // Axes in range for ranked operands.
    for (const char *name : {"Concat", "Gather", "Softmax", "LogSoftmax",
                             "Hardmax", "Split", "GatherElements"})
      table[name].verifier = true;
    // Operand order does not matter (the CSE of passes/pfvm uses it).
    for (const char *name : {"Add", "Mul", "Sum", "And", "Or", "Xor", "Equal"})
      table[name].traits.push_back("Commutative");
    return table;
  }();
  return hooks;
}

const OpHooks &hooksOf(const std::string &name) {
  static const OpHooks none;
  auto found = opHooks().find(name);
  return found == opHooks().end() ? none : found->second;
}

void emitOp(std::ostream &os, const onnx::OpSchema &schema) {
  const std::string &name = schema.Name();
  std::set<std::string> used;
  auto unique = [&](std::string candidate) {
    while (used.count(candidate))
      candidate += "_";
    used.insert(candidate);
    return candidate;
  };

  std::vector<std::string> arguments, results, regions;
  int variableOperands = 0, variableResults = 0;
  for (const auto &input : schema.inputs()) {
    arguments.push_back(wrapOption(input, parameterConstraint(schema, input)) +
                        ":$" + unique(odsName(input.GetName())));
    variableOperands += input.GetOption() != onnx::OpSchema::Single;
  }
  for (const auto &[attrName, attr] : schema.attributes()) {
    std::string constraint = attributeConstraint(attr);
    if (constraint.empty()) {
      bool several = attr.type == onnx::AttributeProto::GRAPHS;
      regions.push_back(std::string(several ? "VariadicRegion<AnyRegion>"
                                            : "AnyRegion") +
                        ":$" + unique(odsName(attrName)));
      continue;
    }
    arguments.push_back(constraint + ":$" + unique(odsName(attrName)));
  }
  for (const auto &output : schema.outputs()) {
    results.push_back(
        wrapOption(output, parameterConstraint(schema, output)) + ":$" +
        unique(odsName(output.GetName())));
    variableResults += output.GetOption() != onnx::OpSchema::Single;
  }

  const OpHooks &hooks = hooksOf(name);
  std::vector<std::string> traits;
  if (!kNotPure.count(name))
    traits.push_back(regions.empty() ? "Pure" : "RecursiveMemoryEffects");
  if (variableOperands > 1)
    traits.push_back("AttrSizedOperandSegments");
  if (variableResults > 1)
    traits.push_back("AttrSizedResultSegments");
  traits.insert(traits.end(), hooks.traits.begin(), hooks.traits.end());
  traits.insert(traits.end(), hooks.interfaces.begin(), hooks.interfaces.end());

  os << "def Onnx_" << odsName(name) << "Op : Onnx_Op<\"" << name << "\", [";
  for (size_t i = 0; i < traits.size(); ++i)
    os << (i ? ", " : "") << traits[i];
  os << "]> {\n";
  os << "  let summary = \"" << escapeString(summaryOf(schema.doc(), name))
     << "\";\n";
  os << "  let description = [{\n    ONNX `" << name << "`";
  if (!schema.domain().empty())
    os << " of domain `" << schema.domain() << "`";
  os << ", version " << schema.SinceVersion()
     << (schema.Deprecated() ? " (deprecated)" : "") << ".\n\n";
  if (schema.doc())
    os << escapeCode(schema.doc()) << "\n";
  os << "  }];\n";
  auto emitList = [&](const char *what, const char *kind,
                      const std::vector<std::string> &items) {
    os << "  let " << what << " = (" << kind;
    for (size_t i = 0; i < items.size(); ++i)
      os << (i ? ",\n      " : " ") << items[i];
    os << ");\n";
  };
  emitList("arguments", "ins", arguments);
  emitList("results", "outs", results);
  if (!regions.empty())
    emitList("regions", "region", regions);
  if (hooks.folder)
    os << "  let hasFolder = 1;\n";
  if (hooks.canonicalizer)
    os << "  let hasCanonicalizer = 1;\n";
  if (hooks.verifier)
    os << "  let hasVerifier = 1;\n";
  if (!hooks.extraClassDeclaration.empty())
    os << "  let extraClassDeclaration = [{\n    "
       << hooks.extraClassDeclaration << "\n  }];\n";
  os << "}\n\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " OUT_OPS_TD OUT_TABLE_INC\n";
    return 1;
  }
  std::vector<const onnx::OpSchema *> schemas;
  std::set<std::pair<std::string, std::string>> seen;
  for (const onnx::OpSchema &schema :
       onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    for (const Domain &domain : kDomains) {
      if (schema.domain() != domain.name ||
          !seen.insert({schema.domain(), schema.Name()}).second)
        continue;
      if (const onnx::OpSchema *latest = onnx::OpSchemaRegistry::Schema(
              schema.Name(), domain.maxVersion, domain.name))
        schemas.push_back(latest);
    }
  }
  std::sort(schemas.begin(), schemas.end(), [](auto *a, auto *b) {
    return a->Name() < b->Name();
  });

  std::ofstream ops(argv[1]);
  ops << "// Generated by mncc-onnx-odsgen from the ONNX "
         "library's schemas. Do not edit.\n\n"
      << "#ifndef MNCC_DIALECTS_ONNX_ONNXOPS_TD\n"
      << "#define MNCC_DIALECTS_ONNX_ONNXOPS_TD\n\n"
      << "include \"mncc/dialects/onnx/OnnxBase.td\"\n\n";
  // A hook for an op the library does not have is a mistake in the table.
  for (const auto &[name, hooks] : opHooks())
    if (std::none_of(schemas.begin(), schemas.end(),
                     [&](auto *schema) { return schema->Name() == name; })) {
      std::cerr << argv[0] << ": hooks for '" << name
                << "', which is not an operator of this ONNX library\n";
      return 1;
    }
  for (const onnx::OpSchema *schema : schemas)
    emitOp(ops, *schema);
  ops << "#endif // MNCC_DIALECTS_ONNX_ONNXOPS_TD\n";

  std::ofstream table(argv[2]);
  table << "// Generated by mncc-onnx-odsgen. Do not edit.\n"
        << "// ONNX_OP(OpClass, \"op_type\", \"domain\", since_version,\n"
        << "//         \"graph,attributes\" in region order)\n";
  for (const onnx::OpSchema *schema : schemas) {
    std::string graphs;
    for (const auto &[name, attribute] : schema->attributes())
      if (attribute.type == onnx::AttributeProto::GRAPH ||
          attribute.type == onnx::AttributeProto::GRAPHS)
        graphs += (graphs.empty() ? "" : ",") + name;
    table << "ONNX_OP(" << odsName(schema->Name()) << "Op, \""
          << schema->Name() << "\", \"" << schema->domain() << "\", "
          << schema->SinceVersion() << ", \"" << graphs << "\")\n";
  }
  table << "#undef ONNX_OP\n";
  if (!ops || !table) {
    std::cerr << argv[0] << ": cannot write the output files\n";
    return 1;
  }
  return 0;
}
