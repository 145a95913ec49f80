/* The ABI between the runtime's local executable loaders and the executables
 * the compiler produces for CPUs (ELF shared objects). Plain C with fixed
 * layouts: the compiler emits these structures in LLVM IR by hand, so every
 * offset below is part of the contract (checked by static asserts in the
 * runtime). Bump STRATA_HAL_EXECUTABLE_LIBRARY_VERSION on any change. */
#ifndef STRATA_HAL_LOCAL_EXECUTABLE_LIBRARY_H_
#define STRATA_HAL_LOCAL_EXECUTABLE_LIBRARY_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0 0u
#define STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST                           \
  STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0

/* The one symbol a library exports. */
#define STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL                             \
  "strata_hal_executable_library_query"

/* Executable format string carried in modules for these libraries. */
#define STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64 "elf-x86_64"

typedef enum strata_hal_executable_library_sanitizer_e {
  STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE = 0,
  STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_ADDRESS = 1,
  STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_THREAD = 2,
} strata_hal_executable_library_sanitizer_t;

/* Offsets: version 0, sanitizer 4, name 8; size 16. */
typedef struct strata_hal_executable_library_header_t {
  uint32_t version;
  uint32_t sanitizer;
  const char *name;
} strata_hal_executable_library_header_t;

/* What the runtime gives a library: functions it may import (microkernels),
 * indexed like the library's import table, and the host CPU's features.
 * Offsets: import_funcs 0, import_count 8, cpu_data 16; size 32. */
typedef struct strata_hal_executable_environment_v0_t {
  const void *const *import_funcs;
  uint32_t import_count;
  uint32_t reserved;
  uint64_t cpu_data[2];
} strata_hal_executable_environment_v0_t;

/* Per-dispatch state, the same for every workgroup of the grid.
 * Offsets: workgroup_count_{x,y,z} 0/4/8, workgroup_size_{x,y,z} 12/16/20,
 * constant_count 24, binding_count 28, constants 32, binding_ptrs 40,
 * binding_lengths 48; size 56. */
typedef struct strata_hal_executable_dispatch_state_v0_t {
  uint32_t workgroup_count_x;
  uint32_t workgroup_count_y;
  uint32_t workgroup_count_z;
  uint32_t workgroup_size_x;
  uint32_t workgroup_size_y;
  uint32_t workgroup_size_z;
  uint32_t constant_count;
  uint32_t binding_count;
  const uint32_t *constants;
  void *const *binding_ptrs;
  const size_t *binding_lengths;
} strata_hal_executable_dispatch_state_v0_t;

/* Per-workgroup state. Offsets: workgroup_id_{x,y,z} 0/4/8, processor_id 12,
 * local_memory 16, local_memory_size 24; size 32. */
typedef struct strata_hal_executable_workgroup_state_v0_t {
  uint32_t workgroup_id_x;
  uint32_t workgroup_id_y;
  uint32_t workgroup_id_z;
  uint32_t processor_id;
  void *local_memory;
  uint32_t local_memory_size;
  uint32_t reserved;
} strata_hal_executable_workgroup_state_v0_t;

/* Runs one workgroup. Returns 0 on success; non-zero fails the dispatch. */
typedef int (*strata_hal_executable_dispatch_v0_t)(
    const strata_hal_executable_environment_v0_t *environment,
    const strata_hal_executable_dispatch_state_v0_t *dispatch_state,
    const strata_hal_executable_workgroup_state_v0_t *workgroup_state);

/* Offsets: header 0, import_count 8, import_names 16, export_count 24,
 * export_names 32, export_ptrs 40, export_binding_counts 48,
 * export_workgroup_sizes 56 (3 x uint32 per export); size 64. */
typedef struct strata_hal_executable_library_v0_t {
  const strata_hal_executable_library_header_t *header;
  uint32_t import_count;
  const char *const *import_names;
  uint32_t export_count;
  const char *const *export_names;
  const strata_hal_executable_dispatch_v0_t *export_ptrs;
  const uint32_t *export_binding_counts;
  const uint32_t *export_workgroup_sizes;
} strata_hal_executable_library_v0_t;

/* Returns the library (whose first member is the header pointer) if the
 * library supports `max_version`, else NULL. */
typedef const strata_hal_executable_library_header_t **(
    *strata_hal_executable_library_query_fn_t)(
    uint32_t max_version,
    const strata_hal_executable_environment_v0_t *environment);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_HAL_LOCAL_EXECUTABLE_LIBRARY_H_ */
