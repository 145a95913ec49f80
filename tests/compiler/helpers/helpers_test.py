#!/usr/bin/python3
"""The executable helpers (executable_symbols.def, provider `helper`) against
independent references: numpy where it converts or rounds correctly
(float64/float32 -> float16, floor, fmod, ...), and exact Python arithmetic
(integers, fractions.Fraction) rounded to the nearest representable value
by its definition elsewhere.

Inputs: every f16 bit pattern, random bit patterns of every width, and the
hard cases (ties and their neighbours, subnormals, overflow boundaries,
signed zeros, infinities, NaNs).

    helpers_test.py --driver build/.../helper_driver --def .../executable_symbols.def
                    --archive .../libstrata_executable_helpers.a --nm llvm-nm
"""
import argparse
import bisect
import re
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np

# Overflowing casts and nextafter past the top are the point here.
warnings.filterwarnings("ignore", category=RuntimeWarning)

RNG = np.random.default_rng(12)
FAILURES = []


def call(driver, name, args, out_dtype):
    """Runs helper `name` on the records of `args` (a list of equal-length
    arrays, interleaved per record); returns the results as `out_dtype`."""
    columns = [np.ascontiguousarray(a) for a in args]
    width = sum(c.dtype.itemsize for c in columns)
    records = np.empty((len(columns[0]), width), np.uint8)
    offset = 0
    for c in columns:
        size = c.dtype.itemsize
        records[:, offset:offset + size] = c.view(np.uint8).reshape(-1, size)
        offset += size
    result = subprocess.run([driver, name], input=records.tobytes(),
                            capture_output=True, check=True)
    return np.frombuffer(result.stdout, dtype=out_dtype)


def check(name, inputs, got, want, same_nan=True):
    """Bitwise equality, any NaN matching any NaN unless same_nan is False
    (then NaNs must only both be NaN)."""
    got_bits = got.view(f"u{got.dtype.itemsize}")
    want_bits = want.view(f"u{want.dtype.itemsize}")
    if got.dtype.kind == "f":
        nan_both = np.isnan(got) & np.isnan(want)
        bad = (got_bits != want_bits) & ~nan_both
    else:
        bad = got_bits != want_bits
    count = int(np.count_nonzero(bad))
    if count:
        index = np.flatnonzero(bad)[:5]
        shown = "; ".join(
            f"{tuple(x[i] for x in inputs)} -> {got[i]!r} (0x{int(got_bits[i]):x}),"
            f" want {want[i]!r} (0x{int(want_bits[i]):x})" for i in index)
        FAILURES.append(f"{name}: {count} of {len(got)} wrong: {shown}")
    print(f"{'FAIL' if count else 'ok  '} {name}: {len(got)} cases")


# --- inputs ---

def random_bits(dtype, count):
    width = np.dtype(dtype).itemsize
    raw = RNG.integers(0, 256, size=count * width, dtype=np.uint8)
    return raw.view(dtype)


def specials(dtype):
    info = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
              info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal,
              -info.smallest_subnormal, np.inf, -np.inf, np.nan, info.eps,
              0.49999997, -0.49999997, 0.5000001, 8388607.5, 8388608.5,
              4503599627370495.5, 1e30, -1e30, 1e-30, 65504.0, 65520.0, 65519.996]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=dtype)


def around(values, dtype, steps=2):
    """Each value and its neighbours `steps` ulps either side."""
    values = np.asarray(values, dtype=dtype)
    out = [values]
    up, down = values.copy(), values.copy()
    for _ in range(steps):
        up = np.nextafter(up, dtype(np.inf))
        down = np.nextafter(down, dtype(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def narrow_midpoints(mant_bits, exp_bits, dtype):
    """Values halfway between consecutive values of a narrow format (and its
    overflow threshold), both signs: exactly representable in `dtype`."""
    bias = (1 << (exp_bits - 1)) - 1
    exps = np.arange(1 - bias - mant_bits, bias + 1)
    mant = RNG.integers(0, 1 << (mant_bits + 1), size=len(exps) * 8)
    e = np.repeat(exps, 8)
    m = 2 * mant.astype(np.float64) + 1  # odd multiple of half an ulp
    values = np.ldexp(m, e - 1)
    finite = np.isfinite(values)
    values = values[finite].astype(dtype)
    top = np.ldexp(2.0 - 2.0 ** -mant_bits + 2.0 ** -(mant_bits + 1), bias)
    values = np.concatenate([values, np.array([top], dtype=dtype)])
    return np.concatenate([values, -values])


# --- exact rounding to a format by its definition ---

class Format:
    def __init__(self, mant_bits, exp_bits):
        self.mant_bits, self.exp_bits = mant_bits, exp_bits
        self.bias = (1 << (exp_bits - 1)) - 1
        width = 1 + mant_bits + exp_bits
        self.bits_dtype = np.uint16 if width == 16 else np.uint32 if width == 32 else np.uint64
        count = 1 << (mant_bits + exp_bits)  # non-negative patterns
        self.inf_bits = ((1 << exp_bits) - 1) << mant_bits
        # Every finite non-negative value, ascending with its bits.
        self.values = [self.value(b) for b in range(self.inf_bits)]
        self.count = count

    def value(self, bits):
        e = bits >> self.mant_bits
        m = bits & ((1 << self.mant_bits) - 1)
        if e == 0:
            return Fraction(m) * Fraction(2) ** (1 - self.bias - self.mant_bits)
        return (Fraction(m + (1 << self.mant_bits))
                * Fraction(2) ** (e - self.bias - self.mant_bits))

    def round(self, exact):
        """Bits of the nearest value to the Fraction `exact`, ties to even."""
        sign = exact < 0
        x = -exact if sign else exact
        sign_bit = 1 << (self.mant_bits + self.exp_bits)
        top = self.values[-1]
        ulp_top = Fraction(2) ** (self.bias - self.mant_bits)
        if x >= top + ulp_top / 2:
            bits = self.inf_bits
        else:
            i = bisect.bisect_left(self.values, x)
            if i < len(self.values) and self.values[i] == x:
                bits = i
            else:
                lo, hi = i - 1, i
                if hi == len(self.values):
                    bits = lo
                else:
                    dl, dh = x - self.values[lo], self.values[hi] - x
                    bits = lo if dl < dh or (dl == dh and lo % 2 == 0) else hi
        return bits | (sign_bit if sign else 0)


HALF, BFLOAT = Format(10, 5), Format(7, 8)


def fraction_of(x):
    return Fraction(float(x))


def nearest_float32(exact):
    """Nearest float32 to a Fraction, ties to even: float(exact) is the
    nearest double, so the nearest float32 is it rounded or a neighbour."""
    top = Fraction(float(np.finfo(np.float32).max))
    if abs(exact) >= top + Fraction(2) ** 103:  # half an ulp above the top
        return np.float32(np.inf if exact > 0 else -np.inf)
    with np.errstate(over="ignore"):
        approx = np.float32(nearest_float64(exact))
    best = None
    for c in (np.nextafter(approx, np.float32(-np.inf)), approx,
              np.nextafter(approx, np.float32(np.inf))):
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - exact)
        even = int(np.array(c).view(np.uint32)) % 2 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, c)
    return best[1]


def nearest_float64(exact):
    try:
        return float(exact)  # int and Fraction true division round correctly
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


# --- the checks ---

def check_conversions(driver):
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    check("__extendhfsf2", [halves], call(driver, "__extendhfsf2", [halves], np.float32),
          halves.astype(np.float32))

    f32 = np.concatenate([random_bits(np.float32, 300000), specials(np.float32),
                          around(narrow_midpoints(10, 5, np.float32), np.float32)])
    check("__truncsfhf2", [f32], call(driver, "__truncsfhf2", [f32], np.float16),
          f32.astype(np.float16))

    f64 = np.concatenate([random_bits(np.float64, 300000), specials(np.float64),
                          around(narrow_midpoints(10, 5, np.float64), np.float64),
                          RNG.normal(0, 1000, 100000), RNG.normal(0, 1e-5, 50000)])
    check("__truncdfhf2", [f64], call(driver, "__truncdfhf2", [f64], np.float16),
          f64.astype(np.float16))

    # bfloat16: numpy has none; round by definition (nearest, ties even).
    for name, dtype, count in (("__truncsfbf2", np.float32, 20000),
                               ("__truncdfbf2", np.float64, 20000)):
        x = np.concatenate([random_bits(dtype, count), specials(dtype),
                            around(narrow_midpoints(7, 8, dtype), dtype),
                            RNG.normal(0, 10, 5000).astype(dtype)])
        got = call(driver, name, [x], np.uint16)
        want = np.array([0x7FC0 if np.isnan(v) else
                         (0x7F80 if v > 0 else 0xFF80) if np.isinf(v) else
                         BFLOAT.round(fraction_of(v)) | (0x8000 if np.signbit(v) and v == 0 else 0)
                         for v in x], dtype=np.uint16)
        nan = np.isnan(x)
        got_nan = ((got & 0x7F80) == 0x7F80) & ((got & 0x7F) != 0)
        if not np.array_equal(got_nan, nan):
            FAILURES.append(f"{name}: NaN-ness differs")
        check(name, [x], got[~nan].view(np.int16), want[~nan].view(np.int16))


def round_half_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def check_rounding(driver):
    for dtype, suffix in ((np.float32, "f"), (np.float64, "")):
        x = np.concatenate([random_bits(dtype, 200000), specials(dtype),
                            around(np.arange(-20, 20) + 0.5, dtype, 3),
                            RNG.uniform(-1e6, 1e6, 100000).astype(dtype),
                            RNG.uniform(-3, 3, 100000).astype(dtype)])
        with np.errstate(invalid="ignore"):
            refs = {"floor": np.floor(x), "ceil": np.ceil(x), "trunc": np.trunc(x),
                    "round": round_half_away(x).astype(dtype),
                    "roundeven": np.rint(x), "rint": np.rint(x), "nearbyint": np.rint(x)}
        for base, want in refs.items():
            name = base + suffix
            check(name, [x], call(driver, name, [x], dtype), want.astype(dtype))


def fma_reference(x, y, z, dtype):
    """x * y + z rounded once, by IEEE-754's definition."""
    if np.isnan(x) or np.isnan(y) or np.isnan(z):
        return np.nan
    product_negative = np.signbit(x) != np.signbit(y)
    if np.isinf(x) or np.isinf(y):
        if x == 0 or y == 0 or (np.isinf(z) and np.signbit(z) != product_negative):
            return np.nan
        return -np.inf if product_negative else np.inf
    if np.isinf(z):
        return z
    exact = fraction_of(x) * fraction_of(y) + fraction_of(z)
    if exact == 0:
        # Zero addends keep a shared negative sign; cancellation gives +0.
        both_negative_zeros = (x == 0 or y == 0) and z == 0 and product_negative \
            and np.signbit(z)
        return -0.0 if both_negative_zeros else 0.0
    rounded = nearest_float64(exact) if dtype == np.float64 else nearest_float32(exact)
    return -0.0 if rounded == 0 and exact < 0 else rounded


def check_fma(driver):
    for dtype, name, count in ((np.float32, "fmaf", 20000), (np.float64, "fma", 20000)):
        a = np.concatenate([random_bits(dtype, count), RNG.normal(0, 1, count).astype(dtype)])
        b = np.concatenate([random_bits(dtype, count), RNG.normal(0, 1, count).astype(dtype)])
        c = np.concatenate([random_bits(dtype, count), RNG.normal(0, 1, count).astype(dtype)])
        # Hard cases: c cancels most of a*b, and a*b lands near a tie.
        n = 5000
        ha = RNG.normal(0, 1, n).astype(dtype)
        hb = RNG.normal(0, 1, n).astype(dtype)
        hc = -(ha.astype(np.float64) * hb.astype(np.float64)).astype(dtype)
        a, b, c = (np.concatenate([a, ha]), np.concatenate([b, hb]), np.concatenate([c, hc]))
        s = specials(dtype)
        grid = np.array(np.meshgrid(s, s, s)).reshape(3, -1).astype(dtype)
        a, b, c = (np.concatenate([a, grid[0]]), np.concatenate([b, grid[1]]),
                   np.concatenate([c, grid[2]]))
        got = call(driver, name, [a, b, c], dtype)
        want = np.array([fma_reference(x, y, z, dtype) for x, y, z in zip(a, b, c)],
                        dtype=dtype)
        check(name, [a, b, c], got, want)


def check_fmod_minmax(driver):
    for dtype, suffix in ((np.float32, "f"), (np.float64, "")):
        count = 100000
        x = np.concatenate([random_bits(dtype, count), RNG.normal(0, 100, count).astype(dtype)])
        y = np.concatenate([random_bits(dtype, count), RNG.normal(0, 3, count).astype(dtype)])
        s = specials(dtype)
        grid = np.array(np.meshgrid(s, s)).reshape(2, -1).astype(dtype)
        x, y = np.concatenate([x, grid[0]]), np.concatenate([y, grid[1]])
        with np.errstate(invalid="ignore", divide="ignore"):
            check("fmod" + suffix, [x, y], call(driver, "fmod" + suffix, [x, y], dtype),
                  np.fmod(x, y))
        if dtype == np.float32:
            for name, ref in (("fminf", np.fmin), ("fmaxf", np.fmax)):
                want = ref(x, y)
                # Zeros of both signs: -0 is the minimum, +0 the maximum.
                zeros = (x == 0) & (y == 0)
                signed = np.float32(-0.0) if name == "fminf" else np.float32(0.0)
                if name == "fminf":
                    want[zeros] = np.where(np.signbit(x[zeros]) | np.signbit(y[zeros]), -0.0, 0.0)
                else:
                    want[zeros] = np.where(np.signbit(x[zeros]) & np.signbit(y[zeros]), -0.0, 0.0)
                del signed
                check(name, [x, y], call(driver, name, [x, y], dtype), want)


I128 = np.dtype([("lo", "<u8"), ("hi", "<u8")])


def to_i128_array(values, signed):
    out = np.empty(len(values), I128)
    for i, v in enumerate(values):
        v &= (1 << 128) - 1
        out[i] = (v & ((1 << 64) - 1), v >> 64)
    return out


def from_i128_array(raw, signed):
    out = []
    for lo, hi in raw:
        v = int(lo) | (int(hi) << 64)
        if signed and v >> 127:
            v -= 1 << 128
        out.append(v)
    return out


def interesting_ints(count, signed):
    values = [0, 1, 2, 3, 7, (1 << 64) - 1, 1 << 64, (1 << 127) - 1, (1 << 128) - 1,
              (1 << 24) + 1, (1 << 53) + 1, (1 << 113) + (1 << 60) + 1, 65519, 65520]
    if signed:
        values = [v for v in values if v < (1 << 127)]
        values += [-v for v in values] + [-(1 << 127)]
    for bits in (8, 24, 53, 64, 65, 100, 127, 128):
        for v in RNG.integers(0, 1 << 62, size=count // 8):
            x = int(v) << max(0, bits - 62) | int(RNG.integers(0, 1 << 62))
            x &= (1 << bits) - 1
            if signed:
                x &= (1 << 127) - 1
                if RNG.integers(0, 2):
                    x = -x
            values.append(x)
    return values


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def check_int128(driver):
    for name, signed in (("__divti3", True), ("__modti3", True),
                         ("__udivti3", False), ("__umodti3", False)):
        a = interesting_ints(4000, signed)
        b = interesting_ints(4000, signed)[:len(a)]
        b = [v if v != 0 else 3 for v in b]
        if signed:  # INT128_MIN / -1 overflows: not compared
            pairs = [(x, y) for x, y in zip(a, b) if not (x == -(1 << 127) and y == -1)]
            a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        raw = call(driver, name, [to_i128_array(a, signed), to_i128_array(b, signed)], I128)
        got = from_i128_array(raw, signed)
        if "div" in name:
            want = [trunc_div(x, y) for x, y in zip(a, b)]
        else:
            want = [x - trunc_div(x, y) * y for x, y in zip(a, b)]
        compare_ints(name, a, got, want)

    for dtype, suffix in ((np.float16, "hf"), (np.float32, "sf"), (np.float64, "df")):
        x = np.concatenate([random_bits(dtype, 50000), specials(dtype),
                            RNG.normal(0, 1e6, 20000).astype(dtype)])
        with np.errstate(over="ignore"):
            x = np.concatenate([x, np.ldexp(np.ones(5), [126, 127, 128, 129, 64]).astype(dtype)])
        for signed, name in ((True, f"__fix{suffix}ti"), (False, f"__fixuns{suffix}ti")):
            got = from_i128_array(call(driver, name, [x], I128), signed)
            lo, hi = (-(1 << 127), (1 << 127) - 1) if signed else (0, (1 << 128) - 1)
            want = []
            for v in x:
                if np.isnan(v):
                    want.append(0)
                elif np.isinf(v):
                    want.append(hi if v > 0 else lo)
                else:
                    want.append(min(max(int(v), lo), hi))
            compare_ints(name, list(x), got, want)

        for signed, name in ((True, f"__floatti{suffix}"), (False, f"__floatunti{suffix}")):
            ints = interesting_ints(8000, signed)
            got = call(driver, name, [to_i128_array(ints, signed)], dtype)
            if dtype == np.float64:
                want = np.array([nearest_float64(Fraction(v)) for v in ints])
            elif dtype == np.float32:
                want = np.array([nearest_float32(Fraction(v)) for v in ints], dtype=np.float32)
            else:
                want = np.array([HALF.round(Fraction(v)) for v in ints], dtype=np.uint16).view(np.float16)
            check(name, [np.array(ints, dtype=object)], got, want.astype(dtype))


def compare_ints(name, inputs, got, want):
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    if bad:
        shown = "; ".join(f"{inputs[i]!r} -> {got[i]}, want {want[i]}" for i in bad[:5])
        FAILURES.append(f"{name}: {len(bad)} of {len(got)} wrong: {shown}")
    print(f"{'FAIL' if bad else 'ok  '} {name}: {len(got)} cases")


def check_archive(archive, nm, def_file):
    """The archive defines exactly the `helper` symbols of the .def and needs
    nothing (every member stands alone)."""
    listed = set(re.findall(r'STRATA_EXECUTABLE_SYMBOL\("([^"]+)", helper,',
                            open(def_file).read()))
    out = subprocess.run([nm, "--defined-only", "--extern-only", "-j", archive],
                         capture_output=True, text=True, check=True).stdout
    defined = {line.strip() for line in out.splitlines()
               if line.strip() and not line.endswith(":")}
    undefined = subprocess.run([nm, "--undefined-only", "-j", archive],
                               capture_output=True, text=True, check=True).stdout
    undefined = {line.strip() for line in undefined.splitlines()
                 if line.strip() and not line.endswith(":")}
    if defined != listed:
        FAILURES.append(f"archive defines {sorted(defined - listed)} beyond the .def, "
                        f"lacks {sorted(listed - defined)}")
    if undefined:
        FAILURES.append(f"archive members need {sorted(undefined)}")
    print(f"{'FAIL' if defined != listed or undefined else 'ok  '} archive: "
          f"{len(defined)} helpers, {len(undefined)} undefined symbols")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--driver", required=True)
    parser.add_argument("--def", dest="def_file", required=True)
    parser.add_argument("--archive", required=True)
    parser.add_argument("--nm", required=True)
    parser.add_argument("--only", help="run only these groups (comma-separated)")
    args = parser.parse_args()
    groups = {"archive": lambda: check_archive(args.archive, args.nm, args.def_file),
              "conversions": lambda: check_conversions(args.driver),
              "rounding": lambda: check_rounding(args.driver),
              "fma": lambda: check_fma(args.driver),
              "fmod": lambda: check_fmod_minmax(args.driver),
              "int128": lambda: check_int128(args.driver)}
    for name, run in groups.items():
        if args.only and name not in args.only.split(","):
            continue
        run()
    for failure in FAILURES:
        print("FAIL", failure)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
