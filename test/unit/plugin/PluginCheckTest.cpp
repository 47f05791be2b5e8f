//===- PluginCheckTest.cpp - Plugins are checked before loading -----------===//

#include "mncc/plugin/PluginCheck.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mncc;

namespace {

std::string checkArguments(std::vector<std::string> arguments,
                           bool *allGood = nullptr) {
  std::vector<char *> argv;
  for (std::string &argument : arguments)
    argv.push_back(argument.data());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  bool result = checkPluginArguments(argv.size(), argv.data(), os);
  if (allGood)
    *allGood = result;
  return os.str();
}

TEST(PluginCheck, MissingFileIsNamed) {
  llvm::Error error = checkPlugin("/nonexistent/plugin.so", PluginKind::Pass);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "No such file or directory");
}

TEST(PluginCheck, TextFileIsNotAPlugin) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("plugin", "so", path));
  llvm::FileRemover remover(path);
  {
    std::error_code ec;
    llvm::raw_fd_ostream file(path, ec);
    ASSERT_FALSE(ec);
    file << "this is not a plugin\n";
  }
  llvm::Error error = checkPlugin(path, PluginKind::Dialect);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "it is not a shared library (not an object file)");
}

TEST(PluginCheck, EveryPluginOptionFormIsChecked) {
  bool allGood = true;
  std::string errors =
      checkArguments({"mncc-opt", "--load-pass-plugin=/missing/a.so",
                      "-load-dialect-plugin", "/missing/b.so", "input.mlir"},
                     &allGood);
  EXPECT_FALSE(allGood);
  EXPECT_EQ(errors, "mncc-opt: error: cannot load pass plugin "
                    "'/missing/a.so': No such file or directory\n"
                    "mncc-opt: error: cannot load dialect plugin "
                    "'/missing/b.so': No such file or directory\n");
}

TEST(PluginCheck, OtherOptionsAndPositionalsAreLeftAlone) {
  bool allGood = false;
  // After "--" every argument is a file name, as for LLVM's option parser;
  // an option missing its value is left for that parser to report.
  std::string errors = checkArguments(
      {"mncc-opt", "--pass-pipeline=builtin.module(canonicalize)",
       "input.mlir", "--", "--load-pass-plugin=/missing/c.so"},
      &allGood);
  EXPECT_TRUE(allGood);
  EXPECT_EQ(errors, "");
  errors = checkArguments({"mncc-opt", "--load-dialect-plugin"}, &allGood);
  EXPECT_TRUE(allGood);
  EXPECT_EQ(errors, "");
}

} // namespace
