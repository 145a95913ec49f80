"""Strata from Python: compile a model and run it on numpy arrays.

    import numpy as np, strata
    module = strata.load(strata.compile("model.onnx", dims={"batch": 8}))
    print(module.functions, module.main.inputs)
    y = module.main(np.ones((8, 3, 224, 224), np.float32))

compile() is strata::compiler::compile (the compiler's API, as
strata-compile uses it); load() runs module files through the runtime's C
API (runtime/include/strata/runtime.h).
"""

import collections
import os

from . import _strata

__all__ = ["compile", "load", "CompileError", "Diagnostic", "Module",
           "Function", "phase_names"]

__version__ = _strata.__version__
Function = _strata.Function
phase_names = _strata.phase_names

# One compiler diagnostic. severity: "error", "warning", "note" or "remark";
# file/line/column: where it points ("" and 0 when nowhere; an ONNX node's
# line and column are 0); name: the ONNX node it names, or "".
Diagnostic = collections.namedtuple(
    "Diagnostic", ["severity", "file", "line", "column", "message", "name"])


def _format_diagnostic(d):
    where = ""
    if d.file:
        where = f"{d.file}:{d.line}:{d.column}: " if d.line else f"{d.file}: "
    node = f"'{d.name}': " if d.name else ""
    return f"{where}{d.severity}: {node}{d.message}"


class CompileError(Exception):
    """A program that did not compile. `diagnostics` lists every Diagnostic
    reported; str() holds each one, a line each."""

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(_format_diagnostic(d)
                                   for d in self.diagnostics)
                         or "compile failed")


def _shape_pin(name, shape):
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"input_shapes['{name}'] must be a tuple of sizes "
                        f"(None for a dynamic one), not {shape!r}")
    dims = []
    for dim in shape:
        if dim is None:
            dims.append("?")
        elif isinstance(dim, int) and not isinstance(dim, bool):
            dims.append(str(dim))
        else:
            raise TypeError(f"input_shapes['{name}']: a size is an int or "
                            f"None, not {dim!r}")
    return f"{name}=" + "x".join(dims)


def _value_pin(name, values):
    import numpy
    flat = numpy.asarray(values).reshape(-1)
    return f"{name}=" + ",".join(str(v.item()) for v in flat)


def compile(source, target="cpu", input_shapes=None, dims=None,
            input_values=None, module_name="module", function_name="main",
            cpu="host", cuda_arch="sm_80", format=None,
            external_data_root=None, max_tensor_bytes=None,
            max_tensor_rank=None, max_nodes=None, timing=False,
            progress=False):
    """Compiles a program into module file bytes.

    source: a path (str or os.PathLike) to an .mlir or .onnx file; bytes of
      an ONNX model or of MLIR text; or an onnx.ModelProto.
    target: "cpu", "vmvx", "cuda" or a comma-separated list.
    input_shapes: ONNX, {input name: shape tuple}, None for a dimension
      left dynamic: {"pixels": (1, 3, 224, 224), "audio": (None, 512)}.
    dims: ONNX, {symbolic dimension name: size}: {"batch": 1}.
    input_values: ONNX, {input name: elements} to make an input a constant.
    module_name: functions are then called module_name.function.
    function_name: the function an ONNX model becomes.
    format: None (detect), "mlir" or "onnx".

    Raises CompileError with the diagnostics when the program does not
    compile, ValueError for malformed pins.
    """
    path, data = None, None
    if hasattr(source, "SerializeToString"):
        data = source.SerializeToString()
        format = format or "onnx"
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
    else:
        raise TypeError("source must be a path, bytes or an onnx.ModelProto, "
                        f"not {type(source).__name__}")
    dim_pins = [f"{name}={size}" for name, size in (dims or {}).items()]
    shape_pins = [_shape_pin(name, shape)
                  for name, shape in (input_shapes or {}).items()]
    value_pins = [_value_pin(name, values)
                  for name, values in (input_values or {}).items()]
    ok, module, diagnostics = _strata._compile(
        path, data, format or "", target, cpu, cuda_arch, module_name,
        function_name, external_data_root or "", dim_pins, shape_pins,
        value_pins, max_tensor_bytes, max_tensor_rank, max_nodes, timing,
        progress)
    if not ok:
        raise CompileError(Diagnostic(*d) for d in diagnostics)
    return module


class Module:
    """A loaded module: its functions as attributes (module.main) or items
    (module["main"], module["module.main"]); `functions` lists their
    names."""

    def __init__(self, session, names):
        self._session = session
        self._functions = {}
        for full_name in names:
            function = Function(session, full_name)
            self._functions[full_name] = function
            self._functions.setdefault(full_name.split(".", 1)[-1], function)
        self._names = [n.split(".", 1)[-1] for n in names]

    @property
    def functions(self):
        """The functions' names, in the order the module declares them."""
        return list(self._names)

    def __getitem__(self, name):
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"no function '{name}' (functions: "
                           f"{', '.join(self._names)})") from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._functions[name]
        except KeyError:
            raise AttributeError(f"module has no function '{name}' "
                                 f"(functions: {', '.join(self._names)})"
                                 ) from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._names))

    def __repr__(self):
        return f"<strata.Module functions={self._names}>"


def load(module, device="local-task"):
    """Loads a module file (its bytes, or a path) on a device ("local-task",
    "local-sync", or a URI such as "local-task://0?workers=4") and returns
    a Module."""
    session = _strata.Session(device)
    if isinstance(module, (bytes, bytearray, memoryview)):
        session.append_module_from_bytes(bytes(module))
    elif isinstance(module, (str, os.PathLike)):
        session.append_module_from_file(os.fspath(module))
    else:
        raise TypeError("module must be bytes or a path, not "
                        f"{type(module).__name__}")
    return Module(session, session.function_names())
