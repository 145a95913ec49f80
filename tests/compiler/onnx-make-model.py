#!/usr/bin/env python3
"""Writes a small ONNX model for the importer's lit tests (onnx-*.mlir).

usage: onnx-make-model.py NAME OUT.onnx
"""
import sys

from onnx import TensorProto, checker, helper, save

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(node, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph([node], node.op_type.lower(), inputs, outputs,
                              list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    checker.check_model(m)
    return m


def graph_model(name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    checker.check_model(m)
    return m


def ints(name, values):
    return helper.make_tensor(name, I64, [len(values)], values)


def body(name, nodes, inputs, outputs):
    return helper.make_graph(nodes, name, inputs, outputs)


MODELS = {
    # Stride 2, one padded pixel each side, two groups.
    "conv_transpose": lambda: model(
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                         strides=[2, 2], pads=[1, 1, 1, 1], group=2),
        [value("x", F, [1, 2, 3, 3]), value("w", F, [2, 1, 3, 3])],
        [value("y", F, [1, 2, 5, 5])]),
    # Scales arrive at run time; the result shape is declared.
    "resize_nearest": lambda: model(
        helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize",
                         mode="nearest"),
        [value("x", F, [1, 1, 2, 2]), value("scales", F, [4])],
        [value("y", F, [1, 1, 4, 4])]),
    "scatter_nd_add": lambda: model(
        helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"],
                         name="scatter", reduction="add"),
        [value("data", F, [4, 3]), value("indices", I64, [2, 1]),
         value("updates", F, [2, 3])],
        [value("y", F, [4, 3])]),
    "einsum_batch_matmul": lambda: model(
        helper.make_node("Einsum", ["a", "b"], ["y"], name="einsum",
                         equation="bij,bjk->bik"),
        [value("a", F, [2, 3, 4]), value("b", F, [2, 4, 5])],
        [value("y", F, [2, 3, 5])]),
    "top_k": lambda: model(
        helper.make_node("TopK", ["x", "k"], ["values", "indices"],
                         name="topk", axis=-1),
        [value("x", F, [3, 6])], [value("values", F, [3, 2]),
                                  value("indices", I64, [3, 2])],
        [helper.make_tensor("k", I64, [1], [2])]),
    # Inference statistics as initializers: scale 2 and 4, bias 1 and 0,
    # mean 0.5 and -1, variance 4 - eps and 1 - eps (s = 1 and 4; t = 0.5
    # and 4).
    "batch_norm_constant": lambda: model(
        helper.make_node("BatchNormalization",
                         ["x", "scale", "bias", "mean", "var"], ["y"],
                         name="bn", epsilon=0.25),
        [value("x", F, [1, 2, 3, 3])], [value("y", F, [1, 2, 3, 3])],
        [helper.make_tensor("scale", F, [2], [2.0, 4.0]),
         helper.make_tensor("bias", F, [2], [1.0, 0.0]),
         helper.make_tensor("mean", F, [2], [0.5, -1.0]),
         helper.make_tensor("var", F, [2], [3.75, 0.75])]),
    # Training mode and ratio known only at run time.
    "dropout_training": lambda: model(
        helper.make_node("Dropout", ["x", "ratio", "training"], ["y"],
                         name="drop"),
        [value("x", F, [4]), value("ratio", F, []),
         value("training", TensorProto.BOOL, [])],
        [value("y", F, [4])]),
    # A condition known only at run time: both branches, then a select.
    "if_runtime": lambda: model(
        helper.make_node(
            "If", ["cond"], ["y"], name="branch",
            then_branch=body("then", [helper.make_node("Add", ["x", "x"], ["t"])],
                             [], [value("t", F, [4])]),
            else_branch=body("else", [helper.make_node("Mul", ["x", "x"], ["e"])],
                             [], [value("e", F, [4])])),
        [value("cond", BOOL, []), value("x", F, [4])], [value("y", F, [4])]),
    # Scan backwards over x's rows, summing; the partial sums stacked.
    "scan_reverse": lambda: model(
        helper.make_node(
            "Scan", ["init", "x"], ["sum", "partials"], name="scan",
            num_scan_inputs=1, scan_input_directions=[1],
            body=body("add", [helper.make_node("Add", ["s", "row"], ["s2"]),
                              helper.make_node("Identity", ["s2"], ["p"])],
                      [value("s", F, [2]), value("row", F, [2])],
                      [value("s2", F, [2]), value("p", F, [2])])),
        [value("init", F, [2]), value("x", F, [3, 2])],
        [value("sum", F, [2]), value("partials", F, [3, 2])]),
    # A trip count known only at run time and no scan output to bound it.
    "loop_unbounded": lambda: model(
        helper.make_node(
            "Loop", ["n", "", "y"], ["y_final"], name="loop",
            body=body("step", [helper.make_node("Identity", ["c"], ["c2"]),
                               helper.make_node("Add", ["y_in", "y_in"], ["y2"])],
                      [value("i", I64, []), value("c", BOOL, []),
                       value("y_in", F, [1])],
                      [value("c2", BOOL, []), value("y2", F, [1])])),
        [value("n", I64, []), value("y", F, [1])], [value("y_final", F, [1])]),
    # Greedy suppression: loops over scalars in one sequential region.
    "nms": lambda: model(
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max"],
                         ["selected"], name="nms"),
        [value("boxes", F, [1, 6, 4]), value("scores", F, [1, 2, 6]),
         value("max", I64, [1])], [value("selected", I64, [4, 3])]),
}

# Dynamic dims: torch's `x.view(x.size(0), -1) @ w` over x [batch, 4, 2].
MODELS["dynamic_flatten_matmul"] = lambda: graph_model(
    "flatten", [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="take",
                         axis=0),
        helper.make_node("Unsqueeze", ["batch", "zero1"], ["batch1"],
                         name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"],
                         name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="view"),
        helper.make_node("MatMul", ["flat", "w"], ["y"], name="matmul"),
    ],
    [value("x", F, ["batch", 4, 2])], [value("y", F, ["batch", 3])],
    [helper.make_tensor("zero", I64, [], [0]), ints("zero1", [0]),
     ints("minus_one", [-1]),
     helper.make_tensor("w", F, [8, 3], [0.5] * 24)])
# Position ids `arange(x.size(1))` of token ids [batch, sequence].
MODELS["dynamic_range"] = lambda: graph_model(
    "range", [
        helper.make_node("Shape", ["ids"], ["shape"], name="shape", start=1),
        helper.make_node("Squeeze", ["shape"], ["length"], name="squeeze"),
        helper.make_node("Range", ["zero", "length", "one"], ["y"],
                         name="positions"),
    ],
    [value("ids", I64, ["batch", "sequence"])], [value("y", I64, ["sequence"])],
    [helper.make_tensor("zero", I64, [], [0]),
     helper.make_tensor("one", I64, [], [1])])
# Range over a limit given at run time, its result declared static: the
# length is computed on the device and read back by the host.
MODELS["runtime_range"] = lambda: graph_model(
    "runtime_range", [
        helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                         name="positions"),
        helper.make_node("Neg", ["r"], ["y"], name="negate"),
    ],
    [value("start", I64, []), value("limit", I64, []),
     value("delta", I64, [])],
    [value("y", I64, [5])])
# TopK whose K arrives at run time and whose results declare no size along
# the axis: the host reads K back.
MODELS["runtime_topk"] = lambda: model(
    helper.make_node("TopK", ["x", "k"], ["values", "indices"], name="top",
                     axis=1),
    [value("x", F, [2, 8]), value("k", I64, [1])],
    [value("values", F, [2, None]), value("indices", I64, [2, None])])
# Pad whose pads arrive at run time over a dynamic input: the host reads
# the pads back and sizes the result with them.
MODELS["runtime_pad"] = lambda: model(
    helper.make_node("Pad", ["x", "pads"], ["y"], name="pad"),
    [value("x", F, ["n", 4]), value("pads", I64, [4])],
    [value("y", F, [None, None])])
# ScatterND with every operand dynamic (a mask written by slice assignment
# over a run-time size): the updates' dims are checked against the
# indices' and the data's at the call.
MODELS["dynamic_scatter_nd"] = lambda: model(
    helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"],
                     name="scatter"),
    [value("data", F, ["h", "w"]), value("indices", I64, ["a", "b", 2]),
     value("updates", F, ["c", "d"])],
    [value("y", F, ["h", "w"])])
# A convolution over a dynamic height: windows need static spatial dims.
MODELS["dynamic_conv_height"] = lambda: model(
    helper.make_node("Conv", ["x", "w"], ["y"], name="conv"),
    [value("x", F, ["batch", 1, "height", 4]), value("w", F, [1, 1, 3, 3])],
    [value("y", F, ["batch", 1, None, 2])])
# GatherElements over dynamic operands: the indices' dims off the axis are
# checked against the data's at the call; the result has their shape.
MODELS["dynamic_gather_elements"] = lambda: model(
    helper.make_node("GatherElements", ["data", "indices"], ["y"],
                     name="gather", axis=1),
    [value("data", F, ["n", "w"]), value("indices", I64, ["m", "k"])],
    [value("y", F, ["m", "k"])])
# An op that takes no dynamic dims yet.
MODELS["dynamic_unsupported"] = lambda: model(
    helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rev",
                     batch_axis=1, time_axis=0),
    [value("x", F, ["n", 2]), value("lens", I64, [2])],
    [value("y", F, ["n", 2])])

if __name__ == "__main__":
    save(MODELS[sys.argv[1]](), sys.argv[2])
