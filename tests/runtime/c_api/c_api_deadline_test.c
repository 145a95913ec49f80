/* Deadlines and cancellation through the C API, compiled as C, on
 * local-sync and local-task: each hang of the hang module (bytecode loop,
 * a fence nothing signals, a huge dispatch grid, a VMVX kernel that never
 * ends) fails with STRATA_STATUS_DEADLINE_EXCEEDED at the call's timeout
 * and with STRATA_STATUS_CANCELLED when another thread cancels; an
 * initialiser that never ends fails the append at the session's default
 * timeout; after each the session computes simple_mul right.
 * Usage: c_api_deadline_test SIMPLE_MUL.smod HANG.smod INIT_SPIN.smod */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static int Ok(strata_status_t status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "%s failed: %s\n", what, strata_status_message(status));
  strata_status_free(status);
  ++failures;
  return 0;
}

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

static const char *const kHangs[] = {"spin", "await_never", "huge_grid",
                                     "vmvx_spin"};

/* Cancels a token after 30 ms. */
static void *CancelLater(void *token) {
  struct timespec delay = {0, 30 * 1000000};
  nanosleep(&delay, NULL);
  strata_cancellation_cancel((strata_cancellation_t *)token);
  return NULL;
}

/* simple_mul still gives 5 12 21 32. */
static void ExpectUsable(strata_session_t *session) {
  strata_function_t *function = NULL;
  if (!Ok(strata_session_lookup_function(session, "module.simple_mul",
                                         &function),
          "lookup simple_mul"))
    return;
  const int64_t shape[1] = {4};
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  strata_buffer_view_t *inputs[2] = {NULL, NULL};
  Ok(strata_buffer_view_create(session, shape, 1, STRATA_ELEMENT_TYPE_FLOAT_32,
                               a, sizeof(a), &inputs[0]),
     "input 0");
  Ok(strata_buffer_view_create(session, shape, 1, STRATA_ELEMENT_TYPE_FLOAT_32,
                               b, sizeof(b), &inputs[1]),
     "input 1");
  strata_buffer_view_t *output = NULL;
  size_t count = 0;
  if (Ok(strata_session_call(session, function, inputs, 2, &output, 1, &count),
         "simple_mul")) {
    float result[4] = {0};
    Ok(strata_buffer_view_read(output, result, sizeof(result)), "read");
    CHECK(result[0] == 5 && result[1] == 12 && result[2] == 21 &&
          result[3] == 32);
    strata_buffer_view_release(output);
  }
  strata_buffer_view_release(inputs[0]);
  strata_buffer_view_release(inputs[1]);
  strata_function_release(function);
}

static strata_status_t CallHang(strata_session_t *session, const char *name,
                                const strata_call_options_t *options) {
  char full_name[64];
  snprintf(full_name, sizeof(full_name), "hang.%s", name);
  strata_function_t *function = NULL;
  strata_status_t status =
      strata_session_lookup_function(session, full_name, &function);
  if (status)
    return status;
  size_t count = 0;
  status = strata_session_call_with_options(session, function, NULL, 0, NULL, 0,
                                            &count, options);
  strata_function_release(function);
  return status;
}

static int async_code = -1;
static char async_message[512];

static void OnAsyncDone(void *user_data, strata_status_t status,
                        strata_buffer_view_t **outputs, size_t count) {
  (void)user_data;
  (void)outputs;
  (void)count;
  async_code = (int)strata_status_code(status);
  snprintf(async_message, sizeof(async_message), "%s",
           strata_status_message(status));
}

static void RunDriver(strata_instance_t *instance, const char *uri,
                      const char *simple_mul, const char *hang,
                      const char *init_spin) {
  strata_device_t *device = NULL;
  if (!Ok(strata_device_create(instance, uri, &device), "device"))
    return;
  strata_session_t *session = NULL;
  Ok(strata_session_create(instance, device, &session), "session");
  Ok(strata_session_append_module_from_file(session, simple_mul),
     "append simple_mul");
  Ok(strata_session_append_module_from_file(session, hang), "append hang");

  char needle[128];
  for (size_t i = 0; i < sizeof(kHangs) / sizeof(kHangs[0]); ++i) {
    strata_call_options_t options = {200, NULL};
    snprintf(needle, sizeof(needle),
             "function 'hang.%s' exceeded its deadline (0.2 s)", kHangs[i]);
    ExpectError(CallHang(session, kHangs[i], &options),
                STRATA_STATUS_DEADLINE_EXCEEDED, needle, kHangs[i]);
    ExpectUsable(session);

    strata_cancellation_t *token = NULL;
    Ok(strata_cancellation_create(&token), "token");
    options.timeout_ms = 0; /* The session's default: none. */
    options.cancellation = token;
    pthread_t canceller;
    CHECK(pthread_create(&canceller, NULL, CancelLater, token) == 0);
    snprintf(needle, sizeof(needle), "function 'hang.%s' was cancelled",
             kHangs[i]);
    ExpectError(CallHang(session, kHangs[i], &options), STRATA_STATUS_CANCELLED,
                needle, kHangs[i]);
    pthread_join(canceller, NULL);
    CHECK(strata_cancellation_is_cancelled(token));
    strata_cancellation_release(token);
    ExpectUsable(session);
  }

  /* An asynchronous call with a timeout, on a loop. */
  strata_loop_t *loop = NULL;
  strata_function_t *await_never = NULL;
  Ok(strata_loop_create(&loop), "loop");
  Ok(strata_session_lookup_function(session, "hang.await_never", &await_never),
     "lookup await_never");
  strata_call_options_t async_options = {50, NULL};
  Ok(strata_session_call_async_with_options(session, await_never, NULL, 0, loop,
                                            OnAsyncDone, NULL, &async_options),
     "call async");
  Ok(strata_loop_drain(loop, -1), "drain");
  CHECK(async_code == STRATA_STATUS_DEADLINE_EXCEEDED);
  CHECK(strstr(async_message, "'hang.await_never' exceeded its deadline"));
  strata_function_release(await_never);
  strata_loop_release(loop);
  strata_session_release(session);

  /* A session default: bounds __init at append and calls without their own
   * timeout. */
  strata_session_options_t session_options = {0, 100};
  Ok(strata_session_create_with_options(instance, device, &session_options,
                                        &session),
     "session with default timeout");
  Ok(strata_session_append_module_from_file(session, simple_mul),
     "append simple_mul");
  Ok(strata_session_append_module_from_file(session, hang), "append hang");
  ExpectError(strata_session_append_module_from_file(session, init_spin),
              STRATA_STATUS_DEADLINE_EXCEEDED,
              "function 'init_spin.__init' exceeded its deadline (0.1 s)",
              "init_spin");
  ExpectError(CallHang(session, "spin", NULL), STRATA_STATUS_DEADLINE_EXCEEDED,
              "function 'hang.spin' exceeded its deadline (0.1 s)",
              "default timeout");
  strata_call_options_t longer = {300, NULL};
  ExpectError(
      CallHang(session, "spin", &longer), STRATA_STATUS_DEADLINE_EXCEEDED,
      "function 'hang.spin' exceeded its deadline (0.3 s)", "own timeout");
  session_options.default_timeout_ms = -1;
  strata_session_t *bad = NULL;
  ExpectError(strata_session_create_with_options(instance, device,
                                                 &session_options, &bad),
              STRATA_STATUS_INVALID_ARGUMENT, "default_timeout_ms",
              "negative default timeout");
  ExpectUsable(session);
  strata_session_release(session);
  strata_device_release(device);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s SIMPLE_MUL.smod HANG.smod INIT_SPIN.smod\n",
            argv[0]);
    return 2;
  }
  strata_instance_t *instance = NULL;
  if (!Ok(strata_instance_create(&instance), "instance"))
    return 1;
  RunDriver(instance, "local-sync", argv[1], argv[2], argv[3]);
  RunDriver(instance, "local-task", argv[1], argv[2], argv[3]);
  strata_instance_release(instance);
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("c_api_deadline_test: all checks passed\n");
  return 0;
}
