#!/usr/bin/python3
"""Runs strata-compile, strata-run, strata-bench and strata-dump the way a
user does and checks their output and their errors."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def dispatch_spans(result, trace):
    """The dispatch spans of the Chrome trace a successful run wrote, or None."""
    if result.returncode != 0 or not os.path.exists(trace):
        return None
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "dispatch"]


def make_named_mlp(path, head="/head/Gemm"):
    """An ONNX MLP with named nodes: /fc1/Gemm + /act1/Relu and /fc2/Gemm +
    /act2/Relu (same shapes: one shared executable), `head` (/head/Gemm) +
    an unnamed Sigmoid."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in [("w1", [256, 256]), ("b1", [256]), ("w2", [256, 256]),
                                   ("b2", [256]), ("w3", [256, 4]), ("b3", [4])]]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="/fc1/Gemm"),
        helper.make_node("Relu", ["h1"], ["a1"], name="/act1/Relu"),
        helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"], name="/fc2/Gemm"),
        helper.make_node("Relu", ["h2"], ["a2"], name="/act2/Relu"),
        helper.make_node("Gemm", ["a2", "w3", "b3"], ["h3"], name=head),
        helper.make_node("Sigmoid", ["h3"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "named_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 4])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


# A convolution between its layout changes: several dispatches, none small
# enough to be merged with another, for the one-span-per-dispatch checks.
CONV_PROGRAM = """
func.func @conv(%x: tensor<1x64x30x30xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x28x28xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x30x30xf32>, tensor<64x64x3x3xf32>) outs(%f : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  return %r : tensor<1x64x28x28xf32>
}
"""
CONV_INPUTS = ["--input=1x64x30x30xf32=0.5", "--input=64x64x3x3xf32=0.25"]


def check_dispatch_names(tmp, compile_, run_, bench, dump):
    """Dispatches are named after the model ops they run, with the ONNX node
    of their root, in strata-dump, in traces and in strata-bench
    --per-dispatch; two call sites of one shared executable stay apart."""
    names = ["matmul_relu:/fc1/Gemm", "matmul_relu:/fc2/Gemm", "matmul_sigmoid:/head/Gemm"]
    model, module = os.path.join(tmp, "named_mlp.onnx"), os.path.join(tmp, "named_mlp.smod")
    make_named_mlp(model)
    r = run([compile_, model, "-o", module])
    expect(r.returncode == 0, "strata-compile the named MLP", r)
    r = run([dump, "--no-bytecode", module])
    sites = [line.split("] ", 1)[1] for line in r.stdout.splitlines()
             if line.startswith("  [") and " -> main_dispatch_" in line]
    expect(r.returncode == 0 and "dispatch sites: 3" in r.stdout and
           [site.split(" -> ")[0] for site in sites] == names and
           sites[0].split(" -> ")[1] == sites[1].split(" -> ")[1] ==
           "main_dispatch_0, 8388608 FLOP",
           "strata-dump lists each call site with its name, executable and FLOPs", r)

    call = [f"--module={module}", "--function=main", "--input=64x256xf32=0.5"]
    for device in ["local-sync", "local-task?workers=2"]:
        trace = os.path.join(tmp, "named_trace.json")
        r = run([run_, f"--device={device}", f"--trace={trace}"] + call)
        spans = dispatch_spans(r, trace) or []
        expect([e["name"] for e in spans] == names and
               [e["args"]["site"] for e in spans] == [1, 2, 3],
               f"strata-run --trace on {device} names spans after the nodes: "
               f"{[e['name'] for e in spans]}", r)
    trace = os.path.join(tmp, "named_bench_trace.json")
    r = run([bench, "--iterations=2", f"--trace={trace}"] + call)
    spans = dispatch_spans(r, trace) or []
    expect([e["name"] for e in spans] == names, "strata-bench --trace names spans after the nodes", r)

    r = run([bench, "--iterations=20", "--per-dispatch"] + call)
    lines = r.stdout.splitlines()
    header = next((i for i, line in enumerate(lines) if line.split()[-2:] == ["GFLOP/s", "dispatch"]), None)
    rows = [line.split() for line in lines[header + 1:header + 4]] if header is not None else []
    ok = r.returncode == 0 and len(rows) == 3 and lines[header + 4].strip().startswith("dispatches")
    ok = ok and sorted(row[-1] for row in rows) == names
    # site, calls per call, mean us, total ms, share, GFLOP/s, name.
    ok = ok and all(len(row) == 7 and row[1] == "1" and row[4].endswith("%") and
                    float(row[5]) > 0 for row in rows)
    expect(ok, "strata-bench --per-dispatch prints a row per call site with GFLOP/s", r)
    r = run([bench, "--iterations=20", "--per-dispatch", "--json"] + call)
    ok = r.returncode == 0
    if ok:
        stats = json.loads(r.stdout)
        rows = stats["dispatches"]
        ok = (sorted(row["name"] for row in rows) == names and
              sorted(row["site"] for row in rows) == [1, 2, 3] and
              all(row["calls_per_iteration"] == 1 and row["gflops"] > 0 and 0 < row["share"] < 1
                  for row in rows) and stats["profiled_call_ms"] > 0)
    expect(ok, "strata-bench --per-dispatch --json", r)
    r = run([bench, "--help"])
    expect(r.returncode == 0 and "--per-dispatch" in r.stdout, "strata-bench --help lists --per-dispatch", r)


NAMED_SUB_PROGRAM = """
func.func @sub(%a: tensor<2xf32> {strata.name = "minuend"}, %b: tensor<2xf32> {strata.name = "subtrahend"}) -> (tensor<2xf32> {strata.name = "difference"}) {
  %0 = arith.subf %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def check_input_names(tmp, compile_, run_, dump):
    """Arguments keep their source names (an ONNX graph's input and output
    names, an MLIR argument's strata.name): strata-dump shows them and the
    tools take inputs by name, in any order."""
    model, module = os.path.join(tmp, "named_mlp.onnx"), os.path.join(tmp, "names_mlp.smod")
    make_named_mlp(model)
    r = run([compile_, model, "-o", module])
    r = run([dump, "--no-bytecode", module])
    expect(r.returncode == 0 and "(x: 64x256xf32) -> (y: 64x4xf32)" in r.stdout,
           "strata-dump shows an ONNX model's input and output names", r)
    source, module = os.path.join(tmp, "sub.mlir"), os.path.join(tmp, "sub.smod")
    with open(source, "w") as f:
        f.write(NAMED_SUB_PROGRAM)
    r = run([compile_, source, "-o", module])
    expect(r.returncode == 0, "strata-compile keeps strata.name", r)
    call = [run_, f"--module={module}", "--function=sub"]
    r = run(call + ["--input=subtrahend=2xf32=1 2", "--input=minuend=2xf32=10 20"])
    expect(r.returncode == 0 and "2xf32=9 18" in r.stdout, "inputs by name, in any order", r)
    r = run(call + ["--input=2xf32=10 20", "--input=2xf32=1 2"])
    expect(r.returncode == 0 and "2xf32=9 18" in r.stdout, "inputs by position", r)
    expect_error(run(call + ["--input=minuend=2xf32=1 2", "--input=2xf32=3 4"]),
                 "inputs must all be named or all be positional", "named and positional mixed")
    expect_error(run(call + ["--input=minuend=2xf32=1 2"]),
                 "input 'subtrahend' is not given", "a named input missing")
    expect_error(run(call + ["--input=minuend=2xf32=1 2", "--input=minuend=2xf32=1 2"]),
                 "input 'minuend' is given twice", "a named input twice")


def check_dynamic_shapes(tmp, source_dir, compile_, run_, dump):
    """A module over dynamic shapes runs at the caller's sizes; tensors whose
    dims contradict the program are refused by name, never run."""
    module = os.path.join(tmp, "dynamic.smod")
    r = run([compile_, os.path.join(source_dir, "tests/e2e/cases/dynamic_shapes.mlir"),
             "-o", module])
    expect(r.returncode == 0, "strata-compile builds the dynamic-shape program", r)
    r = run([dump, "--no-bytecode", module])
    expect(r.returncode == 0 and "?x8xf32" in r.stdout, "strata-dump shows dynamic dims", r)
    call = [run_, f"--module={module}", "--function=dynamic_2d"]
    for device in ["local-sync", "local-task?workers=2"]:
        r = run(call + ["--input=2x3xf32=1 2 3 4 5 6", "--input=2x3xf32=1", f"--device={device}"])
        expect(r.returncode == 0 and "2x3xf32=2 4 6 8 10 12" in r.stdout
               and "3x2xf32=2 8 4 10 6 12" in r.stdout and "2xf32=18 24" in r.stdout,
               f"a dynamic module runs at the caller's size ({device})", r)
    expect_error(run(call + ["--input=2x3xf32=1", "--input=3x3xf32=1"]),
                 "argument 1 of @dynamic_2d: expected 2x3xf32, got 3x3xf32",
                 "dims the program ties are checked against the first argument's")
    expect_error(run(call + ["--input=3x3xf32=1", "--input=3x3xf32=1"]),
                 "do not multiply to dim 0 of its tensor<?xf32> operand",
                 "a reshape whose computed sizes do not fit fails the call")
    expect_error(run(call + ["--input=6xf32=1", "--input=6xf32=1"]),
                 "expected ?x?xf32, got 6xf32", "a dynamic argument of the wrong rank")
    mlp = [run_, f"--module={module}", "--function=dynamic_mlp"]
    expect_error(run(mlp + ["--input=2x7xf32=1", "--input=8x16xf32=1", "--input=16xf32=1"]),
                 "expected ?x8xf32, got 2x7xf32", "a static dim of a dynamic argument")


def run(args, stdin=None):
    return subprocess.run(args, capture_output=True, text=stdin is None or isinstance(stdin, str),
                          input=stdin, timeout=120)


def expect(condition, what, result=None):
    if condition:
        print(f"ok   {what}")
        return
    detail = ""
    if result is not None:
        detail = f"\n  exit {result.returncode}\n  stdout: {result.stdout!r}\n  stderr: {result.stderr!r}"
    print(f"FAIL {what}{detail}")
    failures.append(what)


def check_json_text(tmp, source_dir, compile_, bench):
    """strata-bench --json is valid JSON whatever the names in it hold: a
    function name and an ONNX node name (a dispatch's name) with a quote, a
    backslash and a tab come back from json.loads as they were."""
    name = 'mul"q\\b\tt'
    program = os.path.join(tmp, "odd_name.mlir")
    with open(os.path.join(source_dir, "examples/simple_mul.mlir")) as f:
        # MLIR spells the tab of a quoted symbol as \09.
        text = f.read().replace("@simple_mul", '@"mul\\"q\\\\b\\09t"')
    with open(program, "w") as f:
        f.write(text)
    module = os.path.join(tmp, "odd_name.smod")
    r = run([compile_, program, "-o", module])
    expect(r.returncode == 0, "strata-compile a function named with a quote and a backslash", r)
    r = run([bench, f"--module={module}", f"--function={name}", "--iterations=3", "--json",
             "--per-dispatch", "--input=4xf32=1", "--input=4xf32=2"])
    ok = r.returncode == 0
    if ok:
        try:
            stats = json.loads(r.stdout)
            ok = (stats["function"] == "module." + name and len(stats["dispatches"]) == 1 and
                  list(stats) == ["function", "device", "iterations", "min_ms", "median_ms",
                                  "p90_ms", "mean_ms", "max_ms", "allocations_per_call",
                                  "heap_allocations_per_call", "profiled_call_ms",
                                  "dispatches"])
        except ValueError:
            ok = False
    expect(ok, "strata-bench --json escapes a function name", r)

    head = '/head"q\\b\t/Gemm'
    model, module = os.path.join(tmp, "odd_mlp.onnx"), os.path.join(tmp, "odd_mlp.smod")
    make_named_mlp(model, head=head)
    r = run([compile_, model, "-o", module])
    expect(r.returncode == 0, "strata-compile an MLP with a quote and a backslash in a node name", r)
    r = run([bench, f"--module={module}", "--function=main", "--input=64x256xf32=0.5",
             "--iterations=3", "--json", "--per-dispatch"])
    ok = r.returncode == 0
    if ok:
        try:
            rows = json.loads(r.stdout)["dispatches"]
            ok = ("matmul_sigmoid:" + head in [row["name"] for row in rows] and
                  all(list(row) == ["site", "name", "calls_per_iteration", "mean_us", "total_ms",
                                    "share", "gflops"] for row in rows))
        except ValueError:
            ok = False
    expect(ok, "strata-bench --per-dispatch --json escapes a node name", r)


def expect_error(result, needle, what):
    ok = (0 < result.returncode < 128 and needle in result.stderr
          and result.stderr.count("\n") <= 3)
    expect(ok, what, result)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compiler-bin", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    compile_ = os.path.join(args.compiler_bin, "strata-compile")
    run_ = os.path.join(args.bin, "strata-run")
    bench = os.path.join(args.bin, "strata-bench")
    dump = os.path.join(args.bin, "strata-dump")
    # Not built in sanitizer builds (it links statically).
    minimal = os.path.join(args.bin, "strata-minimal-run")
    minimal_tools = [minimal] if os.path.exists(minimal) else []

    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, "simple_mul.smod")
        r = run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"), "-o", module])
        expect(r.returncode == 0, "strata-compile builds the example", r)
        call = [run_, f"--module={module}", "--function=simple_mul"]
        good_inputs = ["--input=4xf32=1 2 3 4", "--input=4xf32=5 6 7 8"]

        r = run(call + good_inputs)
        expect(r.returncode == 0 and r.stdout == "4xf32=5 12 21 32\n",
               "strata-run prints the walkthrough result", r)
        r = run(call[:2] + ["--function=module.simple_mul"] + good_inputs)
        expect(r.returncode == 0 and "5 12 21 32" in r.stdout, "qualified function name", r)

        # .npy in and out.
        a = np.arange(4, dtype=np.float32)
        np.save(os.path.join(tmp, "a.npy"), a)
        out = os.path.join(tmp, "out.npy")
        r = run(call + [f"--input=@{tmp}/a.npy", "--input=4xf32=2", f"--output=@{out}"])
        expect(r.returncode == 0 and r.stdout == "", "--output writes instead of printing", r)
        expect(os.path.exists(out) and np.array_equal(np.load(out), a * 2), ".npy round trip")

        # --expected_output.
        r = run(call + good_inputs + ["--expected_output=4xf32=5 12 21 32"])
        expect(r.returncode == 0 and "[SUCCESS]" in r.stdout, "--expected_output match", r)
        r = run(call + good_inputs + ["--expected_output=4xf32=5 12 21 33"])
        expect_error(r, "element 3", "--expected_output mismatch names the element")

        # Module from stdin.
        with open(module, "rb") as f:
            r = subprocess.run([run_, "--module=-", "--function=simple_mul"] + good_inputs,
                               input=f.read(), capture_output=True, timeout=60)
        expect(r.returncode == 0 and b"5 12 21 32" in r.stdout, "module from stdin", r)

        # Bad input of every kind.
        expect_error(run(call + ["--input=3xf32=1 2 3", "--input=4xf32=1"]),
                     "argument 0: expected 4xf32, got 3xf32", "wrong shape names the argument")
        expect_error(run(call + ["--input=4xi32=1", "--input=4xf32=1"]),
                     "argument 0: expected 4xf32, got 4xi32", "wrong element type names the argument")
        expect_error(run(call + ["--input=4xf32=1"]), "takes 2 arguments, got 1", "too few arguments")
        expect_error(run(call + good_inputs + ["--input=4xf32=1"]), "takes 2 arguments, got 3",
                     "too many arguments")
        expect_error(run(call + ["--input=4xf32=1 2", "--input=4xf32=1"]), "4 elements but 2",
                     "wrong value count")
        # A tensor too large for the device allocator is RESOURCE_EXHAUSTED
        # before any host memory is committed (not a std::bad_alloc abort).
        expect_error(run(call + ["--input=1000000x1000000xf32=0", "--input=4xf32=1"]),
                     "RESOURCE_EXHAUSTED", "huge text tensor exceeds the allocator limit")
        expect_error(run(call + ["--input=@/nonexistent.npy", "--input=4xf32=1"]),
                     "nonexistent.npy", "missing .npy file")
        expect_error(run([run_, "--module=/nonexistent.smod", "--function=f"]),
                     "nonexistent.smod", "missing module file")
        expect_error(run([run_, f"--module={module}", "--function=nope"] + good_inputs),
                     "nope", "unknown function")
        expect_error(run(call + good_inputs + ["--device=warp-drive"]), "warp-drive",
                     "unknown device")
        expect_error(run(call + ["--bogus"]), "unknown flag '--bogus'", "unknown flag")
        expect_error(run([run_, "--function=simple_mul"]), "no module", "no module")
        not_a_module = os.path.join(tmp, "text.smod")
        with open(not_a_module, "w") as f:
            f.write("this is not a module")
        expect_error(run([run_, f"--module={not_a_module}", "--function=f"]), "module",
                     "a text file as module")

        # --timeout: a call within it succeeds; bad values name the flag.
        r = run(call + good_inputs + ["--timeout=30"])
        expect(r.returncode == 0 and r.stdout == "4xf32=5 12 21 32\n",
               "strata-run --timeout within the limit", r)
        expect_error(run(call + good_inputs + ["--timeout=-1"]),
                     "--timeout expects seconds >= 0", "negative --timeout")
        expect_error(run(call + good_inputs + ["--timeout=soon"]),
                     "--timeout expects a number", "--timeout not a number")

        # Every driver x loader gives the same numbers.
        variants = [[], ["--loader=system"], ["--device=local-task"],
                    ["--device=local-task", "--workers=3", "--loader=embedded"],
                    ["--device=local-task?workers=2", "--loader=system"],
                    ["--device=local-task://0?loader=system&workers=1"]]
        for extra in variants:
            r = run(call + good_inputs + extra)
            expect(r.returncode == 0 and r.stdout == "4xf32=5 12 21 32\n",
                   f"strata-run {' '.join(extra) or '(defaults)'}", r)
        expect_error(run(call + good_inputs + ["--loader=jit"]), "unknown loader 'jit'",
                     "unknown loader")

        # The vmvx target: the same numbers through the VMVX loader on both
        # drivers, and a clear error when the device's loaders exclude it.
        vmvx_module = os.path.join(tmp, "simple_mul_vmvx.smod")
        r = run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                 "--target=vmvx", "-o", vmvx_module])
        expect(r.returncode == 0, "strata-compile --target=vmvx", r)
        vmvx_call = [run_, f"--module={vmvx_module}", "--function=simple_mul"]
        for extra in [[], ["--loader=vmvx"], ["--device=local-task?workers=2"]]:
            r = run(vmvx_call + good_inputs + extra)
            expect(r.returncode == 0 and r.stdout == "4xf32=5 12 21 32\n",
                   f"vmvx module with {' '.join(extra) or '(defaults)'}", r)
        expect_error(run(vmvx_call + good_inputs + ["--loader=embedded"]),
                     "no executable loader supports format 'vmvx-bytecode-fb'",
                     "vmvx module without the vmvx loader")
        expect_error(run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                          "--target=gpu", "-o", vmvx_module]),
                     "unknown target 'gpu' (supported: cpu, vmvx, cuda, or a comma-separated list of them such as cpu,cuda)", "unknown target")
        expect_error(run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                          "--target=cpu,cuda,cpu", "-o", vmvx_module]),
                     "--target names 'cpu' twice", "target named twice")
        expect_error(run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                          "--target=cuda", "--cuda-arch=sm80", "-o", vmvx_module]),
                     "unknown CUDA architecture 'sm80'", "bad cuda arch")
        cuda_module = os.path.join(tmp, "cuda.smod")
        r = run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                 "--target=cuda", "-o", cuda_module])
        expect(r.returncode == 0, "strata-compile --target=cuda", r)
        expect_error(run([run_, f"--module={cuda_module}", "--function=simple_mul"]
                         + good_inputs),
                     "no executable loader supports format 'cuda-ptx-v1'",
                     "cuda module on a CPU device")
        expect_error(run(call + good_inputs + ["--device=local-task", "--workers=x"]),
                     "--workers expects an integer", "bad worker count")
        expect_error(run(call + good_inputs + ["--device=local-task?threads=2"]),
                     "unknown device option 'threads'", "unknown device option")
        expect_error(run(call + good_inputs + ["--workers=2"]),
                     "unknown device option 'workers'", "--workers on local-sync")

        # --trace: a Chrome trace with one span per dispatch, named after its
        # call site (listed by strata-dump), on both local drivers. (A
        # convolution between its layout changes: several dispatches, none
        # small enough to be merged with another.)
        conv_source = os.path.join(tmp, "conv.mlir")
        with open(conv_source, "w") as f:
            f.write(CONV_PROGRAM)
        conv_module = os.path.join(tmp, "conv.smod")
        r = run([compile_, conv_source, "-o", conv_module])
        expect(r.returncode == 0, "strata-compile the convolution program", r)
        disassembly = run([dump, conv_module]).stdout
        dispatch_sites = disassembly.count("call.variadic @hal.command_buffer.dispatch")
        for device in ["local-sync", "local-task?workers=2"]:
            trace = os.path.join(tmp, "trace.json")
            r = run([run_, f"--module={conv_module}", "--function=conv", f"--device={device}",
                     f"--trace={trace}"] + CONV_INPUTS)
            spans = dispatch_spans(r, trace)
            ok = spans is not None
            spans = spans or []
            if ok:
                ok = (dispatch_sites > 1 and len(spans) == dispatch_sites and
                      all(e["name"] in disassembly and e["dur"] >= 0 and
                          e["args"]["workgroup_count"].count("x") == 2 for e in spans))
            expect(ok, f"strata-run --trace on {device}: {len(spans)} spans for "
                       f"{dispatch_sites} dispatches", r)
        expect_error(run(call + good_inputs + ["--trace=/nonexistent/dir/t.json"]),
                     "/nonexistent/dir/t.json", "--trace to an unwritable path")

        r = run([run_, "--help"])
        expect(r.returncode == 0 and all(f"--{flag}" in r.stdout for flag in
                                          ["module", "function", "device", "loader", "workers",
                                           "input", "output", "expected_output", "trace"]),
               "strata-run --help lists every flag", r)

        # strata-bench.
        r = run([bench, f"--module={module}", "--function=simple_mul", "--iterations=20", "--json"]
                + good_inputs)
        ok = r.returncode == 0
        if ok:
            stats = json.loads(r.stdout)
            ok = stats["iterations"] == 20 and 0 < stats["min_ms"] <= stats["median_ms"] <= stats["p90_ms"]
            # simple_mul allocates its result (at least) on every call.
            ok = ok and stats["allocations_per_call"] >= 1
        expect(ok, "strata-bench reports min <= median <= p90 and allocations", r)
        r = run([bench, f"--module={module}", "--function=simple_mul", "--iterations=5", "--json",
                 "--device=local-task", "--workers=2", "--loader=system"] + good_inputs)
        ok = r.returncode == 0 and json.loads(r.stdout)["device"] == "local-task?loader=system&workers=2"
        expect(ok, "strata-bench --device --workers --loader", r)
        r = run([bench, f"--module={module}", "--function=simple_mul", "--iterations=5"] + good_inputs)
        expect(r.returncode == 0 and "median" in r.stdout and "p90" in r.stdout, "strata-bench text", r)
        # --trace: one more, warm call profiled, every dispatch a span.
        trace = os.path.join(tmp, "bench_trace.json")
        r = run([bench, f"--module={conv_module}", "--function=conv", "--iterations=3",
                 f"--trace={trace}"] + CONV_INPUTS)
        spans = dispatch_spans(r, trace)
        ok = spans is not None
        spans = spans or []
        if ok:
            ok = len(spans) == dispatch_sites and all(e["name"] in disassembly for e in spans)
        expect(ok, f"strata-bench --trace: {len(spans)} spans for {dispatch_sites} dispatches", r)
        check_dispatch_names(tmp, compile_, run_, bench, dump)
        check_json_text(tmp, args.source_dir, compile_, bench)
        check_input_names(tmp, compile_, run_, dump)

        # Every tool answers --version: Strata's version and the commit (the
        # compiler tools also their LLVM's), and lists it in --help.
        for tool in [compile_, os.path.join(args.compiler_bin, "strata-opt"), run_, bench,
                     dump] + minimal_tools:
            r = run([tool, "--version"])
            expect(r.returncode == 0 and re.search(r"Strata (compiler )?\d+\.\d+\.\d+", r.stdout)
                   and "git " in r.stdout, f"{os.path.basename(tool)} --version", r)
        for tool in [compile_]:
            r = run([tool, "--version"])
            expect("LLVM 22" in r.stdout, "strata-compile --version names its LLVM", r)
        # --timing: a report of every phase and the passes in it.
        r = run([compile_, "--timing", os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                 "-o", os.path.join(tmp, "timed.smod")])
        expect(r.returncode == 0 and "Execution time report" in r.stderr and
               all(phase in r.stderr for phase in ["input", "dispatch-regions", "executables",
                                                   "host", "target", "vm", "write the module"]),
               "strata-compile --timing reports each phase", r)
        # --progress (on by itself when stderr is a terminal): each phase as
        # it starts, and the executables compiled.
        r = run([compile_, "--progress", os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                 "-o", os.path.join(tmp, "progress.smod")])
        expect(r.returncode == 0 and "strata-compile: dispatch-regions (" in r.stderr and
               "1 of 1 executables compiled" in r.stderr, "strata-compile --progress", r)
        r = run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                 "-o", os.path.join(tmp, "quiet.smod")])
        expect(r.returncode == 0 and r.stderr == "", "strata-compile is quiet off a terminal", r)
        for tool in [run_, bench, dump] + minimal_tools:
            r = run([tool, "--help"])
            expect(r.returncode == 0 and "--version" in r.stdout, f"{os.path.basename(tool)} --help lists --version", r)
        expect_error(run([bench, f"--module={module}", "--function=simple_mul", "--iterations=1",
                          "--trace=/nonexistent/dir/t.json"] + good_inputs),
                     "/nonexistent/dir/t.json", "strata-bench --trace to an unwritable path")
        expect_error(run([bench, f"--module={module}", "--function=simple_mul", "--iterations=x"]),
                     "--iterations expects an integer", "strata-bench bad flag value")

        # strata-dump.
        r = run([dump, module])
        text = r.stdout
        expect(r.returncode == 0 and all(s in text for s in [
            "hal", "hal.buffer_view.create", "0rIIiiCID_r", "simple_mul", "(4xf32, 4xf32) -> (4xf32)",
            "simple_mul_dispatch_0_data", "call.variadic", "ret"]),
               "strata-dump shows dependencies, imports, exports, rodata, bytecode", r)
        expect_error(run([dump, not_a_module]), "", "strata-dump on a bad file")
        expect_error(run([dump]), "expected one module file", "strata-dump without a file")

        # A module compiled for CPU features this CPU lacks is refused at
        # load with a clear error naming all of them; on a CPU that has them
        # it runs.
        spr = os.path.join(tmp, "sapphirerapids.smod")
        r = run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                 "--cpu=sapphirerapids", "-o", spr])
        expect(r.returncode == 0, "strata-compile --cpu=sapphirerapids", r)
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        has_fp16 = "avx512_fp16" in flags and "avx_vnni" in flags
        r = run([run_, f"--module={spr}", "--function=simple_mul"] + good_inputs)
        if has_fp16:
            expect(r.returncode == 0 and "5 12 21 32" in r.stdout,
                   "sapphirerapids module runs here", r)
        else:
            missing = [n for n, flag in (("avx512fp16", "avx512_fp16"), ("avxvnni", "avx_vnni"))
                       if flag not in flags]
            expect_error(r, "this CPU lacks ", "a module for a richer CPU is refused at load")
            expect(all(n in r.stderr for n in missing),
                   f"the refusal names every missing feature ({', '.join(missing)})", r)
        expect_error(run([compile_, os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                          "--cpu=pentium-9000", "-o", spr]), "unknown CPU 'pentium-9000'",
                     "strata-compile rejects an unknown --cpu")

        check_dynamic_shapes(tmp, args.source_dir, compile_, run_, dump)

        # strata-compile errors.
        expect_error(run([compile_, "/nonexistent.mlir", "-o", module]), "nonexistent.mlir",
                     "strata-compile missing input")
        bad = os.path.join(tmp, "bad.mlir")
        with open(bad, "w") as f:
            f.write("func.func @f( {")
        r = run([compile_, bad, "-o", os.path.join(tmp, "bad.smod")])
        expect(0 < r.returncode < 128 and "bad.mlir:1" in r.stderr, "strata-compile syntax error has a location", r)

    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
