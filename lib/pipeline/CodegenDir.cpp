//===- CodegenDir.cpp - Writing a codegen_dir atomically ------------------===//

#include "mncc/pipeline/CodegenDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mncc::pipeline;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

llvm::Error fileError(const llvm::Twine &file, std::error_code error) {
  return llvm::createStringError(error, file + ": " + error.message());
}

llvm::Error dirError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// Whether `dir` is empty or a codegen_dir, the only directories a compile
// may replace.
bool isReplaceable(llvm::StringRef dir) {
  llvm::SmallString<256> status(dir);
  path::append(status, "compile_status.json");
  if (fs::exists(status))
    return true;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  return !error && it == fs::directory_iterator();
}

} // namespace

llvm::Expected<std::unique_ptr<CodegenDirTransaction>>
CodegenDirTransaction::begin(llvm::StringRef target) {
  if (target.empty())
    return dirError("no codegen_dir given");
  llvm::SmallString<256> absolute(target);
  if (std::error_code error = fs::make_absolute(absolute))
    return fileError(target, error);
  path::remove_dots(absolute, /*remove_dot_dot=*/true);
  while (absolute.size() > 1 && path::is_separator(absolute.back()))
    absolute.pop_back();
  llvm::StringRef name = path::filename(absolute);
  if (name.empty() || name == "." || name == "/")
    return dirError(target + ": not a folder a compile can write");

  fs::file_status status;
  if (!fs::status(absolute, status)) {
    if (!fs::is_directory(status))
      return dirError(target + " exists and is not a directory");
    if (!isReplaceable(absolute))
      return dirError(target + " exists and is not a codegen_dir (it has no "
                               "compile_status.json); not replacing it");
  }

  std::unique_ptr<CodegenDirTransaction> transaction(
      new CodegenDirTransaction());
  transaction->targetPath = absolute.str().str();

  // Missing parents are created, and removed again on failure.
  llvm::StringRef parent = path::parent_path(absolute);
  for (llvm::StringRef missing = parent;
       !missing.empty() && !fs::exists(missing);
       missing = path::parent_path(missing))
    transaction->createdParents.push_back(missing.str());
  if (std::error_code error = fs::create_directories(parent))
    return fileError(parent, error);

  llvm::SmallString<256> prefix(parent);
  path::append(prefix, "." + name + ".tmp");
  llvm::SmallString<256> staging;
  if (std::error_code error = fs::createUniqueDirectory(prefix, staging))
    return fileError(prefix + "-*", error);
  transaction->stagingPath = staging.str().str();
  return transaction;
}

CodegenDirTransaction::~CodegenDirTransaction() {
  if (!done)
    abort();
}

llvm::Error
CodegenDirTransaction::checkRelative(llvm::StringRef relativePath) const {
  if (relativePath.empty() || path::is_absolute(relativePath))
    return dirError("'" + relativePath +
                    "' is not a path inside the codegen_dir");
  for (auto it = path::begin(relativePath), end = path::end(relativePath);
       it != end; ++it)
    if (*it == "..")
      return dirError("'" + relativePath +
                      "' is not a path inside the codegen_dir");
  return llvm::Error::success();
}

std::string CodegenDirTransaction::pathOf(llvm::StringRef relativePath) const {
  llvm::SmallString<256> full(stagingPath);
  path::append(full, relativePath);
  return full.str().str();
}

llvm::Expected<std::unique_ptr<llvm::raw_fd_ostream>>
CodegenDirTransaction::createFile(llvm::StringRef relativePath) {
  if (done)
    return dirError("the codegen_dir " + targetPath + " is already written");
  if (llvm::Error error = checkRelative(relativePath))
    return std::move(error);
  std::string full = pathOf(relativePath);
  if (std::error_code error = fs::create_directories(path::parent_path(full)))
    return fileError(path::parent_path(full), error);
  std::error_code error;
  auto stream =
      std::make_unique<llvm::raw_fd_ostream>(full, error, fs::OF_None);
  if (error)
    return fileError(full, error);
  return stream;
}

llvm::Error CodegenDirTransaction::writeFile(llvm::StringRef relativePath,
                                             llvm::StringRef contents) {
  auto stream = createFile(relativePath);
  if (!stream)
    return stream.takeError();
  (*stream)->write(contents.data(), contents.size());
  (*stream)->close();
  if (std::error_code error = (*stream)->error()) {
    (*stream)->clear_error();
    return fileError(pathOf(relativePath), error);
  }
  return llvm::Error::success();
}

llvm::Error CodegenDirTransaction::commit() {
  if (done)
    return dirError("the codegen_dir " + targetPath + " is already written");
  if (!fs::exists(targetPath)) {
    if (std::error_code error = fs::rename(stagingPath, targetPath))
      return fileError(targetPath, error);
    done = true;
    return llvm::Error::success();
  }
  // Move the old one aside, the new one in, then delete the old one.
  llvm::SmallString<256> model(path::parent_path(targetPath));
  path::append(model, "." + path::filename(targetPath) + ".old-%%%%%%");
  llvm::SmallString<256> old;
  fs::createUniquePath(model, old, /*MakeAbsolute=*/false);
  if (std::error_code error = fs::rename(targetPath, old))
    return fileError(targetPath, error);
  if (std::error_code error = fs::rename(stagingPath, targetPath)) {
    (void)fs::rename(old, targetPath);
    return fileError(targetPath, error);
  }
  done = true;
  (void)fs::remove_directories(old, /*IgnoreErrors=*/true);
  return llvm::Error::success();
}

void CodegenDirTransaction::abort() {
  if (done)
    return;
  done = true;
  (void)fs::remove_directories(stagingPath, /*IgnoreErrors=*/true);
  for (const std::string &parent : createdParents)
    (void)fs::remove(parent); // only while empty
}
