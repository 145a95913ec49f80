//===- ExecutableHelpers.cpp ----------------------------------------------===//
#include "strata/compiler/Codegen/ExecutableHelpers.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>

namespace strata {

// Generated from Helpers/*.c at build time (Helpers/Embed.cmake).
extern const unsigned char kExecutableHelpersArchive[];
extern const size_t kExecutableHelpersArchiveSize;

namespace {

// The archive on disk for the life of the process.
struct HelpersArchiveFile {
  std::string path;
  std::string error;

  HelpersArchiveFile() {
    llvm::SmallString<128> tempPath;
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "strata-executable-helpers", "a", fd, tempPath)) {
      error = "cannot create the executable helper archive: " + ec.message();
      return;
    }
    llvm::sys::RemoveFileOnSignal(tempPath);
    llvm::raw_fd_ostream stream(fd, /*shouldClose=*/true);
    stream.write(reinterpret_cast<const char *>(kExecutableHelpersArchive),
                 kExecutableHelpersArchiveSize);
    stream.close();
    if (stream.has_error()) {
      error = "cannot write the executable helper archive " +
              tempPath.str().str() + ": " + stream.error().message();
      stream.clear_error();
      llvm::sys::fs::remove(tempPath);
      return;
    }
    path = tempPath.str().str();
  }
  ~HelpersArchiveFile() {
    if (path.empty())
      return;
    llvm::sys::fs::remove(path);
    llvm::sys::DontRemoveFileOnSignal(path);
  }
};

const llvm::StringSet<> &getListedSymbols() {
  static const llvm::StringSet<> symbols = {
#define STRATA_EXECUTABLE_SYMBOL(name, provider, where, when) name,
#include "strata/hal/local/executable_symbols.def"
#undef STRATA_EXECUTABLE_SYMBOL
  };
  return symbols;
}

} // namespace

llvm::Expected<std::string> getExecutableHelpersArchivePath() {
  static const HelpersArchiveFile file;
  if (file.path.empty())
    return llvm::createStringError(file.error);
  return file.path;
}

llvm::Error checkExecutableImports(llvm::StringRef object) {
  auto file = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(object, "executable"));
  if (!file)
    return file.takeError();
  std::string unknown;
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    if (!flags)
      return flags.takeError();
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined))
      continue;
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name)
      return name.takeError();
    if (name->empty() || getListedSymbols().contains(*name))
      continue;
    unknown += (unknown.empty() ? "'" : ", '") + name->str() + "'";
  }
  if (unknown.empty())
    return llvm::Error::success();
  return llvm::createStringError(
      "the generated code calls " + unknown +
      ", which no executable may import: neither Strata's helper library nor "
      "the runtime provides it (runtime/src/strata/hal/local/"
      "executable_symbols.def)");
}

} // namespace strata
