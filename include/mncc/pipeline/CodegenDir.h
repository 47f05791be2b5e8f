//===- CodegenDir.h - Writing a codegen_dir atomically -------*- C++ -*-===//
//
// A compile writes its codegen_dir in a temporary folder beside the target
// (`.<name>.tmp-XXXXXX`) and renames it into place only when everything
// succeeded, so a failed compile leaves no half-written directory and never
// deletes a previous good one. Every stage adds its files (option.json,
// ir/*.mlir, program.vsm, manifest.json, l3ir.txt, ...) to the same
// transaction.
//
// Committing over an existing codegen_dir moves the old one aside, renames
// the new one in, then deletes the old one; if the rename fails, the old one
// is moved back. An existing directory is replaced only when it is empty or
// holds a compile_status.json (it is a codegen_dir), so `-o $HOME` is an
// error, not a deletion.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PIPELINE_CODEGENDIR_H
#define MNCC_PIPELINE_CODEGENDIR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace mncc::pipeline {

class CodegenDirTransaction {
public:
  /// Starts writing the codegen_dir `target`: checks that it can be
  /// replaced, creates missing parent folders and the temporary folder.
  static llvm::Expected<std::unique_ptr<CodegenDirTransaction>>
  begin(llvm::StringRef target);

  /// Removes the temporary folder (and the parents begin() created) unless
  /// committed.
  ~CodegenDirTransaction();

  CodegenDirTransaction(const CodegenDirTransaction &) = delete;
  CodegenDirTransaction &operator=(const CodegenDirTransaction &) = delete;

  /// The codegen_dir as given, and absolute.
  llvm::StringRef target() const { return targetPath; }
  /// The temporary folder the files go to until commit().
  llvm::StringRef stagingDir() const { return stagingPath; }

  /// Where `relativePath` (e.g. "ir/2-pfvm.mlir") is written; for writers
  /// that stream to a path themselves.
  std::string pathOf(llvm::StringRef relativePath) const;

  /// Writes a whole file, creating its folders. `relativePath` must stay
  /// inside the codegen_dir (no "..", not absolute).
  llvm::Error writeFile(llvm::StringRef relativePath, llvm::StringRef contents);

  /// Opens a file to stream into; the caller closes it (by destroying the
  /// stream) before commit().
  llvm::Expected<std::unique_ptr<llvm::raw_fd_ostream>>
  createFile(llvm::StringRef relativePath);

  /// Moves the folder into place. After a failure the target is as it was.
  llvm::Error commit();

  /// Removes everything written so far.
  void abort();

private:
  CodegenDirTransaction() = default;
  llvm::Error checkRelative(llvm::StringRef relativePath) const;

  std::string targetPath;
  std::string stagingPath;
  /// Parent folders begin() created, innermost first.
  std::vector<std::string> createdParents;
  bool done = false;
};

} // namespace mncc::pipeline

#endif // MNCC_PIPELINE_CODEGENDIR_H
