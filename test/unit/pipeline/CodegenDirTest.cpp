//===- CodegenDirTest.cpp - The codegen_dir transaction -------------------===//

#include "mncc/pipeline/CodegenDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace mncc::pipeline;
namespace fs = llvm::sys::fs;

namespace {

class CodegenDir : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(fs::createUniqueDirectory("mncc-codegen-dir", root));
    target = path("out");
  }
  void TearDown() override { fs::remove_directories(root); }

  std::string path(llvm::StringRef relative) const {
    llvm::SmallString<256> full(root);
    llvm::sys::path::append(full, relative);
    return full.str().str();
  }
  std::string read(llvm::StringRef file) const {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    return buffer ? (*buffer)->getBuffer().str() : "(missing)";
  }
  // The names in the test's folder, hidden ones included.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    std::error_code error;
    for (fs::directory_iterator it(root, error), end; !error && it != end;
         it.increment(error))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }

  llvm::SmallString<256> root;
  std::string target;
};

TEST_F(CodegenDir, NothingIsVisibleUntilCommit) {
  auto transaction = CodegenDirTransaction::begin(target);
  ASSERT_TRUE(static_cast<bool>(transaction));
  ASSERT_FALSE(static_cast<bool>(
      (*transaction)->writeFile("ir/1-import.mlir", "module {}\n")));
  EXPECT_FALSE(fs::exists(target));
  EXPECT_TRUE(llvm::StringRef((*transaction)->stagingDir())
                  .starts_with(path(".out.tmp-")));
  ASSERT_FALSE(static_cast<bool>((*transaction)->commit()));
  EXPECT_EQ(read(path("out/ir/1-import.mlir")), "module {}\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"out"});
}

TEST_F(CodegenDir, AnAbandonedTransactionLeavesNothing) {
  {
    auto transaction = CodegenDirTransaction::begin(path("a/b/out"));
    ASSERT_TRUE(static_cast<bool>(transaction));
    ASSERT_FALSE(static_cast<bool>((*transaction)->writeFile("x", "y")));
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(CodegenDir, ACommitReplacesAPreviousCodegenDir) {
  for (const char *contents : {"first", "second"}) {
    auto transaction = CodegenDirTransaction::begin(target);
    ASSERT_TRUE(static_cast<bool>(transaction));
    ASSERT_FALSE(static_cast<bool>(
        (*transaction)->writeFile("compile_status.json", contents)));
    ASSERT_FALSE(static_cast<bool>((*transaction)->commit()));
  }
  EXPECT_EQ(read(path("out/compile_status.json")), "second");
  EXPECT_EQ(entries(), std::vector<std::string>{"out"});
}

TEST_F(CodegenDir, AFailedCompileKeepsThePreviousOne) {
  {
    auto good = CodegenDirTransaction::begin(target);
    ASSERT_TRUE(static_cast<bool>(good));
    ASSERT_FALSE(
        static_cast<bool>((*good)->writeFile("compile_status.json", "good")));
    ASSERT_FALSE(static_cast<bool>((*good)->commit()));
  }
  {
    auto failed = CodegenDirTransaction::begin(target);
    ASSERT_TRUE(static_cast<bool>(failed));
    ASSERT_FALSE(
        static_cast<bool>((*failed)->writeFile("compile_status.json", "half")));
  }
  EXPECT_EQ(read(path("out/compile_status.json")), "good");
  EXPECT_EQ(entries(), std::vector<std::string>{"out"});
}

TEST_F(CodegenDir, OnlyACodegenDirOrAnEmptyFolderIsReplaced) {
  ASSERT_FALSE(fs::create_directories(target));
  EXPECT_TRUE(static_cast<bool>(CodegenDirTransaction::begin(target)));
  {
    std::error_code error;
    llvm::raw_fd_ostream os(path("out/notes.txt"), error);
  }
  auto refused = CodegenDirTransaction::begin(target);
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            target + " exists and is not a codegen_dir (it has no "
                     "compile_status.json); not replacing it");
  auto file = CodegenDirTransaction::begin(path("out/notes.txt"));
  ASSERT_FALSE(static_cast<bool>(file));
  EXPECT_EQ(llvm::toString(file.takeError()),
            path("out/notes.txt") + " exists and is not a directory");
  EXPECT_EQ(read(path("out/notes.txt")), "");
}

TEST_F(CodegenDir, FilesStayInside) {
  auto transaction = CodegenDirTransaction::begin(target);
  ASSERT_TRUE(static_cast<bool>(transaction));
  for (const char *bad : {"../escape", "/tmp/x", "ir/../../x", ""}) {
    llvm::Error error = (*transaction)->writeFile(bad, "x");
    ASSERT_TRUE(static_cast<bool>(error)) << bad;
    EXPECT_EQ(llvm::toString(std::move(error)),
              "'" + std::string(bad) +
                  "' is not a path inside the codegen_dir");
  }
}

} // namespace
