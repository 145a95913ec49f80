#!/usr/bin/python3
"""ONNX models built here (sequences with run-time positions, control flow,
NonMaxSuppression, run-time reduce axes, external data in a subfolder,
large splat constants, recurrent layers with masked steps and both
directions, a CNN in the blocked channel layout, Dropout in training mode
checked by its statistics, Range over run-time scalars), compiled with strata-compile, run with strata-run and checked against
numpy implementations written from the ONNX operator definitions: larger and
more varied than the backend suite's few hand-made cases.

usage: generated_models_test.py --bin BUILD/bin [--compile-arg=...]
Prints each case and the closing line `N passed, M failed`."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, checker, helper, save

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, opset=17, initializers=(),
               check=True):
    graph = helper.make_graph(nodes, "generated", inputs, outputs,
                              list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    if check:  # external data is checked where the model is saved
        checker.check_model(model)
    return model


# --- numpy references -----------------------------------------------------

def nms_reference(boxes, scores, max_per_class, iou_threshold,
                  score_threshold, center_point_box):
    """Greedy suppression as the ONNX operator defines it."""
    def corners(b):
        if center_point_box:
            xc, yc, w, h = b
            return yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2
        y1, x1, y2, x2 = b
        return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)

    def overlaps(a, b):
        ay1, ax1, ay2, ax2 = corners(a)
        by1, bx1, by2, bx2 = corners(b)
        ih = max(0.0, min(ay2, by2) - max(ay1, by1))
        iw = max(0.0, min(ax2, bx2) - max(ax1, bx1))
        inter = ih * iw
        area_a = (ay2 - ay1) * (ax2 - ax1)
        area_b = (by2 - by1) * (bx2 - bx1)
        union = area_a + area_b - inter
        if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
            return False
        return inter / union > iou_threshold

    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            # Descending score, lower index first among equals.
            order = sorted(range(scores.shape[2]),
                           key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in order:
                if len(kept) >= max_per_class:
                    break
                if score_threshold is not None and \
                        not scores[b, c, i] > score_threshold:
                    continue
                if any(overlaps(boxes[b, k], boxes[b, i]) for k in kept):
                    continue
                kept.append(i)
                rows.append([b, c, i])
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


# --- cases: (name, model, inputs, expected outputs, compare) ---------------

def nms_case(rng, name, batches, classes, count, center_point_box,
             score_threshold):
    if center_point_box:
        boxes = np.concatenate(
            [rng.uniform(0, 10, (batches, count, 2)),
             rng.uniform(0.5, 4, (batches, count, 2))], axis=2)
    else:
        # Corners in either order (flipped boxes are allowed).
        boxes = rng.uniform(0, 10, (batches, count, 4))
    boxes = boxes.astype(np.float32)
    # Coarse scores so that ties occur.
    scores = (rng.integers(0, 20, (batches, classes, count)) / 20.0).astype(
        np.float32)
    max_per_class = np.array([4], dtype=np.int64)
    iou = np.array([0.3], dtype=np.float32)
    inputs = [boxes, scores, max_per_class, iou]
    names = ["boxes", "scores", "max", "iou"]
    if score_threshold is not None:
        inputs.append(np.array([score_threshold], dtype=np.float32))
        names.append("score_threshold")
    want = nms_reference(boxes.astype(np.float64), scores, 4, 0.3,
                         score_threshold, center_point_box)
    model = make_model(
        [helper.make_node("NonMaxSuppression", names, ["selected"],
                          center_point_box=center_point_box)],
        [value(n, I64 if n == "max" else F, list(a.shape))
         for n, a in zip(names, inputs)],
        [value("selected", I64, list(want.shape))])
    return name, model, inputs, [want]


def loop_case(trip, bound):
    """y doubles and adds the iteration number each step while y < 100;
    the trip count arrives at run time, bounded by the scan output's rows.
    Only the carried value is compared (the scan output has `bound` rows
    whatever the run-time count)."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=F),
         helper.make_node("Add", ["y_in", "y_in"], ["twice"]),
         helper.make_node("Add", ["twice", "i_f"], ["y_out"]),
         helper.make_node("Less", ["y_out", "limit"], ["cond_out"]),
         helper.make_node("Identity", ["y_out"], ["scan_out"])],
        "body",
        [value("i", I64, []), value("cond_in", BOOL, []),
         value("y_in", F, [])],
        [value("cond_out", BOOL, []), value("y_out", F, []),
         value("scan_out", F, [])])
    model = make_model(
        [helper.make_node("Loop", ["trip", "cond", "y"], ["y_final", "ys"],
                          body=body)],
        [value("trip", I64, []), value("cond", BOOL, []), value("y", F, [])],
        [value("y_final", F, []), value("ys", F, [bound])],
        initializers=[helper.make_tensor("limit", F, [], [100.0])])
    y = np.float32(1.5)
    for i in range(trip):
        y = np.float32(2 * y + i)
        if not y < 100:
            break
    inputs = [np.array(trip, dtype=np.int64), np.array(True),
              np.array(1.5, dtype=np.float32)]
    return (f"loop_runtime_trip_{trip}_of_{bound}", model, inputs,
            [np.array(y, dtype=np.float32), None])


def growing_loop_case():
    """A carried value that grows by one element each iteration (so its
    shape differs between iterations); constant trip count."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=F),
         helper.make_node("Unsqueeze", ["i_f", "zero"], ["i_1"]),
         helper.make_node("Concat", ["y_in", "i_1"], ["y_out"], axis=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [value("i", I64, []), value("cond_in", BOOL, []),
         value("y_in", F, ["n"])],
        [value("cond_out", BOOL, []), value("y_out", F, ["m"])])
    model = make_model(
        [helper.make_node("Loop", ["trip", "", "y"], ["y_final"], body=body)],
        [value("y", F, [2])], [value("y_final", F, [5])],
        initializers=[helper.make_tensor("trip", I64, [], [3]),
                      helper.make_tensor("zero", I64, [1], [0])])
    y = np.array([7.0, 8.0], dtype=np.float32)
    want = np.concatenate([y, np.arange(3, dtype=np.float32)])
    return "loop_growing_carried_value", model, [y], [want]


def if_case(cond):
    then_branch = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["t"])], "then", [],
        [value("t", F, [3, 4])])
    else_branch = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1),
         helper.make_node("Sub", ["x", "s"], ["e"])], "else", [],
        [value("e", F, [3, 4])])
    model = make_model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        [value("c", BOOL, []), value("x", F, [3, 4])], [value("y", F, [3, 4])],
        initializers=[helper.make_tensor("axes", I64, [1], [1])])
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    want = x * x if cond else x - x.sum(axis=1, keepdims=True)
    return f"if_runtime_{str(cond).lower()}", model, [np.array(cond), x], [want]


def if_shapes_differ_case(cond):
    """A run-time If whose branches give different shapes: only the taken
    branch runs, the output has its shape, and the node after the If works
    on that shape."""
    then_branch = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["t"], axis=0)], "then", [],
        [value("t", F, [6, 4])])
    else_branch = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["e"], keepdims=1)],
        "else", [], [value("e", F, [3, 1])])
    model = make_model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("Mul", ["y", "two"], ["z"])],
        [value("c", BOOL, []), value("x", F, [3, 4])],
        [value("z", F, ["rows", "cols"])],
        initializers=[helper.make_tensor("axes", I64, [1], [1]),
                      helper.make_tensor("two", F, [], [2.0])])
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    y = np.concatenate([x, x]) if cond else x.sum(axis=1, keepdims=True)
    return (f"if_dynamic_shapes_differ_{str(cond).lower()}", model,
            [np.array(cond), x], [2 * y])


def if_branch_invalid_case(cond, rows):
    """The branch not taken would fail on this input (an odd number of rows
    reshaped into pairs of rows): it never runs. Taken, it fails at the
    call with the reshape's error."""
    then_branch = helper.make_graph(
        [helper.make_node("Reshape", ["x", "pairs"], ["t"])], "then", [],
        [value("t", F, ["half", 8])])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [value("e", F, ["n", 4])])
    model = make_model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        [value("c", BOOL, []), value("x", F, ["n", 4])],
        [value("y", F, ["a", "b"])],
        initializers=[helper.make_tensor("pairs", I64, [2], [-1, 8])])
    x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4) - 5
    if cond and rows % 2:
        want = ("run_error", "reshape")
    else:
        want = [x.reshape(-1, 8) if cond else -x]
    return (f"if_dynamic_branch_invalid_{str(cond).lower()}_{rows}", model,
            [np.array(cond), x], want)


def if_nested_case(outer, inner):
    """A run-time If in a branch of another, the inner branches of different
    shapes, and a value of the outer graph read in the inner branch."""
    inner_if = helper.make_node(
        "If", ["c2"], ["u"],
        then_branch=helper.make_graph(
            [helper.make_node("Mul", ["x", "w"], ["p"])], "inner_then", [],
            [value("p", F, [3, 4])]),
        else_branch=helper.make_graph(
            [helper.make_node("Slice", ["x", "starts", "ends"], ["q"])],
            "inner_else", [], [value("q", F, [2, 4])]))
    then_branch = helper.make_graph(
        [inner_if, helper.make_node("Add", ["u", "u"], ["t"])], "then", [],
        [value("t", F, ["r", 4])])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["w"], ["e"])], "else", [],
        [value("e", F, [3, 4])])
    model = make_model(
        [helper.make_node("Exp", ["x"], ["w"]),
         helper.make_node("If", ["c1"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        [value("c1", BOOL, []), value("c2", BOOL, []), value("x", F, [3, 4])],
        [value("y", F, ["r", 4])],
        initializers=[helper.make_tensor("starts", I64, [1], [1]),
                      helper.make_tensor("ends", I64, [1], [3])])
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    w = np.exp(x)
    if outer:
        want = 2 * (x * w) if inner else 2 * x[1:3]
    else:
        want = -w
    return (f"if_dynamic_nested_{str(outer).lower()}_{str(inner).lower()}",
            model, [np.array(outer), np.array(inner), x], [want])


def pow_runtime_exponent_case():
    """Pow whose exponent is an input: negative bases with integral
    exponents (even and odd, negative too), zero to the zeroth, and
    fractional exponents of positive bases, as numpy (C's pow) has them."""
    x = np.array([[-2, -1.5, 0, 3, -0.5, 2.25],
                  [-3, 0, 4, -1, 0.5, -2]], dtype=np.float32)
    e = np.array([[2, 3, 0, 0.5, -2, 1.5],
                  [-1, 2, -0.5, 7, 0, 4]], dtype=np.float32)
    model = make_model([helper.make_node("Pow", ["x", "e"], ["y"])],
                       [value("x", F, [2, 6]), value("e", F, [2, 6])],
                       [value("y", F, [2, 6])])
    return "pow_runtime_exponent", model, [x, e], [np.power(x, e)]


def if_yields_initializer_case(cond):
    """A run-time If whose then branch outputs an initializer of the outer
    graph as it is (Identity), the else branch the input."""
    w = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    model = make_model(
        [helper.make_node("If", ["c"], ["y"],
                          then_branch=helper.make_graph(
                              [helper.make_node("Identity", ["w"], ["t"])],
                              "then", [], [value("t", F, [3])]),
                          else_branch=helper.make_graph(
                              [helper.make_node("Identity", ["x"], ["e"])],
                              "else", [], [value("e", F, [3])]))],
        [value("c", BOOL, []), value("x", F, [3])], [value("y", F, [3])],
        initializers=[helper.make_tensor("w", F, [3], w.tolist())])
    x = np.array([7.0, 8.0, 9.0], dtype=np.float32)
    return (f"if_yields_initializer_{str(cond).lower()}", model,
            [np.array(cond), x], [w if cond else x])


def if_unimportable_branch_case(cond):
    """A run-time If whose else branch contradicts the model's shapes (a
    reshape of 12 elements into rows of 5): imported as a branch that fails
    the call when taken, naming the node; the then branch runs."""
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])], "then", [],
        [value("t", F, [3, 4])])
    else_branch = helper.make_graph(
        [helper.make_node("Reshape", ["x", "rows_of_5"], ["e"],
                          name="bad_reshape")],
        "else", [], [value("e", F, [3, 4])])
    model = make_model(
        [helper.make_node("If", ["c"], ["y"], name="pick",
                          then_branch=then_branch, else_branch=else_branch)],
        [value("c", BOOL, []), value("x", F, [3, 4])], [value("y", F, [3, 4])],
        initializers=[helper.make_tensor("rows_of_5", I64, [2], [-1, 5])],
        check=False)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 6
    want = [np.maximum(x, 0)] if cond else (
        "run_error", "If 'pick': its else_branch cannot run for these shapes")
    return (f"if_unimportable_branch_{str(cond).lower()}", model,
            [np.array(cond), x], want)


def pad_dynamic_mode_case(mode, rows):
    """reflect and wrap padding of a dim whose size is known only at run
    time (a signal's length), as numpy pads."""
    pads = [2, 1, 1, 2]
    model = make_model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)],
        [value("x", F, ["n", 4])], [value("y", F, ["m", 7])],
        initializers=[helper.make_tensor("pads", I64, [4], pads)])
    x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4) * 0.5 - 3
    want = np.pad(x, ((2, 1), (1, 2)), mode=mode)
    return f"pad_runtime_{mode}_{rows}", model, [x], [want]


def slice_backwards_case(rows):
    """Slices with negative steps over a dim known only at run time: a
    reversal (torch.flip), every other element backwards from the middle,
    and a backward range that is empty at small sizes."""
    big = 2 ** 63 - 1
    model = make_model(
        [helper.make_node("Slice", ["x", "s1", "e1", "a1", "st1"], ["flip"]),
         helper.make_node("Slice", ["x", "s2", "e2", "a2", "st2"], ["odd"]),
         helper.make_node("Slice", ["x", "s3", "e3", "a1", "st1"], ["tail"])],
        [value("x", F, ["n", 5])],
        [value("flip", F, ["n", 5]), value("odd", F, ["a", "b"]),
         value("tail", F, ["c", 5])],
        initializers=[helper.make_tensor("s1", I64, [1], [-1]),
                      helper.make_tensor("e1", I64, [1], [-big]),
                      helper.make_tensor("a1", I64, [1], [0]),
                      helper.make_tensor("st1", I64, [1], [-1]),
                      helper.make_tensor("s2", I64, [2], [3, 4]),
                      helper.make_tensor("e2", I64, [2], [-big, 0]),
                      helper.make_tensor("a2", I64, [2], [0, 1]),
                      helper.make_tensor("st2", I64, [2], [-2, -3]),
                      helper.make_tensor("s3", I64, [1], [big]),
                      helper.make_tensor("e3", I64, [1], [2])])
    x = np.arange(rows * 5, dtype=np.float32).reshape(rows, 5)
    return (f"slice_runtime_backwards_{rows}", model, [x],
            [x[::-1], x[3::-2, 4:0:-3], x[:2:-1]])


def topk_dynamic_case(rows, cols, k_input):
    """TopK over dynamic dims: K the axis' whole size (torch.sort's export:
    Shape -> Gather), or K an int64 input read back at the call (checked
    against the axis)."""
    if k_input is None:
        nodes = [helper.make_node("Shape", ["x"], ["s"]),
                 helper.make_node("Gather", ["s", "last"], ["k"], axis=0)]
        inputs = [value("x", F, ["n", "m"])]
    else:
        nodes = []
        inputs = [value("x", F, ["n", "m"]), value("k", I64, [1])]
    model = make_model(
        nodes + [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
        inputs, [value("v", F, ["n", "kk"]), value("i", I64, ["n", "kk"])],
        initializers=[helper.make_tensor("last", I64, [1], [1])])
    x = np.random.default_rng(rows * cols).permutation(
        rows * cols).astype(np.float32).reshape(rows, cols)
    k = cols if k_input is None else k_input
    order = np.argsort(-x, axis=1, kind="stable")[:, :k]
    feeds = [x] if k_input is None else [x, np.array([k_input], np.int64)]
    tag = "sort" if k_input is None else f"k{k_input}"
    if k > cols:
        return (f"topk_runtime_dynamic_{tag}_{rows}x{cols}", model, feeds,
                ("run_error", "K is negative or larger than the axis' size"))
    return (f"topk_runtime_dynamic_{tag}_{rows}x{cols}", model, feeds,
            [np.take_along_axis(x, order, 1), order.astype(np.int64)])


def square_input_case(n, m):
    """An input whose two dims share one name ([n, n]: a mask, an
    adjacency matrix): one size read, the other checked against it."""
    model = make_model(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
         helper.make_node("Add", ["x", "t"], ["y"])],
        [value("x", F, ["n", "n"])], [value("y", F, ["n", "n"])])
    x = np.arange(n * m, dtype=np.float32).reshape(n, m)
    if n != m:
        return (f"square_input_{n}x{m}", model, [x],
                ("run_error", f"argument 0 of @main ('x'): expected "
                 f"{n}x{n}xf32, got {n}x{m}xf32"))
    return f"square_input_{n}x{m}", model, [x], [x + x.T]


def einsum_dynamic_case(equation, shapes, dims, name):
    """Einsum over dims known only at run time (attention written with
    einsum), vs numpy.einsum; operands whose shared label differs fail at
    the call."""
    rng = np.random.default_rng(len(equation) + sum(map(sum, shapes)))
    names = [f"x{i}" for i in range(len(shapes))]
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in shapes]
    model = make_model(
        [helper.make_node("Einsum", names, ["y"], equation=equation)],
        [value(n, F, d) for n, d in zip(names, dims)],
        [value("y", F, [f"y{i}" for i in
                        range(len(equation.split("->")[1]))])])
    try:
        want = [np.einsum(equation, *arrays)]
    except ValueError:
        # (The argument check, which knows the operands' dims are tied.)
        want = ("run_error", "argument 1 of @main ('x1'): expected "
                + "x".join(map(str, shapes[0][1:] + shapes[1][1:])) + "xf32")
    return f"einsum_dynamic_{name}", model, arrays, want


def onehot_dynamic_case(rows, axis):
    """OneHot of indices whose dims are known only at run time (argmax
    class ids), negative ids counting from the depth's end."""
    model = make_model(
        [helper.make_node("OneHot", ["ids", "depth", "values"], ["y"],
                          axis=axis)],
        [value("ids", I64, ["n", 3])],
        [value("y", F, ["a", "b", "c"])],
        initializers=[helper.make_tensor("depth", I64, [], [5]),
                      helper.make_tensor("values", F, [2], [-1.0, 2.0])])
    ids = (np.arange(rows * 3, dtype=np.int64).reshape(rows, 3) % 7) - 2
    hot = np.where(np.arange(5) == (ids % 5)[..., None], 2.0, -1.0)
    hot = np.where((ids >= -5)[..., None] & (ids < 5)[..., None], hot, -1.0)
    return (f"onehot_dynamic_{rows}_axis{axis}", model, [ids],
            [np.moveaxis(hot, -1, axis).astype(np.float32)])


def prelu_dynamic_case(n, w):
    """PRelu (a slope per channel) over a batch and width known only at run
    time."""
    slope = np.array([[0.5], [-2.0], [0.1]], dtype=np.float32)
    model = make_model(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])],
        [value("x", F, ["n", 3, "w"])], [value("y", F, ["n", 3, "w"])],
        initializers=[helper.make_tensor("slope", F, [3, 1],
                                         slope.ravel().tolist())])
    x = np.linspace(-3, 3, n * 3 * w, dtype=np.float32).reshape(n, 3, w)
    return (f"prelu_dynamic_{n}x{w}", model, [x],
            [np.where(x < 0, x * slope, x)])


def squeeze_dynamic_case(size):
    """Squeeze of a dim known only at run time: it must be 1 at the call
    (the argument check says so, the program having tied it to 1)."""
    model = make_model(
        [helper.make_node("Squeeze", ["x", "axes"], ["y"]),
         helper.make_node("Neg", ["y"], ["z"])],
        [value("x", F, [2, "one", 3])], [value("z", F, [2, 3])],
        initializers=[helper.make_tensor("axes", I64, [1], [1])])
    x = np.arange(2 * size * 3, dtype=np.float32).reshape(2, size, 3)
    want = [-x.reshape(2, 3)] if size == 1 else (
        "run_error", "argument 0 of @main ('x'): expected 2x1x3xf32, got "
        "2x2x3xf32")
    return f"squeeze_dynamic_dim_{size}", model, [x], want


def if_on_dim_case(rng):
    """As torch exports `if h.shape[0]:` (Silero VAD's state): the
    condition is a dim cast to bool (2 is true, not its low bit), and a bool
    cast to int64 is 1 (not -1); both fold at compile time."""
    dim = helper.make_tensor("dim", I64, [1], [0])
    nodes = [helper.make_node("Shape", ["h"], ["s"]),
             helper.make_node("Gather", ["s", "dim"], ["d"], axis=0),
             helper.make_node("Squeeze", ["d"], ["ds"]),
             helper.make_node("Cast", ["ds"], ["c"], to=BOOL),
             helper.make_node("Cast", ["c"], ["ci"], to=I64),
             helper.make_node("Cast", ["ci"], ["cf"], to=F),
             helper.make_node("If", ["c"], ["y"], then_branch=helper.make_graph(
                 [helper.make_node("Add", ["x", "h"], ["t"])], "then", [],
                 [value("t", F, [2, 3])]), else_branch=helper.make_graph(
                 [helper.make_node("Neg", ["x"], ["e"])], "else", [],
                 [value("e", F, [2, 3])])),
             helper.make_node("Mul", ["y", "cf"], ["z"])]
    model = make_model(nodes, [value("x", F, [2, 3]), value("h", F, [2, 3])],
                       [value("z", F, [2, 3])], initializers=[dim])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    h = rng.standard_normal((2, 3)).astype(np.float32)
    return "if_on_dim_cast_to_bool", model, [x, h], [x + h]


def if_dead_branch_case(cond):
    """A branch holding an If whose condition folds (the rank of a value the
    model computes) and whose dead branch contradicts the types of this use
    (its declared rank): the branch is typed without it."""
    axes = helper.make_tensor("axes", I64, [1], [0])
    rank_is_3 = [helper.make_node("Shape", ["v"], ["vs"]),
                 helper.make_node("Size", ["vs"], ["vr"]),
                 helper.make_node("Equal", ["vr", "three"], ["is3"])]
    inner = helper.make_node(
        "If", ["is3"], ["u"], name="inner",
        then_branch=helper.make_graph(
            [helper.make_node("Constant", [], ["zero"], value=axes),
             helper.make_node("Unsqueeze", ["v", "zero"], ["dead"])], "dead",
            [], [value("dead", F, [3, 4])]),
        else_branch=helper.make_graph(
            [helper.make_node("Identity", ["v"], ["live"])], "live", [],
            [value("live", F, [3, 4])]))
    then_branch = helper.make_graph(
        rank_is_3 + [inner, helper.make_node("Mul", ["u", "u"], ["t"],
                                             name="square")],
        "then", [], [value("t", F, [3, 4])])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [value("e", F, [3, 4])])
    # v's rank is unknown to whole-model inference (the branches of the
    # If that makes it differ in rank); the importer folds that If.
    rank_is_2 = [helper.make_node("Shape", ["x"], ["xs"]),
                 helper.make_node("Size", ["xs"], ["xr"]),
                 helper.make_node("Equal", ["xr", "two"], ["is2"])]
    make_v = helper.make_node(
        "If", ["is2"], ["v"], name="make_v",
        then_branch=helper.make_graph(
            [helper.make_node("Identity", ["x"], ["v2"])], "v2", [],
            [value("v2", F, [3, 4])]),
        else_branch=helper.make_graph(
            [helper.make_node("Unsqueeze", ["x", "axes"], ["v3"])], "v3", [],
            [value("v3", F, [1, 3, 4])]))
    model = make_model(
        rank_is_2 + [make_v, helper.make_node(
            "If", ["c"], ["y"], name="outer", then_branch=then_branch,
            else_branch=else_branch)],
        [value("c", BOOL, []), value("x", F, [3, 4])],
        [value("y", F, [3, 4])],
        initializers=[axes, helper.make_tensor("two", I64, [], [2]),
                      helper.make_tensor("three", I64, [], [3])],
        check=False)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 5 - 1
    want = x * x if cond else -x
    return (f"if_dead_branch_{str(cond).lower()}", model,
            [np.array(cond), x], [want])


def scan_case(rng):
    """Two states (running sum and running max), one input scanned
    backwards along axis 1, one forwards along axis 0; the scan output
    stacked along axis 1, reversed."""
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "a"], ["sum_out"]),
         helper.make_node("Max", ["max_in", "b"], ["max_out"]),
         helper.make_node("Mul", ["sum_out", "max_out"], ["product"])],
        "body",
        [value("sum_in", F, [2]), value("max_in", F, [2]),
         value("a", F, [2]), value("b", F, [2])],
        [value("sum_out", F, [2]), value("max_out", F, [2]),
         value("product", F, [2])])
    steps = 5
    model = make_model(
        [helper.make_node("Scan", ["s0", "m0", "a", "b"],
                          ["s", "m", "products"], body=body,
                          num_scan_inputs=2, scan_input_axes=[1, 0],
                          scan_input_directions=[1, 0],
                          scan_output_axes=[1], scan_output_directions=[1])],
        [value("s0", F, [2]), value("m0", F, [2]), value("a", F, [2, steps]),
         value("b", F, [steps, 2])],
        [value("s", F, [2]), value("m", F, [2]),
         value("products", F, [2, steps])])
    s0 = rng.standard_normal(2).astype(np.float32)
    m0 = rng.standard_normal(2).astype(np.float32)
    a = rng.standard_normal((2, steps)).astype(np.float32)
    b = rng.standard_normal((steps, 2)).astype(np.float32)
    s, m, products = s0.copy(), m0.copy(), []
    for t in range(steps):
        s = s + a[:, steps - 1 - t]
        m = np.maximum(m, b[t])
        products.append(s * m)
    products = np.stack(products[::-1], axis=1)
    return "scan_axes_and_directions", model, [s0, m0, a, b], [s, m, products]


def reduce_case(rng, axes):
    """ReduceSum without keepdims, axes at run time, on a shape where dims
    1 and 2 (both 3) could each be the one reduced."""
    model = make_model(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
        [value("x", F, [2, 3, 3]), value("axes", I64, [1])],
        [value("y", F, [2, 3])])
    x = rng.standard_normal((2, 3, 3)).astype(np.float32)
    want = x.sum(axis=axes)
    return (f"reduce_sum_runtime_axes_{axes}".replace("-", "minus"), model,
            [x, np.array([axes], dtype=np.int64)], [want])


def external_data_case(rng):
    """MatMul + Add whose weights live in a file in a subfolder of the
    model's folder: the bias at an offset with its length, the matrix after
    it with no length (the rest of the file)."""
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    blob = b.tobytes() + w.tobytes()

    def external(name, dims, entries):
        tensor = TensorProto(name=name, data_type=F, dims=dims)
        tensor.data_location = TensorProto.EXTERNAL
        for key, text in entries:
            entry = tensor.external_data.add()
            entry.key, entry.value = key, text
        return tensor

    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["t"]),
         helper.make_node("Add", ["t", "b"], ["y"])],
        [value("x", F, [2, 3])], [value("y", F, [2, 4])],
        initializers=[
            external("b", [4], [("location", "weights/data.bin"),
                                ("offset", "0"), ("length", "16")]),
            external("w", [3, 4], [("location", "weights/data.bin"),
                                   ("offset", "16")])],
        check=False)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    return ("external_data_in_subfolder", model, [x], [x @ w + b],
            {"weights/data.bin": blob})


def large_splat_case(rng):
    """ConstantOfShape results past the 4 KiB rodata block, built at run
    time by doubling copies: an int64 splat returned as it is (its size not
    a power of two times the block) and a float splat feeding an Add."""
    value_i64 = helper.make_tensor("v", I64, [1], [-7])
    value_f32 = helper.make_tensor("w", F, [1], [2.5])
    model = make_model(
        [helper.make_node("ConstantOfShape", ["s1"], ["y1"], value=value_i64),
         helper.make_node("ConstantOfShape", ["s2"], ["c"], value=value_f32),
         helper.make_node("Add", ["x", "c"], ["y2"])],
        [value("x", F, [3, 1000])],
        [value("y1", I64, [1001, 997]), value("y2", F, [3, 1000])],
        initializers=[
            helper.make_tensor("s1", I64, [2], [1001, 997]),
            helper.make_tensor("s2", I64, [2], [3, 1000])])
    x = rng.standard_normal((3, 1000)).astype(np.float32)
    return ("large_splat_constants", model, [x],
            [np.full((1001, 997), -7, dtype=np.int64), x + np.float32(2.5)])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def recurrent_reference(kind, x, w, r, b, lens, directions):
    """Y, Y_h, Y_c of an ONNX LSTM (gates i, o, f, c) or GRU (z, r, h;
    linear_before_reset 0) with default activations and zero initial
    state, computed step by step in float64."""
    seq, batch, _ = x.shape
    hidden = r.shape[2]
    y = np.zeros((seq, len(directions), batch, hidden))
    yh = np.zeros((len(directions), batch, hidden))
    yc = np.zeros((len(directions), batch, hidden))
    for d, reverse in enumerate(directions):
        h = np.zeros((batch, hidden))
        c = np.zeros((batch, hidden))
        wb, rb = b[d][:b.shape[1] // 2], b[d][b.shape[1] // 2:]
        for t in (reversed(range(seq)) if reverse else range(seq)):
            valid = (t < lens)[:, None]
            if kind == "LSTM":
                g = x[t] @ w[d].T + h @ r[d].T + wb + rb
                i, o, f, cc = np.split(g, 4, axis=1)
                c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
                h_new = sigmoid(o) * np.tanh(c_new)
                c = np.where(valid, c_new, c)
            else:
                xw = x[t] @ w[d].T + wb
                zr = xw[:, :2 * hidden] + h @ r[d][:2 * hidden].T + \
                    rb[:2 * hidden]
                z, rr = sigmoid(zr[:, :hidden]), sigmoid(zr[:, hidden:])
                cand = np.tanh(xw[:, 2 * hidden:] +
                               (rr * h) @ r[d][2 * hidden:].T +
                               rb[2 * hidden:])
                h_new = (1 - z) * cand + z * h
            h = np.where(valid, h_new, h)
            y[t, d] = np.where(valid, h_new, 0)
        yh[d], yc[d] = h, c
    return [a.astype(np.float32) for a in (y, yh, yc)]


def recurrent_case(rng, kind, seq, batch, inputs, hidden, direction, lens):
    """Every step's output joined into Y (in pieces of at most 64 steps
    past that), both directions' states, masked steps."""
    gates = 4 if kind == "LSTM" else 3
    dirs = {"forward": [False], "reverse": [True],
            "bidirectional": [False, True]}[direction]
    x = rng.standard_normal((seq, batch, inputs)).astype(np.float32)
    w = (rng.standard_normal((len(dirs), gates * hidden, inputs)) *
         0.5).astype(np.float32)
    r = (rng.standard_normal((len(dirs), gates * hidden, hidden)) *
         0.5).astype(np.float32)
    b = (rng.standard_normal((len(dirs), 2 * gates * hidden)) *
         0.1).astype(np.float32)
    lens_array = np.array(lens, dtype=np.int32)
    outs = ["y", "yh", "yc"] if kind == "LSTM" else ["y", "yh"]
    model = make_model(
        [helper.make_node(kind, ["x", "w", "r", "b", "lens"], outs,
                          hidden_size=hidden, direction=direction)],
        [value("x", F, list(x.shape))],
        [value("y", F, [seq, len(dirs), batch, hidden]),
         value("yh", F, [len(dirs), batch, hidden])] +
        ([value("yc", F, [len(dirs), batch, hidden])]
         if kind == "LSTM" else []),
        initializers=[
            helper.make_tensor("w", F, list(w.shape), w.flatten().tolist()),
            helper.make_tensor("r", F, list(r.shape), r.flatten().tolist()),
            helper.make_tensor("b", F, list(b.shape), b.flatten().tolist()),
            helper.make_tensor("lens", TensorProto.INT32, [batch], lens)])
    want = recurrent_reference(kind, x.astype(np.float64), w, r, b,
                               lens_array, dirs)
    return (f"{kind.lower()}_{direction}_{seq}_steps", model, [x],
            want[:len(outs)])


def conv_reference(x, w, b=None, stride=1, pad=0, dilation=1, groups=1):
    """NCHW convolution as ONNX's Conv defines it, in float64."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = x[:, g * cg:(g + 1) * cg,
                          i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                          j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
                y[:, g * fg:(g + 1) * fg] += np.einsum(
                    "nchw,fc->nfhw", patch, w[g * fg:(g + 1) * fg, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def max_pool_reference(x, k, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)),
               constant_values=-np.inf)
    oh = (x.shape[2] - k) // stride + 1
    ow = (x.shape[3] - k) // stride + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, x[:, :, i:i + stride * (oh - 1) + 1:stride,
                                j:j + stride * (ow - 1) + 1:stride])
    return y


def cnn_case(rng, batch, height, width):
    """A small CNN whose channel counts divide the vector width: a stem on
    3 channels, max pool, a residual block with a 1x1 projection, a dilated
    and a depthwise convolution, and a last 1x1 convolution to 24 channels
    (not a multiple of 16) before global average pooling; the residual
    block's output is a second result. Odd map sizes give partial rows."""
    def weights(name, shape, scale):
        return name, (rng.standard_normal(shape) * scale).astype(np.float32)

    params = dict([
        weights("w_stem", (16, 3, 3, 3), 0.4), weights("b_stem", (16,), 0.1),
        weights("w_a", (32, 16, 3, 3), 0.15), weights("b_a", (32,), 0.1),
        weights("w_b", (32, 32, 3, 3), 0.1), weights("b_b", (32,), 0.1),
        weights("w_proj", (32, 16, 1, 1), 0.3),
        weights("w_dw", (32, 1, 3, 3), 0.4), weights("b_dw", (32,), 0.1),
        weights("w_last", (24, 32, 1, 1), 0.2), weights("b_last", (24,), 0.1),
    ])
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w_stem", "b_stem"], ["stem"], strides=[2, 2],
             pads=[1, 1, 1, 1]),
        node("Relu", ["stem"], ["stem_relu"]),
        node("MaxPool", ["stem_relu"], ["pool"], kernel_shape=[3, 3],
             strides=[2, 2], pads=[1, 1, 1, 1]),
        node("Conv", ["pool", "w_a", "b_a"], ["a"], pads=[1, 1, 1, 1]),
        node("Relu", ["a"], ["a_relu"]),
        node("Conv", ["a_relu", "w_b", "b_b"], ["b"], pads=[2, 2, 2, 2],
             dilations=[2, 2]),
        node("Conv", ["pool", "w_proj"], ["proj"]),
        node("Add", ["b", "proj"], ["sum"]),
        node("Relu", ["sum"], ["block"]),
        node("Conv", ["block", "w_dw", "b_dw"], ["dw"], pads=[1, 1, 1, 1],
             group=32),
        node("Clip", ["dw", "lo", "hi"], ["dw_clip"]),
        node("Conv", ["dw_clip", "w_last", "b_last"], ["last"]),
        node("GlobalAveragePool", ["last"], ["y"]),
    ]
    x = rng.standard_normal((batch, 3, height, width)).astype(np.float32)
    sh = (height - 1) // 2 + 1
    sw = (width - 1) // 2 + 1
    ph, pw = (sh - 1) // 2 + 1, (sw - 1) // 2 + 1
    initializers = [helper.make_tensor(k, F, list(v.shape), v.flatten().tolist())
                    for k, v in params.items()]
    initializers += [helper.make_tensor("lo", F, [], [0.0]),
                     helper.make_tensor("hi", F, [], [6.0])]
    model = make_model(nodes, [value("x", F, list(x.shape))],
                       [value("y", F, [batch, 24, 1, 1]),
                        value("block", F, [batch, 32, ph, pw])],
                       initializers=initializers)
    p = params
    stem = np.maximum(conv_reference(x, p["w_stem"], p["b_stem"], stride=2,
                                     pad=1), 0)
    pool = max_pool_reference(stem, 3, 2, 1)
    a = np.maximum(conv_reference(pool, p["w_a"], p["b_a"], pad=1), 0)
    b = conv_reference(a, p["w_b"], p["b_b"], pad=2, dilation=2)
    block = np.maximum(b + conv_reference(pool, p["w_proj"]), 0)
    dw = np.clip(conv_reference(block, p["w_dw"], p["b_dw"], pad=1,
                                groups=32), 0, 6)
    last = conv_reference(dw, p["w_last"], p["b_last"])
    y = last.mean(axis=(2, 3), keepdims=True)
    return (f"cnn_blocked_channels_{batch}x{height}x{width}", model, [x],
            [y.astype(np.float32), block.astype(np.float32)])


def grouped_cnn_case(rng, batch, size, groups):
    """Convolutions around a grouped 3x3 convolution whose channels per
    group divide the vector width (each group a blocked convolution): the
    layout stays blocked through it, the reshapes into and out of groups
    included."""
    def weights(name, shape, scale):
        return name, (rng.standard_normal(shape) * scale).astype(np.float32)

    width = 16 * groups
    params = dict([
        weights("w_in", (width, 3, 3, 3), 0.4), weights("b_in", (width,), 0.1),
        weights("w_g", (width, 16, 3, 3), 0.15), weights("b_g", (width,), 0.1),
        weights("w_out", (16, width, 1, 1), 0.2),
    ])
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w_in", "b_in"], ["a"], pads=[1, 1, 1, 1]),
        node("Relu", ["a"], ["a_relu"]),
        node("Conv", ["a_relu", "w_g", "b_g"], ["g"], pads=[1, 1, 1, 1],
             group=groups),
        node("Relu", ["g"], ["g_relu"]),
        node("Conv", ["g_relu", "w_out"], ["y"]),
    ]
    x = rng.standard_normal((batch, 3, size, size)).astype(np.float32)
    initializers = [helper.make_tensor(k, F, list(v.shape), v.flatten().tolist())
                    for k, v in params.items()]
    model = make_model(nodes, [value("x", F, list(x.shape))],
                       [value("y", F, [batch, 16, size, size])],
                       initializers=initializers)
    p = params
    a = np.maximum(conv_reference(x, p["w_in"], p["b_in"], pad=1), 0)
    g = np.maximum(conv_reference(a, p["w_g"], p["b_g"], pad=1,
                                  groups=groups), 0)
    y = conv_reference(g, p["w_out"])
    return (f"cnn_grouped_{groups}_{batch}x{size}", model, [x],
            [y.astype(np.float32)])


def sequence_positions_case(rng, erase_at, insert_at, read_at):
    """A sequence built from three tensors, one erased and one inserted at
    positions that arrive at run time, read back by SequenceAt (also at run
    time) and stacked whole by ConcatFromSequence."""
    shape = [2, 3]
    model = make_model(
        [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s1"]),
         helper.make_node("SequenceErase", ["s1", "erase_at"], ["s2"]),
         helper.make_node("SequenceInsert", ["s2", "d", "insert_at"], ["s3"]),
         helper.make_node("SequenceAt", ["s3", "read_at"], ["at"]),
         helper.make_node("ConcatFromSequence", ["s3"], ["all"], axis=-1,
                          new_axis=1)],
        [value(n, F, shape) for n in "abcd"]
        + [value(n, I64, []) for n in ("erase_at", "insert_at", "read_at")],
        [value("at", F, shape), value("all", F, shape + [3])])
    tensors = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
    sequence = tensors[:3]
    del sequence[erase_at]
    sequence.insert(insert_at if insert_at >= 0 else insert_at + len(sequence),
                    tensors[3])
    name = f"sequence_positions_{erase_at}_{insert_at}_{read_at}".replace("-", "m")
    positions = [np.array(p, dtype=np.int64) for p in (erase_at, insert_at, read_at)]
    return (name, model, tensors + positions,
            [sequence[read_at], np.stack(sequence, axis=-1)])


def split_to_sequence_case(rng):
    """SplitToSequence into pieces of 2 along axis 1 (the last one shorter),
    its length, its last piece and the pieces concatenated back."""
    model = make_model(
        [helper.make_node("SplitToSequence", ["x", "two"], ["s"], axis=1),
         helper.make_node("SequenceLength", ["s"], ["n"]),
         helper.make_node("SequenceAt", ["s", "last"], ["tail"]),
         helper.make_node("ConcatFromSequence", ["s"], ["back"], axis=1)],
        [value("x", F, [3, 5])],
        [value("n", I64, []), value("tail", F, [3, 1]), value("back", F, [3, 5])],
        initializers=[helper.make_tensor("two", I64, [], [2]),
                      helper.make_tensor("last", I64, [], [-1])])
    x = rng.standard_normal((3, 5)).astype(np.float32)
    return ("split_to_sequence", model, [x],
            [np.array(3, dtype=np.int64), x[:, 4:], x])


def sequence_mixed_shapes_case():
    """A run-time position into tensors of two shapes: no static result
    type, so the compile fails naming the types."""
    model = make_model(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
         helper.make_node("SequenceAt", ["s", "i"], ["y"])],
        [value("a", F, [2, 3]), value("b", F, [3, 3]), value("i", I64, [])],
        [value("y", F, [None, 3])])
    return ("sequence_mixed_shapes_refused", model, [],
            ("error", "needs tensors of one type"))


def sequence_too_long_case():
    """SplitToSequence into 5000 one-element tensors: past the most a
    sequence holds (each is imported on its own), refused by count."""
    model = make_model(
        [helper.make_node("SplitToSequence", ["x"], ["s"], keepdims=0),
         helper.make_node("SequenceLength", ["s"], ["n"])],
        [value("x", F, [5000])], [value("n", I64, [])])
    return ("sequence_too_long_refused", model, [],
            ("error", "splitting into 5000 tensors; a sequence holds at most 4096"))


class Check:
    """Outputs checked by a function instead of against fixed values (a
    random op's statistics): `check(outputs)` returns a problem or None."""

    def __init__(self, count, check):
        self.count, self.check = count, check


def dropout_training_case(rng, training, ratio):
    """Dropout in training mode with run-time training_mode and ratio: each
    element is kept (scaled by 1 / (1 - ratio)) or zeroed, the mask says
    which, and the kept share is within 5 standard deviations of
    1 - ratio; with training_mode false, the identity and an all-true
    mask."""
    shape = (4, 50, 500)
    x = rng.standard_normal(shape).astype(np.float32) + 3.0  # never 0
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"],
                            seed=5)
    model = make_model([node], [value("x", F, shape), value("r", F, []),
                                value("t", BOOL, [])],
                       [value("y", F, shape), value("mask", BOOL, shape)],
                       opset=13)

    def check(outputs):
        y, mask = outputs
        if y.shape != shape or mask.shape != shape:
            return f"shapes {y.shape}, {mask.shape}"
        if not training:
            if not np.array_equal(y, x) or not mask.all():
                return "inference must be the identity with an all-true mask"
            return None
        want = np.where(mask, x / np.float32(1 - ratio), np.float32(0))
        if not np.allclose(y, want, rtol=1e-6, atol=0):
            return f"y is not x * mask / (1 - ratio): max error {np.abs(y - want).max():.3g}"
        n = mask.size
        kept = mask.mean()
        sigma = np.sqrt(ratio * (1 - ratio) / n)
        if abs(kept - (1 - ratio)) > 5 * sigma + 1e-12:
            return f"kept {kept:.4f} of the elements, want {1 - ratio:.4f}"
        # Neighbouring elements draw independently: as many kept pairs as
        # chance gives.
        pairs = (mask[..., 1:] & mask[..., :-1]).mean()
        if abs(pairs - (1 - ratio) ** 2) > 0.01:
            return f"kept pairs {pairs:.4f}, want {(1 - ratio) ** 2:.4f}"
        return None

    name = f"dropout_training_{'on' if training else 'off'}_{ratio}"
    return (name, model, [x, np.array(ratio, np.float32),
                          np.array(training)], Check(2, check))


def optimizer_refused_case(name, inputs, outputs, want_error):
    """An Adagrad whose inputs do not form R, T and equal groups (X, G, H)
    of the right types is refused naming the problem, not imported
    wrongly."""
    node = helper.make_node("Adagrad", [n for n, _, _ in inputs], outputs,
                            domain="ai.onnx.preview.training")
    graph = helper.make_graph([node], "generated",
                              [value(n, e, sh) for n, e, sh in inputs],
                              [value(n, F, [2]) for n in outputs])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17),
        helper.make_opsetid("ai.onnx.preview.training", 1)])
    return (name, model, [], ("error", want_error))


def range_length(start, limit, delta):
    """ONNX Range's element count: max(ceil((limit - start) / delta), 0),
    computed in the operands' type."""
    if np.issubdtype(np.asarray(start).dtype, np.floating):
        return max(int(np.ceil((limit - start) / delta)), 0)
    span, step = int(limit) - int(start), int(delta)
    return max(-(-span // step), 0)


def runtime_range_case(name, dtype, start, limit, delta, want_error=None):
    """Range over scalars given at run time, then used: the length is
    computed on the device and read back by the host, which sizes what
    follows with it. Floats go through Cos, integers index a table
    (position embeddings)."""
    elem = {np.float32: F, np.int64: I64, np.int32: TensorProto.INT32}[dtype]
    s, l, d = (np.array(v, dtype) for v in (start, limit, delta))
    inputs = [value("s", elem, []), value("l", elem, []), value("d", elem, [])]
    floats = np.issubdtype(np.dtype(dtype), np.floating)
    table = np.arange(64 * 3, dtype=np.float32).reshape(64, 3)
    if floats:
        nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"]),
                 helper.make_node("Cos", ["r"], ["y"])]
        model = make_model(nodes, inputs, [value("y", elem, [None])])
    else:
        nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"]),
                 helper.make_node("Gather", ["table", "r"], ["y"])]
        model = make_model(nodes, inputs, [value("y", F, [None, 3])],
                           initializers=[helper.make_tensor(
                               "table", F, [64, 3], table.flatten())])
    if want_error:
        return (name, model, [s, l, d], ("run_error", want_error))
    r = (s + np.arange(range_length(s, l, d)).astype(dtype) * d).astype(dtype)
    return (name, model, [s, l, d], [np.cos(r) if floats else table[r]])


def declared_range_case(name, limit, declared, want_error=None):
    """A Range of run-time length whose graph output is declared static
    (ONNX's expanded window functions): the declaration is checked at the
    call, naming the output."""
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"]),
             helper.make_node("Mul", ["r", "r"], ["y"])]
    model = make_model(nodes, [value("s", F, []), value("l", F, []),
                               value("d", F, [])],
                       [value("y", F, [declared])])
    s, l, d = (np.array(v, np.float32) for v in (0.5, limit, 1.5))
    if want_error:
        return (name, model, [s, l, d], ("run_error", want_error))
    r = s + np.arange(range_length(s, l, d)).astype(np.float32) * d
    return (name, model, [s, l, d], [r * r])


def runtime_topk_case(rng, name, k, largest, want_error=None):
    """TopK whose K arrives at run time with no result shape declared: the
    host reads K back, checks it against the axis and sizes the results;
    ties go to the lower index."""
    x = rng.integers(0, 6, (3, 10)).astype(np.float32)  # many ties
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"],
                            axis=1, largest=largest)
    model = make_model([node], [value("x", F, [3, 10]), value("k", I64, [1])],
                       [value("values", F, [3, None]),
                        value("indices", I64, [3, None])])
    inputs = [x, np.array([k], np.int64)]
    if want_error:
        return (name, model, inputs, ("run_error", want_error))
    order = np.argsort(-x if largest else x, axis=1, kind="stable")[:, :k]
    return (name, model, inputs,
            [np.take_along_axis(x, order, axis=1), order.astype(np.int64)])


def scatter_nd_reference(data, indices, updates, reduction):
    """ScatterND as the ONNX operator defines it: updates applied in index
    order, negative indices from the end."""
    out = data.copy()
    k = indices.shape[-1]
    flat_indices = indices.reshape(-1, k)
    flat_updates = updates.reshape((flat_indices.shape[0],) + data.shape[k:])
    for index, update in zip(flat_indices, flat_updates):
        at = tuple(int(i) % data.shape[d] for d, i in enumerate(index))
        if reduction == "add":
            out[at] += update
        elif reduction == "max":
            out[at] = np.maximum(out[at], update)
        else:
            out[at] = update
    return out


def dynamic_scatter_nd_case(rng, name, data_shape, index_shape, reduction,
                            update_shape=None, want_error=None):
    """ScatterND with every dim known only at run time, as slice assignment
    over a padded image's size exports (Swin's shifted-window mask):
    duplicates combine in index order."""
    k = index_shape[-1]
    data = rng.standard_normal(data_shape).astype(np.float32)
    high = np.array(data_shape[:k]).reshape((1,) * (len(index_shape) - 1)
                                            + (k,))
    indices = (rng.integers(0, 1 << 30, index_shape) % high
               - rng.integers(0, 2, index_shape) * high).astype(np.int64)
    if update_shape is None:
        update_shape = tuple(index_shape[:-1]) + tuple(data_shape[k:])
    updates = rng.standard_normal(update_shape).astype(np.float32)
    node = helper.make_node("ScatterND", ["data", "indices", "updates"],
                            ["y"], reduction=reduction)
    dynamic = lambda rank: [None] * rank
    model = make_model(
        [node], [value("data", F, dynamic(len(data_shape))),
                 value("indices", I64, dynamic(len(index_shape) - 1) + [k]),
                 value("updates", F, dynamic(len(update_shape)))],
        [value("y", F, dynamic(len(data_shape)))], opset=18)
    inputs = [data, indices, updates]
    if want_error:
        return (name, model, inputs, ("run_error", want_error))
    return (name, model, inputs,
            [scatter_nd_reference(data, indices, updates, reduction)])


def dynamic_scatter_elements_case(rng, name, data_shape, index_shape, axis,
                                  reduction, want_error=None):
    """ScatterElements with every dim known only at run time: updates
    applied in index order (negative indices from the end)."""
    data = rng.standard_normal(data_shape).astype(np.float32)
    size = data_shape[axis]
    indices = (rng.integers(0, size, index_shape)
               - rng.integers(0, 2, index_shape) * size).astype(np.int64)
    updates = rng.standard_normal(index_shape).astype(np.float32)
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"],
                            ["y"], axis=axis, reduction=reduction)
    rank = len(data_shape)
    model = make_model(
        [node], [value("data", F, [None] * rank),
                 value("indices", I64, [None] * rank),
                 value("updates", F, [None] * rank)],
        [value("y", F, [None] * rank)], opset=18)
    inputs = [data, indices, updates]
    if want_error:
        return (name, model, inputs, ("run_error", want_error))
    want = data.copy()
    for position in np.ndindex(*index_shape):
        at = list(position)
        at[axis] = int(indices[position]) % size
        at = tuple(at)
        want[at] = want[at] + updates[position] if reduction == "add" \
            else updates[position]
    return (name, model, inputs, [want])


def dynamic_gather_elements_case(rng, name, data_shape, index_shape, axis,
                                 want_error=None):
    """GatherElements with every dim known only at run time: the result has
    the indices' shape (negative indices from the end)."""
    data = rng.standard_normal(data_shape).astype(np.float32)
    size = data_shape[axis]
    indices = (rng.integers(0, size, index_shape)
               - rng.integers(0, 2, index_shape) * size).astype(np.int64)
    node = helper.make_node("GatherElements", ["data", "indices"], ["y"],
                            axis=axis)
    rank = len(data_shape)
    model = make_model(
        [node], [value("data", F, [None] * rank),
                 value("indices", I64, [None] * rank)],
        [value("y", F, [None] * rank)])
    if want_error:
        return (name, model, [data, indices], ("run_error", want_error))
    # The data's corner the indices cover off the axis.
    covered = data[tuple(slice(None) if d == axis % rank else slice(0, n)
                         for d, n in enumerate(index_shape))]
    want = np.take_along_axis(covered, indices % size, axis)
    return (name, model, [data, indices], [want])


def empty_indexed_dim_case(name, op, data_shape, index_shape, attrs,
                           out_rank, want_error, dynamic=True):
    """`op` indexing into a data dim that is empty while its indices are
    not: no position to clamp an index into, so a clear error (at the call
    for run-time sizes, at compile time for static ones), never a read or
    write out of bounds."""
    data = np.zeros(data_shape, np.float32)
    indices = np.zeros(index_shape, np.int64)
    inputs = [value("data", F, [None] * len(data_shape) if dynamic
                    else list(data_shape)),
              value("indices", I64, [None] * len(index_shape) if dynamic
                    else list(index_shape))]
    names = ["data", "indices"]
    feeds = [data, indices]
    if op in ("ScatterElements", "ScatterND"):
        update_shape = (index_shape if op == "ScatterElements"
                        else index_shape[:-1] + data_shape[index_shape[-1]:])
        inputs.append(value("updates", F, [None] * len(update_shape)
                            if dynamic else list(update_shape)))
        names.append("updates")
        feeds.append(np.ones(update_shape, np.float32))
    if op in ("GatherND", "ScatterND"):
        inputs[1] = value("indices", I64, ([None] * (len(index_shape) - 1)
                                           if dynamic else
                                           list(index_shape[:-1]))
                          + [index_shape[-1]])
    node = helper.make_node(op, names, ["y"], **attrs)
    model = make_model([node], inputs, [value("y", F, [None] * out_rank)])
    if not dynamic:
        return (name, model, [], ("error", want_error))
    return (name, model, feeds, ("run_error", want_error))


def dynamic_gather_nd_case(rng, name, data_shape, index_shape, batch_dims):
    """GatherND with every dim but the indices' last known only at run
    time (a detector's or tagger's per-row picks over a dynamic batch)."""
    k = index_shape[-1]
    data = rng.standard_normal(data_shape).astype(np.float32)
    high = np.array(data_shape[batch_dims:batch_dims + k])
    indices = (rng.integers(0, 1 << 30, index_shape) % high
               - rng.integers(0, 2, index_shape) * high).astype(np.int64)
    node = helper.make_node("GatherND", ["data", "indices"], ["y"],
                            batch_dims=batch_dims)
    out_rank = len(index_shape) - 1 + len(data_shape) - batch_dims - k
    model = make_model(
        [node], [value("data", F, [None] * len(data_shape)),
                 value("indices", I64, [None] * (len(index_shape) - 1) + [k])],
        [value("y", F, [None] * out_rank)])
    batch = int(np.prod(data_shape[:batch_dims]))
    flat_data = data.reshape((batch,) + data_shape[batch_dims:])
    flat_indices = indices.reshape((batch, -1, k))
    rows = [[flat_data[(b,) + tuple(int(i) % data_shape[batch_dims + j]
                                    for j, i in enumerate(index))]
             for index in flat_indices[b]] for b in range(batch)]
    want = np.array(rows, np.float32).reshape(
        tuple(index_shape[:-1]) + tuple(data_shape[batch_dims + k:]))
    return (name, model, [data, indices], [want])


def pad_reference(x, pads, value):
    """Constant Pad with ONNX's pads [begin..., end...]; negative pads
    crop."""
    rank = x.ndim
    begin, end = pads[:rank], pads[rank:]
    x = x[tuple(slice(max(-b, 0), x.shape[d] - max(-e, 0))
                for d, (b, e) in enumerate(zip(begin, end)))]
    return np.pad(x, [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)],
                  constant_values=value)


def runtime_pad_case(rng, name, shape, pads, dynamic):
    """Pad whose pads arrive at run time (center-crop-pad, letterboxing):
    the host reads them back and sizes the result; the input's dims are
    dynamic or static."""
    x = rng.standard_normal(shape).astype(np.float32)
    node = helper.make_node("Pad", ["x", "pads", "value"], ["y"])
    dims = [None] * len(shape) if dynamic else list(shape)
    model = make_model([node], [value("x", F, dims),
                                value("pads", I64, [2 * len(shape)]),
                                value("value", F, [])],
                       [value("y", F, [None] * len(shape))])
    pads = np.array(pads, np.int64)
    fill = np.array(0.5, np.float32)
    return (name, model, [x, pads, fill], [pad_reference(x, pads, 0.5)])


def runtime_slice_case(rng, name, shape, starts, ends, axes, dynamic):
    """Slice whose starts and ends arrive at run time with no result size
    declared: the host reads them back (normalized, clamped) and sizes the
    result."""
    x = rng.standard_normal(shape).astype(np.float32)
    node = helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"])
    dims = [None] * len(shape) if dynamic else list(shape)
    model = make_model(
        [node], [value("x", F, dims), value("starts", I64, [len(starts)]),
                 value("ends", I64, [len(ends)])],
        [value("y", F, [None] * len(shape))],
        initializers=[helper.make_tensor("axes", I64, [len(axes)], axes)])
    index = [slice(None)] * len(shape)
    for s, e, a in zip(starts, ends, axes):
        index[a] = slice(s, e)
    return (name, model, [x, np.array(starts, np.int64),
                          np.array(ends, np.int64)], [x[tuple(index)]])


# Cases whose executables keep dynamic shapes: the vmvx target refuses
# them, naming why.
DYNAMIC_EXECUTABLE_PREFIXES = ("if_dynamic_", "prelu_dynamic_", "onehot_dynamic_", "einsum_dynamic_", "square_input_", "range_runtime_", "topk_runtime_",
                               "scatter_nd_dynamic_", "gather_nd_dynamic_",
                               "scatter_elements_dynamic_",
                               "gather_elements_dynamic_",
                               "pad_runtime_",
                               "slice_runtime_",
                               "empty_indexed_dim_Gather",
                               "empty_indexed_dim_Scatter")
VMVX_DYNAMIC_ERROR = "the vmvx target compiles static shapes only"


def cases():
    rng = np.random.default_rng(7)
    yield sequence_too_long_case()
    yield sequence_positions_case(rng, 1, -1, 2)
    yield sequence_positions_case(rng, -3, 0, -1)
    yield sequence_positions_case(rng, 2, 2, 0)
    yield split_to_sequence_case(rng)
    yield sequence_mixed_shapes_case()
    yield nms_case(rng, "nms_corners", 2, 3, 40, 0, 0.2)
    yield nms_case(rng, "nms_center_point", 1, 2, 60, 1, None)
    yield nms_case(rng, "nms_one_class_many_boxes", 1, 1, 200, 0, 0.5)
    yield loop_case(3, 6)
    yield loop_case(6, 6)
    yield loop_case(0, 4)
    yield growing_loop_case()
    yield if_case(True)
    yield if_case(False)
    yield if_on_dim_case(np.random.default_rng(11))
    yield pow_runtime_exponent_case()
    yield if_yields_initializer_case(True)
    yield if_yields_initializer_case(False)
    yield if_unimportable_branch_case(True)
    yield if_unimportable_branch_case(False)
    for mode in ("reflect", "wrap"):
        for rows in (3, 6):
            yield pad_dynamic_mode_case(mode, rows)
    yield squeeze_dynamic_case(1)
    yield prelu_dynamic_case(2, 5)
    yield onehot_dynamic_case(4, -1)
    yield onehot_dynamic_case(2, 1)
    yield einsum_dynamic_case("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)],
                              [["b", "i", 4], ["b", 4, "k"]], "bmm")
    yield einsum_dynamic_case("bhqd,bhkd->bhqk", [(1, 2, 5, 8), (1, 2, 7, 8)],
                              [["b", 2, "q", 8], ["b", 2, "k", 8]],
                              "attention")
    yield einsum_dynamic_case("ij,j->i", [(6, 3), (1,)],
                              [["n", "m"], [1]], "broadcast")
    yield einsum_dynamic_case("ij,jk->ik", [(2, 3), (4, 2)],
                              [["n", "m"], ["p", "q"]], "mismatch")
    yield square_input_case(4, 4)
    yield square_input_case(3, 5)
    yield topk_dynamic_case(3, 7, None)
    yield topk_dynamic_case(1, 4, None)
    yield topk_dynamic_case(4, 6, 2)
    yield topk_dynamic_case(2, 3, 5)
    for rows in (1, 2, 7):
        yield slice_backwards_case(rows)
    yield squeeze_dynamic_case(2)
    for cond in (True, False):
        yield if_shapes_differ_case(cond)
    for cond, rows in ((True, 4), (False, 3), (True, 3)):
        yield if_branch_invalid_case(cond, rows)
    for outer, inner in ((True, True), (True, False), (False, True)):
        yield if_nested_case(outer, inner)
    yield if_dead_branch_case(True)
    yield if_dead_branch_case(False)
    yield scan_case(rng)
    yield reduce_case(rng, 1)
    yield reduce_case(rng, 2)
    yield reduce_case(rng, -1)
    yield external_data_case(rng)
    yield large_splat_case(rng)
    yield recurrent_case(rng, "LSTM", 5, 3, 4, 6, "bidirectional", [5, 3, 1])
    yield recurrent_case(rng, "GRU", 70, 2, 3, 5, "reverse", [70, 41])
    yield recurrent_case(rng, "LSTM", 130, 1, 2, 4, "forward", [130])
    yield cnn_case(rng, 1, 37, 29)
    yield cnn_case(rng, 2, 16, 16)
    # Maps large enough that workgroups split the stem's rows, which its
    # dispatch writes into the max pool's padded input.
    yield cnn_case(rng, 1, 150, 130)
    yield grouped_cnn_case(rng, 1, 23, 2)
    yield grouped_cnn_case(rng, 2, 12, 4)
    yield dropout_training_case(rng, True, 0.3)
    yield dropout_training_case(rng, True, 0.0)
    yield dropout_training_case(rng, False, 0.5)
    yield runtime_range_case("range_runtime_float", np.float32, 0.25, 7.0,
                             0.5)
    yield runtime_range_case("range_runtime_float_empty", np.float32, 3.0,
                             1.0, 0.5)
    yield runtime_range_case("range_runtime_int64_down", np.int64, 60, -3, -7)
    yield runtime_range_case("range_runtime_int32", np.int32, 2, 50, 3)
    yield runtime_range_case("range_runtime_zero_delta", np.int64, 0, 5, 0,
                             "delta is zero")
    yield runtime_range_case("range_runtime_nan_limit", np.float32, 0.0,
                             np.nan, 1.0, "an operand is not finite")
    yield runtime_range_case("range_runtime_too_long", np.int64, 0, 1 << 40,
                             1, "more than 2147483647 elements")
    yield runtime_topk_case(rng, "topk_runtime_k_largest", 4, 1)
    yield runtime_topk_case(rng, "topk_runtime_k_smallest", 10, 0)
    yield runtime_topk_case(rng, "topk_runtime_k_zero", 0, 1)
    yield runtime_topk_case(rng, "topk_runtime_k_too_large", 11, 1,
                            "K is not in [0, 10], the size of axis 1")
    yield dynamic_scatter_nd_case(rng, "scatter_nd_dynamic_mask", (9, 14),
                                  (3, 5, 2), "none")
    yield dynamic_scatter_nd_case(rng, "scatter_nd_dynamic_rows_add",
                                  (6, 4, 5), (7, 1), "add")
    yield dynamic_scatter_nd_case(rng, "scatter_nd_dynamic_max", (5, 3, 4),
                                  (2, 2, 2), "max")
    yield dynamic_scatter_nd_case(
        rng, "scatter_nd_dynamic_bad_updates", (9, 14), (3, 5, 2), "none",
        update_shape=(3, 4),
        want_error="ScatterND computing 'y': dim 1 of updates and indices "
                   "differ")
    yield dynamic_scatter_elements_case(rng, "scatter_elements_dynamic_rows",
                                        (5, 7), (3, 7), 0, "none")
    yield dynamic_scatter_elements_case(rng, "scatter_elements_dynamic_add",
                                        (4, 6, 3), (4, 9, 2), 1, "add")
    yield dynamic_scatter_elements_case(
        rng, "scatter_elements_dynamic_too_large", (4, 6), (5, 2), 1, "none",
        want_error="ScatterElements computing 'y': dim 0 of indices is larger "
                   "than the data's")
    # One model at two run-time sizes per axis; the indices may be longer
    # than the data along the axis and shorter off it.
    yield dynamic_gather_elements_case(rng, "gather_elements_dynamic_rows",
                                       (5, 7), (3, 7), 0)
    yield dynamic_gather_elements_case(
        rng, "gather_elements_dynamic_rows_other_size", (2, 3), (6, 2), 0)
    yield dynamic_gather_elements_case(rng, "gather_elements_dynamic_axis1",
                                       (4, 6, 3), (4, 9, 2), 1)
    yield dynamic_gather_elements_case(
        rng, "gather_elements_dynamic_axis1_other_size", (2, 3, 5),
        (1, 2, 5), 1)
    yield dynamic_gather_elements_case(rng, "gather_elements_dynamic_last",
                                       (3, 5), (2, 8), -1)
    yield dynamic_gather_elements_case(
        rng, "gather_elements_dynamic_too_large", (4, 6), (5, 2), 1,
        want_error="GatherElements computing 'y': dim 0 of indices is larger "
                   "than the data's")
    for op, data_shape, index_shape, attrs, dim, out_rank in [
            ("Gather", (3, 0, 2), (4,), {"axis": 1}, 1, 3),
            ("GatherElements", (3, 0), (3, 2), {"axis": 1}, 1, 2),
            ("GatherND", (0, 3), (2, 1), {}, 0, 2),
            ("ScatterElements", (0, 2), (1, 2), {"axis": 0}, 0, 2),
            ("ScatterND", (2, 0), (3, 2), {}, 1, 2)]:
        yield empty_indexed_dim_case(
            f"empty_indexed_dim_{op}", op, data_shape, index_shape, attrs,
            out_rank, f"{op} computing 'y': dim {dim} of the data is empty "
            "but the indices are not")
    yield empty_indexed_dim_case(
        "empty_indexed_dim_static", "Gather", (3, 0), (2,), {"axis": 1}, 2,
        "dim 1 of the data is empty but the indices are not", dynamic=False)
    yield dynamic_gather_nd_case(rng, "gather_nd_dynamic_rows", (6, 5, 4),
                                 (3, 2, 2), 0)
    yield dynamic_gather_nd_case(rng, "gather_nd_dynamic_batch", (3, 7, 4),
                                 (3, 5, 1), 1)
    yield runtime_pad_case(rng, "pad_runtime_dynamic", (5, 7),
                           [1, 0, 2, 3], True)
    yield runtime_pad_case(rng, "pad_runtime_dynamic_crop", (6, 4, 3),
                           [-2, 1, 0, 1, -3, 0], True)
    yield runtime_pad_case(rng, "pad_runtime_static_input", (4, 5),
                           [0, 2, 3, 0], False)
    yield runtime_slice_case(rng, "slice_runtime_dynamic", (9, 8, 3),
                             [2, -5], [7, 1 << 62], [0, 1], True)
    yield runtime_slice_case(rng, "slice_runtime_static_input", (9, 8),
                             [-4], [100], [1], False)
    yield runtime_slice_case(rng, "slice_runtime_empty", (9, 8), [6, 0],
                             [3, 8], [0, 1], True)
    yield declared_range_case("range_declared_length", 10.0, 7)
    yield declared_range_case(
        "range_declared_length_wrong", 9.0, 7,
        "graph output 'y': dim 0 computed at run time is not the declared 7")
    yield optimizer_refused_case(
        "adagrad_missing_state",
        [("R", F, []), ("T", I64, []), ("X", F, [2]), ("G", F, [2])],
        ["X_new"], "expects R, T and 3 groups of tensors")
    yield optimizer_refused_case(
        "adagrad_float_count",
        [("R", F, []), ("T", F, []), ("X", F, [2]), ("G", F, [2]),
         ("H", F, [2])],
        ["X_new", "H_new"], "T must be an int64 scalar")


def run(bin_dir, compile_args, name, model, inputs, wants, files, tmp):
    path = os.path.join(tmp, name + ".onnx")
    module = os.path.join(tmp, name + ".smod")
    save(model, path)
    for relative, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(tmp, relative)),
                    exist_ok=True)
        with open(os.path.join(tmp, relative), "wb") as f:
            f.write(data)
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path,
                           "-o", module] + compile_args,
                          capture_output=True, text=True)
    if isinstance(wants, tuple) and wants[0] == "error":
        if proc.returncode == 0:
            return "compiled, but an error was expected"
        if wants[1] not in proc.stderr:
            return "compile error without '" + wants[1] + "': " + proc.stderr.strip()[:400]
        return None
    if proc.returncode != 0:
        return "compile error: " + proc.stderr.strip()[:400]
    run_error = wants[1] if (isinstance(wants, tuple)
                             and wants[0] == "run_error") else None
    if run_error:
        wants = []
    command = [os.path.join(bin_dir, "strata-run"), f"--module={module}",
               "--function=main"]
    for i, array in enumerate(inputs):
        p = os.path.join(tmp, f"{name}_in{i}.npy")
        np.save(p, array)
        command.append(f"--input=@{p}")
    count = wants.count if isinstance(wants, Check) else len(wants)
    outs = [os.path.join(tmp, f"{name}_out{i}.npy") for i in range(count)]
    command += [f"--output=@{p}" for p in outs]
    proc = subprocess.run(command, capture_output=True, text=True)
    if run_error:
        if proc.returncode == 0:
            return "ran, but an error was expected"
        if run_error not in proc.stderr:
            return "run error without '" + run_error + "': " + proc.stderr.strip()[:400]
        return None
    if proc.returncode != 0:
        return "run error: " + proc.stderr.strip()[:400]
    if isinstance(wants, Check):
        return wants.check([np.load(p) for p in outs])
    for i, (p, want) in enumerate(zip(outs, wants)):
        if want is None:
            continue
        got = np.load(p)
        if got.shape != want.shape:
            return f"output {i}: shape {got.shape}, want {want.shape}"
        if want.dtype.kind == "f":
            if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                return f"output {i}: max error {np.abs(got - want).max():.3g}"
        elif not np.array_equal(got, want):
            return f"output {i}: got {got.tolist()}, want {want.tolist()}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--compile-arg", action="append", default=[])
    args = parser.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-generated-") as tmp:
        vmvx = "--target=vmvx" in args.compile_arg
        for name, model, inputs, wants, *files in cases():
            if vmvx and name.startswith(DYNAMIC_EXECUTABLE_PREFIXES):
                wants = ("error", VMVX_DYNAMIC_ERROR)
            problem = run(args.bin, args.compile_arg, name, model, inputs,
                          wants, files[0] if files else {}, tmp)
            print(f"{'FAIL' if problem else 'ok  '} {name}"
                  + (f": {problem}" if problem else ""))
            if problem:
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
