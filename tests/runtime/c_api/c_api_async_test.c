/* Asynchronous calls through the C API, compiled as C and linked only
 * against the runtime libraries: several simple_mul calls in flight on one
 * loop (local-sync and local-task), then every way a call can fail, each
 * reported once through its callback (wrong inputs, NULL handles, a loop
 * released first) except the two the call itself must return (no loop, no
 * callback). Usage: c_api_async_test SIMPLE_MUL.smod */
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

static int Ok(strata_status_t status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "%s failed: %s\n", what, strata_status_message(status));
  strata_status_free(status);
  ++failures;
  return 0;
}

/* What one call's callback saw. */
typedef struct Completion {
  int calls;
  strata_status_code_t code;
  char message[256];
  float result[4];
  size_t output_count;
} Completion;

static void OnDone(void *user_data, strata_status_t status,
                   strata_buffer_view_t **outputs, size_t output_count) {
  Completion *completion = (Completion *)user_data;
  ++completion->calls;
  completion->code = strata_status_code(status);
  snprintf(completion->message, sizeof(completion->message), "%s",
           strata_status_message(status));
  completion->output_count = output_count;
  if (!status && output_count == 1) {
    Ok(strata_buffer_view_read(outputs[0], completion->result,
                               sizeof(completion->result)),
       "read result");
  }
  for (size_t i = 0; i < output_count; ++i)
    strata_buffer_view_release(outputs[i]);
}

static void ExpectFailure(const Completion *completion,
                          strata_status_code_t code, const char *needle,
                          const char *what) {
  if (completion->calls != 1 || completion->code != code ||
      !strstr(completion->message, needle) || completion->output_count != 0) {
    fprintf(stderr,
            "%s: expected one callback with code %d and '%s', got %d "
            "callbacks, code %d: %s\n",
            what, (int)code, needle, completion->calls, (int)completion->code,
            completion->message);
    ++failures;
  }
}

static strata_buffer_view_t *MakeView(strata_session_t *session,
                                      const float *values, int64_t count) {
  strata_buffer_view_t *view = NULL;
  Ok(strata_buffer_view_create(session, &count, 1, STRATA_ELEMENT_TYPE_FLOAT_32,
                               values, (size_t)count * sizeof(float), &view),
     "buffer view");
  return view;
}

#define kCalls 6

static void RunAsync(strata_instance_t *instance, const char *uri,
                     const char *module_path) {
  strata_device_t *device = NULL;
  if (!Ok(strata_device_create(instance, uri, &device), "device"))
    return;
  strata_session_options_t options = {0};
  options.allow_concurrent_calls = 1;
  strata_session_t *session = NULL;
  Ok(strata_session_create_with_options(instance, device, &options, &session),
     "session");
  strata_device_release(device);
  if (!session)
    return;
  strata_function_t *function = NULL;
  if (!Ok(strata_session_append_module_from_file(session, module_path),
          "append") ||
      !Ok(strata_session_lookup_function(session, "simple_mul", &function),
          "lookup")) {
    strata_session_release(session);
    return;
  }
  strata_loop_t *loop = NULL;
  if (!Ok(strata_loop_create(&loop), "loop"))
    return;

  /* Several calls in flight; the inputs are released right after the
   * submission (the calls keep them). */
  Completion done[kCalls];
  memset(done, 0, sizeof(done));
  for (int i = 0; i < kCalls; ++i) {
    const float a[4] = {1, 2, 3, (float)i}, b[4] = {5, 6, 7, 8};
    strata_buffer_view_t *inputs[2] = {MakeView(session, a, 4),
                                       MakeView(session, b, 4)};
    Ok(strata_session_call_async(session, function, inputs, 2, loop, OnDone,
                                 &done[i]),
       "call_async");
    strata_buffer_view_release(inputs[0]);
    strata_buffer_view_release(inputs[1]);
  }
  CHECK(strata_loop_pending_count(loop) == kCalls);
  CHECK(done[0].calls == 0); /* Callbacks run while the loop drains. */
  Ok(strata_loop_drain(loop, -1), "drain");
  CHECK(strata_loop_pending_count(loop) == 0);
  for (int i = 0; i < kCalls; ++i) {
    CHECK(done[i].calls == 1 && done[i].code == STRATA_STATUS_OK);
    CHECK(done[i].output_count == 1);
    CHECK(done[i].result[0] == 5 && done[i].result[1] == 12 &&
          done[i].result[2] == 21 && done[i].result[3] == 8.0f * (float)i);
  }

  /* Failures reach the callback, during the drain. */
  const float a[4] = {1, 2, 3, 4}, short_a[3] = {1, 2, 3};
  strata_buffer_view_t *good = MakeView(session, a, 4);
  strata_buffer_view_t *bad = MakeView(session, short_a, 3);
  strata_buffer_view_t *wrong_shape[2] = {bad, good};
  strata_buffer_view_t *with_null[2] = {good, NULL};
  Completion failed[5];
  memset(failed, 0, sizeof(failed));
  Ok(strata_session_call_async(session, function, wrong_shape, 2, loop, OnDone,
                               &failed[0]),
     "call_async wrong shape");
  Ok(strata_session_call_async(session, function, wrong_shape, 1, loop, OnDone,
                               &failed[1]),
     "call_async too few");
  Ok(strata_session_call_async(session, function, with_null, 2, loop, OnDone,
                               &failed[2]),
     "call_async null input");
  Ok(strata_session_call_async(session, NULL, with_null, 2, loop, OnDone,
                               &failed[3]),
     "call_async null function");
  Ok(strata_session_call_async(NULL, function, with_null, 2, loop, OnDone,
                               &failed[4]),
     "call_async null session");
  CHECK(failed[0].calls == 0);
  Ok(strata_loop_drain(loop, 1000), "drain failures");
  ExpectFailure(&failed[0], STRATA_STATUS_INVALID_ARGUMENT,
                "argument 0: expected 4xf32, got 3xf32", "wrong shape");
  ExpectFailure(&failed[1], STRATA_STATUS_INVALID_ARGUMENT,
                "takes 2 arguments, got 1", "too few inputs");
  ExpectFailure(&failed[2], STRATA_STATUS_INVALID_ARGUMENT, "input 1 is null",
                "null input");
  ExpectFailure(&failed[3], STRATA_STATUS_INVALID_ARGUMENT,
                "'function' is null", "null function");
  ExpectFailure(&failed[4], STRATA_STATUS_INVALID_ARGUMENT, "'session' is null",
                "null session");

  /* Without a loop or a callback nothing can report: the call returns. */
  strata_buffer_view_t *inputs[2] = {good, good};
  strata_status_t status = strata_session_call_async(
      session, function, inputs, 2, NULL, OnDone, &failed[0]);
  CHECK(strata_status_code(status) == STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
  status =
      strata_session_call_async(session, function, inputs, 2, loop, NULL, NULL);
  CHECK(strata_status_code(status) == STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
  CHECK(strata_loop_pending_count(loop) == 0);
  CHECK(failed[0].calls == 1);

  /* Released before it drained: the pending call is cancelled, once. */
  Completion cancelled;
  memset(&cancelled, 0, sizeof(cancelled));
  Ok(strata_session_call_async(session, function, inputs, 2, loop, OnDone,
                               &cancelled),
     "call_async before release");
  strata_loop_release(loop);
  ExpectFailure(&cancelled, STRATA_STATUS_CANCELLED, "", "loop released");

  strata_buffer_view_release(good);
  strata_buffer_view_release(bad);
  strata_function_release(function);
  strata_session_release(session);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_async_test SIMPLE_MUL.smod\n");
    return 2;
  }
  strata_instance_t *instance = NULL;
  if (!Ok(strata_instance_create(&instance), "instance"))
    return 1;
  RunAsync(instance, "local-sync", argv[1]);
  RunAsync(instance, "local-task?workers=2", argv[1]);
  strata_loop_t *loop = NULL;
  strata_status_t status = strata_loop_create(NULL);
  CHECK(strata_status_code(status) == STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
  if (Ok(strata_loop_create(&loop), "loop")) {
    Ok(strata_loop_drain(loop, 0), "drain an empty loop");
    strata_loop_release(loop);
  }
  strata_instance_release(instance);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c_api_async_test: all checks passed\n");
  return 0;
}
