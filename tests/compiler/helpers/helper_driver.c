/* Calls one executable helper on records read from stdin and writes the
 * results to stdout, raw: `helper_driver NAME < arguments > results`.
 * Linked against the helper archive with every symbol prefixed by
 * strata_test_ (llvm-objcopy), so these are the bytes executables link,
 * not the C library's functions of the same names. helpers_test.py drives
 * it and checks the results against numpy and exact Python arithmetic. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __int128 i128;
typedef unsigned __int128 u128;

#define DECLARE_1(name, R, A) R strata_test_##name(A);
#define DECLARE_2(name, R, A) R strata_test_##name(A, A);
#define DECLARE_3(name, R, A) R strata_test_##name(A, A, A);
#define RUNNER_1(name, R, A)                                                   \
  static void run_##name(const unsigned char *in, unsigned char *out) {        \
    A a;                                                                       \
    memcpy(&a, in, sizeof a);                                                  \
    R r = strata_test_##name(a);                                               \
    memcpy(out, &r, sizeof r);                                                 \
  }
#define RUNNER_2(name, R, A)                                                   \
  static void run_##name(const unsigned char *in, unsigned char *out) {        \
    A a, b;                                                                    \
    memcpy(&a, in, sizeof a);                                                  \
    memcpy(&b, in + sizeof a, sizeof b);                                       \
    R r = strata_test_##name(a, b);                                            \
    memcpy(out, &r, sizeof r);                                                 \
  }
#define RUNNER_3(name, R, A)                                                   \
  static void run_##name(const unsigned char *in, unsigned char *out) {        \
    A a, b, c;                                                                 \
    memcpy(&a, in, sizeof a);                                                  \
    memcpy(&b, in + sizeof a, sizeof b);                                       \
    memcpy(&c, in + 2 * sizeof a, sizeof c);                                   \
    R r = strata_test_##name(a, b, c);                                         \
    memcpy(out, &r, sizeof r);                                                 \
  }

/* name, arity, result type, argument type */
#define HELPERS(X)                                                             \
  X(__extendhfsf2, 1, float, _Float16)                                         \
  X(__truncsfhf2, 1, _Float16, float)                                          \
  X(__truncdfhf2, 1, _Float16, double)                                         \
  X(__truncsfbf2, 1, __bf16, float)                                            \
  X(__truncdfbf2, 1, __bf16, double)                                           \
  X(floorf, 1, float, float)                                                   \
  X(floor, 1, double, double)                                                  \
  X(ceilf, 1, float, float)                                                    \
  X(ceil, 1, double, double)                                                   \
  X(truncf, 1, float, float)                                                   \
  X(trunc, 1, double, double)                                                  \
  X(roundf, 1, float, float)                                                   \
  X(round, 1, double, double)                                                  \
  X(roundevenf, 1, float, float)                                               \
  X(roundeven, 1, double, double)                                              \
  X(rintf, 1, float, float)                                                    \
  X(rint, 1, double, double)                                                   \
  X(nearbyintf, 1, float, float)                                               \
  X(nearbyint, 1, double, double)                                              \
  X(fmaf, 3, float, float)                                                     \
  X(fma, 3, double, double)                                                    \
  X(fmodf, 2, float, float)                                                    \
  X(fmod, 2, double, double)                                                   \
  X(fminf, 2, float, float)                                                    \
  X(fmaxf, 2, float, float)                                                    \
  X(__divti3, 2, i128, i128)                                                   \
  X(__udivti3, 2, u128, u128)                                                  \
  X(__modti3, 2, i128, i128)                                                   \
  X(__umodti3, 2, u128, u128)                                                  \
  X(__fixhfti, 1, i128, _Float16)                                              \
  X(__fixsfti, 1, i128, float)                                                 \
  X(__fixdfti, 1, i128, double)                                                \
  X(__fixunshfti, 1, u128, _Float16)                                           \
  X(__fixunssfti, 1, u128, float)                                              \
  X(__fixunsdfti, 1, u128, double)                                             \
  X(__floattihf, 1, _Float16, i128)                                            \
  X(__floattisf, 1, float, i128)                                               \
  X(__floattidf, 1, double, i128)                                              \
  X(__floatuntihf, 1, _Float16, u128)                                          \
  X(__floatuntisf, 1, float, u128)                                             \
  X(__floatuntidf, 1, double, u128)

#define DECLARE(name, arity, R, A) DECLARE_##arity(name, R, A)
#define RUNNER(name, arity, R, A) RUNNER_##arity(name, R, A)
HELPERS(DECLARE)
HELPERS(RUNNER)

struct helper {
  const char *name;
  size_t in_size, out_size;
  void (*run)(const unsigned char *, unsigned char *);
};
#define ENTRY(name, arity, R, A)                                               \
  {#name, arity * sizeof(A), sizeof(R), run_##name},
static const struct helper kHelpers[] = {HELPERS(ENTRY)};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: helper_driver NAME < arguments > results\n");
    return 2;
  }
  const struct helper *helper = NULL;
  for (size_t i = 0; i < sizeof kHelpers / sizeof kHelpers[0]; ++i)
    if (strcmp(kHelpers[i].name, argv[1]) == 0)
      helper = &kHelpers[i];
  if (!helper) {
    fprintf(stderr, "helper_driver: no helper '%s'\n", argv[1]);
    return 2;
  }
  unsigned char in[48], out[16];
  while (fread(in, helper->in_size, 1, stdin) == 1) {
    helper->run(in, out);
    fwrite(out, helper->out_size, 1, stdout);
  }
  return ferror(stdin) || ferror(stdout) ? 1 : 0;
}
