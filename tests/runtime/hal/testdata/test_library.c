/* A hand-written CPU executable library implementing the runtime ABI of
 * strata/hal/local/executable_library.h, loaded by the HAL loader tests.
 *   add_f32 (3 bindings): out[i] = a[i] + b[i] over the workgroup's slice.
 *   scale   (2 bindings, constant 0 = f32 bits): out[i] = in[i] * c.
 *   fail    (1 binding): returns 7 in workgroup x == 2, else writes 1.
 *   grid    (1 binding of u32): records every workgroup id and the
 *           dispatch state, so tests can check the grid walk.
 *   processor (1 binding of u32): records each workgroup's processor_id. */
#include <stdint.h>
#include <string.h>

#include "strata/hal/local/executable_library.h"

#define SLICE 8u

typedef strata_hal_executable_environment_v0_t environment_t;
typedef strata_hal_executable_dispatch_state_v0_t dispatch_t;
typedef strata_hal_executable_workgroup_state_v0_t workgroup_t;

static int add_f32(const environment_t *env, const dispatch_t *dispatch,
                   const workgroup_t *workgroup) {
  const float *a = (const float *)dispatch->binding_ptrs[0];
  const float *b = (const float *)dispatch->binding_ptrs[1];
  float *out = (float *)dispatch->binding_ptrs[2];
  size_t n = dispatch->binding_lengths[2] / sizeof(float);
  size_t size = dispatch->workgroup_size_x;
  size_t begin = (size_t)workgroup->workgroup_id_x * size;
  for (size_t i = begin; i < begin + size && i < n; ++i)
    out[i] = a[i] + b[i];
  return 0;
}

static int scale(const environment_t *env, const dispatch_t *dispatch,
                 const workgroup_t *workgroup) {
  if (dispatch->constant_count != 1)
    return 3;
  float factor;
  memcpy(&factor, &dispatch->constants[0], sizeof(factor));
  const float *in = (const float *)dispatch->binding_ptrs[0];
  float *out = (float *)dispatch->binding_ptrs[1];
  size_t n = dispatch->binding_lengths[1] / sizeof(float);
  size_t size = dispatch->workgroup_size_x;
  size_t begin = (size_t)workgroup->workgroup_id_x * size;
  for (size_t i = begin; i < begin + size && i < n; ++i)
    out[i] = in[i] * factor;
  return 0;
}

static int fail(const environment_t *env, const dispatch_t *dispatch,
                const workgroup_t *workgroup) {
  if (workgroup->workgroup_id_x == 2)
    return 7;
  ((uint32_t *)dispatch->binding_ptrs[0])[workgroup->workgroup_id_x] = 1;
  return 0;
}

/* Layout of the grid binding: [0..5] counts and sizes, [6] constant count,
 * [7] binding count, then one slot per workgroup (linearised x-fastest)
 * counting its visits, then one slot per workgroup holding x|y<<8|z<<16. */
static int grid(const environment_t *env, const dispatch_t *dispatch,
                const workgroup_t *workgroup) {
  uint32_t *out = (uint32_t *)dispatch->binding_ptrs[0];
  uint32_t cx = dispatch->workgroup_count_x;
  uint32_t cy = dispatch->workgroup_count_y;
  uint32_t cz = dispatch->workgroup_count_z;
  uint32_t total = cx * cy * cz;
  size_t needed = (8u + 2u * total) * sizeof(uint32_t);
  if (dispatch->binding_lengths[0] < needed)
    return 5;
  /* One writer for the shared header: workgroups may run in parallel. */
  if ((workgroup->workgroup_id_x | workgroup->workgroup_id_y |
       workgroup->workgroup_id_z) == 0) {
    out[0] = cx;
    out[1] = cy;
    out[2] = cz;
    out[3] = dispatch->workgroup_size_x;
    out[4] = dispatch->workgroup_size_y;
    out[5] = dispatch->workgroup_size_z;
    out[6] = dispatch->constant_count;
    out[7] = dispatch->binding_count;
  }
  uint32_t linear =
      (workgroup->workgroup_id_z * cy + workgroup->workgroup_id_y) * cx +
      workgroup->workgroup_id_x;
  out[8 + linear] += 1;
  out[8 + total + linear] = workgroup->workgroup_id_x |
                            workgroup->workgroup_id_y << 8 |
                            workgroup->workgroup_id_z << 16;
  return 0;
}

/* out[linear workgroup index] = processor_id + 1 (0 = never ran). */
static int processor(const environment_t *env, const dispatch_t *dispatch,
                     const workgroup_t *workgroup) {
  uint32_t *out = (uint32_t *)dispatch->binding_ptrs[0];
  uint32_t linear = (workgroup->workgroup_id_z * dispatch->workgroup_count_y +
                     workgroup->workgroup_id_y) *
                        dispatch->workgroup_count_x +
                    workgroup->workgroup_id_x;
  if ((linear + 1) * sizeof(uint32_t) > dispatch->binding_lengths[0])
    return 5;
  out[linear] = workgroup->processor_id + 1;
  return 0;
}

static const strata_hal_executable_library_header_t header = {
    STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0,
    STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE, "test_library"};
static const char *const export_names[] = {"add_f32", "scale", "fail", "grid",
                                           "processor"};
static const strata_hal_executable_dispatch_v0_t export_ptrs[] = {
    add_f32, scale, fail, grid, processor};
static const uint32_t export_binding_counts[] = {3, 2, 1, 1, 1};
static const uint32_t export_workgroup_sizes[] = {
    SLICE, 1, 1, SLICE, 1, 1, 1, 1, 1, 2, 3, 4, 1, 1, 1};
static const strata_hal_executable_library_v0_t library = {
    &header,
    0,
    NULL,
    5,
    export_names,
    export_ptrs,
    export_binding_counts,
    export_workgroup_sizes};

const strata_hal_executable_library_header_t **
strata_hal_executable_library_query(uint32_t max_version,
                                    const environment_t *environment) {
  if (max_version < STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0)
    return NULL;
  return (const strata_hal_executable_library_header_t **)&library;
}
