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

llvm::Error onnxlib::inferShapes(::onnx::ModelProto &model, bool checkTypes) {
  try {
    ::onnx::ShapeInferenceOptions options(checkTypes,
                                          /*error_mode=*/0,
                                          /*data_propagation=*/true);
    ::onnx::shape_inference::InferShapes(
        model, ::onnx::OpSchemaRegistry::Instance(), options);
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
