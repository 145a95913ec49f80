/* The Strata runtime's C API for embedding (SPEC §6): create an instance, a
 * device by URI and a session; append compiled modules; look up functions
 * and call them with tensors (buffer views).
 *
 * Conventions:
 *  - Every object is an opaque handle released with its *_release function
 *    (NULL is accepted and ignored).
 *  - Fallible functions return a strata_status_t: NULL means success;
 *    otherwise the caller owns it, reads strata_status_code() and
 *    strata_status_message(), and frees it with strata_status_free().
 *  - Outputs are written only on success.
 *  - Thread-compatible like the C++ session: one thread at a time per
 *    session; separate sessions may run concurrently.
 *
 *   strata_instance_t *instance;   strata_instance_create(&instance);
 *   strata_device_t *device;       strata_device_create(instance,
 *                                      "local-task", &device);
 *   strata_session_t *session;     strata_session_create(instance, device,
 *                                      &session);
 *   strata_session_append_module_from_file(session, "model.smod");
 *   size_t n = strata_session_function_count(session);   (and each name:
 *                                  strata_session_function_name)
 *   strata_function_t *fn;         strata_session_lookup_function(session,
 *                                      "module.main", &fn);
 *   strata_session_call(session, fn, inputs, 2, outputs, 1, &count);
 *
 * Asynchronous calls run on a loop (strata_loop_t) that the caller drains:
 *
 *   strata_loop_t *loop;           strata_loop_create(&loop);
 *   strata_session_call_async(session, fn, inputs, 2, loop, on_done, ctx);
 *   strata_loop_drain(loop, -1);   (on_done runs here, once per call)
 *
 * Deadlines and cancellation: a session may bound every call and module
 * initialiser (strata_session_options_t.default_timeout_ms), a call its own
 * (strata_call_options_t), and a cancellation token stops calls from any
 * thread. The call then fails with STRATA_STATUS_DEADLINE_EXCEEDED
 * ("function 'module.main' exceeded its deadline (2.0 s)") or
 * STRATA_STATUS_CANCELLED ("function 'module.main' was cancelled"); the
 * device work it started stops too, and the session stays usable:
 *
 *   strata_cancellation_t *cancel;  strata_cancellation_create(&cancel);
 *   strata_call_options_t options = {.timeout_ms = 2000,
 *                                    .cancellation = cancel};
 *   strata_session_call_with_options(session, fn, inputs, 2, outputs, 1,
 *                                    &count, &options);
 *   ... on another thread: strata_cancellation_cancel(cancel); */
#ifndef STRATA_RUNTIME_H_
#define STRATA_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes; the same values as the C++ runtime's StatusCode. */
typedef enum strata_status_code_e {
  STRATA_STATUS_OK = 0,
  STRATA_STATUS_CANCELLED = 1,
  STRATA_STATUS_UNKNOWN = 2,
  STRATA_STATUS_INVALID_ARGUMENT = 3,
  STRATA_STATUS_DEADLINE_EXCEEDED = 4,
  STRATA_STATUS_NOT_FOUND = 5,
  STRATA_STATUS_ALREADY_EXISTS = 6,
  STRATA_STATUS_PERMISSION_DENIED = 7,
  STRATA_STATUS_RESOURCE_EXHAUSTED = 8,
  STRATA_STATUS_FAILED_PRECONDITION = 9,
  STRATA_STATUS_ABORTED = 10,
  STRATA_STATUS_OUT_OF_RANGE = 11,
  STRATA_STATUS_UNIMPLEMENTED = 12,
  STRATA_STATUS_INTERNAL = 13,
  STRATA_STATUS_UNAVAILABLE = 14,
  STRATA_STATUS_DATA_LOSS = 15,
} strata_status_code_t;

typedef struct strata_status_s *strata_status_t;

/* STRATA_STATUS_OK for NULL. */
strata_status_code_t strata_status_code(strata_status_t status);
/* "" for NULL; valid until the status is freed. */
const char *strata_status_message(strata_status_t status);
void strata_status_free(strata_status_t status);

/* Element types; the same encoding as the HAL's (numerical type << 24 |
 * bit count). */
typedef uint32_t strata_element_type_t;
#define STRATA_ELEMENT_TYPE_BOOL_8 0x14000008u
#define STRATA_ELEMENT_TYPE_SINT_8 0x11000008u
#define STRATA_ELEMENT_TYPE_SINT_16 0x11000010u
#define STRATA_ELEMENT_TYPE_SINT_32 0x11000020u
#define STRATA_ELEMENT_TYPE_SINT_64 0x11000040u
#define STRATA_ELEMENT_TYPE_UINT_8 0x12000008u
#define STRATA_ELEMENT_TYPE_UINT_16 0x12000010u
#define STRATA_ELEMENT_TYPE_UINT_32 0x12000020u
#define STRATA_ELEMENT_TYPE_UINT_64 0x12000040u
#define STRATA_ELEMENT_TYPE_FLOAT_16 0x21000010u
#define STRATA_ELEMENT_TYPE_FLOAT_32 0x21000020u
#define STRATA_ELEMENT_TYPE_FLOAT_64 0x21000040u
#define STRATA_ELEMENT_TYPE_BFLOAT_16 0x22000010u

typedef struct strata_instance_s strata_instance_t;
typedef struct strata_device_s strata_device_t;
typedef struct strata_session_s strata_session_t;
typedef struct strata_function_s strata_function_t;
typedef struct strata_buffer_view_s strata_buffer_view_t;
typedef struct strata_loop_s strata_loop_t;
typedef struct strata_cancellation_s strata_cancellation_t;

/* The instance: every built-in driver and VM type registered. */
strata_status_t strata_instance_create(strata_instance_t **out_instance);
void strata_instance_release(strata_instance_t *instance);

/* A device by driver name or URI: "local-sync", "local-task",
 * "local-task://0?workers=4&loader=system". local-task options: workers (0 =
 * one per core), spin_us (how long idle pool threads spin for the next
 * dispatch before sleeping; default 100, 0 = sleep at once), loader. */
strata_status_t strata_device_create(strata_instance_t *instance,
                                     const char *uri,
                                     strata_device_t **out_device);
void strata_device_release(strata_device_t *device);

/* The memory limit of the device's allocator: the most bytes live in it at
 * once, across every session on the device. A request past it (programs
 * allocating, strata_buffer_view_create) fails with
 * STRATA_STATUS_RESOURCE_EXHAUSTED naming the byte count and the limit, as
 * does memory the system refuses. By default the machine's physical memory;
 * 0 restores that. Buffers already live stay. */
strata_status_t strata_device_set_memory_limit(strata_device_t *device,
                                               uint64_t bytes);
/* The current limit in bytes (0 for NULL). */
uint64_t strata_device_memory_limit(const strata_device_t *device);

/* A session over `device` with the `hal` module added. The session keeps
 * the instance and device alive. */
strata_status_t strata_session_create(strata_instance_t *instance,
                                      strata_device_t *device,
                                      strata_session_t **out_session);
void strata_session_release(strata_session_t *session);

typedef struct strata_session_options_t {
  /* Non-zero: several asynchronous calls of this session may be in flight
   * at once on a loop (the program's globals are then shared by them).
   * Zero: a second one fails with STRATA_STATUS_FAILED_PRECONDITION. */
  int allow_concurrent_calls;
  /* > 0: every call without a timeout of its own, and every appended
   * module's initialiser, fails with STRATA_STATUS_DEADLINE_EXCEEDED once
   * this many milliseconds have passed. 0: no limit. */
  int64_t default_timeout_ms;
} strata_session_options_t;

/* strata_session_create with `options` (NULL: all zero). */
strata_status_t strata_session_create_with_options(
    strata_instance_t *instance, strata_device_t *device,
    const strata_session_options_t *options, strata_session_t **out_session);

/* Appends a compiled module (.smod). From a file: memory-mapped. */
strata_status_t
strata_session_append_module_from_file(strata_session_t *session,
                                       const char *path);
/* Called once when the runtime no longer needs module bytes. */
typedef void (*strata_release_fn_t)(void *user_data, const void *data,
                                    size_t size);
/* Takes ownership of [data, data + size): `release` (may be NULL) runs
 * exactly once when the bytes are no longer needed, also when this fails. */
strata_status_t strata_session_append_module_from_memory(
    strata_session_t *session, const void *data, size_t size,
    strata_release_fn_t release, void *user_data);
strata_status_t
strata_session_append_module_from_stdin(strata_session_t *session);
/* Releases cached device resources. */
strata_status_t strata_session_trim(strata_session_t *session);

/* "module.function"; a bare "function" means "module.function". */
strata_status_t
strata_session_lookup_function(strata_session_t *session, const char *name,
                               strata_function_t **out_function);
void strata_function_release(strata_function_t *function);
/* The functions a caller may look up: every export of the modules appended
 * to the session (not the `hal` module it adds itself), in the order the
 * modules were appended and their exports declared, without the reserved
 * names that start with "__" (`__init`). Appending a module adds its
 * functions at the end. */
size_t strata_session_function_count(const strata_session_t *session);
/* Function `index`'s "module.function" name, as
 * strata_session_lookup_function takes it; valid while the session lives.
 * Fails naming the index when it is past the count. */
strata_status_t strata_session_function_name(const strata_session_t *session,
                                             size_t index,
                                             const char **out_name);
/* Argument and result counts. */
size_t strata_function_input_count(const strata_function_t *function);
size_t strata_function_output_count(const strata_function_t *function);
/* "module.function"; valid while the function handle lives. */
const char *strata_function_name(const strata_function_t *function);

/* One tensor argument or result as the module describes it: its name in
 * the source (an ONNX graph input or output; "" when it has none), element
 * type, rank and dims (-1 for a dynamic one). The strings and dims are
 * valid while the function handle lives. */
typedef struct strata_tensor_info_t {
  const char *name;
  strata_element_type_t element_type;
  size_t rank;
  const int64_t *dims;
} strata_tensor_info_t;
/* Input or output `index`; fails naming the index when it is past the
 * count, and with FAILED_PRECONDITION when the module carries no tensor
 * reflection for the function. */
strata_status_t strata_function_input_info(const strata_function_t *function,
                                           size_t index,
                                           strata_tensor_info_t *out_info);
strata_status_t strata_function_output_info(const strata_function_t *function,
                                            size_t index,
                                            strata_tensor_info_t *out_info);

/* A tensor of `shape` (rank dims) and `element_type` on the session's
 * device, filled with `byte_length` bytes of row-major `data` (which must be
 * the tensor's exact size). */
strata_status_t strata_buffer_view_create(strata_session_t *session,
                                          const int64_t *shape, size_t rank,
                                          strata_element_type_t element_type,
                                          const void *data, size_t byte_length,
                                          strata_buffer_view_t **out_view);
/* Like strata_buffer_view_create, but the tensor is the caller's memory
 * itself where the device can use it in place (host memory of a local
 * device, `data` 64-byte aligned): no copy. Elsewhere the bytes are copied
 * in. `release` (may be NULL) runs exactly once when the runtime no longer
 * needs [data, data + byte_length): when the view and every use of it are
 * gone, at once after a copy, or on failure. Until then the caller keeps
 * the memory valid and does not write it. */
strata_status_t strata_buffer_view_import(strata_session_t *session,
                                          const int64_t *shape, size_t rank,
                                          strata_element_type_t element_type,
                                          const void *data, size_t byte_length,
                                          strata_release_fn_t release,
                                          void *user_data,
                                          strata_buffer_view_t **out_view);
void strata_buffer_view_release(strata_buffer_view_t *view);
size_t strata_buffer_view_rank(const strata_buffer_view_t *view);
int64_t strata_buffer_view_dim(const strata_buffer_view_t *view, size_t index);
strata_element_type_t
strata_buffer_view_element_type(const strata_buffer_view_t *view);
size_t strata_buffer_view_byte_length(const strata_buffer_view_t *view);
/* Copies the tensor's bytes out; `byte_length` must equal its size. */
strata_status_t strata_buffer_view_read(const strata_buffer_view_t *view,
                                        void *target, size_t byte_length);
/* The tensor's bytes in place, for a caller that keeps a result without a
 * copy. *out_data is set to its first byte (strata_buffer_view_byte_length
 * bytes, row-major) when the memory is the caller's alone: host memory the
 * device's allocator handed out (HOST_VISIBLE, not imported), and `view`
 * holds the only reference to the tensor, to its buffer and to the
 * allocation under it, so that no global, constant, other view or later
 * call reads or writes it. The bytes are then valid, and the caller may
 * read and write them, for as long as it holds `view` (until
 * strata_buffer_view_release), provided it passes `view` to no call in that
 * time. Otherwise *out_data is set to NULL (memory the host cannot map; a
 * module's constant; memory imported with strata_buffer_view_import, which
 * stays the importer's; a tensor also held elsewhere, such as a result that
 * is an input the caller still holds, a global, or a result returned
 * twice): copy it out with strata_buffer_view_read instead. A result of
 * strata_session_call is the usual candidate; the answer holds until the
 * caller makes another reference (it is not a lock). */
strata_status_t
strata_buffer_view_exclusive_host_data(strata_buffer_view_t *view,
                                       void **out_data);

/* Calls `function` with tensor inputs after checking them (count, shape,
 * element type; errors name the argument). On success writes the results
 * (new views the caller releases) to outputs[0..*out_output_count);
 * `output_capacity` must cover them. Non-tensor results are an error. */
strata_status_t strata_session_call(strata_session_t *session,
                                    const strata_function_t *function,
                                    strata_buffer_view_t *const *inputs,
                                    size_t input_count,
                                    strata_buffer_view_t **outputs,
                                    size_t output_capacity,
                                    size_t *out_output_count);

/* Results-to-outs: like strata_session_call, but each result is written
 * into the caller's outputs[i] (output_count must equal the function's
 * result count). Each output must have its result's shape and element type
 * (errors name the output: "output 0: expected 4xf32, got 3xf32"); results
 * are copied in, and on any error no output is written. */
strata_status_t strata_session_call_into(strata_session_t *session,
                                         const strata_function_t *function,
                                         strata_buffer_view_t *const *inputs,
                                         size_t input_count,
                                         strata_buffer_view_t *const *outputs,
                                         size_t output_count);

/* A cancellation token: cancelling it stops every call that carries it
 * (running, waiting or queued) with STRATA_STATUS_CANCELLED. Once cancelled
 * it stays cancelled; create a new one for later calls. Thread-safe: cancel
 * from any thread, also while a call runs on another. */
strata_status_t strata_cancellation_create(strata_cancellation_t **out_token);
void strata_cancellation_cancel(strata_cancellation_t *token);
/* Non-zero once cancelled. */
int strata_cancellation_is_cancelled(const strata_cancellation_t *token);
/* The calls carrying the token keep what they need of it. */
void strata_cancellation_release(strata_cancellation_t *token);

/* Per-call options (NULL: all zero). */
typedef struct strata_call_options_t {
  /* > 0: the call fails with STRATA_STATUS_DEADLINE_EXCEEDED once this many
   * milliseconds have passed; 0: the session's default timeout; < 0: no
   * deadline, even if the session has a default. */
  int64_t timeout_ms;
  /* NULL or a token whose cancellation stops the call. */
  strata_cancellation_t *cancellation;
} strata_call_options_t;

/* strata_session_call, strata_session_call_into and
 * strata_session_call_async with `options`; the functions without them
 * behave like these with NULL. An asynchronous call's timeout counts from
 * when it is queued. */
strata_status_t strata_session_call_with_options(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_buffer_view_t **outputs, size_t output_capacity,
    size_t *out_output_count, const strata_call_options_t *options);
strata_status_t strata_session_call_into_with_options(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_buffer_view_t *const *outputs, size_t output_count,
    const strata_call_options_t *options);

/* A loop runs asynchronous calls on the thread that drains it. A call that
 * waits for device work suspends instead of blocking the thread, so several
 * calls (of several sessions, or of a session allowing concurrent calls) may
 * be in flight on one loop. Thread-compatible: one thread at a time. */
strata_status_t strata_loop_create(strata_loop_t **out_loop);
/* Completes the calls still pending with STRATA_STATUS_CANCELLED: their
 * callbacks run before this returns. */
void strata_loop_release(strata_loop_t *loop);
/* Runs the queued calls until none is pending (NULL), or until `timeout_ms`
 * passes (negative: no limit): then STRATA_STATUS_DEADLINE_EXCEEDED, and
 * the calls still pending continue with the next drain. */
strata_status_t strata_loop_drain(strata_loop_t *loop, int64_t timeout_ms);
/* Calls queued, running or waiting on `loop`. */
size_t strata_loop_pending_count(const strata_loop_t *loop);

/* Completion of an asynchronous call. On success `status` is NULL and
 * outputs[0..output_count) are the results: new views the callback owns
 * (release each); the array itself is valid only during the call. On
 * failure `status` describes it (valid only during the call; do not free
 * it) and there are no outputs. */
typedef void (*strata_call_callback_fn_t)(void *user_data,
                                          strata_status_t status,
                                          strata_buffer_view_t **outputs,
                                          size_t output_count);

/* Queues a call of `function` with tensor inputs on `loop` and returns at
 * once; the call runs during strata_loop_drain. `callback` runs exactly
 * once, on the draining thread and never inside this function: with the
 * results, or with the failure. Failures include every error
 * strata_session_call reports (wrong inputs are checked, and the function
 * not invoked), NULL session, function or input, a second call in flight on
 * a session without allow_concurrent_calls, and STRATA_STATUS_CANCELLED
 * when the loop is released first. Returns an error, and the callback does
 * not run, only when `loop` or `callback` is NULL. The inputs may be
 * released once this returns; the session lives until the callback ran. */
strata_status_t strata_session_call_async(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_loop_t *loop, strata_call_callback_fn_t callback, void *user_data);
strata_status_t strata_session_call_async_with_options(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_loop_t *loop, strata_call_callback_fn_t callback, void *user_data,
    const strata_call_options_t *options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_RUNTIME_H_ */
