"""`import strata` as a user uses it: compile MLIR and ONNX programs, run
them on numpy arrays against numpy, introspection, and every kind of error.

Run by ctest (python_package) with PYTHONPATH=build/python; by hand:
  PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python
"""

import os
import sys

import numpy as np
import pytest

import strata

SOURCE_DIR = os.environ.get(
    "STRATA_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIMPLE_MUL = os.path.join(SOURCE_DIR, "examples", "simple_mul.mlir")

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def make_model(nodes, inputs, outputs, initializers=(), domains=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)] + [helper.make_opsetid(d, 1)
                                        for d in domains])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


RNG = np.random.default_rng(7)
W = RNG.standard_normal((8, 4)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def mlp_model():
    """MatMul + Add + Relu over a dynamic batch."""
    return make_model(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
         helper.make_node("Add", ["xw", "b"], ["xwb"], name="bias"),
         helper.make_node("Relu", ["xwb"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])


def mlp_reference(x):
    return np.maximum(x @ W + B, 0)


@pytest.fixture(scope="module")
def mlp_module():
    return strata.load(strata.compile(mlp_model().SerializeToString()))


def test_version_and_phases():
    assert strata.__version__.count(".") == 2
    assert strata.phase_names()[0] == "input" and "vm" in strata.phase_names()


def test_simple_mul_mlir(tmp_path):
    module_bytes = strata.compile(SIMPLE_MUL)
    assert isinstance(module_bytes, bytes) and len(module_bytes) > 0
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([5, 6, 7, 8], np.float32)
    # From bytes and from a file, on both local drivers.
    path = tmp_path / "simple_mul.smod"
    path.write_bytes(module_bytes)
    for module in (strata.load(module_bytes),
                   strata.load(str(path), device="local-sync"),
                   strata.load(path)):
        assert module.functions == ["simple_mul"]
        result = module.simple_mul(a, b)
        assert result.dtype == np.float32 and result.shape == (4,)
        np.testing.assert_array_equal(result, a * b)
        np.testing.assert_array_equal(module["module.simple_mul"](a, b), a * b)


def test_mlir_from_memory_and_module_name():
    text = open(SIMPLE_MUL, "rb").read()
    module = strata.load(strata.compile(text, module_name="walkthrough"))
    fn = module["walkthrough.simple_mul"]
    assert fn.name == "walkthrough.simple_mul"
    np.testing.assert_array_equal(
        fn(np.full(4, 2, np.float32), [1, 2, 3, 4]),  # a list takes the dtype
        np.array([2, 4, 6, 8], np.float32))


def test_onnx_dynamic_batch(mlp_module):
    fn = mlp_module.main
    assert mlp_module.functions == ["main"]
    assert fn.inputs == [("x", np.dtype(np.float32), (None, 8))]
    assert fn.outputs == [("y", np.dtype(np.float32), (None, 4))]
    for batch in (1, 5, 33):
        x = RNG.standard_normal((batch, 8)).astype(np.float32)
        y = fn(x)
        assert y.shape == (batch, 4) and y.dtype == np.float32
        np.testing.assert_allclose(y, mlp_reference(x), rtol=1e-5, atol=1e-5)


def test_onnx_model_proto_and_pins():
    model = mlp_model()
    pinned = strata.load(strata.compile(model, dims={"batch": 3}))
    assert pinned.main.inputs == [("x", np.dtype(np.float32), (3, 8))]
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(pinned.main(x), mlp_reference(x),
                               rtol=1e-5, atol=1e-5)
    shaped = strata.load(strata.compile(model, input_shapes={"x": (2, 8)},
                                        function_name="mlp"))
    assert shaped.functions == ["mlp"]
    assert shaped.mlp.outputs == [("y", np.dtype(np.float32), (2, 4))]
    dynamic = strata.load(strata.compile(model, input_shapes={"x": (None, 8)}))
    assert dynamic.main.inputs[0][2] == (None, 8)


def test_onnx_integer_and_bool_types():
    """uint8 stays uint8, int64 and bool as declared; several outputs."""
    model = make_model(
        [helper.make_node("Cast", ["a"], ["a64"], to=TensorProto.INT64),
         helper.make_node("Add", ["a64", "b"], ["sum"]),
         helper.make_node("Add", ["a", "a"], ["twice"]),
         helper.make_node("Greater", ["b", "zero"], ["positive"])],
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [6]),
         helper.make_tensor_value_info("b", TensorProto.INT64, [6])],
        [helper.make_tensor_value_info("sum", TensorProto.INT64, [6]),
         helper.make_tensor_value_info("twice", TensorProto.UINT8, [6]),
         helper.make_tensor_value_info("positive", TensorProto.BOOL, [6])],
        [numpy_helper.from_array(np.array(0, np.int64), "zero")])
    module = strata.load(strata.compile(model.SerializeToString()))
    fn = module.main
    assert [(n, d) for n, d, _ in fn.inputs] == [
        ("a", np.dtype(np.uint8)), ("b", np.dtype(np.int64))]
    assert [(n, d) for n, d, _ in fn.outputs] == [
        ("sum", np.dtype(np.int64)), ("twice", np.dtype(np.uint8)),
        ("positive", np.dtype(np.bool_))]
    a = np.array([0, 1, 127, 128, 200, 255], np.uint8)
    b = np.array([-5, 0, 1 << 40, 7, -(1 << 33), 2], np.int64)
    total, twice, positive = fn(a, b)
    assert (total.dtype, twice.dtype, positive.dtype) == (
        np.int64, np.uint8, np.bool_)
    np.testing.assert_array_equal(total, a.astype(np.int64) + b)
    np.testing.assert_array_equal(twice, (a.astype(np.int64) * 2 % 256))
    np.testing.assert_array_equal(positive, b > 0)


def test_non_contiguous_and_readonly_inputs(mlp_module):
    big = RNG.standard_normal((6, 16)).astype(np.float32)
    x = big[::2, ::2]  # strided view: copied to row-major
    assert not x.flags.c_contiguous
    np.testing.assert_allclose(mlp_module.main(x), mlp_reference(x),
                               rtol=1e-5, atol=1e-5)
    swapped = x.astype(x.dtype.newbyteorder())  # same values, other order
    np.testing.assert_allclose(mlp_module.main(swapped), mlp_reference(x),
                               rtol=1e-5, atol=1e-5)
    frozen = np.ascontiguousarray(x)
    frozen.setflags(write=False)
    np.testing.assert_allclose(mlp_module.main(frozen), mlp_reference(x),
                               rtol=1e-5, atol=1e-5)


def test_inputs_are_released(mlp_module):
    """The runtime lets go of every imported array once a call is done."""
    x = np.ones((64, 8), np.float32)
    before = sys.getrefcount(x)
    for _ in range(5):
        mlp_module.main(x)
    assert sys.getrefcount(x) == before
    np.testing.assert_array_equal(x, np.ones((64, 8), np.float32))


# Results: fresh ones are wrapped in place, the rest copied.
RESULTS_MLIR = b"""
func.func @scale(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @constant() -> tensor<4xf32> {
  %0 = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @same(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @twice(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0, %0 : tensor<4xf32>, tensor<4xf32>
}
"""


def aligned_array(values, dtype=np.float32):
    """A copy of `values` at a 64-byte boundary: imported without a copy."""
    values = np.asarray(values, dtype)
    raw = np.empty(values.nbytes + 64, np.uint8)
    offset = -raw.ctypes.data % 64
    array = raw[offset:offset + values.nbytes].view(dtype).reshape(
        values.shape)
    array[...] = values
    assert array.ctypes.data % 64 == 0
    return array


def test_outputs_are_not_copied():
    """A fresh result is the numpy array's memory: the array does not own
    it (its base keeps the result alive), stays valid once the module and
    its session are gone, and is writable."""
    import gc
    module = strata.load(strata.compile(RESULTS_MLIR))
    x = np.arange(16, dtype=np.float32)
    y = module.scale(x)
    assert not y.flags.owndata and y.base is not None
    assert y.flags.writeable and y.flags.c_contiguous
    single = strata.load(strata.compile(SIMPLE_MUL)).simple_mul(
        np.ones(4, np.float32), np.full(4, 3, np.float32))
    assert not single.flags.owndata
    del module
    gc.collect()
    # Other work may reuse freed memory; the results' is still theirs.
    other = strata.load(strata.compile(RESULTS_MLIR))
    np.testing.assert_array_equal(other.scale(np.full(16, 5, np.float32)),
                                  np.full(16, 10, np.float32))
    del other
    gc.collect()
    np.testing.assert_array_equal(y, x + x)
    np.testing.assert_array_equal(single, np.full(4, 3, np.float32))
    y[:] = -1
    np.testing.assert_array_equal(y, np.full(16, -1, np.float32))


def test_large_outputs_are_not_copied():
    """A large result is not copied either, and a later call writes a new
    result, not the one the caller holds."""
    module = strata.load(strata.compile(RESULTS_MLIR))
    first_input = RNG.standard_normal(1 << 20).astype(np.float32)  # 4 MiB
    first = module.scale(first_input)
    assert not first.flags.owndata and first.nbytes == 4 << 20
    second = module.scale(np.ones(1 << 20, np.float32))
    assert not second.flags.owndata
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, first_input + first_input)
    np.testing.assert_array_equal(second, np.full(1 << 20, 2, np.float32))


def test_constant_and_input_results_are_independent():
    """Results that are a module's constant, an input or one result
    returned twice give arrays of their own: writing one changes no input,
    no later call and no other result."""
    module = strata.load(strata.compile(RESULTS_MLIR))
    constant = module.constant()
    constant[:] = 0
    np.testing.assert_array_equal(module.constant(), [1, 2, 3, 4])
    for x in (aligned_array([1, 2, 3, 4]),           # imported in place
              np.arange(5, dtype=np.float32)[1:]):   # copied in
        expected = x.copy()
        same = module.same(x)
        np.testing.assert_array_equal(same, expected)
        same[:] = -7
        np.testing.assert_array_equal(x, expected)
        np.testing.assert_array_equal(module.same(x), expected)
        x[:] = 9
        np.testing.assert_array_equal(same, np.full(4, -7, np.float32))
    first, second = module.twice(np.ones(4, np.float32))
    assert not np.shares_memory(first, second)
    first[:] = 0
    np.testing.assert_array_equal(second, np.full(4, 2, np.float32))
    # ONNX: a graph output that is an initializer, another the input.
    model = make_model(
        [helper.make_node("Identity", ["w"], ["c"], name="constant"),
         helper.make_node("Identity", ["x"], ["y"], name="same")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 4])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [8, 4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 4])],
        [numpy_helper.from_array(W, "w")])
    onnx_module = strata.load(strata.compile(model))
    x = aligned_array(RNG.standard_normal((8, 4)))
    expected = x.copy()
    c, y = onnx_module.main(x)
    c[:] = 0
    y[:] = 0
    np.testing.assert_array_equal(x, expected)
    c, y = onnx_module.main(x)
    np.testing.assert_array_equal(c, W)
    np.testing.assert_array_equal(y, expected)


def test_wrong_dtype_names_the_argument(mlp_module):
    with pytest.raises(ValueError) as error:
        mlp_module.main(np.ones((2, 8), np.float64))
    message = str(error.value)
    assert "'x'" in message and "float32" in message and "float64" in message


def test_wrong_rank_and_dims_name_the_argument(mlp_module):
    with pytest.raises(ValueError) as error:
        mlp_module.main(np.ones((2, 8, 1), np.float32))
    message = str(error.value)
    assert "'x'" in message and "rank 2" in message and "rank 3" in message
    with pytest.raises(ValueError) as error:
        mlp_module.main(np.ones((2, 7), np.float32))
    message = str(error.value)
    assert "'x'" in message and "(None, 8)" in message and "(2, 7)" in message


def test_wrong_argument_count(mlp_module):
    with pytest.raises(TypeError, match=r"takes 1 argument .*'x'.*got 2"):
        mlp_module.main(np.ones((1, 8), np.float32), np.ones(1))
    with pytest.raises(TypeError, match="got 0"):
        mlp_module.main()


def test_unknown_function(mlp_module):
    with pytest.raises(AttributeError, match="main"):
        mlp_module.nope
    with pytest.raises(KeyError):
        mlp_module["module.nope"]


def test_runtime_error_is_runtime_error():
    """Dims the program ties together are checked at the call."""
    program = b"""
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
    module = strata.load(strata.compile(program))
    assert module.add.inputs[0] == ("", np.dtype(np.float32), (None,))
    np.testing.assert_array_equal(
        module.add(np.ones(3, np.float32), np.ones(3, np.float32)),
        np.full(3, 2, np.float32))
    with pytest.raises(RuntimeError):
        module.add(np.ones(3, np.float32), np.ones(4, np.float32))


def test_compile_error_carries_diagnostics(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                   "  %0 = arith.addf %a, %undefined : tensor<4xf32>\n"
                   "  return %0 : tensor<4xf32>\n}\n")
    with pytest.raises(strata.CompileError) as error:
        strata.compile(bad)
    diagnostics = error.value.diagnostics
    assert diagnostics and diagnostics[0].severity == "error"
    assert diagnostics[0].file.endswith("bad.mlir")
    assert diagnostics[0].line == 2 and diagnostics[0].column > 0
    assert "undefined" in diagnostics[0].message or "undeclared" in \
        diagnostics[0].message
    assert diagnostics[0].message in str(error.value)
    assert "bad.mlir:2:" in str(error.value)


def test_compile_error_from_onnx_names_the_node():
    # A node whose inputs do not fit: the importer's checks name it.
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="bad_matmul")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(np.ones((5, 4), np.float32),
                                             "w")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with pytest.raises(strata.CompileError) as error:
        strata.compile(model)
    errors = [d for d in error.value.diagnostics if d.severity == "error"]
    assert errors
    assert "bad_matmul" in str(error.value)
    # An op the importer refuses: the diagnostic's location names the node.
    model = make_model(
        [helper.make_node("Custom", ["x"], ["y"], name="the_custom",
                          domain="my.domain")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        domains=["my.domain"])
    with pytest.raises(strata.CompileError) as error:
        strata.compile(model)
    (diagnostic,) = [d for d in error.value.diagnostics
                     if d.severity == "error"]
    assert diagnostic.name == "the_custom" and "Custom" in diagnostic.message
    assert diagnostic.file == "<memory>"


def test_bad_options():
    with pytest.raises(strata.CompileError, match="unknown target 'tpu'"):
        strata.compile(SIMPLE_MUL, target="tpu")
    with pytest.raises(strata.CompileError, match="MLIR program"):
        strata.compile(SIMPLE_MUL, dims={"batch": 1})
    with pytest.raises(strata.CompileError, match="nope"):
        strata.compile(mlp_model(), input_shapes={"nope": (1, 8)})
    with pytest.raises(strata.CompileError, match="cannot open"):
        strata.compile("/nonexistent/model.onnx")
    with pytest.raises(ValueError):
        strata.compile(mlp_model(), dims={"batch": "many"})
    with pytest.raises(TypeError):
        strata.compile(42)
    with pytest.raises(RuntimeError):
        strata.load(b"not a module")
    with pytest.raises(RuntimeError):
        strata.load(strata.compile(SIMPLE_MUL), device="no-such-driver")


def test_float16_int8_bool_inputs():
    program = b"""
func.func @mix(%h: tensor<2x3xf16>, %i: tensor<2x3xi8>, %c: tensor<2x3xi1>)
    -> (tensor<2x3xf16>, tensor<2x3xi8>) {
  %0 = arith.addf %h, %h : tensor<2x3xf16>
  %1 = arith.select %c, %i, %i : tensor<2x3xi1>, tensor<2x3xi8>
  %2 = arith.muli %1, %i : tensor<2x3xi8>
  return %0, %2 : tensor<2x3xf16>, tensor<2x3xi8>
}
"""
    fn = strata.load(strata.compile(program)).mix
    assert [d for _, d, _ in fn.inputs] == [
        np.dtype(np.float16), np.dtype(np.int8), np.dtype(np.bool_)]
    h = np.array([[0.5, 1.5, -2], [3, 65504 / 4, 0]], np.float16)
    i = np.array([[1, -2, 3], [-12, 11, 127]], np.int8)
    c = np.array([[True, False, True], [False, True, True]])
    doubled, squared = fn(h, i, c)
    assert doubled.dtype == np.float16 and squared.dtype == np.int8
    np.testing.assert_array_equal(doubled, h + h)
    np.testing.assert_array_equal(squared, (i.astype(np.int32) ** 2).astype(
        np.int8))
    with pytest.raises(ValueError, match="argument 2: expected dtype bool, "
                                         "got uint8"):
        fn(h, i, c.astype(np.uint8))


def test_threads(mlp_module):
    """Compiles run in parallel (the GIL released); calls of one module
    from several threads take turns."""
    import threading
    model = mlp_model()
    compiled, errors = {}, []

    def compile_one(batch):
        compiled[batch] = strata.compile(model, dims={"batch": batch})

    def call_many(batch):
        for _ in range(20):
            x = RNG.standard_normal((batch, 8)).astype(np.float32)
            if not np.allclose(mlp_module.main(x), mlp_reference(x),
                               rtol=1e-5, atol=1e-5):
                errors.append(batch)

    threads = [threading.Thread(target=compile_one, args=(b,))
               for b in (1, 2, 3)]
    threads += [threading.Thread(target=call_many, args=(b,))
                for b in (1, 7, 64, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for batch, module_bytes in compiled.items():
        x = np.ones((batch, 8), np.float32)
        np.testing.assert_allclose(strata.load(module_bytes).main(x),
                                   mlp_reference(x), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not os.environ.get("STRATA_BIN_DIR"),
                    reason="STRATA_BIN_DIR (the build's bin/) not set")
def test_same_module_as_strata_compile(tmp_path):
    """strata-compile and strata.compile are one code path."""
    import subprocess
    model_path = tmp_path / "mlp.onnx"
    model_path.write_bytes(mlp_model().SerializeToString())
    for source, flags, kwargs in [
            (SIMPLE_MUL, [], {}),
            (str(model_path), ["--dim=batch=4", "--module-name=m"],
             {"dims": {"batch": 4}, "module_name": "m"})]:
        out = tmp_path / "out.smod"
        subprocess.run([os.path.join(os.environ["STRATA_BIN_DIR"],
                                     "strata-compile"), source, "-o", str(out)]
                       + flags, check=True)
        assert out.read_bytes() == strata.compile(source, **kwargs)
