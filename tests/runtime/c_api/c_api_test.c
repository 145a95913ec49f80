/* The C API as an embedder uses it, compiled as C and linked only against
 * the runtime libraries: load a compiled simple_mul module (from a file and
 * from memory), call it on local-sync and local-task, check the numbers,
 * then the error paths (bad shape, unknown function, bad device, bad
 * module bytes); then read a module's reflection (names, element types,
 * dims of each input and output) and call it with inputs built from it;
 * the session's function list; results read and written in place.
 * Usage: c_api_test SIMPLE_MUL.smod NAMED_MUL.smod */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/runtime.h"

static int failures = 0;

#define CHECK(condition)                                                       \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,         \
              #condition);                                                     \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Expects success; prints and frees any failure. */
static int Ok(strata_status_t status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "%s failed: %s\n", what, strata_status_message(status));
  strata_status_free(status);
  ++failures;
  return 0;
}

/* Expects a failure with `code` whose message contains `needle`. */
static void ExpectError(strata_status_t status, strata_status_code_t code,
                        const char *needle, const char *what) {
  if (!status) {
    fprintf(stderr, "%s: expected an error containing '%s'\n", what, needle);
    ++failures;
    return;
  }
  if (strata_status_code(status) != code ||
      !strstr(strata_status_message(status), needle)) {
    fprintf(stderr, "%s: expected code %d with '%s', got %d: %s\n", what,
            (int)code, needle, (int)strata_status_code(status),
            strata_status_message(status));
    ++failures;
  }
  strata_status_free(status);
}

static int released = 0;
static void ReleaseBytes(void *user_data, const void *data, size_t size) {
  ++released;
  free((void *)data);
}

static void *ReadFile(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  void *data = malloc((size_t)length);
  *size = fread(data, 1, (size_t)length, file);
  fclose(file);
  return data;
}

static void RunSimpleMul(strata_instance_t *instance, const char *uri,
                         const char *module_path, int from_memory) {
  strata_device_t *device = NULL;
  if (!Ok(strata_device_create(instance, uri, &device), "device"))
    return;
  strata_session_t *session = NULL;
  if (!Ok(strata_session_create(instance, device, &session), "session")) {
    strata_device_release(device);
    return;
  }
  /* The session keeps the device alive. */
  strata_device_release(device);

  if (from_memory) {
    size_t size = 0;
    void *bytes = ReadFile(module_path, &size);
    CHECK(bytes != NULL);
    int before = released;
    Ok(strata_session_append_module_from_memory(session, bytes, size,
                                                ReleaseBytes, NULL),
       "append from memory");
    /* The module keeps using the bytes, unless it had to copy them to
       align its rodata (malloc only promises 16 bytes): either way they
       are released at most once. */
    CHECK(released - before <= 1);
  } else {
    Ok(strata_session_append_module_from_file(session, module_path),
       "append from file");
  }

  /* The module's one function is listed; not `hal`'s, nor `__init`. */
  CHECK(strata_session_function_count(session) == 1);
  const char *listed = NULL;
  if (Ok(strata_session_function_name(session, 0, &listed), "function name"))
    CHECK(strcmp(listed, "module.simple_mul") == 0);
  ExpectError(strata_session_function_name(session, 1, &listed),
              STRATA_STATUS_INVALID_ARGUMENT,
              "has 1 function; there is no function 1",
              "function name past the count");
  ExpectError(strata_session_function_name(session, 0, NULL),
              STRATA_STATUS_INVALID_ARGUMENT, "out_name", "null name");

  strata_function_t *function = NULL;
  if (Ok(strata_session_lookup_function(session, "simple_mul", &function),
         "lookup")) {
    CHECK(strata_function_input_count(function) == 2);
    CHECK(strata_function_output_count(function) == 1);
    CHECK(strcmp(strata_function_name(function), "module.simple_mul") == 0);
    strata_tensor_info_t info;
    if (Ok(strata_function_input_info(function, 1, &info), "input info")) {
      CHECK(strcmp(info.name, "") == 0); /* an MLIR argument without one */
      CHECK(info.element_type == STRATA_ELEMENT_TYPE_FLOAT_32);
      CHECK(info.rank == 1 && info.dims[0] == 4);
    }
    ExpectError(strata_function_input_info(function, 2, &info),
                STRATA_STATUS_INVALID_ARGUMENT,
                "has 2 inputs; there is no input 2",
                "input info past the count");
    ExpectError(strata_function_output_info(function, 0, NULL),
                STRATA_STATUS_INVALID_ARGUMENT, "out_info", "null info");
    const int64_t shape[1] = {4};
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    strata_buffer_view_t *inputs[2] = {NULL, NULL};
    Ok(strata_buffer_view_create(session, shape, 1,
                                 STRATA_ELEMENT_TYPE_FLOAT_32, a, sizeof(a),
                                 &inputs[0]),
       "input 0");
    Ok(strata_buffer_view_create(session, shape, 1,
                                 STRATA_ELEMENT_TYPE_FLOAT_32, b, sizeof(b),
                                 &inputs[1]),
       "input 1");
    strata_buffer_view_t *outputs[2] = {NULL, NULL};
    size_t output_count = 0;
    if (Ok(strata_session_call(session, function, inputs, 2, outputs, 2,
                               &output_count),
           "call")) {
      CHECK(output_count == 1);
      CHECK(strata_buffer_view_rank(outputs[0]) == 1);
      CHECK(strata_buffer_view_dim(outputs[0], 0) == 4);
      CHECK(strata_buffer_view_element_type(outputs[0]) ==
            STRATA_ELEMENT_TYPE_FLOAT_32);
      float result[4] = {0};
      Ok(strata_buffer_view_read(outputs[0], result, sizeof(result)), "read");
      CHECK(result[0] == 5 && result[1] == 12 && result[2] == 21 &&
            result[3] == 32);
      ExpectError(strata_buffer_view_read(outputs[0], result, 3),
                  STRATA_STATUS_INVALID_ARGUMENT, "reading 3 bytes",
                  "short read");
      strata_buffer_view_release(outputs[0]);
    }

    /* A wrong shape names the argument; outputs stay untouched. */
    const int64_t bad_shape[1] = {3};
    strata_buffer_view_t *bad = NULL;
    Ok(strata_buffer_view_create(session, bad_shape, 1,
                                 STRATA_ELEMENT_TYPE_FLOAT_32, a, 12, &bad),
       "bad input");
    strata_buffer_view_t *bad_inputs[2] = {bad, inputs[1]};
    outputs[0] = NULL;
    output_count = 7;
    ExpectError(strata_session_call(session, function, bad_inputs, 2, outputs,
                                    2, &output_count),
                STRATA_STATUS_INVALID_ARGUMENT,
                "argument 0: expected 4xf32, got 3xf32", "wrong shape");
    CHECK(outputs[0] == NULL && output_count == 7);
    ExpectError(strata_session_call(session, function, inputs, 1, outputs, 2,
                                    &output_count),
                STRATA_STATUS_INVALID_ARGUMENT, "takes 2 arguments, got 1",
                "too few inputs");
    ExpectError(strata_buffer_view_create(session, shape, 1,
                                          STRATA_ELEMENT_TYPE_FLOAT_32, a, 8,
                                          &bad),
                STRATA_STATUS_INVALID_ARGUMENT, "need 16", "short data");
    /* Results-to-outs: the result lands in the caller's view. */
    const float zeros[4] = {0, 0, 0, 0};
    strata_buffer_view_t *out = NULL;
    Ok(strata_buffer_view_create(session, shape, 1,
                                 STRATA_ELEMENT_TYPE_FLOAT_32, zeros,
                                 sizeof(zeros), &out),
       "output view");
    if (Ok(strata_session_call_into(session, function, inputs, 2, &out, 1),
           "call into")) {
      float result[4] = {0};
      Ok(strata_buffer_view_read(out, result, sizeof(result)), "read out");
      CHECK(result[0] == 5 && result[1] == 12 && result[2] == 21 &&
            result[3] == 32);
    }
    /* A wrong output shape names the output; nothing is written. */
    strata_buffer_view_t *small_out = NULL;
    Ok(strata_buffer_view_create(session, bad_shape, 1,
                                 STRATA_ELEMENT_TYPE_FLOAT_32, zeros, 12,
                                 &small_out),
       "small output view");
    ExpectError(
        strata_session_call_into(session, function, inputs, 2, &small_out, 1),
        STRATA_STATUS_INVALID_ARGUMENT, "output 0: expected 4xf32, got 3xf32",
        "wrong output shape");
    {
      float untouched[3] = {1, 1, 1};
      Ok(strata_buffer_view_read(small_out, untouched, sizeof(untouched)),
         "read small output");
      CHECK(untouched[0] == 0 && untouched[1] == 0 && untouched[2] == 0);
    }
    ExpectError(strata_session_call_into(session, function, inputs, 2, &out, 0),
                STRATA_STATUS_INVALID_ARGUMENT, "has 1 result, got 0",
                "missing output");
    strata_buffer_view_release(small_out);
    strata_buffer_view_release(out);
    strata_buffer_view_release(bad_inputs[0]);
    strata_buffer_view_release(inputs[0]);
    strata_buffer_view_release(inputs[1]);
    strata_function_release(function);
  }

  strata_function_t *missing = NULL;
  ExpectError(strata_session_lookup_function(session, "nope", &missing),
              STRATA_STATUS_NOT_FOUND, "nope", "unknown function");
  CHECK(missing == NULL);
  Ok(strata_session_trim(session), "trim");
  strata_session_release(session);
}

/* The device's memory limit and sizes from user shapes. */
static void CheckSizesAndMemoryLimit(strata_instance_t *instance) {
  strata_device_t *device = NULL;
  if (!Ok(strata_device_create(instance, "local-sync", &device), "device"))
    return;
  CHECK(strata_device_memory_limit(device) > 0); /* physical memory */
  Ok(strata_device_set_memory_limit(device, 1024), "set memory limit");
  CHECK(strata_device_memory_limit(device) == 1024);
  strata_session_t *session = NULL;
  if (Ok(strata_session_create(instance, device, &session), "session")) {
    static float data[512];
    int64_t fits_shape[1] = {200};
    int64_t over_shape[1] = {512};
    strata_buffer_view_t *kept = NULL, *view = NULL;
    Ok(strata_buffer_view_create(session, fits_shape, 1,
                                 STRATA_ELEMENT_TYPE_FLOAT_32, data,
                                 sizeof(float) * 200, &kept),
       "view within the limit");
    /* 800 bytes live: another 800 would pass 1024. */
    ExpectError(strata_buffer_view_create(session, fits_shape, 1,
                                          STRATA_ELEMENT_TYPE_FLOAT_32, data,
                                          sizeof(float) * 200, &view),
                STRATA_STATUS_RESOURCE_EXHAUSTED,
                "over its memory limit of 1024 bytes", "live bytes");
    ExpectError(strata_buffer_view_create(session, over_shape, 1,
                                          STRATA_ELEMENT_TYPE_FLOAT_32, data,
                                          sizeof(data), &view),
                STRATA_STATUS_RESOURCE_EXHAUSTED,
                "allocation of 2048 bytes exceeds the limit", "single request");
    /* 2^32 x 2^32 floats: 0 bytes after wrapping in 64 bits. */
    int64_t wrapping[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
    ExpectError(strata_buffer_view_create(session, wrapping, 2,
                                          STRATA_ELEMENT_TYPE_FLOAT_32, data, 0,
                                          &view),
                STRATA_STATUS_INVALID_ARGUMENT,
                "shape 4294967296x4294967296 x 4 bytes overflows 64 bits",
                "shape overflow");
    CHECK(view == NULL);
    strata_buffer_view_release(kept);
    strata_session_release(session);
  }
  Ok(strata_device_set_memory_limit(device, 0), "default memory limit");
  CHECK(strata_device_memory_limit(device) > 1024);
  ExpectError(strata_device_set_memory_limit(NULL, 1),
              STRATA_STATUS_INVALID_ARGUMENT, "device", "null device");
  strata_device_release(device);
}

/* A local-sync session with `module_path` loaded and its function `name`;
 * on failure (reported) releases what it made and returns 0. */
static int OpenFunction(strata_instance_t *instance, const char *module_path,
                        const char *name, strata_device_t **device,
                        strata_session_t **session,
                        strata_function_t **function) {
  if (Ok(strata_device_create(instance, "local-sync", device), "device") &&
      Ok(strata_session_create(instance, *device, session), "session") &&
      Ok(strata_session_append_module_from_file(*session, module_path),
         module_path) &&
      Ok(strata_session_lookup_function(*session, name, function), name))
    return 1;
  strata_session_release(*session);
  strata_device_release(*device);
  *session = NULL;
  *device = NULL;
  return 0;
}

static void CountImportRelease(void *user_data, const void *data, size_t size) {
  (void)data;
  (void)size;
  ++*(int *)user_data;
}

/* Buffer import: an aligned input is the caller's memory itself (a write
 * to it before the call shows in the result) and is released once the view
 * is gone; a misaligned one is copied and released at once; a bad shape is
 * refused and released too. */
static void RunImported(strata_instance_t *instance, const char *module_path) {
  strata_device_t *device = NULL;
  strata_session_t *session = NULL;
  strata_function_t *function = NULL;
  if (!OpenFunction(instance, module_path, "simple_mul", &device, &session,
                    &function))
    return;
  const int64_t shape[1] = {4};
  /* 64-byte aligned storage: two floats of four, one line apart. */
  float *aligned = aligned_alloc(64, 128);
  float *misaligned_base = aligned_alloc(64, 128);
  float *misaligned = misaligned_base + 1;
  for (int i = 0; i < 4; ++i) {
    aligned[i] = (float)(i + 1);
    misaligned[i] = 10.0f;
  }
  int aligned_released = 0, misaligned_released = 0, refused_released = 0;
  strata_buffer_view_t *inputs[2] = {NULL, NULL};
  Ok(strata_buffer_view_import(session, shape, 1, STRATA_ELEMENT_TYPE_FLOAT_32,
                               aligned, 4 * sizeof(float), CountImportRelease,
                               &aligned_released, &inputs[0]),
     "import aligned");
  Ok(strata_buffer_view_import(session, shape, 1, STRATA_ELEMENT_TYPE_FLOAT_32,
                               misaligned, 4 * sizeof(float),
                               CountImportRelease, &misaligned_released,
                               &inputs[1]),
     "import misaligned");
  CHECK(misaligned_released == 1); /* copied, released at once */
  CHECK(aligned_released == 0);    /* still the input's memory */
  strata_buffer_view_t *refused = NULL;
  ExpectError(strata_buffer_view_import(session, shape, 1,
                                        STRATA_ELEMENT_TYPE_FLOAT_32, aligned,
                                        3 * sizeof(float), CountImportRelease,
                                        &refused_released, &refused),
              STRATA_STATUS_INVALID_ARGUMENT, "need 16", "import bad size");
  CHECK(refused == NULL && refused_released == 1);
  /* Not copied: a write before the call is what the call reads. */
  aligned[3] = 100.0f;
  misaligned[3] = 1000.0f;
  strata_buffer_view_t *outputs[1] = {NULL};
  size_t output_count = 0;
  if (inputs[0] && inputs[1] &&
      Ok(strata_session_call(session, function, inputs, 2, outputs, 1,
                             &output_count),
         "call imported")) {
    float product[4] = {0};
    if (Ok(strata_buffer_view_read(outputs[0], product, sizeof(product)),
           "read imported product")) {
      CHECK(product[0] == 10.0f && product[2] == 30.0f);
      CHECK(product[3] == 1000.0f); /* 100 (in place) x 10 (copied) */
    }
  }
  strata_buffer_view_release(outputs[0]);
  strata_buffer_view_release(inputs[1]);
  strata_buffer_view_release(inputs[0]);
  strata_function_release(function);
  strata_session_release(session);
  strata_device_release(device);
  CHECK(aligned_released == 1);
  free(aligned);
  free(misaligned_base);
}

/* Introspection as an embedder uses it: every input made from its
 * reflection (all ones, of its element type and dims), the results read
 * back by theirs. named_mul multiplies lhs by rhs, both 2x3. */
static void RunByReflection(strata_instance_t *instance,
                            const char *module_path) {
  strata_device_t *device = NULL;
  strata_session_t *session = NULL;
  strata_function_t *function = NULL;
  if (!OpenFunction(instance, module_path, "named_mul", &device, &session,
                    &function))
    return;
  /* The module's functions, in the order it declares them. */
  static const char *kFunctions[4] = {"module.named_mul", "module.named_add",
                                      "module.named_twice",
                                      "module.named_same"};
  CHECK(strata_session_function_count(session) == 4);
  for (size_t f = 0; f < 4; ++f) {
    const char *listed = NULL;
    if (Ok(strata_session_function_name(session, f, &listed), "listed name"))
      CHECK(strcmp(listed, kFunctions[f]) == 0);
  }
  static const char *kInputNames[2] = {"lhs", "rhs"};
  strata_buffer_view_t *inputs[2] = {NULL, NULL};
  size_t count = strata_function_input_count(function);
  CHECK(count == 2);
  for (size_t i = 0; i < count && i < 2; ++i) {
    strata_tensor_info_t info;
    if (!Ok(strata_function_input_info(function, i, &info), "input info"))
      continue;
    CHECK(strcmp(info.name, kInputNames[i]) == 0);
    CHECK(info.element_type == STRATA_ELEMENT_TYPE_FLOAT_32);
    size_t elements = 1;
    for (size_t d = 0; d < info.rank; ++d)
      elements *= (size_t)info.dims[d];
    CHECK(info.rank == 2 && elements == 6);
    float *data = malloc(elements * sizeof(float));
    for (size_t e = 0; e < elements; ++e)
      data[e] = (float)(i + 2); /* lhs all 2, rhs all 3 */
    Ok(strata_buffer_view_create(session, info.dims, info.rank,
                                 info.element_type, data,
                                 elements * sizeof(float), &inputs[i]),
       "input from reflection");
    free(data);
  }
  strata_tensor_info_t out;
  if (Ok(strata_function_output_info(function, 0, &out), "output info")) {
    CHECK(strcmp(out.name, "product") == 0);
    CHECK(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 3);
  }
  strata_buffer_view_t *outputs[1] = {NULL};
  size_t output_count = 0;
  if (inputs[0] && inputs[1] &&
      Ok(strata_session_call(session, function, inputs, 2, outputs, 1,
                             &output_count),
         "call named_mul")) {
    float product[6] = {0};
    if (Ok(strata_buffer_view_read(outputs[0], product, sizeof(product)),
           "read product"))
      for (int e = 0; e < 6; ++e)
        CHECK(product[e] == 6.0f);
  }
  strata_buffer_view_release(outputs[0]);
  strata_buffer_view_release(inputs[0]);
  strata_buffer_view_release(inputs[1]);
  strata_function_release(function);
  strata_session_release(session);
  strata_device_release(device);
}

/* Results in place (strata_buffer_view_exclusive_host_data): a result the
 * caller alone holds is its memory (read and written through the pointer);
 * one also held elsewhere is not: a result returned twice, an input the
 * caller still holds, imported caller memory. */
static void RunInPlace(strata_instance_t *instance, const char *module_path) {
  strata_device_t *device = NULL;
  strata_session_t *session = NULL;
  strata_function_t *mul = NULL, *twice = NULL, *same = NULL;
  if (!OpenFunction(instance, module_path, "named_mul", &device, &session,
                    &mul))
    return;
  Ok(strata_session_lookup_function(session, "named_twice", &twice), "twice");
  Ok(strata_session_lookup_function(session, "named_same", &same), "same");
  const int64_t shape[2] = {2, 3};
  float lhs[6] = {1, 2, 3, 4, 5, 6}, rhs[6] = {2, 2, 2, 2, 2, 2};
  strata_buffer_view_t *inputs[2] = {NULL, NULL};
  Ok(strata_buffer_view_create(session, shape, 2, STRATA_ELEMENT_TYPE_FLOAT_32,
                               lhs, sizeof(lhs), &inputs[0]),
     "lhs");
  Ok(strata_buffer_view_create(session, shape, 2, STRATA_ELEMENT_TYPE_FLOAT_32,
                               rhs, sizeof(rhs), &inputs[1]),
     "rhs");
  void *data = (void *)1;
  ExpectError(strata_buffer_view_exclusive_host_data(NULL, &data),
              STRATA_STATUS_INVALID_ARGUMENT, "'view' is null", "null view");
  CHECK(data == (void *)1);

  /* A fresh result: its memory, the product, writable in place. */
  strata_buffer_view_t *outputs[2] = {NULL, NULL};
  size_t count = 0;
  if (inputs[0] && inputs[1] && twice && same &&
      Ok(strata_session_call(session, mul, inputs, 2, outputs, 2, &count),
         "call mul") &&
      Ok(strata_buffer_view_exclusive_host_data(outputs[0], &data),
         "product in place") &&
      data) {
    CHECK(count == 1);
    float *product = data;
    for (int e = 0; e < 6; ++e)
      CHECK(product[e] == lhs[e] * 2.0f);
    product[5] = -1.0f;
    float read[6] = {0};
    if (Ok(strata_buffer_view_read(outputs[0], read, sizeof(read)), "read"))
      CHECK(read[5] == -1.0f);
  } else {
    CHECK(!"a fresh result is the caller's alone");
  }
  strata_buffer_view_release(outputs[0]);
  outputs[0] = NULL;

  /* One view returned twice: two handles, neither alone. */
  count = 0;
  if (inputs[0] && inputs[1] && twice &&
      Ok(strata_session_call(session, twice, inputs, 2, outputs, 2, &count),
         "call twice")) {
    CHECK(count == 2);
    for (size_t i = 0; i < count; ++i) {
      data = (void *)1;
      if (Ok(strata_buffer_view_exclusive_host_data(outputs[i], &data),
             "twice in place"))
        CHECK(data == NULL);
    }
    /* With the other handle gone, the last one is alone. */
    strata_buffer_view_release(outputs[0]);
    outputs[0] = NULL;
    if (count == 2 &&
        Ok(strata_buffer_view_exclusive_host_data(outputs[1], &data),
           "twice in place, one handle left"))
      CHECK(data != NULL && ((float *)data)[1] == 4.0f);
    strata_buffer_view_release(outputs[1]);
    outputs[1] = NULL;
  }

  /* The input returned: not alone while the caller holds the input too;
   * alone once that handle is gone (memory the runtime allocated). */
  const int64_t ints_shape[1] = {3};
  int32_t ints[3] = {7, 8, 9};
  strata_buffer_view_t *int_input = NULL;
  if (same &&
      Ok(strata_buffer_view_create(session, ints_shape, 1,
                                   STRATA_ELEMENT_TYPE_SINT_32, ints,
                                   sizeof(ints), &int_input),
         "ints") &&
      Ok(strata_session_call(session, same, &int_input, 1, outputs, 1, &count),
         "call same")) {
    data = (void *)1;
    if (Ok(strata_buffer_view_exclusive_host_data(outputs[0], &data),
           "same in place"))
      CHECK(data == NULL);
    strata_buffer_view_release(int_input);
    int_input = NULL;
    if (Ok(strata_buffer_view_exclusive_host_data(outputs[0], &data),
           "same in place, input released"))
      CHECK(data != NULL && ((int32_t *)data)[2] == 9);
    strata_buffer_view_release(outputs[0]);
    outputs[0] = NULL;
  }
  strata_buffer_view_release(int_input);

  /* Imported memory stays the importer's, even returned as the result of a
   * call whose input handle is gone. */
  int32_t *aligned = aligned_alloc(64, 64);
  aligned[0] = 1;
  aligned[1] = 2;
  aligned[2] = 3;
  int imported_released = 0;
  if (same && Ok(strata_buffer_view_import(
                     session, ints_shape, 1, STRATA_ELEMENT_TYPE_SINT_32,
                     aligned, 3 * sizeof(int32_t), CountImportRelease,
                     &imported_released, &int_input),
                 "import ints")) {
    data = (void *)1;
    if (Ok(strata_buffer_view_exclusive_host_data(int_input, &data),
           "imported in place"))
      CHECK(data == NULL);
    if (Ok(strata_session_call(session, same, &int_input, 1, outputs, 1,
                               &count),
           "call same imported")) {
      strata_buffer_view_release(int_input);
      int_input = NULL;
      data = (void *)1;
      if (Ok(strata_buffer_view_exclusive_host_data(outputs[0], &data),
             "imported result in place"))
        CHECK(data == NULL);
      strata_buffer_view_release(outputs[0]);
    }
    strata_buffer_view_release(int_input);
  }
  CHECK(imported_released == 1);
  free(aligned);

  strata_buffer_view_release(inputs[0]);
  strata_buffer_view_release(inputs[1]);
  strata_function_release(same);
  strata_function_release(twice);
  strata_function_release(mul);
  strata_session_release(session);
  strata_device_release(device);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_api_test SIMPLE_MUL.smod NAMED_MUL.smod\n");
    return 2;
  }
  strata_instance_t *instance = NULL;
  if (!Ok(strata_instance_create(&instance), "instance"))
    return 1;

  RunSimpleMul(instance, "local-sync", argv[1], 0);
  RunSimpleMul(instance, "local-task?workers=2", argv[1], 1);
  RunSimpleMul(instance, "local-sync?loader=system", argv[1], 1);
  CHECK(released == 2); /* Both memory modules released with the sessions. */
  RunByReflection(instance, argv[2]);
  RunImported(instance, argv[1]);
  RunInPlace(instance, argv[2]);

  strata_device_t *device = NULL;
  ExpectError(strata_device_create(instance, "warp-drive", &device),
              STRATA_STATUS_NOT_FOUND, "warp-drive", "unknown driver");
  CHECK(device == NULL);
  ExpectError(
      strata_device_create(instance, "local-task?workers=many", &device),
      STRATA_STATUS_INVALID_ARGUMENT, "'many'", "bad device option");

  /* Garbage module bytes: an error, and the bytes are still released. */
  if (Ok(strata_device_create(instance, "local-sync", &device), "device")) {
    strata_session_t *session = NULL;
    if (Ok(strata_session_create(instance, device, &session), "session")) {
      CHECK(strata_session_function_count(session) == 0);
      char *garbage = malloc(64);
      memset(garbage, 0x5a, 64);
      int before = released;
      strata_status_t status = strata_session_append_module_from_memory(
          session, garbage, 64, ReleaseBytes, NULL);
      CHECK(status != NULL);
      strata_status_free(status);
      CHECK(released == before + 1);
      ExpectError(
          strata_session_append_module_from_file(session, "/nonexistent.smod"),
          STRATA_STATUS_NOT_FOUND, "nonexistent.smod", "missing file");
      /* Failed appends list nothing. */
      CHECK(strata_session_function_count(session) == 0);
      const char *name = NULL;
      ExpectError(strata_session_function_name(session, 0, &name),
                  STRATA_STATUS_INVALID_ARGUMENT,
                  "has 0 functions; there is no function 0", "no functions");
      CHECK(name == NULL);
      strata_session_release(session);
    }
    strata_device_release(device);
  }
  CheckSizesAndMemoryLimit(instance);
  CHECK(strata_status_code(NULL) == STRATA_STATUS_OK);
  CHECK(strcmp(strata_status_message(NULL), "") == 0);
  strata_instance_release(instance);

  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
