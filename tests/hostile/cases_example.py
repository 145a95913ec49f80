"""Placeholder class showing the format; replaced by the real classes."""
from run_hostile import Case


def make_cases(out_dir):
    bad = out_dir / "not_a_model.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    return [Case("garbage_onnx", [["strata-compile", bad, "-o", out_dir / "x.smod"]],
                 error=r"not a valid ONNX model")]
