//===- mncc-conformance.cpp - ONNX test data as mncc's conformance suite --===//
//
//   mncc-conformance --stage=frontend --suite=DIR [--suite=DIR...]
//                    [--report=FILE.json] [--markdown=FILE.md]
//
// Every case is a folder with a model.onnx (the layout of ONNX's backend
// test data). The front-end stage checks that each model imports, verifies,
// exports to a model the ONNX checker accepts, and imports again to the same
// IR. Each case ends as pass, fail (with the reason) or skip (with the
// reason); the last line is "N passed, N failed, N skipped".
//
//===----------------------------------------------------------------------===//

#include "mncc/Registration.h"
#include "mncc/onnx/Export.h"
#include "mncc/onnx/Import.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("mncc-conformance options");

enum class Stage { Frontend };
cl::opt<Stage> stage("stage", cl::desc("What to check"),
                     cl::values(clEnumValN(Stage::Frontend, "frontend",
                                           "import, verify, export, check, "
                                           "re-import")),
                     cl::init(Stage::Frontend), cl::cat(category));
cl::list<std::string> suites("suite",
                             cl::desc("Folder of cases, or of suites of cases"),
                             cl::OneOrMore, cl::cat(category));
cl::opt<std::string> reportPath("report", cl::desc("JSON report to write"),
                                cl::cat(category));
cl::opt<std::string> markdownPath(
    "markdown", cl::desc("Markdown summary to write (docs/supported-ops.md)"),
    cl::cat(category));
cl::opt<std::string> filter("filter",
                            cl::desc("Only cases whose path contains this"),
                            cl::cat(category));

struct CaseResult {
  std::string suite;
  std::string name;
  std::string status; // pass, fail, skip
  std::string reason;
};

/// Collects the diagnostics of one case as its failure reason.
struct Capture {
  explicit Capture(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
              text.empty())
            text = diagnostic.str();
          return success();
        }) {}
  std::string text;
  ScopedDiagnosticHandler handler;
};

std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

CaseResult runFrontend(const std::string &suite, const std::string &caseDir,
                       const DialectRegistry &registry) {
  CaseResult result{suite, llvm::sys::path::filename(caseDir).str(), "fail",
                    ""};
  std::string model = caseDir + "/model.onnx";
  MLIRContext context(registry);
  Capture capture(context);
  OwningOpRef<ModuleOp> first = mncc::importOnnxFile(model, &context);
  if (!first) {
    result.reason = "import: " + capture.text;
    return result;
  }
  std::string bytes;
  {
    llvm::raw_string_ostream os(bytes);
    if (failed(mncc::exportOnnx(*first, os))) {
      result.reason = "export: " + capture.text;
      return result;
    }
  }
  if (std::string problem = mncc::checkOnnxBytes(bytes); !problem.empty()) {
    result.reason = "the exported model fails the ONNX checker: " + problem;
    return result;
  }
  llvm::SmallString<128> exported;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("mncc-conformance", "onnx", fd,
                                         exported)) {
    result.reason = "cannot create a temporary file";
    return result;
  }
  llvm::FileRemover remover(exported);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
  }
  MLIRContext secondContext(registry);
  Capture secondCapture(secondContext);
  OwningOpRef<ModuleOp> second =
      mncc::importOnnxFile(exported, &secondContext);
  if (!second) {
    result.reason = "re-import: " + secondCapture.text;
    return result;
  }
  if (print(*first) != print(*second)) {
    result.reason = "import, export, import does not give the same IR";
    return result;
  }
  result.status = "pass";
  return result;
}

/// The case folders under `root`, each with its suite: the name of the
/// folder that holds the cases.
void findCases(const std::string &root,
               std::vector<std::pair<std::string, std::string>> &cases) {
  std::error_code error;
  std::vector<std::string> children;
  for (llvm::sys::fs::directory_iterator it(root, error), end;
       it != end && !error; it.increment(error))
    if (llvm::sys::fs::is_directory(it->path()))
      children.push_back(it->path());
  std::sort(children.begin(), children.end());
  std::string suite = llvm::sys::path::filename(root).str();
  for (const std::string &child : children) {
    if (llvm::sys::fs::exists(child + "/model.onnx"))
      cases.emplace_back(suite, child);
    else
      findCases(child, cases);
  }
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions({&category, &cl::getGeneralCategory()});
  cl::ParseCommandLineOptions(argc, argv,
                              "mncc-conformance: ONNX test data through mncc\n");
  DialectRegistry registry;
  mncc::registerAllDialects(registry);

  std::vector<std::pair<std::string, std::string>> cases;
  for (const std::string &root : suites) {
    if (!llvm::sys::fs::is_directory(root)) {
      llvm::errs() << "mncc-conformance: error: suite '" << root
                   << "' is not a folder\n";
      return 1;
    }
    size_t before = cases.size();
    findCases(root, cases);
    if (cases.size() == before) {
      llvm::errs() << "mncc-conformance: error: suite '" << root
                   << "' holds no case (no model.onnx below it)\n";
      return 1;
    }
  }

  std::vector<CaseResult> results;
  for (const auto &[suite, caseDir] : cases) {
    if (!filter.empty() && caseDir.find(filter) == std::string::npos)
      continue;
    results.push_back(runFrontend(suite, caseDir, registry));
    const CaseResult &result = results.back();
    if (result.status != "pass")
      llvm::outs() << result.status << ": " << result.suite << "/"
                   << result.name << ": " << result.reason << "\n";
  }

  std::map<std::string, std::map<std::string, int>> perSuite;
  std::map<std::string, int> totals;
  for (const CaseResult &result : results) {
    ++perSuite[result.suite][result.status];
    ++totals[result.status];
  }
  for (const auto &[suite, counts] : perSuite) {
    int all = 0;
    for (const auto &entry : counts)
      all += entry.second;
    llvm::outs() << suite << ": " << (counts.count("pass") ? counts.at("pass") : 0) << "/"
                 << all << " pass\n";
  }

  if (!reportPath.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream os(reportPath, error);
    if (error) {
      llvm::errs() << "mncc-conformance: error: " << reportPath << ": "
                   << error.message() << "\n";
      return 1;
    }
    llvm::json::OStream json(os, 2);
    json.object([&] {
      json.attribute("stage", "frontend");
      json.attributeObject("totals", [&] {
        for (const char *status : {"pass", "fail", "skip"})
          json.attribute(status, totals[status]);
      });
      json.attributeArray("cases", [&] {
        for (const CaseResult &result : results)
          json.object([&] {
            json.attribute("suite", result.suite);
            json.attribute("case", result.name);
            json.attribute("status", result.status);
            if (!result.reason.empty())
              json.attribute("reason", result.reason);
          });
      });
    });
  }
  if (!markdownPath.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream os(markdownPath, error);
    if (error) {
      llvm::errs() << "mncc-conformance: error: " << markdownPath << ": "
                   << error.message() << "\n";
      return 1;
    }
    os << "# Supported ONNX models and operators\n\n"
       << "Generated by `mncc-conformance --stage=frontend --markdown=...` "
          "over Debian's libonnx-testdata (ONNX 1.12); see "
          "`make supported-ops`.\n\n"
       << "## Front end: import, verify, export, ONNX checker, re-import\n\n"
       << "| suite | pass | fail | skip |\n| --- | --- | --- | --- |\n";
    for (const auto &[suite, counts] : perSuite) {
      auto get = [&](const char *status) {
        auto found = counts.find(status);
        return found == counts.end() ? 0 : found->second;
      };
      os << "| " << suite << " | " << get("pass") << " | " << get("fail")
         << " | " << get("skip") << " |\n";
    }
    os << "\n";
    bool any = false;
    for (const CaseResult &result : results)
      if (result.status != "pass") {
        if (!any)
          os << "Cases that do not pass, and why:\n\n";
        any = true;
        os << "- `" << result.suite << "/" << result.name << "` ("
           << result.status << "): " << result.reason << "\n";
      }
    if (!any)
      os << "Every case passes.\n";
  }
  llvm::outs() << totals["pass"] << " passed, " << totals["fail"]
               << " failed, " << totals["skip"] << " skipped\n";
  return totals["fail"] ? 1 : 0;
}
