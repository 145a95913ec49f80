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


def _f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def _conv2d_nhwc(x, w, stride=1):
    """x: NHWC, w: HWCF -> NHWF, valid padding, in float64."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def _batch_matmul():
    r = _rng(10)
    a, b = _f32(r, 2, 3, 4), _f32(r, 2, 4, 5)
    return [a, b], [(a.astype(np.float64) @ b).astype(np.float32)]


def _matvec():
    r = _rng(11)
    a, x = _f32(r, 6, 5), _f32(r, 5)
    return [a, x], [(a.astype(np.float64) @ x).astype(np.float32)]


def _conv_nhwc():
    r = _rng(12)
    x, w = _f32(r, 1, 8, 8, 3), _f32(r, 3, 3, 3, 4)
    return [x, w], [_conv2d_nhwc(x, w).astype(np.float32)]


def _conv_nchw_strided():
    r = _rng(13)
    x, w = _f32(r, 1, 3, 9, 9), _f32(r, 4, 3, 3, 3)
    ref = _conv2d_nhwc(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), stride=2)
    return [x, w], [ref.transpose(0, 3, 1, 2).astype(np.float32)]


def _depthwise_conv():
    r = _rng(14)
    x, w = _f32(r, 1, 6, 6, 4), _f32(r, 3, 3, 4)
    out = np.zeros((1, 4, 4, 4))
    for i in range(4):
        for j in range(4):
            out[:, i, j, :] = np.sum(x[:, i:i + 3, j:j + 3, :] * w, axis=(1, 2))
    return [x, w], [out.astype(np.float32)]


def _max_pool():
    r = _rng(15)
    x = _f32(r, 1, 6, 6, 2)
    return [x], [x.reshape(1, 3, 2, 3, 2, 2).max(axis=(2, 4))]


def _sum_pool():
    r = _rng(16)
    x = _f32(r, 1, 4, 4, 3)
    out = np.zeros((1, 2, 2, 3))
    for i in range(2):
        for j in range(2):
            out[:, i, j, :] = x[:, i:i + 3, j:j + 3, :].astype(np.float64).sum(axis=(1, 2))
    return [x], [out.astype(np.float32)]


def _transpose():
    x = _f32(_rng(17), 2, 3, 4)
    return [x], [np.ascontiguousarray(x.transpose(2, 0, 1))]


def _broadcast_add():
    r = _rng(18)
    x, b = _f32(r, 3, 4), _f32(r, 4)
    return [x, b], [x + b]


def _reduce_sum():
    x = _f32(_rng(19), 4, 5)
    return [x], [x.astype(np.float64).sum(axis=1).astype(np.float32)]


def _reduce_max_i32():
    x = _rng(20).integers(-10**9, 10**9, (3, 7), dtype=np.int32)
    return [x], [x.max(axis=0)]


def _softmax():
    x = _f32(_rng(21), 2, 8)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return [x], [(e / e.sum(axis=1, keepdims=True)).astype(np.float32)]


def _layer_norm():
    x = _f32(_rng(22), 4, 16).astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return [x.astype(np.float32)], [((x - mean) / np.sqrt(var + 1e-5)).astype(np.float32)]


def _slice_and_insert():
    r = _rng(30)
    x, y = _f32(r, 6, 8), _f32(r, 2, 3)
    inserted = x.copy()
    inserted[4:6, 5:8] = y
    return [x, y], [x[1:4, 2:6] * 2, inserted]


def _strided_slice():
    x = _rng(31).integers(-100, 100, (8, 8), dtype=np.int32)
    return [x], [np.ascontiguousarray(x[0:8:2, 1:5:3])]


def _concat():
    r = _rng(32)
    a, b = _f32(r, 2, 3), _f32(r, 2, 5)
    return [a, b], [np.concatenate([a, b], axis=1)]


def _pad():
    x = _f32(_rng(33), 2, 3)
    return [x], [np.pad(x, ((1, 1), (2, 1)), constant_values=7.5)]


def _reshapes():
    x = _f32(_rng(34), 2, 3, 4)
    return [x], [x.reshape(6, 4), (-x).reshape(2, 12), x.reshape(24)]


def _constant_weights():
    x = _f32(_rng(35), 2, 3)
    w = np.array([[1.0, -1.0], [0.5, 2.0], [-3.0, 0.25]])
    return [x], [(x @ w + np.array([10.0, -20.0])).astype(np.float32)]


def _returns_constant():
    return [], [np.array([4, 5, 6], dtype=np.int32)]


def _extract_and_splat():
    x = _f32(_rng(36), 4)
    return [x], [np.full((2, 2), x[2], dtype=np.float32)]


def _from_elements():
    x = _f32(_rng(37), 3)
    return [x], [np.array([x[0] * x[2], x[0]], dtype=np.float32)]


def _large_elementwise():
    r = _rng(40)
    a, b = _f32(r, 301, 257), _f32(r, 301, 257)
    return [a, b], [np.maximum((a - b) * a, 0)]


def _large_matmul_bias():
    r = _rng(41)
    x, w, b = _f32(r, 97, 200), _f32(r, 200, 64), _f32(r, 64)
    return [x, w, b], [(x.astype(np.float64) @ w + b).astype(np.float32)]


def _large_softmax():
    x = _f32(_rng(42), 130, 257)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return [x], [(e / e.sum(axis=1, keepdims=True)).astype(np.float32)]


def _large_conv():
    r = _rng(43)
    x, w = _f32(r, 1, 34, 34, 8), _f32(r, 3, 3, 8, 16)
    return [x, w], [np.maximum(_conv2d_nhwc(x, w), 0).astype(np.float32)]


def _conv_nchw(x, w, stride):
    ref = _conv2d_nhwc(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), stride=stride)
    return ref.transpose(0, 3, 1, 2).astype(np.float32)


def _large_conv_nchw():
    r = _rng(44)
    x, w = _f32(r, 1, 64, 30, 30), _f32(r, 64, 64, 3, 3)
    return [x, w], [_conv_nchw(x, w, 1)]


def _large_conv_nchw_strided():
    r = _rng(45)
    x, w = _f32(r, 1, 512, 9, 9), _f32(r, 96, 512, 3, 3)
    return [x, w], [_conv_nchw(x, w, 2)]


def _large_conv_pointwise():
    r = _rng(46)
    x, w = _f32(r, 1, 96, 14, 14), _f32(r, 144, 96, 1, 1)
    return [x, w], [_conv_nchw(x, w, 1)]


def _pad_nhwc(x, p):
    return np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))


def _tosa_conv2d():
    r = _rng(50)
    x, w, b = _f32(r, 1, 8, 8, 3), _f32(r, 4, 3, 3, 3), _f32(r, 4)
    # TOSA weights are OHWI.
    y = _conv2d_nhwc(_pad_nhwc(x, 1), w.transpose(1, 2, 3, 0)) + b
    return [x, w, b], [np.clip(y, 0, 6).astype(np.float32)]


def _tosa_depthwise():
    r = _rng(51)
    x, w, b = _f32(r, 1, 6, 6, 4), _f32(r, 3, 3, 4, 1), _f32(r, 4)
    out = np.zeros((1, 4, 4, 4))
    for i in range(4):
        for j in range(4):
            out[:, i, j, :] = np.sum(x[:, i:i + 3, j:j + 3, :] * w[..., 0], axis=(1, 2))
    return [x, w, b], [(out + b).astype(np.float32)]


def _tosa_matmul():
    r = _rng(52)
    a, b = _f32(r, 2, 3, 4), _f32(r, 2, 4, 5)
    return [a, b], [(a.astype(np.float64) @ b).astype(np.float32)]


def _tosa_transpose_reduce():
    x = _f32(_rng(53), 2, 3, 4)
    return [x], [np.ascontiguousarray(x.transpose(2, 0, 1)),
                 x.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32),
                 x.max(axis=2, keepdims=True)]


def _tosa_argmax():
    x = _f32(_rng(54), 3, 7)
    return [x], [x.argmax(axis=1).astype(np.int32)]


def _tosa_elementwise():
    r = _rng(55)
    a, b = _f32(r, 2, 4), _f32(r, 1, 4)
    t = np.exp(a.astype(np.float64) * b - a)
    return [a, b], [(1.0 / np.tanh(1.0 / (1.0 + np.exp(-t)))).astype(np.float32)]


def _tosa_shape_ops():
    r = _rng(56)
    x, y = _f32(r, 2, 6), _f32(r, 2, 2)
    c = np.concatenate([x, y], axis=1)
    return [x, y], [x.reshape(3, 4), x[:, 2:5], c, np.pad(c, ((1, 1), (0, 0)), constant_values=-1.0)]


def _tosa_cast_gather():
    r = _rng(57)
    x = (_f32(r, 1, 5, 3) * 10).astype(np.float32)
    idx = np.array([[4, 0, 2, 2]], dtype=np.int32)
    # TOSA casts float to int rounding to nearest, ties to even.
    return [x, idx], [np.rint(x).astype(np.int32), x[:, idx[0], :]]


def _hundred_ops():
    r = _rng(60)
    x = (_f32(r, 16, 16) * 0.25).astype(np.float32)
    w = (_f32(r, 16, 16) * 0.25).astype(np.float32)
    v = x.astype(np.float64)
    for i in range(100):
        v = [lambda v: v @ w, np.tanh, lambda v: v + x, lambda v: v * v][i % 4](v)
    return [x, w], [v.astype(np.float32)]


def _calls_public():
    x = _f32(_rng(61), 8)
    return [x], [x * 0.25 + x]


def _f16_ops():
    r = _rng(62)
    a = r.uniform(-2, 2, 8).astype(np.float16)
    b = r.uniform(-2, 2, 8).astype(np.float16)
    prod = (a * b).astype(np.float16)
    e = np.exp(prod.astype(np.float32))
    return [a, b], [e.astype(np.float16), e.astype(np.float16).astype(np.float32)]


def _math_f32():
    r = _rng(63)
    x = r.uniform(-3, 3, 64).astype(np.float32)
    p = r.uniform(0.1, 4, 64).astype(np.float32)
    from math import erf
    xd, pd = x.astype(np.float64), p.astype(np.float64)
    refs = [np.exp(xd), np.log(pd), np.tanh(xd), np.vectorize(erf)(xd), 1 / np.sqrt(pd),
            np.sin(xd), np.cos(xd), pd ** xd]
    return [x, p], [v.astype(np.float32) for v in refs]


def _tosa_rescale_table():
    x = np.arange(-128, 128, 16, dtype=np.int8)
    # multiplier 2^30 with shift 31: x * 0.5, rounded half up, plus the
    # output zero point 3. TOSA's int8 table is indexed by x + 128; entry i
    # holds the byte i (so the output is x reinterpreted as unsigned).
    half = x.astype(np.int64) * (1 << 30)
    rounded = (half + (1 << 30)) >> 31
    table = np.arange(256).astype(np.uint8).view(np.int8)
    return [x], [np.clip(rounded + 3, -128, 127).astype(np.int8),
                 table[x.astype(np.int64) + 128]]


def _math_misc():
    r = _rng(64)
    d = r.uniform(-3, 3, 8)
    a = r.uniform(-10, 10, 8).astype(np.float32)
    b = r.uniform(0.5, 3, 8).astype(np.float32)
    i = r.integers(-20, 20, 8, dtype=np.int32)
    # f64 exp is computed in f32: compare at f32 precision.
    return [d, a, b, i], [np.exp(d.astype(np.float32).astype(np.float64)),
                          np.fmod(a, b), (i.astype(np.int64) ** 3).astype(np.int32)]


def _splat_result():
    return [], [np.full((4, 3), 2.5, dtype=np.float32)]


def _duplicate_results():
    r = _rng(65)
    x = _f32(r, 2, 4)
    length = np.array([1, 0], dtype=np.int32)
    masked = np.where((0 < length)[:, None], np.tanh(x), 0).astype(np.float32)
    return [x, length], [np.stack([masked, np.tanh(masked)])]


def _round_significand(x, bits):
    """x (float64, normal range) rounded to `bits` significant bits, ties to
    even: how bf16 (8 bits) rounds."""
    m, e = np.frexp(x)
    return np.ldexp(np.rint(np.ldexp(m, bits)), e - bits)


def _portable_conversions():
    r = _rng(70)
    d = np.concatenate([r.normal(0, 100, 48), [65504.0, 65519.0, 6e-8, -3e-5, 1e-30, -1e30,
                                               2049.0, 1.00048828125, 0.0, -0.0, 0.5, 1e5,
                                               -65520.0, 3.0 + 2 ** -11, 1e-7, 7.5]])
    f = r.normal(0, 10, 64).astype(np.float32)
    h = r.normal(0, 4, 64).astype(np.float16)
    k = r.normal(0, 4, 64).astype(np.float16)
    h[3], k[3] = -0.0, 0.0
    with np.errstate(over="ignore"):
        d_half = d.astype(np.float16)
    nonzero = d != 0
    d_bf16 = np.where(nonzero, _round_significand(np.where(nonzero, d, 1.0), 8), d)
    return [d, f, h, k], [d_half, d_bf16.astype(np.float32),
                          _round_significand(f.astype(np.float64), 8).astype(np.float32),
                          f.astype(np.float16), h.astype(np.float32),
                          np.fmin(h, k), np.fmax(h, k)]


def _half_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(x.dtype)


def _portable_rounding():
    r = _rng(71)
    f = np.concatenate([r.uniform(-50, 50, 48), np.arange(-8, 8) + 0.5]).astype(np.float32)
    d = np.concatenate([r.uniform(-1e6, 1e6, 48), np.arange(-8, 8) + 0.5])
    return [f, d], [np.floor(f), np.ceil(f), _half_away(f), np.rint(f), np.trunc(f),
                    np.floor(d), np.ceil(d), _half_away(d), np.rint(d), np.trunc(d)]


def _portable_fma_rem():
    r = _rng(72)
    a = r.normal(0, 10, 64).astype(np.float32)
    b = r.uniform(0.5, 3, 64).astype(np.float32) * np.where(r.random(64) < 0.5, -1, 1).astype(np.float32)
    c = r.normal(0, 10, 64).astype(np.float32)
    x, z = r.normal(0, 1e3, 64), r.normal(0, 1e3, 64)
    y = r.uniform(0.5, 3, 64)
    x[0] = 1e17  # a quotient beyond the significand: fmod stays exact
    h = r.normal(0, 20, 64).astype(np.float16)
    k = r.uniform(0.5, 3, 64).astype(np.float16)
    fma32 = (a.astype(np.float64) * b + c).astype(np.float32)
    fma64 = x * y + z  # differs from the fused result by rounding only
    return [a, b, c, x, y, z, h, k], [fma32, fma64, np.fmod(a, b), np.fmod(x, y),
                                      np.fmod(h, k)]


def _portable_int128():
    a = np.array([1, 2, 3, 4, 5, 6, 7, 8], dtype=np.int64)
    b = np.array([3, 3, 7, 11, 13, 17, 19, 1000003], dtype=np.int64)
    f = np.array([1e20, -1e20, 5.5, -6.5, 7.0, 8e25, -9e30, 1e30])

    def wrap64(v):
        return (v + (1 << 63)) % (1 << 64) - (1 << 63)

    def trunc_div(x, y):
        q = abs(x) // abs(y)
        return -q if (x < 0) != (y < 0) else q

    p = [int(x) * 10 ** 20 for x in a]
    q = [trunc_div(x, int(y)) for x, y in zip(p, b)]
    fi = [int(v) for v in f]
    return [a, b, f], [
        np.array([wrap64(v) for v in q], dtype=np.int64),
        np.array([x % int(y) for x, y in zip(p, b)], dtype=np.int64),
        np.array([float(int(x) * 1000 // int(y)) for x, y in zip(a, b)]).astype(np.float16),
        np.array([float(v) for v in p]),
        np.array([x - trunc_div(x, int(y)) * int(y) for x, y in zip(fi, b)], dtype=np.int64),
        np.array([float(v) for v in q]).astype(np.float32)]


LINALG = f"{CASES_DIR}/linalg_named.mlir"
TOSA = f"{CASES_DIR}/tosa_ops.mlir"
LARGE = f"{CASES_DIR}/large.mlir"
TENSOR = f"{CASES_DIR}/tensor_ops.mlir"
PADDED = f"{CASES_DIR}/padded_windows.mlir"

def _windowed_nchw(x, w, low, high, dilation=1, pad_value=0.0, reduce="mac"):
    """A stride-1 window over x [N, C, H, W] padded by `low`/`high` (rows,
    columns) with `pad_value`: a depthwise convolution by w [C, KH, KW]
    ("mac") or a max pooling of w's shape ("max"), in float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (low[0], high[0]), (low[1], high[1])),
                constant_values=pad_value)
    c, kh, kw = w.shape
    oh = xp.shape[2] - dilation * (kh - 1)
    ow = xp.shape[3] - dilation * (kw - 1)
    out = np.full((x.shape[0], c, oh, ow), -np.inf if reduce == "max" else 0.0)
    for i in range(kh):
        for j in range(kw):
            tap = xp[:, :, i * dilation:i * dilation + oh, j * dilation:j * dilation + ow]
            if reduce == "max":
                out = np.maximum(out, tap)
            else:
                out += tap * w[None, :, i, j, None, None]
    return out.astype(np.float32)


def _dw_nchw_7x7():
    r = _rng(60)
    x, w = _f32(r, 1, 40, 7, 7), _f32(r, 40, 3, 3)
    return [x, w], [_windowed_nchw(x, w, (1, 1), (1, 1))]


def _dw_nchw_asymmetric():
    r = _rng(61)
    x, w = _f32(r, 1, 24, 10, 13), _f32(r, 24, 5, 5)
    return [x, w], [_windowed_nchw(x, w, (1, 2), (3, 2))]


def _dw_nchw_dilated():
    r = _rng(62)
    x, w = _f32(r, 1, 16, 14, 14), _f32(r, 16, 3, 3)
    return [x, w], [_windowed_nchw(x, w, (2, 2), (2, 2), dilation=2)]


def _dw_nchw_pad_one():
    r = _rng(63)
    x, w = _f32(r, 1, 8, 6, 6), _f32(r, 8, 3, 3)
    return [x, w], [_windowed_nchw(x, w, (1, 1), (1, 1), pad_value=1.0)]


def _max_pool_nchw_padded():
    r = _rng(64)
    x = _f32(r, 1, 8, 9, 9)
    return [x], [_windowed_nchw(x, np.zeros((8, 3, 3)), (1, 1), (1, 1),
                                pad_value=-np.inf, reduce="max")]


def _dw_nhwc_padded():
    r = _rng(65)
    x, w = _f32(r, 1, 9, 9, 32), _f32(r, 3, 3, 32)
    ref = _windowed_nchw(x.transpose(0, 3, 1, 2), w.transpose(2, 0, 1), (1, 1), (1, 1))
    return [x, w], [np.ascontiguousarray(ref.transpose(0, 2, 3, 1))]


def _dw_blocked_padded():
    r = _rng(66)
    x, w = _f32(r, 1, 3, 7, 7, 16), _f32(r, 3, 3, 3, 16)
    planar = x.transpose(0, 1, 4, 2, 3).reshape(1, 48, 7, 7)
    filters = w.transpose(0, 3, 1, 2).reshape(48, 3, 3)
    ref = _windowed_nchw(planar, filters, (1, 1), (1, 1))
    return [x, w], [np.ascontiguousarray(ref.reshape(1, 3, 16, 7, 7).transpose(0, 1, 3, 4, 2))]


MATMULS = f"{CASES_DIR}/matmul_shapes.mlir"


def _matmul_ragged():
    r = _rng(70)
    x, w, b = _f32(r, 200, 77), _f32(r, 77, 300), _f32(r, 300)
    ref = np.maximum(x.astype(np.float64) @ w + b, 0)
    return [x, w, b], [ref.astype(np.float32)]


def _batch_matmul_transposed():
    r = _rng(71)
    a, b = _f32(r, 3, 70, 40), _f32(r, 3, 90, 40)
    ref = a.astype(np.float64) @ b.transpose(0, 2, 1)
    return [a, b], [ref.astype(np.float32)]


def _matmul_f16_inputs():
    r = _rng(72)
    a = r.standard_normal((130, 66)).astype(np.float16)
    b = r.standard_normal((66, 129)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return [a, b], [ref.astype(np.float32)]


def _matmul_accumulate():
    r = _rng(73)
    a, b, c = _f32(r, 96, 33), _f32(r, 33, 150), _f32(r, 96, 150)
    ref = a.astype(np.float64) @ b + c
    return [a, b, c], [ref.astype(np.float32)]


def _max_into_argument():
    r = _rng(74)
    x, acc = _f32(r, 512, 256), _f32(r, 512) + 2.5
    return [x, acc], [np.maximum(acc, x.max(axis=1))]


def _conv_nchw_odd_rows():
    r = _rng(75)
    x, w = _f32(r, 1, 3, 47, 45), _f32(r, 32, 3, 5, 5)
    return [x, w], [_conv_nchw(x, w, 2)]


def _conv_split_accumulate():
    r = _rng(76)
    x, w, y = _f32(r, 1, 1, 16, 8, 12), _f32(r, 2, 1, 3, 3, 16, 16), _f32(r, 1, 2, 16, 6, 10)
    # w [fb, cb, kh, kw, ci, fi] as FCHW: [fb*16 + fi, cb*16 + ci, kh, kw].
    fchw = w.transpose(0, 5, 1, 4, 2, 3).reshape(32, 16, 3, 3)
    conv = _conv_nchw(x.reshape(1, 16, 8, 12), fchw, 1).reshape(1, 2, 16, 6, 10)
    return [x, w, y], [(y.astype(np.float64) + conv).astype(np.float32)]


def _concat_in_place():
    r = _rng(91)
    a, b, c = _f32(r, 1, 16, 4), _f32(r, 1, 8, 4), _f32(r, 1, 3, 4)
    x, y = a + a, b + np.float32(1)
    cat = np.concatenate([x, y, c], axis=1).astype(np.float64)
    outer = np.concatenate([a * a, b * np.float32(3), b * b], axis=1).astype(np.float64)
    returned = np.concatenate([a - np.float32(1), b - np.float32(3)], axis=1)
    return [a, b, c], [cat.sum(axis=1).astype(np.float32),
                       (outer * outer).sum(axis=1).astype(np.float32), returned]


def _concat_batch():
    r = _rng(92)
    a, b = _f32(r, 2, 3, 4), _f32(r, 2, 5, 4)
    return [a, b], [np.concatenate([a, b], axis=1)]


def _dynamic_mlp(rows):
    def make():
        r = _rng(100 + rows)
        x, w, b = _f32(r, rows, 8), _f32(r, 8, 16), _f32(r, 16)
        act = np.maximum(x.astype(np.float64) @ w + b, 0)
        e = np.exp(act - act.max(axis=1, keepdims=True))
        return [x, w, b], [(e / e.sum(axis=1, keepdims=True)).astype(np.float32)]
    return make


def _dynamic_2d(rows, cols):
    def make():
        r = _rng(200 + rows * cols)
        a, b = _f32(r, rows, cols), _f32(r, rows, cols)
        fma = a * b + a
        sums = fma.astype(np.float64).reshape(-1, 2).sum(axis=0).astype(np.float32)
        return [a, b], [fma, fma.T.copy(), sums]
    return make


def _dynamic_conditional(taken, rows):
    def make():
        x = _f32(_rng(300 + rows), rows, 4)
        r = x * x if taken else -x[:1]
        return [np.array(taken), x], [2 * r]
    return make


def _dynamic_matmul(rows):
    def make():
        r = _rng(300 + rows)
        x, w = _f32(r, rows, 64), _f32(r, 64, 300)
        return [x, w], [(x.astype(np.float64) @ w).astype(np.float32)]
    return make


def _dynamic_tensor_ops(rows, other_rows):
    def make():
        r = _rng(400 + rows)
        x, y = _f32(r, rows, 4), _f32(r, other_rows, 4)
        return [x, y], [np.concatenate([x, y]), np.pad(x, ((0, 0), (1, 1))),
                        x[:, 1:3].copy()]
    return make


# name -> (source file, function, make inputs/references)
def _accumulate_into_argument():
    r = _rng(41)
    a = r.standard_normal((64, 32)).astype(np.float32)
    b = r.standard_normal((64, 32)).astype(np.float32)
    return [a, b], [a + b, b * b]


CASES = {
    "accumulate_into_argument": (f"{CASES_DIR}/accumulate_into_argument.mlir",
                                 "accumulate_into_argument", _accumulate_into_argument),
    "simple_mul": (f"{EXAMPLES}/simple_mul.mlir", "simple_mul", _simple_mul),
    "int_arith": (f"{CASES_DIR}/int_arith.mlir", "int_arith", _int_arith),
    "f64_max_scale": (f"{CASES_DIR}/f64_max_scale.mlir", "f64_max_scale", _f64_max_scale),
    "compare_i1": (f"{CASES_DIR}/compare_i1.mlir", "compare_i1", _compare_i1),
    "small_ints": (f"{CASES_DIR}/small_ints.mlir", "small_ints", _small_ints),
    "matmul_bias_relu": (f"{CASES_DIR}/matmul_bias_relu.mlir", "matmul_bias_relu", _matmul_bias_relu),
    "batch_matmul": (LINALG, "batch_matmul", _batch_matmul),
    "matmul_ragged": (MATMULS, "matmul_ragged", _matmul_ragged),
    "batch_matmul_transposed": (MATMULS, "batch_matmul_transposed",
                                _batch_matmul_transposed),
    "matmul_f16_inputs": (MATMULS, "matmul_f16_inputs", _matmul_f16_inputs),
    "matmul_accumulate": (MATMULS, "matmul_accumulate", _matmul_accumulate),
    "max_into_argument": (f"{CASES_DIR}/reduce_into_argument.mlir", "max_into_argument",
                          _max_into_argument),
    "matvec": (LINALG, "matvec", _matvec),
    "conv_nhwc": (LINALG, "conv_nhwc", _conv_nhwc),
    "conv_nchw_strided": (LINALG, "conv_nchw_strided", _conv_nchw_strided),
    "depthwise_conv": (LINALG, "depthwise_conv", _depthwise_conv),
    "max_pool": (LINALG, "max_pool", _max_pool),
    "sum_pool": (LINALG, "sum_pool", _sum_pool),
    "dw_nchw_7x7": (PADDED, "dw_nchw_7x7", _dw_nchw_7x7),
    "dw_nchw_asymmetric": (PADDED, "dw_nchw_asymmetric", _dw_nchw_asymmetric),
    "dw_nchw_dilated": (PADDED, "dw_nchw_dilated", _dw_nchw_dilated),
    "dw_nchw_pad_one": (PADDED, "dw_nchw_pad_one", _dw_nchw_pad_one),
    "max_pool_nchw_padded": (PADDED, "max_pool_nchw_padded", _max_pool_nchw_padded),
    "dw_nhwc_padded": (PADDED, "dw_nhwc_padded", _dw_nhwc_padded),
    "dw_blocked_padded": (PADDED, "dw_blocked_padded", _dw_blocked_padded),
    "transpose": (LINALG, "transpose", _transpose),
    "broadcast_add": (LINALG, "broadcast_add", _broadcast_add),
    "reduce_sum": (LINALG, "reduce_sum", _reduce_sum),
    "reduce_max_i32": (LINALG, "reduce_max_i32", _reduce_max_i32),
    "softmax": (LINALG, "softmax", _softmax),
    "layer_norm": (LINALG, "layer_norm", _layer_norm),
    "slice_and_insert": (TENSOR, "slice_and_insert", _slice_and_insert),
    "strided_slice": (TENSOR, "strided_slice", _strided_slice),
    "concat": (TENSOR, "concat", _concat),
    "pad": (TENSOR, "pad", _pad),
    "reshapes": (TENSOR, "reshapes", _reshapes),
    "constant_weights": (TENSOR, "constant_weights", _constant_weights),
    "returns_constant": (TENSOR, "returns_constant", _returns_constant),
    "extract_and_splat": (TENSOR, "extract_and_splat", _extract_and_splat),
    "from_elements": (TENSOR, "from_elements", _from_elements),
    "large_elementwise": (LARGE, "large_elementwise", _large_elementwise),
    "large_matmul_bias": (LARGE, "large_matmul_bias", _large_matmul_bias),
    "large_softmax": (LARGE, "large_softmax", _large_softmax),
    "large_conv": (LARGE, "large_conv", _large_conv),
    "large_conv_nchw": (LARGE, "large_conv_nchw", _large_conv_nchw),
    "large_conv_nchw_strided": (LARGE, "large_conv_nchw_strided",
                                _large_conv_nchw_strided),
    "large_conv_pointwise": (LARGE, "large_conv_pointwise", _large_conv_pointwise),
    "conv_nchw_odd_rows": (f"{CASES_DIR}/conv_split_output.mlir", "conv_nchw_odd_rows",
                           _conv_nchw_odd_rows),
    "conv_split_accumulate": (f"{CASES_DIR}/conv_split_output.mlir", "conv_split_accumulate",
                              _conv_split_accumulate),
    "concat_in_place": (f"{CASES_DIR}/concat_in_place.mlir", "concat_in_place",
                        _concat_in_place),
    "concat_batch": (f"{CASES_DIR}/concat_in_place.mlir", "concat_batch", _concat_batch),
    "tosa_conv2d": (TOSA, "tosa_conv2d", _tosa_conv2d),
    "tosa_depthwise": (TOSA, "tosa_depthwise", _tosa_depthwise),
    "tosa_matmul": (TOSA, "tosa_matmul", _tosa_matmul),
    "tosa_transpose_reduce": (TOSA, "tosa_transpose_reduce", _tosa_transpose_reduce),
    "tosa_argmax": (TOSA, "tosa_argmax", _tosa_argmax),
    "tosa_elementwise": (TOSA, "tosa_elementwise", _tosa_elementwise),
    "tosa_shape_ops": (TOSA, "tosa_shape_ops", _tosa_shape_ops),
    "tosa_cast_gather": (TOSA, "tosa_cast_gather", _tosa_cast_gather),
    "hundred_ops": (f"{CASES_DIR}/hundred_ops.mlir", "big", _hundred_ops),
    "calls_public": (f"{CASES_DIR}/calls_f16.mlir", "calls_public", _calls_public),
    "f16_ops": (f"{CASES_DIR}/calls_f16.mlir", "f16_ops", _f16_ops),
    "math_f32": (f"{CASES_DIR}/math_ops.mlir", "math_f32", _math_f32),
    "tosa_rescale_table": (f"{CASES_DIR}/math_ops.mlir", "tosa_rescale_table", _tosa_rescale_table),
    "math_misc": (f"{CASES_DIR}/math_ops.mlir", "math_misc", _math_misc),
    "splat_result": (f"{CASES_DIR}/math_ops.mlir", "splat_result", _splat_result),
    "portable_conversions": (f"{CASES_DIR}/portable_ops.mlir", "portable_conversions",
                             _portable_conversions),
    "portable_rounding": (f"{CASES_DIR}/portable_ops.mlir", "portable_rounding",
                          _portable_rounding),
    "portable_fma_rem": (f"{CASES_DIR}/portable_ops.mlir", "portable_fma_rem",
                         _portable_fma_rem),
    "portable_int128": (f"{CASES_DIR}/portable_int128.mlir", "portable_int128",
                        _portable_int128),
    "duplicate_results": (f"{CASES_DIR}/duplicate_results.mlir", "duplicate_results",
                          _duplicate_results),
    # One module each, run at two sizes.
    "dynamic_mlp_1": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_mlp", _dynamic_mlp(1)),
    "dynamic_mlp_37": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_mlp", _dynamic_mlp(37)),
    "dynamic_2d_3x4": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_2d", _dynamic_2d(3, 4)),
    "dynamic_2d_65x130": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_2d",
                          _dynamic_2d(65, 130)),
    # Enough work for a grid of several workgroups, the last tile partial.
    "dynamic_mlp_1000": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_mlp",
                         _dynamic_mlp(1000)),
    "dynamic_2d_301x518": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_2d",
                           _dynamic_2d(301, 518)),
    "dynamic_matmul_5": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_matmul",
                         _dynamic_matmul(5)),
    "dynamic_matmul_700": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_matmul",
                           _dynamic_matmul(700)),
    "dynamic_conditional_true": (f"{CASES_DIR}/dynamic_conditional.mlir",
                                 "dynamic_conditional",
                                 _dynamic_conditional(True, 5)),
    "dynamic_conditional_false": (f"{CASES_DIR}/dynamic_conditional.mlir",
                                  "dynamic_conditional",
                                  _dynamic_conditional(False, 5)),
    "dynamic_tensor_ops_2_3": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_tensor_ops",
                               _dynamic_tensor_ops(2, 3)),
    "dynamic_tensor_ops_300_1": (f"{CASES_DIR}/dynamic_shapes.mlir", "dynamic_tensor_ops",
                                 _dynamic_tensor_ops(300, 1)),
}

_DYNAMIC_CASES = [name for name in CASES if name.startswith("dynamic_")]

# Cases the vmvx target cannot compile yet, with the reason (the compiler
# rejects them with a clear error; see the vmvx notes in README).
# Cases the cuda target refuses at compile time, with the refusal's text.
CUDA_UNSUPPORTED = {
    "portable_int128": "on integers wider than 64 bits is not supported by the cuda target",
    **{name: "has dynamic shapes; the cuda target compiles static shapes only so far"
       for name in _DYNAMIC_CASES},
}

VMVX_UNSUPPORTED = {
    "portable_int128": "i128 values are a compile error on vmvx",
    **{name: "dynamic shapes are a compile error on vmvx (tests/compiler/errors.mlir)"
       for name in _DYNAMIC_CASES},
}
