/* A library importing one runtime function, "test_add_one" (int(int)).
 * Export call_import (1 binding of i32): out[0] = test_add_one(out[0]). */
#include <stdint.h>

#include "strata/hal/local/executable_library.h"

typedef int (*add_one_fn_t)(int);

static int
call_import(const strata_hal_executable_environment_v0_t *env,
            const strata_hal_executable_dispatch_state_v0_t *dispatch,
            const strata_hal_executable_workgroup_state_v0_t *wg) {
  if (env->import_count != 1 || !env->import_funcs[0])
    return 1;
  int32_t *out = (int32_t *)dispatch->binding_ptrs[0];
  out[0] = ((add_one_fn_t)env->import_funcs[0])(out[0]);
  return 0;
}

static const strata_hal_executable_library_header_t header = {
    STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0,
    STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE, "import_library"};
static const char *const import_names[] = {"test_add_one"};
static const char *const export_names[] = {"call_import"};
static const strata_hal_executable_dispatch_v0_t export_ptrs[] = {call_import};
static const uint32_t export_binding_counts[] = {1};
static const strata_hal_executable_library_v0_t library = {
    &header,      1,           import_names,          1,
    export_names, export_ptrs, export_binding_counts, NULL};

const strata_hal_executable_library_header_t **
strata_hal_executable_library_query(
    uint32_t max_version,
    const strata_hal_executable_environment_v0_t *environment) {
  return (const strata_hal_executable_library_header_t **)&library;
}
