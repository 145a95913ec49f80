#!/usr/bin/python3
"""LSTM, GRU and RNN nodes whose sequence and batch are symbolic dims
(`seq`, `batch`), compiled once unpinned and run at two sizes each with
strata-run, every output checked against a numpy implementation of the
ONNX operator definitions (float64): directions, layout 1, sequence
lengths, initial states, peepholes, GRU's linear_before_reset, clip and
non-default activations. Then the same node with a dynamic weight, refused
with a message naming it.

usage: dynamic_recurrent_test.py --bin BUILD/bin [--compile-arg=...]
Prints each case and the closing line `N passed, M failed`."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

F, I32 = TensorProto.FLOAT, TensorProto.INT32
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"],
                       "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
ACTIVATIONS = {
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Tanh": np.tanh,
    "Relu": lambda x: np.maximum(x, 0),
    "HardSigmoid": lambda x: np.clip(0.2 * x + 0.5, 0, 1),
}


def reference(kind, x, w, r, b, lens, h0, c0, p, direction, layout,
              linear_before_reset, clip, activations):
    """Y, Y_h (and Y_c) as the ONNX operator defines them."""
    if layout == 1:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    hidden = r.shape[2]
    dirs = {"forward": [False], "reverse": [True],
            "bidirectional": [False, True]}[direction]
    per = len(DEFAULT_ACTIVATIONS[kind])
    lens = np.full(batch, seq) if lens is None else lens
    y = np.zeros((seq, len(dirs), batch, hidden))
    yh = np.zeros((len(dirs), batch, hidden))
    yc = np.zeros((len(dirs), batch, hidden))
    for d, reverse in enumerate(dirs):
        acts = [ACTIVATIONS[a] for a in activations[d * per:(d + 1) * per]]

        def act(i, v):
            if clip is not None:
                v = np.clip(v, -clip, clip)
            return acts[i](v)

        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(float)
        c = np.zeros((batch, hidden)) if c0 is None else c0[d].astype(float)
        g = GATES[kind] * hidden
        wb, rb = b[d][:g], b[d][g:]
        for t in (reversed(range(seq)) if reverse else range(seq)):
            valid = (t < lens)[:, None]
            xw = x[t] @ w[d].T + wb
            if kind == "LSTM":
                gates = xw + h @ r[d].T + rb
                i, o, f, cc = np.split(gates, 4, axis=1)
                pi, po, pf = (np.split(p[d], 3) if p is not None
                              else (0, 0, 0))
                i = act(0, i + pi * c)
                f = act(0, f + pf * c)
                c_new = f * c + i * act(1, cc)
                h_new = act(0, o + po * c_new) * act(2, c_new)
                c = np.where(valid, c_new, c)
            elif kind == "GRU":
                rz = h @ r[d][:2 * hidden].T + rb[:2 * hidden]
                z = act(0, xw[:, :hidden] + rz[:, :hidden])
                rr = act(0, xw[:, hidden:2 * hidden] + rz[:, hidden:])
                rh, rbh = r[d][2 * hidden:], rb[2 * hidden:]
                if linear_before_reset:
                    n = act(1, xw[:, 2 * hidden:] + rr * (h @ rh.T + rbh))
                else:
                    n = act(1, xw[:, 2 * hidden:] + (rr * h) @ rh.T + rbh)
                h_new = (1 - z) * n + z * h
            else:
                h_new = act(0, xw + h @ r[d].T + rb)
            h = np.where(valid, h_new, h)
            y[t, d] = np.where(valid, h_new, 0)
        yh[d], yc[d] = h, c
    if layout == 1:
        y = y.transpose(2, 0, 1, 3)
        yh, yc = yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    outs = [y, yh, yc] if kind == "LSTM" else [y, yh]
    return [a.astype(np.float32) for a in outs]


class Case:
    def __init__(self, rng, name, kind, hidden=5, inputs=3,
                 direction="forward", layout=0, lens=False, initial=False,
                 peepholes=False, linear_before_reset=0, clip=None,
                 activations=None, dynamic_weight=False):
        self.name, self.kind, self.layout = name, kind, layout
        self.direction, self.hidden = direction, hidden
        nd = 2 if direction == "bidirectional" else 1
        g = GATES[kind] * hidden
        self.w = (rng.standard_normal((nd, g, inputs)) * 0.5).astype(np.float32)
        self.r = (rng.standard_normal((nd, g, hidden)) * 0.5).astype(np.float32)
        self.b = (rng.standard_normal((nd, 2 * g)) * 0.3).astype(np.float32)
        self.p = ((rng.standard_normal((nd, 3 * hidden)) * 0.3)
                  .astype(np.float32) if peepholes else None)
        self.lens, self.initial = lens, initial
        self.linear_before_reset, self.clip = linear_before_reset, clip
        self.activations = activations or DEFAULT_ACTIVATIONS[kind] * nd
        seq_batch = ["seq", "batch"] if layout == 0 else ["batch", "seq"]
        state = ([nd, "batch", hidden] if layout == 0
                 else ["batch", nd, hidden])
        names = ["X", "W", "R", "B", "lens" if lens else ""]
        graph_inputs = [helper.make_tensor_value_info(
            "X", F, seq_batch + [inputs])]
        if dynamic_weight:
            graph_inputs.append(helper.make_tensor_value_info(
                "W", F, [nd, g, "input"]))
        if lens:
            graph_inputs.append(
                helper.make_tensor_value_info("lens", I32, ["batch"]))
        if initial:
            names.append("h0")
            graph_inputs.append(helper.make_tensor_value_info("h0", F, state))
            if kind == "LSTM":
                names.append("c0")
                graph_inputs.append(
                    helper.make_tensor_value_info("c0", F, state))
        initializers = [numpy_helper.from_array(self.r, "R"),
                        numpy_helper.from_array(self.b, "B")]
        if not dynamic_weight:
            initializers.append(numpy_helper.from_array(self.w, "W"))
        if peepholes:
            names += [""] * (7 - len(names)) + ["P"]
            initializers.append(numpy_helper.from_array(self.p, "P"))
        outs = ["Y", "Y_h", "Y_c"] if kind == "LSTM" else ["Y", "Y_h"]
        y_shape = (["seq", nd, "batch", hidden] if layout == 0
                   else ["batch", "seq", nd, hidden])
        attrs = {"hidden_size": hidden, "direction": direction}
        if layout:
            attrs["layout"] = layout
        if kind == "GRU":
            attrs["linear_before_reset"] = linear_before_reset
        if clip is not None:
            attrs["clip"] = clip
        if activations:
            attrs["activations"] = activations
        node = helper.make_node(kind, names, outs, **attrs)
        graph = helper.make_graph(
            [node], name, graph_inputs,
            [helper.make_tensor_value_info(
                o, F, y_shape if o == "Y" else state) for o in outs],
            initializers)
        self.model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 14)])
        checker.check_model(self.model)

    def call(self, rng, seq, batch):
        """The inputs of a call at `seq` x `batch` and the outputs wanted."""
        nd = 2 if self.direction == "bidirectional" else 1
        shape = (seq, batch) if self.layout == 0 else (batch, seq)
        x = rng.standard_normal(shape + (self.w.shape[2],)).astype(np.float32)
        inputs = [x]
        lens = h0 = c0 = None
        if self.lens:
            lens = rng.integers(1, seq + 1, batch).astype(np.int32)
            inputs.append(lens)
        if self.initial:
            state = ((nd, batch, self.hidden) if self.layout == 0
                     else (batch, nd, self.hidden))
            h0 = rng.standard_normal(state).astype(np.float32)
            inputs.append(h0)
            if self.kind == "LSTM":
                c0 = rng.standard_normal(state).astype(np.float32)
                inputs.append(c0)
        want = reference(self.kind, x.astype(np.float64), self.w, self.r,
                         self.b, lens, h0, c0, self.p, self.direction,
                         self.layout, self.linear_before_reset, self.clip,
                         self.activations)
        return inputs, want


def run(bin_dir, compile_args, tmp, case, calls):
    path = os.path.join(tmp, case.name + ".onnx")
    module = os.path.join(tmp, case.name + ".smod")
    save(case.model, path)
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path,
                           "-o", module] + compile_args,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return "compile error: " + proc.stderr.strip()[:600]
    for inputs, want in calls:
        command = [os.path.join(bin_dir, "strata-run"), f"--module={module}",
                   "--function=main"]
        for i, array in enumerate(inputs):
            p = os.path.join(tmp, f"{case.name}_in{i}.npy")
            np.save(p, array)
            command.append(f"--input=@{p}")
        outs = [os.path.join(tmp, f"{case.name}_out{i}.npy")
                for i in range(len(want))]
        command += [f"--output=@{o}" for o in outs]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            return "run error: " + proc.stderr.strip()[:600]
        for i, (out, expected) in enumerate(zip(outs, want)):
            got = np.load(out)
            if got.shape != expected.shape:
                return (f"output {i} has shape {got.shape}, want "
                        f"{expected.shape} (X {inputs[0].shape})")
            error = np.abs(got - expected).max()
            if error > 1e-4 * np.abs(expected).max() + 1e-5:
                return (f"output {i}: max error {error:.3g} "
                        f"(X {inputs[0].shape})")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--compile-arg", action="append", default=[])
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    cases = [
        Case(rng, "lstm_forward", "LSTM"),
        Case(rng, "lstm_bidirectional_initial_peepholes", "LSTM",
             direction="bidirectional", initial=True, peepholes=True),
        Case(rng, "lstm_reverse_lengths", "LSTM", direction="reverse",
             lens=True, hidden=19),
        Case(rng, "lstm_layout1_initial", "LSTM", layout=1, initial=True,
             direction="bidirectional"),
        Case(rng, "lstm_clip_activations", "LSTM", clip=1.5,
             activations=["HardSigmoid", "Tanh", "Relu"]),
        Case(rng, "gru_forward", "GRU", hidden=17),
        Case(rng, "gru_linear_before_reset_bidirectional", "GRU",
             linear_before_reset=1, direction="bidirectional", initial=True),
        Case(rng, "gru_lengths_initial", "GRU", lens=True, initial=True),
        Case(rng, "rnn_bidirectional_lengths", "RNN",
             direction="bidirectional", lens=True),
        Case(rng, "rnn_layout1_relu", "RNN", layout=1,
             activations=["Relu"]),
    ]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-recurrent-") as tmp:
        results = []
        for case in cases:
            calls = [case.call(rng, 4, 2), case.call(rng, 9, 3),
                     case.call(rng, 1, 1)]
            results.append((case.name, run(args.bin, args.compile_arg, tmp,
                                           case, calls)))
        # A weight known only at run time cannot be sliced per direction
        # at compile time: refused, naming it.
        weight = Case(rng, "dynamic_weight", "LSTM", dynamic_weight=True)
        path = os.path.join(tmp, "dynamic_weight.onnx")
        save(weight.model, path)
        proc = subprocess.run(
            [os.path.join(args.bin, "strata-compile"), path, "-o",
             os.path.join(tmp, "dynamic_weight.smod")] + args.compile_arg,
            capture_output=True, text=True)
        problem = None
        if proc.returncode == 0:
            problem = "compiled; expected a refusal"
        elif proc.returncode < 0 or "Stack dump" in proc.stderr:
            problem = "crashed: " + proc.stderr[:400]
        elif "(LSTM)" not in proc.stderr or "'W'" not in proc.stderr:
            problem = "message lacks the node or 'W': " + proc.stderr[:400]
        results.append(("dynamic_weight_refused", problem))
        for name, problem in results:
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
