#include "fuzz_util.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "strata/base/owned_bytes.h"
#include "strata/hal/loaders/embedded_elf_image.h"
#include "strata/hal/loaders/embedded_elf_loader.h"
#include "strata/hal/local/executable_library.h"
#include "strata/hal/local/library_executable.h"
#include "strata/hal/local/local_device.h"
#include "strata/hal/local/local_replay.h"
#include "strata/vm/bytecode_module.h"

#ifndef STRATA_FUZZ_TRUSTED_MODULE_DIR
#error "STRATA_FUZZ_TRUSTED_MODULE_DIR must name the trusted module corpus"
#endif

namespace strata::fuzz {
namespace {

uint64_t workgroups_left = kWorkgroupBudget;

// What a trusted executable exports.
struct ExportInfo {
  std::string name;
  uint32_t binding_count;
  std::array<uint32_t, 3> workgroup_size;
};
struct LibraryInfo {
  std::string name;
  std::vector<ExportInfo> exports;
};

// Touches the first and last byte of every binding; fails once the
// workgroup budget of the current input is spent.
int StandInWorkgroup(const strata_hal_executable_environment_v0_t *,
                     const strata_hal_executable_dispatch_state_v0_t *dispatch,
                     const strata_hal_executable_workgroup_state_v0_t *) {
  if (workgroups_left == 0)
    return 1;
  --workgroups_left;
  uint8_t sum = 0;
  for (uint32_t i = 0; i < dispatch->binding_count; ++i) {
    size_t length = dispatch->binding_lengths[i];
    if (length == 0)
      continue;
    const volatile uint8_t *data =
        static_cast<const volatile uint8_t *>(dispatch->binding_ptrs[i]);
    sum = uint8_t(sum + data[0] + data[length - 1]);
  }
  for (uint32_t i = 0; i < dispatch->constant_count; ++i)
    sum = uint8_t(sum + dispatch->constants[i]);
  static volatile uint8_t sink;
  sink = sum;
  return 0;
}

class StandInExecutable final : public hal::LibraryExecutable {
public:
  explicit StandInExecutable(const LibraryInfo &info) {
    header_.version = STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0;
    header_.sanitizer = STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE;
    header_.name = info.name.c_str();
    for (const ExportInfo &exported : info.exports) {
      names_.push_back(exported.name.c_str());
      functions_.push_back(&StandInWorkgroup);
      binding_counts_.push_back(exported.binding_count);
      workgroup_sizes_.insert(workgroup_sizes_.end(),
                              exported.workgroup_size.begin(),
                              exported.workgroup_size.end());
    }
    library_.header = &header_;
    library_.import_count = 0;
    library_.import_names = nullptr;
    library_.export_count = uint32_t(info.exports.size());
    library_.export_names = names_.data();
    library_.export_ptrs = functions_.data();
    library_.export_binding_counts = binding_counts_.data();
    library_.export_workgroup_sizes = workgroup_sizes_.data();
  }

  Status Initialize() {
    return InitializeLibrary(
        reinterpret_cast<const strata_hal_executable_library_header_t *const *>(
            &library_),
        {}, "fuzz stand-in");
  }

private:
  strata_hal_executable_library_header_t header_ = {};
  strata_hal_executable_library_v0_t library_ = {};
  std::vector<const char *> names_;
  std::vector<strata_hal_executable_dispatch_v0_t> functions_;
  std::vector<uint32_t> binding_counts_;
  std::vector<uint32_t> workgroup_sizes_;
};

bool ReadFile(const std::filesystem::path &path, std::vector<uint8_t> *out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  out->assign(std::istreambuf_iterator<char>(file),
              std::istreambuf_iterator<char>());
  return !file.bad();
}

// Executable bytes -> what they export, for every ELF rodata segment of
// every trusted module (loaded with the real embedded ELF loader).
const std::map<std::string, LibraryInfo> &TrustedLibraries() {
  static const std::map<std::string, LibraryInfo> *libraries = [] {
    auto *result = new std::map<std::string, LibraryInfo>();
    hal::EmbeddedElfLoader loader;
    std::error_code error;
    for (const auto &entry : std::filesystem::directory_iterator(
             STRATA_FUZZ_TRUSTED_MODULE_DIR, error)) {
      std::vector<uint8_t> bytes;
      if (!entry.is_regular_file() || !ReadFile(entry.path(), &bytes))
        continue;
      auto module = vm::BytecodeModule::FromMemory(OwnedBytes::CopyOf(
          std::span<const uint8_t>(bytes.data(), bytes.size())));
      if (!module.ok())
        continue;
      for (uint32_t i = 0; i < (*module)->rodata_count(); ++i) {
        std::span<const uint8_t> data = (*module)->rodata(i);
        if (data.size() < 4 || data[0] != 0x7f || data[1] != 'E' ||
            data[2] != 'L' || data[3] != 'F')
          continue;
        auto executable =
            loader.Load(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, data, {});
        if (!executable.ok())
          continue;
        const auto &local =
            static_cast<const hal::LocalExecutable &>(**executable);
        LibraryInfo info;
        info.name = std::string(local.name());
        for (uint32_t e = 0; e < local.export_count(); ++e)
          info.exports.push_back({std::string(local.export_name(e)),
                                  local.export_binding_count(e),
                                  local.export_workgroup_size(e)});
        result->emplace(std::string(data.begin(), data.end()), std::move(info));
      }
    }
    if (result->empty())
      Fail("no trusted executables found in " STRATA_FUZZ_TRUSTED_MODULE_DIR);
    return result;
  }();
  return *libraries;
}

} // namespace

void ResetWorkgroupBudget() { workgroups_left = kWorkgroupBudget; }

std::vector<std::string> TrustedExecutableLoader::SupportedFormats() const {
  return {STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64};
}

bool TrustedExecutableLoader::CanLoad(std::string_view format) const {
  return format == STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64;
}

Result<RefPtr<hal::Executable>>
TrustedExecutableLoader::Load(std::string_view format,
                              std::span<const uint8_t> bytes,
                              std::span<const uint32_t> constants) {
  if (!CanLoad(format))
    return InvalidArgumentError("fuzz loader cannot load format '", format,
                                "'");
  if (!constants.empty())
    return UnimplementedError("no executable constants in ABI version 0");
  const auto &libraries = TrustedLibraries();
  auto found = libraries.find(std::string(bytes.begin(), bytes.end()));
  if (found == libraries.end()) {
    // Validate (no code runs), then refuse to run unknown code.
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<hal::EmbeddedElfImage> image,
                            hal::EmbeddedElfImage::Load(bytes));
    (void)image->LookupFunction(STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL);
    return PermissionDeniedError("fuzzing: executable code that is not in "
                                 "the trusted corpus is not run");
  }
  auto executable =
      RefPtr<StandInExecutable>::Adopt(new StandInExecutable(found->second));
  STRATA_RETURN_IF_ERROR(executable->Initialize());
  return RefPtr<hal::Executable>(std::move(executable));
}

session::Instance &FuzzInstance() {
  static session::Instance *instance = [] {
    auto created = session::Instance::Create();
    if (!created.ok())
      Fail(created.status().ToString());
    return created->Detach();
  }();
  return *instance;
}

hal::Allocator &FuzzAllocator() {
  static hal::Allocator *allocator =
      hal::HeapAllocator::Create("fuzz",
                                 {.max_allocation_size = kMaxAllocationBytes})
          .Detach();
  return *allocator;
}

RefPtr<hal::Device> FuzzDevice() {
  static hal::Device *device = [] {
    hal::LocalDeviceParams params;
    params.id = "local-sync";
    params.loaders.push_back(std::make_unique<TrustedExecutableLoader>());
    params.grid_runner = std::make_unique<hal::InlineGridRunner>();
    params.allocator = RefPtr<hal::Allocator>::Retain(&FuzzAllocator());
    auto created = hal::LocalDevice::Create(std::move(params));
    if (!created.ok())
      Fail(created.status().ToString());
    return static_cast<hal::Device *>(created->Detach());
  }();
  return RefPtr<hal::Device>::Retain(device);
}

void CheckError(const Status &status) {
  static const bool verbose = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
  if (!status.ok() && status.message().empty())
    Fail("an error status without a message");
}

void Fail(std::string_view message) {
  std::fprintf(stderr, "fuzz target check failed: %.*s\n", int(message.size()),
               message.data());
  std::abort();
}

} // namespace strata::fuzz
