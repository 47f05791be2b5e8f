//===- OnnxLibrary.cpp - The calls into libonnx, without exceptions -------===//
//
// The only file of the project compiled with exceptions on: each wrapper
// catches what libonnx throws.
//
//===----------------------------------------------------------------------===//

#include "OnnxLibrary.h"

#include "onnx/checker.h"
#include "onnx/defs/data_type_utils.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>

using namespace mncc;

static llvm::Error errorFrom(const std::exception &exception) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 exception.what());
}

static llvm::Error unknownError() {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "libonnx failed with an unknown exception");
}

llvm::Error onnxlib::parseText(llvm::StringRef text,
                               ::onnx::ModelProto &model) {
  try {
    std::string terminated = text.str();
    ::onnx::Status status =
        ::onnx::OnnxParser::Parse(model, terminated.c_str());
    if (!status.IsOK())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     status.ErrorMessage());
    return llvm::Error::success();
  } catch (const std::exception &exception) {
    return errorFrom(exception);
  } catch (...) {
    return unknownError();
  }
}

llvm::Error onnxlib::convertVersion(::onnx::ModelProto &model,
                                    int targetOpset) {
  try {
    model = ::onnx::version_conversion::ConvertVersion(model, targetOpset);
    return llvm::Error::success();
  } catch (const std::exception &exception) {
    return errorFrom(exception);
  } catch (...) {
    return unknownError();
  }
}

namespace {

/// The first problem a checked inference function found in this thread's
/// current inferShapes call.
thread_local std::string inferenceProblem;

/// What libonnx's inference of a convolution or a pool trusts without
/// checking (convPoolShapeInference, ONNX 1.12): that X and W have the same
/// rank when the kernel comes from W (a Conv with a rank-2 X and a rank-4 W
/// read past the end of a vector: found by fuzzing), that the window
/// attributes have one entry per spatial dimension (pads two), and that
/// strides, dilations and kernel_shape are positive (it divides by them).
/// `weight` is W's input index, or -1 for a pool. Empty when consistent.
std::string windowProblem(::onnx::InferenceContext &ctx, int weight) {
  auto rankOf = [&](int index) -> int {
    if (index < 0 || size_t(index) >= ctx.getNumInputs())
      return -1;
    const ::onnx::TypeProto *type = ctx.getInputType(size_t(index));
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
      return -1;
    return type->tensor_type().shape().dim_size();
  };
  int x = rankOf(0), w = rankOf(weight);
  if (x >= 0 && x < 2)
    return "X has rank " + std::to_string(x) + ", it needs at least 2";
  if (x >= 0 && w >= 0 && x != w)
    return "X has rank " + std::to_string(x) + " and W rank " +
           std::to_string(w) + "; they must be equal";
  int spatial = x >= 2 ? x - 2 : w >= 2 ? w - 2 : -1;
  struct Expected {
    const char *name;
    int factor;
    bool positive;
  };
  for (Expected attribute : {Expected{"kernel_shape", 1, true},
                             Expected{"strides", 1, true},
                             Expected{"dilations", 1, true},
                             Expected{"pads", 2, false},
                             Expected{"output_padding", 1, false}}) {
    const ::onnx::AttributeProto *given = ctx.getAttribute(attribute.name);
    if (!given)
      continue;
    if (spatial >= 0 && given->ints_size() != attribute.factor * spatial)
      return std::string("'") + attribute.name + "' has " +
             std::to_string(given->ints_size()) + " entries for " +
             std::to_string(spatial) + " spatial dimensions";
    if (attribute.positive)
      for (int64_t value : given->ints())
        if (value < 1)
          return std::string("'") + attribute.name + "' must be positive";
  }
  return "";
}

/// libonnx's schemas, with the inference of the window operators checked
/// first (windowProblem): a problem is reported after inference instead
/// of libonnx reading out of bounds.
class CheckedSchemaRegistry : public ::onnx::ISchemaRegistry {
public:
  const ::onnx::OpSchema *
  GetSchema(const std::string &key, const int maxInclusiveVersion,
            const std::string &domain) const override {
    const ::onnx::OpSchema *schema =
        ::onnx::OpSchemaRegistry::Instance()->GetSchema(
            key, maxInclusiveVersion, domain);
    int weight = weightIndex(key, domain);
    if (!schema || weight == kNotWindow)
      return schema;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<::onnx::OpSchema> &checked = wrapped[schema];
    if (!checked) {
      checked = std::make_unique<::onnx::OpSchema>(*schema);
      ::onnx::InferenceFunction original =
          schema->GetTypeAndShapeInferenceFunction();
      checked->TypeAndShapeInferenceFunction(
          [original, weight, key](::onnx::InferenceContext &ctx) {
            std::string problem = windowProblem(ctx, weight);
            if (!problem.empty()) {
              if (inferenceProblem.empty())
                inferenceProblem = "a " + key + " node: " + problem;
              return;
            }
            if (original)
              original(ctx);
          });
    }
    return checked.get();
  }

private:
  static constexpr int kNotWindow = -2;
  /// W's input index for a convolution, -1 for a pool, kNotWindow else.
  static int weightIndex(const std::string &op, const std::string &domain) {
    if (!domain.empty() && domain != "ai.onnx")
      return kNotWindow;
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose")
      return 1;
    if (op == "QLinearConv")
      return 3;
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool" ||
        op == "MaxUnpool")
      return -1;
    return kNotWindow;
  }
  mutable std::mutex mutex;
  mutable std::map<const ::onnx::OpSchema *, std::unique_ptr<::onnx::OpSchema>>
      wrapped;
};

} // namespace

llvm::Error onnxlib::inferShapes(::onnx::ModelProto &model, bool checkTypes) {
  static CheckedSchemaRegistry *registry = new CheckedSchemaRegistry();
  try {
    ::onnx::ShapeInferenceOptions options(checkTypes,
                                          /*error_mode=*/0,
                                          /*data_propagation=*/true);
    inferenceProblem.clear();
    ::onnx::shape_inference::InferShapes(model, registry, options);
    if (!inferenceProblem.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     inferenceProblem);
    return llvm::Error::success();
  } catch (const std::exception &exception) {
    return errorFrom(exception);
  } catch (...) {
    return unknownError();
  }
}

llvm::Error onnxlib::checkModel(const ::onnx::ModelProto &model) {
  try {
    ::onnx::checker::check_model(model);
    return llvm::Error::success();
  } catch (const std::exception &exception) {
    return errorFrom(exception);
  } catch (...) {
    return unknownError();
  }
}

llvm::Error onnxlib::checkModelFile(llvm::StringRef path) {
  try {
    ::onnx::checker::check_model(path.str());
    return llvm::Error::success();
  } catch (const std::exception &exception) {
    return errorFrom(exception);
  } catch (...) {
    return unknownError();
  }
}

onnxlib::SchemaInfo onnxlib::lookupSchema(llvm::StringRef opType,
                                          llvm::StringRef domain, int opset) {
  SchemaInfo info;
  try {
    const ::onnx::OpSchema *schema = ::onnx::OpSchemaRegistry::Schema(
        opType.str(), opset, domain == "ai.onnx" ? "" : domain.str());
    if (!schema)
      return info;
    info.found = true;
    info.sinceVersion = schema->SinceVersion();
    for (const auto &input : schema->inputs()) {
      FormalInput formal;
      formal.name = input.GetName();
      formal.typeParameter = input.GetTypeStr();
      formal.variadic =
          input.GetOption() == ::onnx::OpSchema::FormalParameterOption::Variadic;
      formal.optional =
          input.GetOption() == ::onnx::OpSchema::FormalParameterOption::Optional;
      formal.homogeneous = input.GetIsHomogeneous();
      for (const auto &constraint : schema->typeConstraintParams())
        if (constraint.type_param_str == formal.typeParameter)
          formal.allowedTypes = constraint.allowed_type_strs;
      if (formal.allowedTypes.empty())
        formal.allowedTypes.push_back(formal.typeParameter);
      info.inputs.push_back(std::move(formal));
    }
    info.outputCount = schema->outputs().size();
    info.minInputs = schema->min_input();
    info.maxInputs = schema->max_input();
    info.minOutputs = schema->min_output();
    info.maxOutputs = schema->max_output();
    for (const auto &[name, attribute] : schema->attributes()) {
      info.attributeTypes[name] = attribute.type;
      if (attribute.required)
        info.requiredAttributes.push_back(name);
    }
  } catch (...) {
    info = SchemaInfo();
  }
  return info;
}

int onnxlib::maxKnownOpset(llvm::StringRef domain) {
  try {
    const auto &map =
        ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto found = map.find(domain == "ai.onnx" ? "" : domain.str());
    return found == map.end() ? -1 : found->second.second;
  } catch (...) {
    return -1;
  }
}

std::string onnxlib::typeString(const ::onnx::TypeProto &type) {
  try {
    return *::onnx::Utils::DataTypeUtils::ToType(type);
  } catch (...) {
    return "unknown";
  }
}
