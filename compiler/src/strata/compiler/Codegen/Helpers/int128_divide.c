/* 128-bit integer division and remainder: x86-64 divides at most 128 by 64
 * bits, so LLVM calls these for i128 sdiv/udiv/srem/urem. Division by zero
 * gives quotient 0 and remainder n (LLVM leaves it undefined; this never
 * traps), and INT128_MIN / -1 wraps to INT128_MIN. */
#include "ieee754.h"

static inline u128 divide_unsigned(u128 n, u128 d, u128 *remainder) {
  if (d == 0 || d > n) {
    *remainder = n;
    return 0;
  }
  if ((n >> 64) == 0) { /* both fit: the CPU's 64-bit division */
    *remainder = (uint64_t)n % (uint64_t)d;
    return (uint64_t)n / (uint64_t)d;
  }
  /* Shift and subtract, from d aligned under n's leading bit. */
  int shift = clz128(d) - clz128(n);
  d <<= shift;
  u128 q = 0;
  for (int i = 0; i <= shift; ++i) {
    q <<= 1;
    if (n >= d) {
      n -= d;
      q |= 1;
    }
    d >>= 1;
  }
  *remainder = n;
  return q;
}

static inline u128 magnitude(i128 x) { return x < 0 ? -(u128)x : (u128)x; }

STRATA_HELPER u128 __udivti3(u128 n, u128 d) {
  u128 r;
  return divide_unsigned(n, d, &r);
}

STRATA_HELPER u128 __umodti3(u128 n, u128 d) {
  u128 r;
  divide_unsigned(n, d, &r);
  return r;
}

STRATA_HELPER i128 __divti3(i128 n, i128 d) {
  u128 r;
  u128 q = divide_unsigned(magnitude(n), magnitude(d), &r);
  return (i128)((n < 0) != (d < 0) ? -q : q);
}

STRATA_HELPER i128 __modti3(i128 n, i128 d) {
  u128 r;
  divide_unsigned(magnitude(n), magnitude(d), &r);
  return (i128)(n < 0 ? -r : r); /* the remainder takes n's sign */
}
