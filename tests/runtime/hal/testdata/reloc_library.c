/* A self-contained library for the embedded ELF loader's relocation tests,
 * built with -nostdlib -shared. Default-visibility globals are preemptible,
 * so the linker leaves dynamic relocations for them:
 *   GLOB_DAT   code reading global_var / global_ptr through the GOT
 *   JUMP_SLOT  the call to global_add (noinline, through the PLT)
 *   64         global_ptr and anchor_slots (= &anchor)
 *   RELATIVE   the descriptor tables and the .init_array entry
 * The tests rewrite the anchor_slots relocations into PC32 / 32 / 32S and
 * unsupported types.
 *   check (1 binding of u32): [0] init_flag (6, set by a constructor),
 *     [1] global_add(*global_ptr) + global_var (= 5 + 5 + 5 + 7 = 22),
 *     [2] anchor_slots[0] low 32 bits, [3] (&anchor - &anchor_slots[0]) low
 *     32 bits (equal when the slot holds a PC32 value). */
#include <stdint.h>

#include "strata/hal/local/executable_library.h"

int global_var = 5;
int *global_ptr = &global_var;
char anchor[16];
uint64_t anchor_slots[3] = {(uint64_t)(uintptr_t)anchor,
                            (uint64_t)(uintptr_t)anchor,
                            (uint64_t)(uintptr_t)anchor};

/* The volatile read keeps the compiler from folding the constructor away. */
static int init_flag;
__attribute__((constructor)) static void set_init_flag(void) {
  init_flag = *(volatile int *)&global_var + 1;
}

__attribute__((noinline)) int global_add(int x) { return x + global_var + 7; }

static int check(const strata_hal_executable_environment_v0_t *env,
                 const strata_hal_executable_dispatch_state_v0_t *dispatch,
                 const strata_hal_executable_workgroup_state_v0_t *wg) {
  uint32_t *out = (uint32_t *)dispatch->binding_ptrs[0];
  out[0] = (uint32_t)init_flag;
  out[1] = (uint32_t)(global_add(*global_ptr) + global_var);
  out[2] = (uint32_t)anchor_slots[0];
  out[3] = (uint32_t)((uintptr_t)anchor - (uintptr_t)&anchor_slots[0]);
  return 0;
}

static const strata_hal_executable_library_header_t header = {
    STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0,
    STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE, "reloc_library"};
static const char *const export_names[] = {"check"};
static const strata_hal_executable_dispatch_v0_t export_ptrs[] = {check};
static const uint32_t export_binding_counts[] = {1};
static const strata_hal_executable_library_v0_t library = {
    &header, 0, NULL, 1, export_names, export_ptrs, export_binding_counts,
    NULL};

const strata_hal_executable_library_header_t **
strata_hal_executable_library_query(
    uint32_t max_version,
    const strata_hal_executable_environment_v0_t *environment) {
  return (const strata_hal_executable_library_header_t **)&library;
}
