#!/usr/bin/python3
"""The installed runtime as an embedder uses it. Installs this build's
`runtime` component into a temporary prefix (and its `compiler` component
into another, whose strata-compile then compiles the modules), checks what
is there, builds examples/embed out of tree against it (find_package(Strata)
in a C-only project, and with pkg-config when it is installed) and a C++
program against the package too, compiles modules (examples/simple_mul.mlir,
embed_functions.mlir, and an ONNX model when the onnx package is there) and
checks what embed prints: the function list, each input's reflected name
and type, and the outputs against numpy on the inputs embed documents
(input k, element i: k + 0.01 i for floats, (i + k) % 3 for integers), and
its errors."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, file=sys.stderr)
    return condition


def run(command, **kwargs):
    """Runs `command`; exits the test on failure (later steps need it)."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        print("$", " ".join(command), file=sys.stderr)
        print(result.stdout, result.stderr, file=sys.stderr)
        sys.exit(f"embed_test: failed with exit code {result.returncode}")
    return result


# "  input 0 \"x\": ?x3xf32 as 2x3xf32 = 0 0.01 ..." and
# "  output 0 \"product\": 2x3xf32 = 0 0.0101 ...".
ARGUMENT_LINE = re.compile(
    r'^  (input|output) (\d+)(?: "([^"]*)")?: (\S+)(?: as (\S+))? =(.*)$')


def parse_type(text):
    """'2x3xf32' -> ([2, 3], 'f32'); 'f32' -> ([], 'f32')."""
    parts = text.split("x")
    return [int(p) if p != "?" else -1 for p in parts[:-1]], parts[-1]


def parse_embed(stdout):
    """{'functions': [names], 'calls': {name: {'input': [...], 'output':
    [...]}}}, each argument a dict of index, name, declared, actual, values."""
    lines = stdout.splitlines()
    header = re.match(r"^module \S+ on \S+: (\d+) functions?$", lines[0])
    if not check(header, f"first line of embed's output: {lines[0]!r}"):
        return None
    count = int(header.group(1))
    functions = [line.strip() for line in lines[1:1 + count]]
    calls, current = {}, None
    for line in lines[1 + count:]:
        function = re.match(r"^function (\S+): (\d+) inputs?, (\d+) outputs?$", line)
        if function:
            current = calls.setdefault(function.group(1), {"input": [], "output": []})
            continue
        argument = ARGUMENT_LINE.match(line)
        if not check(argument and current is not None, f"unexpected line {line!r}"):
            continue
        kind, index, name, declared, actual, values = argument.groups()
        values = [v for v in values.split() if v != "..."]
        current[kind].append({"index": int(index), "name": name or "",
                              "declared": declared, "actual": actual or declared,
                              "values": values})
    return {"functions": functions, "calls": calls}


NUMPY_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def bfloat16(values):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def made_input(k, shape, element_type):
    """Input k as embed makes it (f16 and bf16 through float32)."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n)
    if element_type == "f16":
        values = (k + 0.01 * i).astype(np.float32).astype(np.float16)
    elif element_type == "bf16":
        values = bfloat16((k + 0.01 * i).astype(np.float32))
    elif element_type.startswith("f"):
        values = (k + 0.01 * i).astype(NUMPY_TYPES[element_type])
    elif element_type == "i1":
        values = ((i + k) % 2).astype(np.bool_)
    else:
        values = ((i + k) % 3).astype(NUMPY_TYPES[element_type])
    return values.reshape(shape)


def check_argument(argument, what, name, declared, actual=None):
    check(argument["name"] == name, f"{what}: name {argument['name']!r}, expected {name!r}")
    check(argument["declared"] == declared,
          f"{what}: declared {argument['declared']}, expected {declared}")
    if actual:
        check(argument["actual"] == actual,
              f"{what}: made as {argument['actual']}, expected {actual}")


def check_values(argument, what, expected):
    """The printed values against the first len(values) of `expected`."""
    dims, element_type = parse_type(argument["actual"])
    check(list(expected.shape) == dims, f"{what}: shape {dims}, expected {list(expected.shape)}")
    flat = expected.reshape(-1)
    printed = argument["values"]
    check(len(printed) == min(len(flat), PRINT_COUNT),
          f"{what}: {len(printed)} values printed for {len(flat)} elements")
    if not printed:
        return
    got = np.array([float(v) for v in printed])
    want = flat[:len(printed)].astype(np.float64)
    check(np.allclose(got, want, rtol=1e-6, atol=0),
          f"{what}: got {got.tolist()}, expected {want.tolist()}")


PRINT_COUNT = 100


def check_simple_mul(result, what):
    check(result["functions"] == ["module.simple_mul"],
          f"{what}: functions {result['functions']}")
    call = result["calls"].get("module.simple_mul")
    if not check(call and len(call["input"]) == 2 and len(call["output"]) == 1,
                 f"{what}: simple_mul's arguments: {call}"):
        return
    a, b = made_input(0, [4], "f32"), made_input(1, [4], "f32")
    for k, argument in enumerate(call["input"]):
        check_argument(argument, f"{what} input {k}", "", "4xf32")
        check_values(argument, f"{what} input {k}", [a, b][k])
    check_argument(call["output"][0], f"{what} output", "", "4xf32")
    check_values(call["output"][0], f"{what} output", a * b)


def check_functions(result, dim):
    what = f"embed_functions --dim={dim}"
    check(result["functions"] == ["module.dynamic_mul", "module.add_ints", "module.halves"],
          f"{what}: functions {result['functions']}")
    call = result["calls"].get("module.dynamic_mul")
    if check(call and len(call["input"]) == 2 and len(call["output"]) == 1,
             f"{what}: dynamic_mul's arguments: {call}"):
        x, y = made_input(0, [dim, 3], "f32"), made_input(1, [dim, 3], "f32")
        for k, name in enumerate(["x", "y"]):
            check_argument(call["input"][k], f"{what} input {k}", name, "?x3xf32",
                           f"{dim}x3xf32")
            check_values(call["input"][k], f"{what} input {k}", [x, y][k])
        check_argument(call["output"][0], f"{what} output", "product", f"{dim}x3xf32")
        check_values(call["output"][0], f"{what} output", x * y)
    call = result["calls"].get("module.add_ints")
    if check(call and len(call["input"]) == 2 and len(call["output"]) == 1,
             f"{what}: add_ints's arguments: {call}"):
        a, b = made_input(0, [5], "i32"), made_input(1, [5], "i32")
        check_values(call["input"][1], f"{what} add_ints input 1", b)
        check_argument(call["output"][0], f"{what} add_ints output", "", "5xi32")
        check_values(call["output"][0], f"{what} add_ints output", a + b)
    call = result["calls"].get("module.halves")
    if check(call and len(call["input"]) == 3 and len(call["output"]) == 3,
             f"{what}: halves's arguments: {call}"):
        a, b, m = (made_input(0, [4], "f16"), made_input(1, [4], "bf16"),
                   made_input(2, [4], "i1"))
        for k, (declared, value) in enumerate([("4xf16", a), ("4xbf16", b), ("4xi1", m)]):
            check_argument(call["input"][k], f"{what} halves input {k}", "", declared)
            check_values(call["input"][k], f"{what} halves input {k}", value)
        for k, (declared, value) in enumerate([("4xf16", np.where(m, a + a, a)),
                                               ("4xbf16", b + b), ("4xi1", ~m)]):
            check_argument(call["output"][k], f"{what} halves output {k}", "", declared)
            check_values(call["output"][k], f"{what} halves output {k}", value)


def make_onnx_model(path):
    """y = Gather(x, indices, axis=1) * 2 over a dynamic batch: an int64
    input, names from the graph, a dim embed makes with --dim."""
    import onnx
    from onnx import TensorProto, helper
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    graph = helper.make_graph(
        [helper.make_node("Gather", ["x", "indices"], ["g"], axis=1),
         helper.make_node("Mul", ["g", "two"], ["y"])],
        "gather_scale",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])], [two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def check_onnx(result, dim):
    what = "gather_scale.onnx"
    check(result["functions"] == ["module.main"], f"{what}: functions {result['functions']}")
    call = result["calls"].get("module.main")
    if not check(call and len(call["input"]) == 2 and len(call["output"]) == 1,
                 f"{what}: main's arguments: {call}"):
        return
    x, indices = made_input(0, [dim, 4], "f32"), made_input(1, [3], "i64")
    check_argument(call["input"][0], f"{what} input 0", "x", "?x4xf32", f"{dim}x4xf32")
    check_argument(call["input"][1], f"{what} input 1", "indices", "3xi64")
    check_values(call["input"][1], f"{what} input 1", indices)
    check_argument(call["output"][0], f"{what} output", "y", f"{dim}x3xf32")
    check_values(call["output"][0], f"{what} output", x[:, indices] * np.float32(2))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--compiler-bin", help="where strata-compile is, when the "
                        "build has no compiler to install")
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--generator", required=True)
    parser.add_argument("--make-program", default="")
    parser.add_argument("--c-compiler", required=True)
    parser.add_argument("--cxx-compiler", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="strata-embed-") as tmp:
        if args.compiler_bin:
            compile_tool = os.path.join(args.compiler_bin, "strata-compile")
        else:
            # The compiler component alone: the tools, no runtime files; its
            # strata-compile compiles the modules below.
            tools = os.path.join(tmp, "tools")
            run([args.cmake, "--install", args.build_dir, "--prefix", tools,
                 "--component", "compiler"])
            installed = sorted(os.listdir(tools))
            check(installed == ["bin"], f"the compiler component installed {installed}")
            for tool in ["strata-compile", "strata-opt", "strata-run", "strata-bench",
                         "strata-dump", "strata-minimal-run"]:
                check(os.access(os.path.join(tools, "bin", tool), os.X_OK),
                      f"{tool} not installed")
            compile_tool = os.path.join(tools, "bin", "strata-compile")
            version = run([compile_tool, "--version"]).stdout
            check(version.startswith("Strata compiler "), f"installed --version: {version!r}")

        prefix = os.path.join(tmp, "prefix")
        run([args.cmake, "--install", args.build_dir, "--prefix", prefix,
             "--component", "runtime"])

        # What the runtime component holds, and nothing of the compiler's.
        configs = glob.glob(os.path.join(prefix, "lib*", "cmake", "Strata"))
        libdir = os.path.dirname(os.path.dirname(configs[0])) if configs else None
        if not check(libdir, "no lib*/cmake/Strata under the prefix"):
            sys.exit(1)
        for path in ["include/strata/runtime.h"]:
            check(os.path.isfile(os.path.join(prefix, path)), f"{path} not installed")
        for name in ["cmake/Strata/StrataConfig.cmake", "cmake/Strata/StrataConfigVersion.cmake",
                     "cmake/Strata/StrataRuntimeTargets.cmake", "pkgconfig/strata-runtime.pc",
                     "libstrata_base.a", "libstrata_vm.a", "libstrata_hal.a",
                     "libstrata_hal_local_sync.a", "libstrata_hal_local_task.a",
                     "libstrata_hal_drivers.a", "libstrata_modules_hal.a",
                     "libstrata_session.a"]:
            check(os.path.isfile(os.path.join(libdir, name)), f"{name} not installed in {libdir}")
        check(not os.path.exists(os.path.join(prefix, "bin")),
              "the runtime component installed bin/ (the tools are the compiler component's)")
        check(not glob.glob(os.path.join(libdir, "libStrata*")),
              "the runtime component installed compiler libraries")

        # examples/embed, a C-only CMake project, against the package alone.
        embed_build = os.path.join(tmp, "embed-build")
        configure = [args.cmake, "-S", os.path.join(args.source_dir, "examples", "embed"),
                     "-B", embed_build, "-G", args.generator,
                     f"-DCMAKE_C_COMPILER={args.c_compiler}",
                     f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"]
        if args.make_program:
            configure.append(f"-DCMAKE_MAKE_PROGRAM={args.make_program}")
        run(configure)
        run([args.cmake, "--build", embed_build])
        embed = os.path.join(embed_build, "embed")

        modules = os.path.join(tmp, "modules")
        os.mkdir(modules)
        simple_mul = os.path.join(modules, "simple_mul.smod")
        functions = os.path.join(modules, "embed_functions.smod")
        run([compile_tool, os.path.join(args.source_dir, "examples", "simple_mul.mlir"),
             "-o", simple_mul])
        run([compile_tool, os.path.join(os.path.dirname(__file__), "embed_functions.mlir"),
             "-o", functions])

        count = f"--count={PRINT_COUNT}"
        simple_mul_output = run([embed, count, simple_mul]).stdout
        result = parse_embed(simple_mul_output)
        if result:
            check_simple_mul(result, "simple_mul")
        result = parse_embed(run([embed, count, "--device=local-task", simple_mul]).stdout)
        if result:
            check_simple_mul(result, "simple_mul on local-task")
        for dim in [1, 3]:
            result = parse_embed(run([embed, count, f"--dim={dim}", functions]).stdout)
            if result:
                check_functions(result, dim)
        # --function calls one function (the list is still printed).
        result = parse_embed(run([embed, count, "--function=add_ints", functions]).stdout)
        if result:
            check(list(result["calls"]) == ["module.add_ints"],
                  f"--function=add_ints called {list(result['calls'])}")
        # The default prints 8 values and marks the rest.
        output = run([embed, "--dim=4", "--function=dynamic_mul", functions]).stdout
        check(re.search(r'^  output 0 "product": 4x3xf32 =( \S+){8} \.\.\.$', output, re.M),
              f"default --count: {output}")

        try:
            import onnx  # noqa: F401
            have_onnx = True
        except ImportError:
            have_onnx = False
            print("embed_test: no onnx package; the ONNX model is skipped")
        if have_onnx:
            model = os.path.join(modules, "gather_scale.onnx")
            make_onnx_model(model)
            module = os.path.join(modules, "gather_scale.smod")
            run([compile_tool, model, "-o", module])
            result = parse_embed(run([embed, count, "--dim=2", module]).stdout)
            if result:
                check_onnx(result, 2)

        # Failures: a clear message naming what failed, and a non-zero exit.
        for command, code, needle in [
                ([embed, "--function=nope", simple_mul], 1, "nope"),
                ([embed, os.path.join(tmp, "missing.smod")], 1, "missing.smod"),
                ([embed, "--device=warp-drive", simple_mul], 1, "warp-drive"),
                ([embed, "--dim=many", simple_mul], 2, "--dim="),
                ([embed], 2, "usage")]:
            failed = subprocess.run(command, capture_output=True, text=True)
            check(failed.returncode == code and needle in failed.stderr,
                  f"{command[1:]}: exit {failed.returncode} (expected {code}), "
                  f"stderr {failed.stderr!r} (expected {needle!r})")

        # pkg-config: the .pc file alone compiles and links embed.c.
        if shutil.which("pkg-config"):
            env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
            flags = run(["pkg-config", "--cflags", "--libs", "strata-runtime"],
                        env=env).stdout.split()
            embed_pc = os.path.join(tmp, "embed-pc")
            run([args.c_compiler, "-std=c11", "-o", embed_pc,
                 os.path.join(args.source_dir, "examples", "embed", "embed.c")] + flags)
            check(run([embed_pc, count, simple_mul]).stdout == simple_mul_output,
                  "embed built with pkg-config prints something else")
        else:
            print("embed_test: no pkg-config; that route is skipped")

        # A C++ project gets Strata::runtime the same way.
        cxx_source = os.path.join(tmp, "cxx")
        os.mkdir(cxx_source)
        with open(os.path.join(cxx_source, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\n"
                    "project(StrataCxxConsumer LANGUAGES CXX)\n"
                    "find_package(Strata 0.1 REQUIRED)\n"
                    "add_executable(cxx_consumer main.cpp)\n"
                    "target_link_libraries(cxx_consumer PRIVATE Strata::runtime)\n")
        with open(os.path.join(cxx_source, "main.cpp"), "w") as f:
            f.write('#include <cstdio>\n#include "strata/runtime.h"\n'
                    "int main(int argc, char **argv) {\n"
                    "  strata_instance_t *instance = nullptr;\n"
                    "  strata_device_t *device = nullptr;\n"
                    "  strata_session_t *session = nullptr;\n"
                    "  if (strata_instance_create(&instance) ||\n"
                    '      strata_device_create(instance, "local-sync", &device) ||\n'
                    "      strata_session_create(instance, device, &session) ||\n"
                    "      strata_session_append_module_from_file(session, argv[1]))\n"
                    "    return 1;\n"
                    '  std::printf("%zu\\n", strata_session_function_count(session));\n'
                    "  strata_session_release(session);\n"
                    "  strata_device_release(device);\n"
                    "  strata_instance_release(instance);\n"
                    "}\n")
        cxx_build = os.path.join(tmp, "cxx-build")
        configure = [args.cmake, "-S", cxx_source, "-B", cxx_build, "-G", args.generator,
                     f"-DCMAKE_CXX_COMPILER={args.cxx_compiler}",
                     f"-DCMAKE_PREFIX_PATH={prefix}"]
        if args.make_program:
            configure.append(f"-DCMAKE_MAKE_PROGRAM={args.make_program}")
        run(configure)
        run([args.cmake, "--build", cxx_build])
        output = run([os.path.join(cxx_build, "cxx_consumer"), functions]).stdout
        check(output.strip() == "3", f"C++ consumer listed {output!r}, expected 3 functions")

    if failures:
        print(f"embed_test: {len(failures)} failures", file=sys.stderr)
        return 1
    print("embed_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
