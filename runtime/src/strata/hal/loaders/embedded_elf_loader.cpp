#include "strata/hal/loaders/embedded_elf_loader.h"

#include "strata/hal/loaders/embedded_elf_image.h"

namespace strata::hal {
namespace {

class EmbeddedElfExecutable final : public LibraryExecutable {
public:
  explicit EmbeddedElfExecutable(std::unique_ptr<EmbeddedElfImage> image)
      : image_(std::move(image)) {}

  Status Initialize(const ExecutableImportResolver &resolve_import) {
    STRATA_RETURN_IF_ERROR(image_->RunInitializers());
    auto symbol =
        image_->LookupFunction(STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL);
    if (!symbol.ok()) {
      if (symbol.status().code() == StatusCode::kNotFound)
        return NotFoundError("executable library does not export the query "
                             "function '",
                             STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL, "'");
      return symbol.status();
    }
    auto query = reinterpret_cast<strata_hal_executable_library_query_fn_t>(
        const_cast<void *>(*symbol));
    static const strata_hal_executable_environment_v0_t kQueryEnvironment =
        BaseEnvironment();
    const strata_hal_executable_library_header_t **library =
        query(STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, &kQueryEnvironment);
    const EmbeddedElfImage &image = *image_;
    LibraryMemoryCheck memory;
    memory.is_readable = [&](const void *pointer, size_t size) {
      return image.IsReadable(pointer, size);
    };
    memory.is_code = [&](const void *pointer) { return image.IsCode(pointer); };
    memory.is_string = [&](const char *text) { return image.IsString(text); };
    return InitializeLibrary(library, resolve_import, "executable library",
                             &memory);
  }

private:
  std::unique_ptr<EmbeddedElfImage> image_;
};

} // namespace

Result<RefPtr<Executable>>
EmbeddedElfLoader::Load(std::string_view format, std::span<const uint8_t> bytes,
                        std::span<const uint32_t> constants) {
  if (!CanLoad(format))
    return InvalidArgumentError("embedded ELF loader cannot load format '",
                                format, "'");
  if (!constants.empty())
    return UnimplementedError("executable library ABI version ",
                              STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST,
                              " has no executable constants, got ",
                              constants.size());
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddedElfImage> image,
                          EmbeddedElfImage::Load(bytes));
  auto executable = RefPtr<EmbeddedElfExecutable>::Adopt(
      new EmbeddedElfExecutable(std::move(image)));
  STRATA_RETURN_IF_ERROR(executable->Initialize(resolve_import()));
  return RefPtr<Executable>(std::move(executable));
}

} // namespace strata::hal
