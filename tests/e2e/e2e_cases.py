"""End-to-end cases: program, function, inputs and an independent numpy
reference for each. Inputs come from a seeded generator so runs repeat."""
import numpy as np

EXAMPLES = "examples"
CASES_DIR = "tests/e2e/cases"


def _rng(seed):
    return np.random.default_rng(seed)


def _simple_mul():
    r = _rng(1)
    a = r.standard_normal(4).astype(np.float32)
    b = r.standard_normal(4).astype(np.float32)
    return [a, b], [a * b]


def _int_arith():
    r = _rng(2)
    a = r.integers(-1000, 1000, (2, 3), dtype=np.int32)
    b = r.integers(-1000, 1000, (2, 3), dtype=np.int32)
    return [a, b], [((a + b) * a - b).astype(np.int32)]


def _f64_max_scale():
    r = _rng(3)
    a = r.standard_normal((2, 3, 4))
    b = r.standard_normal((2, 3, 4))
    return [a, b], [np.maximum(a, b) * 0.5 - a]


def _compare_i1():
    r = _rng(4)
    a = r.standard_normal(8).astype(np.float32)
    b = r.standard_normal(8).astype(np.float32)
    return [a, b], [a > b, np.where(a > b, a, b)]


def _small_ints():
    r = _rng(5)
    a = r.integers(-128, 128, 16, dtype=np.int8)
    b = r.integers(-128, 128, 16, dtype=np.int8)
    c = r.integers(-2000, 2000, (3, 5), dtype=np.int16)
    d = np.array([3, -5, 2**31 + 7, -(2**30)], dtype=np.int64)
    with np.errstate(over="ignore"):
        return [a, b, c, d], [(a + b).astype(np.int8), (c * c).astype(np.int16), d * d]


def _matmul_bias_relu():
    r = _rng(6)
    x = r.standard_normal((4, 8)).astype(np.float32)
    w = r.standard_normal((8, 16)).astype(np.float32)
    b = r.standard_normal(16).astype(np.float32)
    ref = np.maximum(x.astype(np.float64) @ w + b, 0).astype(np.float32)
    return [x, w, b], [ref]


# name -> (source file, function, make inputs/references)
CASES = {
    "simple_mul": (f"{EXAMPLES}/simple_mul.mlir", "simple_mul", _simple_mul),
    "int_arith": (f"{CASES_DIR}/int_arith.mlir", "int_arith", _int_arith),
    "f64_max_scale": (f"{CASES_DIR}/f64_max_scale.mlir", "f64_max_scale", _f64_max_scale),
    "compare_i1": (f"{CASES_DIR}/compare_i1.mlir", "compare_i1", _compare_i1),
    "small_ints": (f"{CASES_DIR}/small_ints.mlir", "small_ints", _small_ints),
    "matmul_bias_relu": (f"{CASES_DIR}/matmul_bias_relu.mlir", "matmul_bias_relu", _matmul_bias_relu),
}
