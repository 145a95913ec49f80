// Executables that run on the host, one workgroup at a time: what the local
// drivers (local-sync, local-task) dispatch. Implementations: native CPU
// libraries (library_executable.h) and VM bytecode (the VMVX loader).
#ifndef STRATA_HAL_LOCAL_LOCAL_EXECUTABLE_H_
#define STRATA_HAL_LOCAL_LOCAL_EXECUTABLE_H_

#include <array>
#include <cstdint>

#include "strata/hal/executable.h"
#include "strata/hal/local/executable_library.h"

namespace strata::hal {

class LocalExecutable : public Executable {
public:
  // The export's workgroup size hint; {1, 1, 1} when there is none.
  virtual std::array<uint32_t, 3>
  export_workgroup_size(uint32_t ordinal) const = 0;

  // Runs one workgroup of export `ordinal`. May be called from several
  // threads at once (different workgroups of one dispatch, or dispatches
  // of several queues). INTERNAL naming the export and workgroup when the
  // workgroup fails.
  virtual Status IssueWorkgroup(
      uint32_t ordinal,
      const strata_hal_executable_dispatch_state_v0_t &dispatch,
      const strata_hal_executable_workgroup_state_v0_t &workgroup) const = 0;

  // `executable` as a LocalExecutable when it is one (a local loader made
  // it), else null.
  static const LocalExecutable *FromExecutable(const Executable *executable) {
    return executable && executable->family() == &kFamily
               ? static_cast<const LocalExecutable *>(executable)
               : nullptr;
  }

protected:
  LocalExecutable() : Executable(&kFamily) {}

private:
  static constexpr char kFamily = 0;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_EXECUTABLE_H_
