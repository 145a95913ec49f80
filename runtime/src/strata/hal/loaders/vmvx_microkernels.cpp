#include "strata/hal/loaders/vmvx_microkernels.h"

#include <cstdint>

#include "strata/hal/local/vmvx_abi.h"
#include "strata/vm/byte_buffer.h"
#include "strata/vm/native_module.h"

namespace strata::hal {
namespace {

// A strided 2-D view of f32 elements inside a vm.buffer, checked so that
// every element of the [rows x cols] window lies inside the buffer.
template <typename Pointer> struct MatrixView {
  Pointer data = nullptr; // element (0, 0)
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

Result<int64_t> NonNegativeDimension(const vm::Value &value, const char *name) {
  int64_t size = value.i64();
  if (size < 0)
    return InvalidArgumentError("vmvx.matmul.f32: negative ", name, " ", size);
  if (size > (int64_t(1) << 31))
    return OutOfRangeError("vmvx.matmul.f32: ", name, " ", size,
                           " is out of range");
  return size;
}

// Checks the window and returns its first element. Strides and offsets
// are bounded so that no product below overflows.
Result<const uint8_t *> CheckWindow(vm::ByteBuffer &buffer, int64_t offset,
                                    int64_t row_stride, int64_t col_stride,
                                    int64_t rows, int64_t cols,
                                    const char *what) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  if (offset < 0 || offset > kLimit || row_stride < -kLimit ||
      row_stride > kLimit || col_stride < -kLimit || col_stride > kLimit)
    return OutOfRangeError("vmvx.matmul.f32: ", what,
                           " offset or strides out of range");
  const int64_t element_count = int64_t(buffer.length() / sizeof(float));
  if (rows == 0 || cols == 0)
    return buffer.data().data();
  // Lowest and highest element the window touches, in 128-bit arithmetic:
  // (2^31 rows) x (2^40 stride) does not fit 64 bits.
  __int128 low = offset, high = offset;
  __int128 row_span = __int128(rows - 1) * row_stride;
  __int128 col_span = __int128(cols - 1) * col_stride;
  (row_span < 0 ? low : high) += row_span;
  (col_span < 0 ? low : high) += col_span;
  if (low < 0 || high >= element_count)
    return OutOfRangeError(
        "vmvx.matmul.f32: ", what, " window [", rows, "x", cols, "] at offset ",
        offset, " with strides (", row_stride, ", ", col_stride,
        ") exceeds its buffer of ", element_count, " elements");
  const uint8_t *base = buffer.data().data();
  if (reinterpret_cast<uintptr_t>(base) % alignof(float) != 0)
    return InvalidArgumentError("vmvx.matmul.f32: ", what,
                                " buffer is not aligned for f32");
  return base + offset * int64_t(sizeof(float));
}

// out += lhs * rhs. The n loop is innermost so unit-stride rows of rhs and
// out vectorize.
void MatmulF32(MatrixView<const float *> lhs, MatrixView<const float *> rhs,
               MatrixView<float *> out, int64_t m_size, int64_t n_size,
               int64_t k_size) {
  const bool contiguous_n = rhs.col_stride == 1 && out.col_stride == 1;
  for (int64_t m = 0; m < m_size; ++m) {
    float *out_row = out.data + m * out.row_stride;
    for (int64_t k = 0; k < k_size; ++k) {
      const float a = lhs.data[m * lhs.row_stride + k * lhs.col_stride];
      const float *rhs_row = rhs.data + k * rhs.row_stride;
      if (contiguous_n) {
        for (int64_t n = 0; n < n_size; ++n)
          out_row[n] += a * rhs_row[n];
      } else {
        for (int64_t n = 0; n < n_size; ++n)
          out_row[n * out.col_stride] += a * rhs_row[n * rhs.col_stride];
      }
    }
  }
}

Status MatmulF32Entry(vm::Stack &, vm::ModuleState *,
                      std::span<const vm::Value> args,
                      std::span<vm::Value> results) {
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * lhs_buffer,
                          vm::CastRef<vm::ByteBuffer>(args[0], "lhs"));
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * rhs_buffer,
                          vm::CastRef<vm::ByteBuffer>(args[4], "rhs"));
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * out_buffer,
                          vm::CastRef<vm::ByteBuffer>(args[8], "out"));
  STRATA_ASSIGN_OR_RETURN(int64_t m, NonNegativeDimension(args[12], "M"));
  STRATA_ASSIGN_OR_RETURN(int64_t n, NonNegativeDimension(args[13], "N"));
  STRATA_ASSIGN_OR_RETURN(int64_t k, NonNegativeDimension(args[14], "K"));
  STRATA_ASSIGN_OR_RETURN(const uint8_t *lhs,
                          CheckWindow(*lhs_buffer, args[1].i64(), args[2].i64(),
                                      args[3].i64(), m, k, "lhs"));
  STRATA_ASSIGN_OR_RETURN(const uint8_t *rhs,
                          CheckWindow(*rhs_buffer, args[5].i64(), args[6].i64(),
                                      args[7].i64(), k, n, "rhs"));
  STRATA_ASSIGN_OR_RETURN(const uint8_t *out,
                          CheckWindow(*out_buffer, args[9].i64(),
                                      args[10].i64(), args[11].i64(), m, n,
                                      "out"));
  if (m == 0 || n == 0 || k == 0)
    return OkStatus();
  STRATA_ASSIGN_OR_RETURN(std::span<uint8_t> writable,
                          out_buffer->MutableData());
  float *out_data = reinterpret_cast<float *>(
      writable.data() + (out - out_buffer->data().data()));
  MatmulF32(
      {reinterpret_cast<const float *>(lhs), args[2].i64(), args[3].i64()},
      {reinterpret_cast<const float *>(rhs), args[6].i64(), args[7].i64()},
      {out_data, args[10].i64(), args[11].i64()}, m, n, k);
  return OkStatus();
}

constexpr vm::NativeFunctionDef kFunctions[] = {
#define STRATA_VMVX_MICROKERNEL(name, full_name, calling_convention)           \
  {full_name, calling_convention, name##Entry},
#include "strata/hal/local/vmvx_microkernels.def"
};

constexpr vm::NativeModuleDescriptor kDescriptor = {
    .name = STRATA_HAL_VMVX_MODULE_NAME,
    .version = STRATA_HAL_VMVX_MODULE_VERSION,
    .functions = kFunctions,
};

} // namespace

Result<RefPtr<vm::Module>> CreateVmvxMicrokernelModule() {
  STRATA_ASSIGN_OR_RETURN(RefPtr<vm::NativeModule> module,
                          vm::NativeModule::Create(kDescriptor));
  return RefPtr<vm::Module>(std::move(module));
}

} // namespace strata::hal
