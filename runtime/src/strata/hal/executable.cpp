#include "strata/hal/executable.h"

namespace strata::hal {

Result<uint32_t> Executable::LookupExport(std::string_view name) const {
  std::string names;
  for (uint32_t i = 0; i < export_count(); ++i) {
    if (export_name(i) == name)
      return i;
    names += i ? ", " : "";
    names += export_name(i);
  }
  return NotFoundError("executable '", this->name(), "' has no export '", name,
                       "'; exports: ", names);
}

bool ExecutableCache::CanPrepareFormat(std::string_view format) const {
  for (const auto &loader : loaders_)
    if (loader->CanLoad(format))
      return true;
  return false;
}

std::vector<std::string> ExecutableCache::SupportedFormats() const {
  std::vector<std::string> formats;
  for (const auto &loader : loaders_)
    for (std::string &format : loader->SupportedFormats())
      formats.push_back(std::move(format));
  return formats;
}

Result<RefPtr<Executable>>
ExecutableCache::PrepareExecutable(std::string_view format,
                                   std::span<const uint8_t> bytes,
                                   std::span<const uint32_t> constants) {
  for (const auto &loader : loaders_) {
    if (!loader->CanLoad(format))
      continue;
    auto executable = loader->Load(format, bytes, constants);
    if (!executable.ok())
      return executable.status().Annotate(
          StrCat("loading executable of format '", format, "' with the ",
                 loader->name(), " loader"));
    return executable;
  }
  std::string supported;
  for (const std::string &name : SupportedFormats()) {
    supported += supported.empty() ? "" : ", ";
    supported += "'" + name + "'";
  }
  if (supported.empty())
    supported = "none";
  return NotFoundError("no executable loader supports format '", format,
                       "'; supported formats: ", supported);
}

} // namespace strata::hal
