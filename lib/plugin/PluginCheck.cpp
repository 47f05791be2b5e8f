//===- PluginCheck.cpp - Refuse plugins that cannot work ------------------===//

#include "mncc/plugin/PluginCheck.h"

#include "mncc/Version.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstring>

using namespace llvm;
using mncc::PluginKind;

static StringRef entryPointOf(PluginKind kind) {
  return kind == PluginKind::Pass ? "mlirGetPassPluginInfo"
                                  : "mlirGetDialectPluginInfo";
}

static StringRef describe(PluginKind kind) {
  return kind == PluginKind::Pass ? "pass plugin" : "dialect plugin";
}

static Error pluginError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The DT_NEEDED names of a shared library: which libraries, and so which
/// LLVM and mncc versions, it was linked against.
template <typename ELFT>
static Expected<std::vector<StringRef>>
neededLibraries(const object::ELFFile<ELFT> &file) {
  auto entries = file.dynamicEntries();
  if (!entries)
    return entries.takeError();
  std::optional<uint64_t> stringTableAddress;
  std::vector<uint64_t> neededOffsets;
  for (const auto &entry : *entries) {
    if (entry.d_tag == ELF::DT_STRTAB)
      stringTableAddress = entry.getPtr();
    else if (entry.d_tag == ELF::DT_NEEDED)
      neededOffsets.push_back(entry.getVal());
  }
  if (neededOffsets.empty())
    return std::vector<StringRef>{};
  if (!stringTableAddress)
    return pluginError("its dynamic section has no string table");
  auto table = file.toMappedAddr(*stringTableAddress);
  if (!table)
    return table.takeError();
  const char *begin = reinterpret_cast<const char *>(*table);
  const char *end =
      reinterpret_cast<const char *>(file.base()) + file.getBufSize();
  std::vector<StringRef> names;
  for (uint64_t offset : neededOffsets) {
    if (begin + offset >= end)
      return pluginError("a DT_NEEDED entry points outside the file");
    names.emplace_back(begin + offset,
                       strnlen(begin + offset, end - begin - offset));
  }
  return names;
}

static Expected<std::vector<StringRef>>
neededLibraries(const object::ELFObjectFileBase &elf) {
  if (auto *file = dyn_cast<object::ELF64LEObjectFile>(&elf))
    return neededLibraries(file->getELFFile());
  if (auto *file = dyn_cast<object::ELF64BEObjectFile>(&elf))
    return neededLibraries(file->getELFFile());
  if (auto *file = dyn_cast<object::ELF32LEObjectFile>(&elf))
    return neededLibraries(file->getELFFile());
  auto *file = cast<object::ELF32BEObjectFile>(&elf);
  return neededLibraries(file->getELFFile());
}

/// A plugin linked against another libLLVM or libMLIR would load a second
/// copy of LLVM into the process; one linked against other mncc libraries
/// would see other dialect definitions.
static Error checkNeededVersions(StringRef path,
                                 ArrayRef<StringRef> neededNames) {
  // libLLVM.so.19.1, libLLVM-19.so, libMLIR.so.19.1
  Regex llvmLibrary("^lib(LLVM|MLIR)(-([0-9]+))?\\.so(\\.([0-9]+))?");
  // libMNCCGraph.so.0.1
  Regex mnccLibrary("^lib(MNCC[A-Za-z0-9_]*)\\.so\\.([0-9]+\\.[0-9]+)$");
  for (StringRef needed : neededNames) {
    SmallVector<StringRef> groups;
    if (llvmLibrary.match(needed, &groups)) {
      StringRef major = !groups[3].empty() ? groups[3] : groups[5];
      if (!major.empty() &&
          major != std::to_string(MNCC_LLVM_VERSION_MAJOR))
        return pluginError("it was built against LLVM " + major + " (it needs " +
                       needed + "), but this tool runs on LLVM " +
                       MNCC_LLVM_VERSION_STRING + "; rebuild '" + path +
                       "' against LLVM " +
                       std::to_string(MNCC_LLVM_VERSION_MAJOR) +
                       " with find_package(MNCC)");
      continue;
    }
    if (mnccLibrary.match(needed, &groups) &&
        groups[2] != MNCC_SOVERSION_STRING)
      return pluginError("it was built against mncc " + groups[2] +
                     " (it needs " + needed + "), but this tool is mncc " +
                     MNCC_VERSION_STRING + "; rebuild it against this mncc");
  }
  return Error::success();
}

static bool exportsSymbol(const object::ELFObjectFileBase &elf,
                          StringRef wanted) {
  for (const object::ELFSymbolRef &symbol : elf.getDynamicSymbolIterators()) {
    Expected<StringRef> name = symbol.getName();
    Expected<uint32_t> flags = symbol.getFlags();
    if (!name || !flags) {
      consumeError(name.takeError());
      consumeError(flags.takeError());
      continue;
    }
    if (*name == wanted && !(*flags & object::SymbolRef::SF_Undefined))
      return true;
  }
  return false;
}

static Error checkFile(StringRef path, PluginKind kind) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return pluginError(buffer.getError().message());
  auto binary = object::createBinary((*buffer)->getMemBufferRef());
  if (!binary) {
    consumeError(binary.takeError());
    return pluginError("it is not a shared library (not an object file)");
  }
  auto *elf = dyn_cast<object::ELFObjectFileBase>(binary->get());
  if (!elf)
    return pluginError("it is not an ELF shared library");
  if (elf->getEType() != ELF::ET_DYN)
    return pluginError("it is an ELF file but not a shared library; build the "
                   "plugin as a CMake MODULE or SHARED library");
  Triple host(sys::getProcessTriple());
  if (elf->getArch() != host.getArch())
    return pluginError("it was built for " +
                   Triple::getArchTypeName(elf->getArch()) +
                   ", but this machine is " +
                   Triple::getArchTypeName(host.getArch()));
  auto needed = neededLibraries(*elf);
  if (!needed)
    return pluginError("its dynamic section cannot be read: " +
                   toString(needed.takeError()));
  if (Error error = checkNeededVersions(path, *needed))
    return error;
  if (!exportsSymbol(*elf, entryPointOf(kind)))
    return pluginError("it is not an MLIR " + describe(kind) +
                   ": it does not export " + entryPointOf(kind) + "()");
  return Error::success();
}

Error mncc::checkPlugin(StringRef path, PluginKind kind) {
  if (Error error = checkFile(path, kind))
    return error;
  // The file looks right; MLIR's loader checks the plugin API version.
  // Loading twice is harmless: the library stays loaded and the tool's own
  // load finds the same handle.
  if (kind == PluginKind::Pass) {
    auto plugin = mlir::PassPlugin::load(path.str());
    return plugin ? Error::success() : plugin.takeError();
  }
  auto plugin = mlir::DialectPlugin::load(path.str());
  return plugin ? Error::success() : plugin.takeError();
}

bool mncc::checkPluginArguments(int argc, char **argv, raw_ostream &errs) {
  StringRef tool = sys::path::filename(argv[0]);
  bool allGood = true;
  for (int index = 1; index < argc; ++index) {
    StringRef argument = argv[index];
    if (argument == "--")
      break;
    StringRef option = argument.ltrim('-');
    if (option.size() == argument.size())
      continue;
    auto [name, value] = option.split('=');
    PluginKind kind;
    if (name == "load-pass-plugin")
      kind = PluginKind::Pass;
    else if (name == "load-dialect-plugin")
      kind = PluginKind::Dialect;
    else
      continue;
    if (!option.contains('=')) {
      if (index + 1 >= argc)
        continue; // the option parser reports the missing value
      value = argv[++index];
    }
    if (Error error = checkPlugin(value, kind)) {
      errs << tool << ": error: cannot load " << describe(kind) << " '"
           << value << "': " << toString(std::move(error)) << "\n";
      allGood = false;
    }
  }
  return allGood;
}
