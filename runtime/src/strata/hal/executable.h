// Executables: loaded device code with named entry points (exports) that
// command buffers dispatch. Created through a device's executable cache,
// which asks its loaders in order; the first that supports the format loads.
#ifndef STRATA_HAL_EXECUTABLE_H_
#define STRATA_HAL_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"

namespace strata::hal {

class Executable : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  // Library name, for messages.
  virtual std::string_view name() const = 0;
  virtual uint32_t export_count() const = 0;
  // `ordinal` < export_count().
  virtual std::string_view export_name(uint32_t ordinal) const = 0;
  virtual uint32_t export_binding_count(uint32_t ordinal) const = 0;

  // Ordinal of the export called `name`; NOT_FOUND lists the exports.
  Result<uint32_t> LookupExport(std::string_view name) const;

  // The family of implementations this executable belongs to, as the
  // address of a tag that family owns (null: none). Drivers check it before
  // they downcast to what they can run, instead of a dynamic_cast on every
  // dispatch.
  const void *family() const { return family_; }

protected:
  explicit Executable(const void *family = nullptr)
      : RefObject(&kRefType), family_(family) {}

private:
  const void *family_;
};

// Turns executable bytes of some format into an Executable.
class ExecutableLoader {
public:
  virtual ~ExecutableLoader() = default;

  // For messages and device dumps ("system-library").
  virtual std::string_view name() const = 0;
  // Formats this loader accepts (for error messages and queries).
  virtual std::vector<std::string> SupportedFormats() const = 0;
  virtual bool CanLoad(std::string_view format) const = 0;
  // `bytes` need not outlive the call. `constants` are executable-level
  // specialization constants.
  virtual Result<RefPtr<Executable>>
  Load(std::string_view format, std::span<const uint8_t> bytes,
       std::span<const uint32_t> constants) = 0;
};

// Owns a device's loaders and picks one per format. Loading is not cached
// yet: each call loads anew. Thread-safe if the loaders are.
class ExecutableCache {
public:
  explicit ExecutableCache(
      std::vector<std::unique_ptr<ExecutableLoader>> loaders)
      : loaders_(std::move(loaders)) {}

  bool CanPrepareFormat(std::string_view format) const;
  // Every format some loader supports, in loader order.
  std::vector<std::string> SupportedFormats() const;
  const std::vector<std::unique_ptr<ExecutableLoader>> &loaders() const {
    return loaders_;
  }

  // NOT_FOUND naming `format` and the supported formats when no loader
  // takes it; otherwise the loader's result.
  Result<RefPtr<Executable>>
  PrepareExecutable(std::string_view format, std::span<const uint8_t> bytes,
                    std::span<const uint32_t> constants);

private:
  std::vector<std::unique_ptr<ExecutableLoader>> loaders_;
};

} // namespace strata::hal

#endif // STRATA_HAL_EXECUTABLE_H_
