"""CPU levels: a --cpu the compiler does not know (alone or in a list of
variants, or listed twice), a module compiled for CPU features this host
lacks, and a module whose feature list was edited to
name features the runtime does not know. Each load is refused naming every
offending feature, before any executable is loaded."""
import pathlib
import re
import zlib

from run_hostile import Case

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "examples" / "simple_mul.mlir"
RUN = ["--function=simple_mul", "--input=4xf32=1 2 3 4", "--input=4xf32=5 6 7 8"]

# What a sapphirerapids module requires (cpu_features.def, use = codegen),
# and the /proc/cpuinfo flag of each.
SAPPHIRERAPIDS = {
    "avx": "avx", "avx2": "avx2", "avx512bf16": "avx512_bf16",
    "avx512bitalg": "avx512_bitalg", "avx512bw": "avx512bw",
    "avx512cd": "avx512cd", "avx512dq": "avx512dq", "avx512f": "avx512f",
    "avx512fp16": "avx512_fp16", "avx512ifma": "avx512ifma",
    "avx512vbmi": "avx512vbmi", "avx512vbmi2": "avx512_vbmi2",
    "avx512vl": "avx512vl", "avx512vnni": "avx512_vnni",
    "avx512vpopcntdq": "avx512_vpopcntdq", "avxvnni": "avx_vnni", "bmi": "bmi1",
    "bmi2": "bmi2", "cx16": "cx16", "f16c": "f16c", "fma": "fma",
    "gfni": "gfni", "lzcnt": "abm", "movbe": "movbe", "popcnt": "popcnt",
    "prfchw": "3dnowprefetch", "sahf": "lahf_lm", "sse3": "pni",
    "sse4.1": "sse4_1", "sse4.2": "sse4_2", "ssse3": "ssse3",
}


def host_flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def rename_features(module, out, renames):
    """Rewrites the module's comma-separated feature list (rodata, same
    length) and the CRC-32 the module records for it."""
    data = bytearray(module.read_bytes())
    match = re.search(rb"(?:[a-z0-9.\-]+,){3,}[a-z0-9.\-]+", bytes(data))
    assert match, "no CPU feature list in the module"
    old = match.group(0)
    new = old
    for before, after in renames:
        assert len(before) == len(after)
        new = new.replace(before, after)
    old_crc = zlib.crc32(old).to_bytes(4, "little")
    assert data.count(old_crc) == 1, "the feature list's CRC-32 is not unique"
    data[match.start():match.end()] = new
    at = data.find(old_crc)
    data[at:at + 4] = zlib.crc32(new).to_bytes(4, "little")
    out.write_bytes(bytes(data))


def make_cases(out_dir):
    cases = []
    for cpu, pattern in (("bogus", "bogus"), ("i386", "i386"), ("", "")):
        cases.append(Case(
            f"unknown_cpu_{cpu or 'empty'}",
            [["strata-compile", PROGRAM, f"--cpu={cpu}", "-o", out_dir / "x.smod"]],
            error=rf"cannot target CPU '{pattern}': unknown CPU '{pattern}': name host, "
                  r"an x86-64 level"))

    cases.append(Case(
        "cpu_listed_twice",
        [["strata-compile", PROGRAM, "--cpu=x86-64-v2,x86-64-v3,x86-64-v2", "-o",
          out_dir / "x.smod"]],
        error=r"--cpu names 'x86-64-v2' twice"))
    cases.append(Case(
        "unknown_cpu_in_list",
        [["strata-compile", PROGRAM, "--cpu=x86-64-v3,,znver4", "-o", out_dir / "x.smod"]],
        error=r"cannot target CPU '': unknown CPU ''"))

    # A module for a CPU with features this host lacks: refused at load,
    # naming the missing ones. The runtime asks CPUID; the kernel may hide a
    # feature CPUID has (a Firecracker guest on an EPYC lists no abm, the
    # lzcnt flag), so each name must be one the kernel lacks too, and
    # avx512fp16 (no x86 host before Sapphire Rapids has it) among them.
    missing = sorted(n for n, flag in SAPPHIRERAPIDS.items() if flag not in host_flags())
    if missing:
        module = out_dir / "sapphirerapids.smod"
        name = "(?:" + "|".join(re.escape(n) for n in missing) + ")"
        must = r"(?=[^\n]*\bavx512fp16\b)" if "avx512fp16" in missing else ""
        cases.append(Case(
            "module_for_missing_features",
            [["strata-compile", PROGRAM, "--cpu=sapphirerapids", "-o", module],
             ["strata-run", f"--module={module}"] + RUN],
            error="FAILED_PRECONDITION: .*this CPU lacks " + must + name
                  + "(?:, " + name + ")*, which the module's executables were compiled for"))

    # A feature list naming features no runtime knows (a newer compiler's,
    # or an edited file): refused, naming them, not ignored.
    compiled = out_dir / "x86-64-v2.smod"
    edited = out_dir / "unknown_features.smod"

    cases.append(Case(
        "module_names_unknown_features",
        [["strata-compile", PROGRAM, "--cpu=x86-64-v2", "-o", compiled],
         ["/usr/bin/python3", "-c",
          "import sys; sys.path.insert(0, sys.argv[1]); import cases_cpu_features as c; "
          "import pathlib; c.rename_features(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), "
          "[(b'sse4.2', b'sse9.9'), (b'ssse3', b'warp9')])",
          str(pathlib.Path(__file__).parent), str(compiled), str(edited)],
         ["strata-run", f"--module={edited}"] + RUN],
        error=r"FAILED_PRECONDITION: .*this runtime does not know the CPU features "
              r"sse9\.9, warp9, which the module's executables were compiled for"))
    return cases
