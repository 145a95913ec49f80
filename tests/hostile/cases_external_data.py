"""ONNX external data that tries to leave the model's folder (SPEC: the
importer resolves locations as ONNX Runtime does; ExternalData.h)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

from run_hostile import Case

WEIGHTS = np.arange(4, dtype=np.float32)


def write_model(path, location, offset=None, length=None, extra=()):
    """Add(x, w) where w's 4 floats live in external data at `location`."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    entries = [] if location is None else [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for key, value in list(entries) + list(extra):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def make_cases(out_dir):
    outside = out_dir / "outside.bin"          # beside, not inside, the folder
    outside.write_bytes(WEIGHTS.tobytes())
    (out_dir / "outside_dir").mkdir(exist_ok=True)
    cases = []

    def case(name, location, error, **kwargs):
        folder = out_dir / name
        folder.mkdir(exist_ok=True)
        (folder / "weights.bin").write_bytes(WEIGHTS.tobytes())
        model = write_model(folder / "model.onnx", location, **kwargs)
        cases.append(Case(name, [["strata-compile", model, "-o",
                                  folder / "out.smod"]], error, timeout=20))
        return folder

    case("absolute_path", str(outside), r"tensor 'w': external data "
         r"location '.*outside.bin' is an absolute path")
    case("dot_dot", "../outside.bin", r"tensor 'w': external data location "
         r"'\.\./outside\.bin' contains '\.\.'")
    case("dot_dot_inside_path", "sub/../../outside.bin", r"contains '\.\.'")
    case("dot_dot_backslash", "sub\\..\\..\\outside.bin", r"contains '\.\.'")
    folder = case("symlink_to_file_outside", "link.bin",
                  r"'link\.bin' resolves to .*outside\.bin, outside the "
                  r"allowed folder")
    os.symlink(outside, folder / "link.bin")
    folder = case("dot_dot_after_a_name", "linkdir/../outside.bin",
                  r"contains '\.\.'")
    folder = case("symlink_dir_then_file", "linkdir/weights.bin",
                  r"resolves to .*outside_dir/weights\.bin, outside")
    os.symlink(out_dir / "outside_dir", folder / "linkdir")
    (out_dir / "outside_dir" / "weights.bin").write_bytes(WEIGHTS.tobytes())
    folder = case("symlink_to_dev_zero", "zero.bin",
                  r"'zero\.bin' resolves to /dev/zero, outside")
    os.symlink("/dev/zero", folder / "zero.bin")
    folder = case("directory", "adir", r"'adir' is not a regular file")
    (folder / "adir").mkdir(exist_ok=True)
    folder = case("fifo", "pipe", r"'pipe' is not a regular file")
    os.mkfifo(folder / "pipe")
    case("missing_file", "nothing.bin", r"'nothing\.bin' cannot be opened")
    case("no_location", None, r"tensor 'w': external data location '' is "
         r"missing")
    case("offset_past_end", "weights.bin", r"offset 17 is past the end of "
         r"the file \(16 bytes\)", offset=17)
    case("length_past_end", "weights.bin", r"offset 8 \+ length 16 runs past "
         r"the end of the file \(16 bytes\)", offset=8, length=16)
    case("huge_length", "weights.bin", r"length 18446744073709551615 runs "
         r"past the end", length=2**64 - 1)
    case("length_overflows_64_bits", "weights.bin",
         r"has an invalid length '18446744073709551616'", length=2**64)
    case("negative_offset", "weights.bin", r"has an invalid offset '-4'",
         offset=-4)
    case("length_not_the_tensor_size", "weights.bin",
         r"holds 8 bytes, but the tensor's shape and type need 16",
         length=8)
    case("nul_in_location", "weights.bin\0/../../outside.bin",
         r"contains a NUL character")

    # Widening the root lets the same model compile; without it, refused.
    folder = out_dir / "wider_root" / "model"
    folder.mkdir(parents=True, exist_ok=True)
    (out_dir / "wider_root" / "shared.bin").write_bytes(WEIGHTS.tobytes())
    os.symlink("../shared.bin", folder / "shared.bin")
    model = write_model(folder / "model.onnx", "shared.bin")
    cases.append(Case("root_widened_by_flag", [
        ["strata-compile", model, "-o", folder / "out.smod",
         f"--external-data-root={out_dir / 'wider_root'}"],
        ["strata-compile", model, "-o", folder / "out.smod"]],
        r"'shared\.bin' resolves to .*wider_root/shared\.bin, outside the "
        r"allowed folder .*wider_root/model", timeout=20))
    return cases
