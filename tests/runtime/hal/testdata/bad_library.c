/* Libraries the loader must reject, one per BAD_* definition:
 *   BAD_VERSION    the query returns a header claiming ABI version 99
 *   BAD_NULL       the query returns NULL
 *   BAD_NO_QUERY   no query symbol at all
 *   BAD_SANITIZER  built "for" the thread sanitizer
 *   BAD_NO_EXPORTS a library with zero exports */
#include <stddef.h>
#include <stdint.h>

#include "strata/hal/local/executable_library.h"

static int noop(const strata_hal_executable_environment_v0_t *env,
                const strata_hal_executable_dispatch_state_v0_t *dispatch,
                const strata_hal_executable_workgroup_state_v0_t *wg) {
  return 0;
}

#if defined(BAD_VERSION)
#define VERSION 99u
#else
#define VERSION STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0
#endif
#if defined(BAD_SANITIZER)
#define SANITIZER STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_THREAD
#else
#define SANITIZER STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE
#endif
#if defined(BAD_NO_EXPORTS)
#define EXPORT_COUNT 0u
#else
#define EXPORT_COUNT 1u
#endif

static const strata_hal_executable_library_header_t header = {
    VERSION, SANITIZER, "bad_library"};
static const char *const export_names[] = {"noop"};
static const strata_hal_executable_dispatch_v0_t export_ptrs[] = {noop};
static const uint32_t export_binding_counts[] = {0};
static const strata_hal_executable_library_v0_t library = {
    &header,
    0,
    NULL,
    EXPORT_COUNT,
    export_names,
    export_ptrs,
    export_binding_counts,
    NULL};

#if defined(BAD_NO_QUERY)
const void *not_the_query_function(void) { return &library; }
#else
const strata_hal_executable_library_header_t **
strata_hal_executable_library_query(
    uint32_t max_version,
    const strata_hal_executable_environment_v0_t *environment) {
#if defined(BAD_NULL)
  return NULL;
#else
  return (const strata_hal_executable_library_header_t **)&library;
#endif
}
#endif
