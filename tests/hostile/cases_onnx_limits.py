"""Compile-time limits: ONNX models of a few bytes that ask the importer for
unbounded work (ONNXImportLimits in ONNXImporter.h): tensors past 64 bits or
past --max-tensor-bytes, ranks past --max-tensor-rank, out-of-range axes and
constant indices, loops that multiply when unrolled, recursive or
exponentially nested local functions, long chains of nodes and deep
subgraph nesting. Each must end in a diagnostic naming the node, its op and
the limit, in bounded time and memory."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from run_hostile import Case

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
TENSOR_LIMIT = r"past the limit of 34359738368 bytes per tensor " \
               r"\(--max-tensor-bytes\)"


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), functions=(), local=False):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", 17)]
    if local:
        opsets.append(helper.make_opsetid("local", 1))
    m = helper.make_model(graph, opset_imports=opsets,
                          functions=list(functions))
    m.ir_version = 8
    return m


def nested_loops(depth, trip):
    """`depth` Loops inside each other, each `trip` iterations."""
    body = None
    for d in range(depth):
        inputs = [vi(f"i{d}", I64, []), vi(f"c{d}", BOOL, []),
                  vi(f"v{d}", F, [1])]
        nodes = [helper.make_node("Identity", [f"c{d}"], [f"co{d}"])]
        if body is None:
            nodes.append(helper.make_node("Add", [f"v{d}", "one"], [f"vo{d}"],
                                          name=f"add{d}"))
        else:
            nodes.append(helper.make_node("Loop", ["trip", "cond", f"v{d}"],
                                          [f"vo{d}"], name=f"loop{d}",
                                          body=body))
        body = helper.make_graph(nodes, f"body{d}", inputs,
                                 [vi(f"co{d}", BOOL, []), vi(f"vo{d}", F, [1])])
    return model([helper.make_node("Loop", ["trip", "cond", "x"], ["y"],
                                   name="loop_top", body=body)],
                 [vi("x", F, [1])], [vi("y", F, [1])],
                 [i64("trip", trip),
                  numpy_helper.from_array(np.array(True), "cond"),
                  numpy_helper.from_array(np.ones(1, np.float32), "one")])


def local_function(name, body_nodes, inputs=("a",)):
    return helper.make_function(
        "local", name, list(inputs), ["b"], body_nodes,
        [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])


def call_model(functions, callee, extra_inputs=()):
    inputs = [vi("x", F, [2])] + list(extra_inputs)
    names = [v.name for v in inputs]
    return model([helper.make_node(callee, names, ["y"], domain="local",
                                   name="call")],
                 inputs, [vi("y", F, [2])], functions=functions, local=True)


def chain(n):
    nodes = [helper.make_node("Relu" if i % 2 else "Neg",
                              [f"t{i}" if i else "x"],
                              [f"t{i + 1}" if i < n - 1 else "y"],
                              name=f"n{i}") for i in range(n)]
    return model(nodes, [vi("x", F, [4])], [vi("y", F, [4])])


def deep_if(depth):
    """If nodes nested `depth` deep through their then-branches."""
    branch = helper.make_graph([helper.make_node("Identity", ["x"], ["r0"])],
                               "b0", [], [vi("r0", F, [2])])
    other = branch
    for d in range(1, depth):
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], [f"e{d}"])], f"e{d}", [],
            [vi(f"e{d}", F, [2])])
        branch = helper.make_graph(
            [helper.make_node("If", ["c"], [f"r{d}"], then_branch=branch,
                              else_branch=other)], f"b{d}", [],
            [vi(f"r{d}", F, [2])])
    return model([helper.make_node("If", ["c"], ["y"], then_branch=branch,
                                   else_branch=other, name="top")],
                 [vi("x", F, [2]), vi("c", BOOL, [])], [vi("y", F, [2])])


def make_cases(out_dir):
    cases = []

    def case(name, m, error, flags=(), timeout=60, run=None):
        path = out_dir / f"{name}.onnx"
        path.write_bytes(m.SerializeToString())
        module = out_dir / f"{name}.smod"
        steps = [["strata-compile", path, "-o", module, *flags]]
        if run:
            steps.append(["strata-run", f"--module={module}",
                          "--function=main", *run])
        cases.append(Case(name, steps, error, timeout=timeout))

    cos = helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")
    big = [10**6, 10**6]
    # Tensors past the address space or the per-tensor limit.
    case("constant_of_shape_1e12", model([cos], [], [vi("y", F, big)],
                                         [i64("s", big)]),
         r"node 'cos' \(ConstantOfShape\): graph output 'y': a tensor of "
         r"shape \[1000000, 1000000\] and f32 elements holds 4000000000000 "
         r"bytes, " + TENSOR_LIMIT)
    case("constant_of_shape_1e12_inside",
         model([helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos"),
                helper.make_node("ReduceSum", ["c"], ["y"], keepdims=0,
                                 name="sum")], [], [vi("y", F, [])],
               [i64("s", big)]),
         r"node 'cos' \(ConstantOfShape\): output 'c': a tensor of shape "
         r"\[1000000, 1000000\] and f32 elements holds 4000000000000 bytes, "
         + TENSOR_LIMIT)
    case("constant_of_shape_wraps_64_bits",
         model([cos], [], [vi("y", F, [2**62, 2**62])],
               [i64("s", [2**62, 2**62])]),
         r"node 'cos' \(ConstantOfShape\): graph output 'y': the element "
         r"count of shape \[4611686018427387904, 4611686018427387904\] "
         r"overflows 64 bits")
    case("expand_1e12",
         model([helper.make_node("Expand", ["x", "s"], ["y"], name="ex")],
               [vi("x", F, [1])], [vi("y", F, big)], [i64("s", big)]),
         r"node 'ex' \(Expand\): graph output 'y': a tensor of shape "
         r"\[1000000, 1000000\] .*" + TENSOR_LIMIT)
    case("tile_1e12",
         model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
               [vi("x", F, [2, 2])], [vi("y", F, [2 * 10**6, 2 * 10**6])],
               [i64("r", big)]),
         r"node 'tile' \(Tile\): graph output 'y': .*" + TENSOR_LIMIT)
    case("range_1e12",
         model([helper.make_node("Range", ["a", "b", "d"], ["y"],
                                 name="range")], [], [vi("y", I64, [10**12])],
               [i64("a", 0), i64("b", 10**12), i64("d", 1)]),
         r"node 'range' \(Range\): graph output 'y': a tensor of shape "
         r"\[1000000000000\] and i64 elements holds 8000000000000 bytes, "
         + TENSOR_LIMIT)
    case("resize_1e12",
         model([helper.make_node("Resize", ["x", "", "scales"], ["y"],
                                 name="rs")],
               [vi("x", F, [1, 1, 2, 2])],
               [vi("y", F, [1, 1, 2 * 10**6, 2 * 10**6])],
               [numpy_helper.from_array(
                   np.array([1, 1, 1e6, 1e6], np.float32), "scales")]),
         r"node 'rs' \(Resize\): graph output 'y': .*" + TENSOR_LIMIT)
    case("graph_input_wraps_64_bits",
         model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [vi("x", F, [2**40, 2**40])], [vi("y", F, [2**40, 2**40])]),
         r"graph input 'x': the element count of shape \[1099511627776, "
         r"1099511627776\] overflows 64 bits")
    lie = onnx.TensorProto(name="w", data_type=F, dims=[2**32, 2**32])
    case("initializer_dims_wrap_64_bits",
         model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [vi("x", F, [1])], [vi("y", F, [2**32, 2**32])], [lie]),
         r"initializer 'w': the element count of shape \[4294967296, "
         r"4294967296\] overflows 64 bits")
    # The limit is a flag: raised, the 10^12-element splat compiles (built at
    # run time, never stored) and the run is refused by the device memory
    # limit.
    case("constant_of_shape_1e12_limit_raised",
         model([cos], [], [vi("y", F, big)], [i64("s", big)]),
         r"RESOURCE_EXHAUSTED: .*4000000000000",
         flags=["--max-tensor-bytes=8000000000000"],
         run=["--device-memory-limit=1G"])

    # Ranks, axes and constant indices out of range.
    case("rank_2000_input",
         model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [vi("x", F, [1] * 2000)], [vi("y", F, [1] * 2000)]),
         r"graph input 'x': rank 2000 is past the limit of 64 "
         r"\(--max-tensor-rank\)")
    case("reshape_to_rank_1000",
         model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
               [vi("x", F, [1])], [vi("y", F, [1] * 1000)],
               [i64("s", [1] * 1000)]),
         r"node 'rs' \(Reshape\): graph output 'y': rank 1000 is past the "
         r"limit of 64 \(--max-tensor-rank\)")
    case("softmax_axis_2_pow_31",
         model([helper.make_node("Softmax", ["x"], ["y"], axis=2**31,
                                 name="sm")],
               [vi("x", F, [2, 3])], [vi("y", F, [2, 3])]),
         r"op_type:Softmax, node name: sm.*'axis' must be in \[-2 , 1\]")
    case("squeeze_axis_2_pow_31",
         model([helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")],
               [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
               [i64("axes", [2**31])]),
         r"node 'sq' \(Squeeze\): axis 2147483648 is out of range for rank 2")
    for name, op, index in [("gather_index_minus_2_pow_62", "Gather", -2**62),
                            ("gather_index_2_pow_40", "Gather", 2**40),
                            ("gather_elements_index_2_pow_40",
                             "GatherElements", 2**40)]:
        shape = [4, 3] if op == "Gather" else [4]
        out = [1, 3] if op == "Gather" else [1]
        case(name,
             model([helper.make_node(op, ["x", "idx"], ["y"], name="g")],
                   [vi("x", F, shape)], [vi("y", F, out)],
                   [i64("idx", [index])]),
             rf"node 'g' \({op}\): index {index} \(input 1, element 0\) is "
             r"out of range for a dimension of 4")
    case("scatter_elements_index_2_pow_40",
         model([helper.make_node("ScatterElements", ["x", "idx", "u"], ["y"],
                                 name="s")],
               [vi("x", F, [4]), vi("u", F, [1])], [vi("y", F, [4])],
               [i64("idx", [2**40])]),
         r"node 's' \(ScatterElements\): index 1099511627776 \(input 1, "
         r"element 0\) is out of range for a dimension of 4")

    # Graphs that explode when expanded.
    budget = r"the model expands to more than 65536 nodes \(--max-onnx-nodes\)"
    # Refused when the budget runs out, or before a loop starts when its
    # iterations cannot fit what is left of it.
    case("loops_depth_20_trip_2", nested_loops(20, 2),
         r"node 'loop\d+' \(Loop\): .*more than 65536 nodes "
         r"\(--max-onnx-nodes\)")
    case("loops_depth_3_trip_1000", nested_loops(3, 1000),
         r"node 'loop\d+' \(Loop\): 1000 iterations of a 2-node body are too "
         r"many to unroll: the model would expand to more than 65536 nodes "
         r"\(--max-onnx-nodes\)")
    case("loops_depth_3_trip_1000_small_budget", nested_loops(3, 1000),
         r"node 'loop_top' \(Loop\): 1000 iterations of a 2-node body are "
         r"too many to unroll: the model would expand to more than 100 nodes",
         flags=["--max-onnx-nodes=100"])
    case("chain_100000_nodes", chain(100000),
         r"node 'n65536' \(Neg\): " + budget)
    relu = [helper.make_node("Relu", ["a"], ["b"])]
    case("function_calls_itself",
         call_model([local_function("F", [helper.make_node(
             "F", ["a"], ["b"], domain="local", name="again")])], "F"),
         r"node 'again' \(local\.F\) in local function 'local\.F': a "
         r"recursive call \(local\.F -> local\.F\); ONNX functions cannot "
         r"call themselves")
    case("functions_call_each_other",
         call_model([local_function("F", [helper.make_node(
                         "G", ["a"], ["b"], domain="local", name="to_g")]),
                     local_function("G", [helper.make_node(
                         "F", ["a"], ["b"], domain="local", name="to_f")])],
                    "F"),
         r"a recursive call \(local\.F -> local\.G -> local\.F\)")
    then_branch = helper.make_graph(
        [helper.make_node("F", ["a", "c"], ["r"], domain="local",
                          name="inner")], "then", [], [vi("r", F, [2])])
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["r2"])], "else", [],
        [vi("r2", F, [2])])
    case("function_calls_itself_in_if",
         call_model([local_function(
             "F", [helper.make_node("If", ["c"], ["b"],
                                    then_branch=then_branch,
                                    else_branch=else_branch)],
             inputs=("a", "c"))], "F", [vi("c", BOOL, [])]),
         r"node 'inner' \(local\.F\) in local function 'local\.F': a "
         r"recursive call")
    doubling = [local_function("F0", relu)]
    for k in range(1, 40):
        doubling.append(local_function(f"F{k}", [
            helper.make_node(f"F{k - 1}", ["a"], ["t"], domain="local"),
            helper.make_node(f"F{k - 1}", ["t"], ["b"], domain="local")]))
    case("functions_doubling_40_levels", call_model(doubling, "F39"),
         r"node 'call' \(local\.F39\): the model's local functions expand to "
         r"more than 65536 nodes \(--max-onnx-nodes\)")
    case("if_nested_40_deep", deep_if(40),
         r"the protobuf cannot be parsed \(its subgraphs nest deeper than "
         r"protobuf's limit of 100 messages")
    case("max_onnx_nodes_zero", chain(2),
         r"--max-onnx-nodes must be between 1 and", flags=["--max-onnx-nodes=0"])
    return cases
