/* Embedding the Strata runtime from C (strata/runtime.h), built out of tree
 * against the installed package (README.md). Loads a compiled module, lists
 * its functions and calls each (or the one --function names) with inputs
 * made from the function's own reflection: every input's name, element
 * type and dims come from the module, a dynamic dim (-1) becomes --dim.
 * Input k's element i is k + 0.01 * i for floating-point types, (i + k) % 3
 * for integers and (i + k) % 2 for booleans. Prints each output's name,
 * type, shape and first values.
 *
 *   embed [--device=URI] [--function=NAME] [--dim=N] [--count=N] MODULE.smod
 *
 * Exits 1 naming the step and the runtime's message on any failure, 2 on a
 * bad command line. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/runtime.h"

typedef struct options_t {
  const char *module_path;
  const char *device_uri;
  const char *function; /* NULL: every function */
  int64_t dynamic_dim;
  size_t print_count;
} options_t;

/* Reports a failed status (and frees it); 1 on success. */
static int Check(strata_status_t status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "embed: %s: %s (status %d)\n", what,
          strata_status_message(status), (int)strata_status_code(status));
  strata_status_free(status);
  return 0;
}

/* The encoding of runtime.h: numerical type << 24 | bit count. */
static unsigned NumericalType(strata_element_type_t type) { return type >> 24; }
static unsigned BitCount(strata_element_type_t type) { return type & 0xFFu; }
static size_t ByteCount(strata_element_type_t type) {
  return (BitCount(type) + 7u) / 8u;
}

/* "f32", "i64", "ui8", "i1" (a boolean byte), "bf16": as the tools print. */
static void TypeName(strata_element_type_t type, char *text, size_t size) {
  const char *prefix = NULL;
  switch (NumericalType(type)) {
  case 0x11:
    prefix = "i";
    break;
  case 0x12:
    prefix = "ui";
    break;
  case 0x14:
    snprintf(text, size, "i1");
    return;
  case 0x21:
    prefix = "f";
    break;
  case 0x22:
    prefix = "bf";
    break;
  default:
    snprintf(text, size, "type_0x%08x", (unsigned)type);
    return;
  }
  snprintf(text, size, "%s%u", prefix, BitCount(type));
}

/* "2x?x4xf32" (dims of -1 as ?), "f32" for a scalar. */
static void ShapeName(const int64_t *dims, size_t rank,
                      strata_element_type_t type, char *text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (size_t d = 0; d < rank && used < size; ++d) {
    int written = dims[d] < 0 ? snprintf(text + used, size - used, "?x")
                              : snprintf(text + used, size - used,
                                         "%" PRId64 "x", dims[d]);
    if (written < 0)
      return;
    used += (size_t)written;
  }
  if (used < size)
    TypeName(type, text + used, size - used);
}

static int IsSupported(strata_element_type_t type) {
  switch (type) {
  case STRATA_ELEMENT_TYPE_BOOL_8:
  case STRATA_ELEMENT_TYPE_SINT_8:
  case STRATA_ELEMENT_TYPE_SINT_16:
  case STRATA_ELEMENT_TYPE_SINT_32:
  case STRATA_ELEMENT_TYPE_SINT_64:
  case STRATA_ELEMENT_TYPE_UINT_8:
  case STRATA_ELEMENT_TYPE_UINT_16:
  case STRATA_ELEMENT_TYPE_UINT_32:
  case STRATA_ELEMENT_TYPE_UINT_64:
  case STRATA_ELEMENT_TYPE_FLOAT_16:
  case STRATA_ELEMENT_TYPE_FLOAT_32:
  case STRATA_ELEMENT_TYPE_FLOAT_64:
  case STRATA_ELEMENT_TYPE_BFLOAT_16:
    return 1;
  default:
    return 0;
  }
}

static uint32_t FloatBits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float FloatFromBits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

/* IEEE half from float, rounding to nearest even (the inputs made here are
 * finite and small, but the rest is handled too). */
static uint16_t HalfFromFloat(float value) {
  uint32_t bits = FloatBits(value);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  uint32_t exponent = (bits >> 23) & 0xFFu;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFF) /* inf or nan */
    return (uint16_t)(sign | 0x7C00u | (mantissa ? 0x200u : 0));
  int32_t half_exponent = (int32_t)exponent - 127 + 15;
  if (half_exponent >= 31)
    return (uint16_t)(sign | 0x7C00u);
  if (half_exponent <= 0) { /* subnormal or zero */
    if (half_exponent < -10)
      return sign;
    mantissa |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - half_exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)half_exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; /* may carry into the exponent: still right */
  return (uint16_t)(sign | half);
}

static float FloatFromHalf(uint16_t half) {
  uint32_t sign = (uint32_t)(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1Fu;
  uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0x1F)
    return FloatFromBits(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    float value = (float)mantissa / 16777216.0f; /* 2^-24 per unit */
    return sign ? -value : value;
  }
  return FloatFromBits(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

static uint16_t BFloatFromFloat(float value) {
  uint32_t bits = FloatBits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) /* nan stays nan */
    return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* Element `index` of input `input` (see the top of the file). */
static void MakeElement(strata_element_type_t type, size_t input, size_t index,
                        void *target) {
  double real = (double)input + 0.01 * (double)index;
  uint64_t integer = (index + input) % 3;
  switch (type) {
  case STRATA_ELEMENT_TYPE_BOOL_8: {
    uint8_t value = (uint8_t)((index + input) % 2);
    memcpy(target, &value, 1);
    break;
  }
  case STRATA_ELEMENT_TYPE_SINT_8:
  case STRATA_ELEMENT_TYPE_UINT_8: {
    uint8_t value = (uint8_t)integer;
    memcpy(target, &value, 1);
    break;
  }
  case STRATA_ELEMENT_TYPE_SINT_16:
  case STRATA_ELEMENT_TYPE_UINT_16: {
    uint16_t value = (uint16_t)integer;
    memcpy(target, &value, 2);
    break;
  }
  case STRATA_ELEMENT_TYPE_SINT_32:
  case STRATA_ELEMENT_TYPE_UINT_32: {
    uint32_t value = (uint32_t)integer;
    memcpy(target, &value, 4);
    break;
  }
  case STRATA_ELEMENT_TYPE_SINT_64:
  case STRATA_ELEMENT_TYPE_UINT_64:
    memcpy(target, &integer, 8);
    break;
  case STRATA_ELEMENT_TYPE_FLOAT_16: {
    uint16_t value = HalfFromFloat((float)real);
    memcpy(target, &value, 2);
    break;
  }
  case STRATA_ELEMENT_TYPE_BFLOAT_16: {
    uint16_t value = BFloatFromFloat((float)real);
    memcpy(target, &value, 2);
    break;
  }
  case STRATA_ELEMENT_TYPE_FLOAT_32: {
    float value = (float)real;
    memcpy(target, &value, 4);
    break;
  }
  case STRATA_ELEMENT_TYPE_FLOAT_64:
    memcpy(target, &real, 8);
    break;
  }
}

/* Prints element `index` of `data` after a space. */
static void PrintElement(strata_element_type_t type, const uint8_t *data,
                         size_t index) {
  const uint8_t *element = data + index * ByteCount(type);
  switch (type) {
  case STRATA_ELEMENT_TYPE_BOOL_8:
  case STRATA_ELEMENT_TYPE_UINT_8:
    printf(" %u", (unsigned)element[0]);
    break;
  case STRATA_ELEMENT_TYPE_SINT_8:
    printf(" %d", (int)(int8_t)element[0]);
    break;
  case STRATA_ELEMENT_TYPE_SINT_16: {
    int16_t value;
    memcpy(&value, element, 2);
    printf(" %d", (int)value);
    break;
  }
  case STRATA_ELEMENT_TYPE_UINT_16: {
    uint16_t value;
    memcpy(&value, element, 2);
    printf(" %u", (unsigned)value);
    break;
  }
  case STRATA_ELEMENT_TYPE_SINT_32: {
    int32_t value;
    memcpy(&value, element, 4);
    printf(" %" PRId32, value);
    break;
  }
  case STRATA_ELEMENT_TYPE_UINT_32: {
    uint32_t value;
    memcpy(&value, element, 4);
    printf(" %" PRIu32, value);
    break;
  }
  case STRATA_ELEMENT_TYPE_SINT_64: {
    int64_t value;
    memcpy(&value, element, 8);
    printf(" %" PRId64, value);
    break;
  }
  case STRATA_ELEMENT_TYPE_UINT_64: {
    uint64_t value;
    memcpy(&value, element, 8);
    printf(" %" PRIu64, value);
    break;
  }
  case STRATA_ELEMENT_TYPE_FLOAT_16: {
    uint16_t value;
    memcpy(&value, element, 2);
    printf(" %.9g", (double)FloatFromHalf(value));
    break;
  }
  case STRATA_ELEMENT_TYPE_BFLOAT_16: {
    uint16_t value;
    memcpy(&value, element, 2);
    printf(" %.9g", (double)FloatFromBits((uint32_t)value << 16));
    break;
  }
  case STRATA_ELEMENT_TYPE_FLOAT_32: {
    float value;
    memcpy(&value, element, 4);
    printf(" %.9g", (double)value); /* enough digits to read back exactly */
    break;
  }
  case STRATA_ELEMENT_TYPE_FLOAT_64: {
    double value;
    memcpy(&value, element, 8);
    printf(" %.17g", value);
    break;
  }
  default:
    printf(" ?");
    break;
  }
}

/* The first `count` elements of `elements` (and "..." for the rest). */
static void PrintValues(strata_element_type_t type, const void *data,
                        size_t elements, size_t count) {
  printf(" =");
  for (size_t i = 0; i < elements && i < count; ++i)
    PrintElement(type, data, i);
  if (elements > count)
    printf(" ...");
  printf("\n");
}

/* Elements of `shape`; 0 with a message when the product overflows. */
static int CountElements(const int64_t *shape, size_t rank,
                         strata_element_type_t type, size_t *out_elements,
                         size_t *out_bytes) {
  size_t elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0 ||
        (shape[d] > 0 && elements > SIZE_MAX / (size_t)shape[d])) {
      fprintf(stderr, "embed: a tensor of rank %zu is too large\n", rank);
      return 0;
    }
    elements *= (size_t)shape[d];
  }
  if (elements > SIZE_MAX / ByteCount(type)) {
    fprintf(stderr, "embed: a tensor of %zu elements is too large\n", elements);
    return 0;
  }
  *out_elements = elements;
  *out_bytes = elements * ByteCount(type);
  return 1;
}

/* " \"x\"" for a named argument, nothing for an unnamed one. */
static void PrintName(const char *name) {
  if (name && name[0])
    printf(" \"%s\"", name);
}

/* Makes input `index` of `function` from its reflection. */
static int MakeInput(strata_session_t *session,
                     const strata_function_t *function, size_t index,
                     const options_t *options, strata_buffer_view_t **out) {
  strata_tensor_info_t info;
  char what[256];
  snprintf(what, sizeof(what), "input %zu of %s", index,
           strata_function_name(function));
  if (!Check(strata_function_input_info(function, index, &info), what))
    return 0;
  if (!IsSupported(info.element_type)) {
    char type[32];
    TypeName(info.element_type, type, sizeof(type));
    fprintf(stderr, "embed: %s: element type %s is not supported here\n", what,
            type);
    return 0;
  }
  int64_t *shape = malloc((info.rank ? info.rank : 1) * sizeof(int64_t));
  if (!shape) {
    fprintf(stderr, "embed: %s: out of memory\n", what);
    return 0;
  }
  int dynamic = 0;
  for (size_t d = 0; d < info.rank; ++d) {
    dynamic |= info.dims[d] < 0;
    shape[d] = info.dims[d] < 0 ? options->dynamic_dim : info.dims[d];
  }
  size_t elements = 0, bytes = 0;
  if (!CountElements(shape, info.rank, info.element_type, &elements, &bytes)) {
    free(shape);
    return 0;
  }
  uint8_t *data = malloc(bytes ? bytes : 1);
  if (!data) {
    fprintf(stderr, "embed: %s: cannot allocate %zu bytes\n", what, bytes);
    free(shape);
    return 0;
  }
  for (size_t i = 0; i < elements; ++i)
    MakeElement(info.element_type, index, i,
                data + i * ByteCount(info.element_type));

  char declared[256], actual[256];
  ShapeName(info.dims, info.rank, info.element_type, declared,
            sizeof(declared));
  ShapeName(shape, info.rank, info.element_type, actual, sizeof(actual));
  printf("  input %zu", index);
  PrintName(info.name);
  printf(": %s", declared);
  if (dynamic)
    printf(" as %s", actual);
  PrintValues(info.element_type, data, elements, options->print_count);

  int ok = Check(strata_buffer_view_create(session, shape, info.rank,
                                           info.element_type, data, bytes, out),
                 what);
  free(data);
  free(shape);
  return ok;
}

/* Prints output `index`: its reflected name, then the type, shape and
 * values of the tensor the call returned. */
static int PrintOutput(const strata_function_t *function, size_t index,
                       const strata_buffer_view_t *view,
                       const options_t *options) {
  strata_tensor_info_t info;
  char what[256];
  snprintf(what, sizeof(what), "output %zu of %s", index,
           strata_function_name(function));
  if (!Check(strata_function_output_info(function, index, &info), what))
    return 0;
  strata_element_type_t type = strata_buffer_view_element_type(view);
  size_t rank = strata_buffer_view_rank(view);
  int64_t *shape = malloc((rank ? rank : 1) * sizeof(int64_t));
  if (!shape) {
    fprintf(stderr, "embed: %s: out of memory\n", what);
    return 0;
  }
  for (size_t d = 0; d < rank; ++d)
    shape[d] = strata_buffer_view_dim(view, d);
  char text[256];
  ShapeName(shape, rank, type, text, sizeof(text));
  free(shape);
  printf("  output %zu", index);
  PrintName(info.name);
  printf(": %s", text);
  size_t bytes = strata_buffer_view_byte_length(view);
  size_t byte_count = ByteCount(type);
  if (!IsSupported(type) || byte_count == 0) {
    printf(" (values not shown)\n");
    return 1;
  }
  uint8_t *data = malloc(bytes ? bytes : 1);
  if (!data) {
    fprintf(stderr, "embed: %s: cannot allocate %zu bytes\n", what, bytes);
    return 0;
  }
  int ok = Check(strata_buffer_view_read(view, data, bytes), what);
  if (ok)
    PrintValues(type, data, bytes / byte_count, options->print_count);
  free(data);
  return ok;
}

/* Looks up `name`, makes its inputs, calls it and prints its outputs. */
static int RunFunction(strata_session_t *session, const char *name,
                       const options_t *options) {
  strata_function_t *function = NULL;
  if (!Check(strata_session_lookup_function(session, name, &function), name))
    return 0;
  size_t input_count = strata_function_input_count(function);
  size_t output_count = strata_function_output_count(function);
  printf("function %s: %zu input%s, %zu output%s\n",
         strata_function_name(function), input_count,
         input_count == 1 ? "" : "s", output_count,
         output_count == 1 ? "" : "s");
  strata_buffer_view_t **inputs =
      calloc(input_count ? input_count : 1, sizeof(*inputs));
  strata_buffer_view_t **outputs =
      calloc(output_count ? output_count : 1, sizeof(*outputs));
  size_t returned = 0;
  int ok = inputs && outputs;
  if (!ok)
    fprintf(stderr, "embed: %s: out of memory\n", name);
  for (size_t i = 0; ok && i < input_count; ++i)
    ok = MakeInput(session, function, i, options, &inputs[i]);
  if (ok)
    ok = Check(strata_session_call(session, function, inputs, input_count,
                                   outputs, output_count, &returned),
               strata_function_name(function));
  for (size_t i = 0; ok && i < returned; ++i)
    ok = PrintOutput(function, i, outputs[i], options);
  for (size_t i = 0; outputs && i < returned; ++i)
    strata_buffer_view_release(outputs[i]);
  for (size_t i = 0; inputs && i < input_count; ++i)
    strata_buffer_view_release(inputs[i]);
  free(outputs);
  free(inputs);
  strata_function_release(function);
  return ok;
}

/* Parses the non-negative integer after `prefix` in `arg`; 1 if it was. */
static int ParseCount(const char *arg, const char *prefix, int64_t *out) {
  size_t length = strlen(prefix);
  if (strncmp(arg, prefix, length) != 0)
    return 0;
  char *end = NULL;
  long long value = strtoll(arg + length, &end, 10);
  if (end == arg + length || *end != '\0' || value < 0) {
    fprintf(stderr, "embed: %s needs a non-negative integer, got '%s'\n",
            prefix, arg + length);
    exit(2);
  }
  *out = (int64_t)value;
  return 1;
}

static void Usage(void) {
  fprintf(stderr, "usage: embed [--device=URI] [--function=NAME] [--dim=N] "
                  "[--count=N] MODULE.smod\n"
                  "  --device    driver name or URI (default local-sync)\n"
                  "  --function  call only this function (default: every one)\n"
                  "  --dim       size of each dynamic dim (default 2)\n"
                  "  --count     values printed per tensor (default 8)\n");
}

int main(int argc, char **argv) {
  options_t options = {NULL, "local-sync", NULL, 2, 8};
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    int64_t count = 0;
    if (strncmp(arg, "--device=", 9) == 0) {
      options.device_uri = arg + 9;
    } else if (strncmp(arg, "--function=", 11) == 0) {
      options.function = arg + 11;
    } else if (ParseCount(arg, "--dim=", &options.dynamic_dim)) {
    } else if (ParseCount(arg, "--count=", &count)) {
      options.print_count = (size_t)count;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      Usage();
      return 0;
    } else if (arg[0] == '-' || options.module_path) {
      fprintf(stderr, "embed: unexpected argument '%s'\n", arg);
      Usage();
      return 2;
    } else {
      options.module_path = arg;
    }
  }
  if (!options.module_path) {
    Usage();
    return 2;
  }

  strata_instance_t *instance = NULL;
  strata_device_t *device = NULL;
  strata_session_t *session = NULL;
  int ok = Check(strata_instance_create(&instance), "creating the instance") &&
           Check(strata_device_create(instance, options.device_uri, &device),
                 options.device_uri) &&
           Check(strata_session_create(instance, device, &session),
                 "creating the session") &&
           Check(strata_session_append_module_from_file(session,
                                                        options.module_path),
                 options.module_path);
  if (ok) {
    size_t count = strata_session_function_count(session);
    printf("module %s on %s: %zu function%s\n", options.module_path,
           options.device_uri, count, count == 1 ? "" : "s");
    for (size_t i = 0; ok && i < count; ++i) {
      const char *name = NULL;
      ok = Check(strata_session_function_name(session, i, &name),
                 "listing the functions");
      if (ok)
        printf("  %s\n", name);
    }
    if (ok && options.function) {
      ok = RunFunction(session, options.function, &options);
    } else {
      for (size_t i = 0; ok && i < count; ++i) {
        const char *name = NULL;
        ok = Check(strata_session_function_name(session, i, &name),
                   "listing the functions") &&
             RunFunction(session, name, &options);
      }
    }
  }
  strata_session_release(session);
  strata_device_release(device);
  strata_instance_release(instance);
  return ok ? 0 : 1;
}
