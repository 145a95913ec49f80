/* The contract between the compiler's cuda target and the runtime's cuda
 * driver: the bytes of one executable of format
 * STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX. Plain C so both sides include it;
 * bump STRATA_CUDA_EXECUTABLE_VERSION with any change below.
 *
 * Layout (every integer little-endian uint32_t, every offset from the first
 * byte of the executable):
 *
 *   strata_cuda_executable_header_t
 *   strata_cuda_export_t[export_count]
 *   names: each export's kernel name, name_length bytes, not terminated
 *   PTX text of ptx_length bytes, the last of them '\0'
 *
 * Export i is the kernel called names[i] in the PTX module. Its parameters
 * are, in order: binding_count buffer device addresses (u64, the binding's
 * own first byte), then the dispatch's push constants (u32 each). The
 * dispatch's workgroup count, its x scaled by blocks_per_workgroup, is the
 * grid; each block has block_size[0] x block_size[1] x block_size[2]
 * threads. The kernel finds its workgroup id as blockIdx (x divided by
 * blocks_per_workgroup; the remainder is the block's part of the
 * workgroup) and the count as gridDim likewise, linearized x fastest. */
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_EXECUTABLE_FORMAT_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_EXECUTABLE_FORMAT_H_

#include <stdint.h>

/* Executable format string carried in modules for cuda executables. */
#define STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX "cuda-ptx-v1"

/* "STRCUDA" and a NUL. */
#define STRATA_CUDA_EXECUTABLE_MAGIC "STRCUDA"
#define STRATA_CUDA_EXECUTABLE_VERSION 2u

/* Limits the loader enforces (CUDA's own: 1024 threads per block). */
#define STRATA_CUDA_MAX_THREADS_PER_BLOCK 1024u
#define STRATA_CUDA_MAX_EXPORTS 65536u
#define STRATA_CUDA_MAX_BINDINGS 256u
/* CUDA's grid is at most 2^31 - 1 blocks along x. */
#define STRATA_CUDA_MAX_BLOCKS_PER_WORKGROUP 65536u

typedef struct strata_cuda_executable_header_t {
  char magic[8];
  uint32_t version;
  uint32_t export_count;
  /* The PTX text: ptx_length bytes at ptx_offset, NUL last. */
  uint32_t ptx_offset;
  uint32_t ptx_length;
  /* The oldest compute capability the PTX runs on, major * 10 + minor
   * (80 for sm_80); the loader refuses a device below it. */
  uint32_t min_compute_capability;
  uint32_t reserved; /* 0 */
} strata_cuda_executable_header_t;

typedef struct strata_cuda_export_t {
  uint32_t name_offset;
  uint32_t name_length;
  uint32_t binding_count;
  uint32_t push_constant_count;
  uint32_t block_size[3];
  /* Thread blocks that share one workgroup's work (a contraction's column
   * tiles), 1..STRATA_CUDA_MAX_BLOCKS_PER_WORKGROUP. */
  uint32_t blocks_per_workgroup;
} strata_cuda_export_t;

#endif /* STRATA_HAL_DRIVERS_CUDA_CUDA_EXECUTABLE_FORMAT_H_ */
