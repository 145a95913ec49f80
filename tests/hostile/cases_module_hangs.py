"""Module files that never end on their own: a loop in a function or in
__init, a wait on a fence nothing signals (awaited, or as a queue
submission's wait fence), the largest workgroup grid dispatched over and
over, a VMVX kernel that loops forever. Each is a vm.module written here in
MLIR text and serialized by strata-compile (executables are compiled programs
whose bytes a python step embeds as rodata), then run with
`strata-run --timeout=2`: it must end in DEADLINE_EXCEEDED naming the
function, on both local drivers. Grids past the HAL's limits must be refused
instead: at load when their counts are constants, by the dispatch when they
are computed.

Also a script: `cases_module_hangs.py embed elf|whole IN.smod TEMPLATE OUT`
writes TEMPLATE with @@DATA@@ replaced by the bytes of IN.smod's first ELF
(elf) or of the whole file (whole) as a `dense<"0x...">` rodata value.
"""
import pathlib
import struct
import sys

from run_hostile import Case

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"

# The function must end soon after the 2 s timeout, also under sanitizers.
TIMEOUT = 30


def expect(function):
    return (r"DEADLINE_EXCEEDED: .*function '" + function.replace(".", r"\.") +
            r"' exceeded its deadline \(2\.0 s\)")


IMPORTS = {
    "hal.devices.get": ("(i32) -> !vm.ref<!hal.device>", "0i_r"),
    "hal.device.allocator":
        ("(!vm.ref<!hal.device>) -> !vm.ref<!hal.allocator>", "0r_r"),
    "hal.allocator.allocate":
        ("(!vm.ref<!hal.allocator>, i64, i32, i32, i64) -> "
         "!vm.ref<!hal.buffer>", "0rIiiI_r"),
    "hal.command_buffer.create":
        ("(!vm.ref<!hal.device>, i32, i32, i64, i32) -> "
         "!vm.ref<!hal.command_buffer>", "0riiIi_r"),
    "hal.command_buffer.dispatch":
        ("(!vm.ref<!hal.command_buffer>, !vm.ref<!hal.executable>, i32, i32, "
         "i32, i32, i64, !vm.ref<!hal.buffer>, i64, i64) -> ()",
         "0rriiiiICiDCrIID_v"),
    "hal.command_buffer.finalize": ("(!vm.ref<!hal.command_buffer>) -> ()",
                                    "0r_v"),
    "hal.executable.create":
        ("(!vm.ref<!hal.device>, i64, !vm.ref<!vm.buffer>, "
         "!vm.ref<!vm.buffer>, !vm.ref<!vm.buffer>) -> "
         "!vm.ref<!hal.executable>", "0rIrrr_r"),
    "hal.fence.create": ("(!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence>",
                         "0ri_r"),
    "hal.device.queue.execute":
        ("(!vm.ref<!hal.device>, i64, !vm.ref<!hal.fence>, "
         "!vm.ref<!hal.fence>, !vm.ref<!hal.command_buffer>) -> ()",
         "0rIrrCrD_v"),
    "hal.fence.await": ("(i32, !vm.ref<!hal.fence>) -> i32", "0iCrD_i"),
}


def vm_module(functions, declarations="", name="module"):
    """A module importing every hal function above, with `declarations`
    (rodata, globals) and `functions`."""
    imports = "\n".join(f"    vm.import @{n} : {t} cconv \"{c}\""
                        for n, (t, c) in IMPORTS.items())
    return (f"module {{\n  vm.module @{name} {{\n{imports}\n"
            f"    vm.dependency \"hal\" version 1\n{declarations}{functions}"
            f"  }}\n}}\n")


def func(name, body):
    return (f"    vm.func @{name}() attributes {{exported}} {{\n{body}"
            f"    }}\n")


SPIN = """\
      %c1 = vm.const.i32 1
      %c0 = vm.const.i32 0
      br ^bb1(%c0 : i32)
    ^bb1(%0: i32):
      %1 = vm.add.i32 %0, %c1
      br ^bb1(%1 : i32)
"""

RETURN = "      return\n"

# A loop whose every iteration calls an import.
IMPORT_LOOP = """\
      %c0 = vm.const.i32 0
      br ^bb1
    ^bb1:
      %0 = call @hal.devices.get(%c0) : (i32) -> !vm.ref<!hal.device>
      br ^bb1
"""

DEVICE = """\
      %c0 = vm.const.i32 0
      %cm1 = vm.const.i32 -1
      %i0 = vm.const.i64 0
      %im1 = vm.const.i64 -1
      %dev = call @hal.devices.get(%c0) : (i32) -> !vm.ref<!hal.device>
"""

# Kept in a global, the fence could be signalled by a later call as far as
# the load-time verifier can tell (a fence nothing else sees is refused at
# load): the wait is left to the deadline.
KEPT_FENCE = "    vm.global.ref @kept : !vm.ref<!hal.fence>\n"

AWAIT_NEVER = DEVICE + """\
      %f = call @hal.fence.create(%dev, %c0) : (!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence>
      vm.global.store.ref %f, @kept : !vm.ref<!hal.fence>
      %r = call @hal.fence.await(%cm1, %f) {segment_sizes = array<i32: 1>} : (i32, !vm.ref<!hal.fence>) -> i32
      return
"""

CB_CONSTANTS = """\
      %c1 = vm.const.i32 1
      %c3 = vm.const.i32 3
"""

CB_CREATE_CALL = """\
      %cb = call @hal.command_buffer.create(%dev, %c1, %c3, %im1, %c0) : (!vm.ref<!hal.device>, i32, i32, i64, i32) -> !vm.ref<!hal.command_buffer>
"""

CB_CREATE = CB_CONSTANTS + CB_CREATE_CALL

SUBMIT_AND_AWAIT = """\
      call @hal.command_buffer.finalize(%cb) : (!vm.ref<!hal.command_buffer>) -> ()
      %sig = call @hal.fence.create(%dev, %c0) : (!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence>
      call @hal.device.queue.execute(%dev, %im1, %wait, %sig, %cb) {segment_sizes = array<i32: 1>} : (!vm.ref<!hal.device>, i64, !vm.ref<!hal.fence>, !vm.ref<!hal.fence>, !vm.ref<!hal.command_buffer>) -> ()
      %r = call @hal.fence.await(%cm1, %sig) {segment_sizes = array<i32: 1>} : (i32, !vm.ref<!hal.fence>) -> i32
      return
"""

# An empty submission waiting on a fence nothing signals.
QUEUE_WAIT_NEVER = (DEVICE + CB_CREATE + """\
      %wait = call @hal.fence.create(%dev, %c0) : (!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence>
""" + SUBMIT_AND_AWAIT)


def dispatch(x, y, z, bindings, run_time_counts=False, repeat=False):
    """Loads @exe_format/@exe_data and dispatches export 0 over x*y*z
    workgroups with `bindings` bindings of one 16-byte buffer. With
    `run_time_counts` the counts go through an add, which the load-time
    verifier does not follow (constant counts past the HAL's limits are
    refused at load); with `repeat`, the dispatch is submitted over and
    over."""
    types = ", ".join(["!vm.ref<!hal.buffer>, i64, i64"] * bindings)
    operands = ", ".join(["%buf, %i0, %i16"] * bindings)
    counts = ""
    for name, count in (("x", x), ("y", y), ("z", z)):
        if run_time_counts:
            counts += (f"      %{name}0 = vm.const.i32 {count}\n"
                       f"      %{name} = vm.add.i32 %{name}0, %c0\n")
        else:
            counts += f"      %{name} = vm.const.i32 {count}\n"
    head = DEVICE + CB_CONSTANTS + f"""\
      %c7 = vm.const.i32 7
      %i16 = vm.const.i64 16
{counts}      %alloc = call @hal.device.allocator(%dev) : (!vm.ref<!hal.device>) -> !vm.ref<!hal.allocator>
      %buf = call @hal.allocator.allocate(%alloc, %im1, %c3, %c7, %i16) : (!vm.ref<!hal.allocator>, i64, i32, i32, i64) -> !vm.ref<!hal.buffer>
      %fmt = vm.const.ref.rodata @exe_format : !vm.ref<!vm.buffer>
      %dat = vm.const.ref.rodata @exe_data : !vm.ref<!vm.buffer>
      %nul = vm.const.ref.zero : !vm.ref<!vm.buffer>
      %exe = call @hal.executable.create(%dev, %im1, %fmt, %dat, %nul) : (!vm.ref<!hal.device>, i64, !vm.ref<!vm.buffer>, !vm.ref<!vm.buffer>, !vm.ref<!vm.buffer>) -> !vm.ref<!hal.executable>
"""
    body = CB_CREATE_CALL + f"""\
      call @hal.command_buffer.dispatch(%cb, %exe, %c0, %x, %y, %z, %i0, {operands}) {{segment_sizes = array<i32: 0, {bindings}>}} : (!vm.ref<!hal.command_buffer>, !vm.ref<!hal.executable>, i32, i32, i32, i32, i64, {types}) -> ()
      %wait = vm.const.ref.zero : !vm.ref<!hal.fence>
""" + SUBMIT_AND_AWAIT
    if not repeat:
        return head + body
    return (head + "      br ^bb1\n    ^bb1:\n" +
            body.replace("      return\n", "      br ^bb1\n"))


def executable_rodata(format_name):
    return (f"    vm.rodata @exe_format \"{format_name}\" "
            f"{{alignment = 1 : i64}}\n"
            "    vm.rodata @exe_data @@DATA@@ {alignment = 64 : i64}\n")


# A VMVX kernel (one binding) that loops forever.
VMVX_SPIN_KERNEL = """\
module {
  vm.module @spin_kernel {
    vm.func @spin(%arg0: !vm.ref<!vm.buffer>, %arg1: i64, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: i64, %arg6: i64) attributes {exported} {
      %c1 = vm.const.i64 1
      br ^bb1(%arg1 : i64)
    ^bb1(%0: i64):
      %1 = vm.add.i64 %0, %c1
      br ^bb1(%1 : i64)
    }
  }
}
"""


def run(smod, function="main", device=None):
    argv = ["strata-run", f"--module={smod}", f"--function={function}",
            "--timeout=2"]
    if device:
        argv.append(f"--device={device}")
    return argv


def make_cases(out_dir):
    cases = []

    # Cases run in parallel: each writes files of its own.
    def simple(name, text, function="module.main", devices=(None,)):
        source = out_dir / f"{name}.mlir"
        source.write_text(text)
        for device in devices:
            case = name + (f"_{device.replace('-', '_')}" if device else "")
            smod = out_dir / f"{case}.smod"
            cases.append(Case(
                case,
                [["strata-compile", source, "-o", smod],
                 run(smod, device=device)],
                error=expect(function), timeout=TIMEOUT))

    def embedded(name, kind, kernel_source, text, devices, error=None):
        template = out_dir / f"{name}.mlir.in"
        template.write_text(text)
        for device in devices:
            case = f"{name}_{device.replace('-', '_')}"
            kernel = out_dir / f"{case}.kernel.smod"
            source = out_dir / f"{case}.mlir"
            smod = out_dir / f"{case}.smod"
            cases.append(Case(
                case,
                [["strata-compile", kernel_source, "-o", kernel],
                 [str(a) for a in (sys.executable, __file__, "embed", kind,
                                   kernel, template, source)],
                 ["strata-compile", source, "-o", smod],
                 run(smod, device=device)],
                error=error or expect("module.main"), timeout=TIMEOUT))

    both = ("local-sync", "local-task")
    simple("loop_in_function", vm_module(func("main", SPIN)))
    simple("loop_in_init", vm_module(func("__init", SPIN) +
                                     func("main", RETURN)),
           function="module.__init")
    simple("loop_of_import_calls", vm_module(func("main", IMPORT_LOOP)))
    simple("fence_never_signalled",
           vm_module(func("main", AWAIT_NEVER), KEPT_FENCE), devices=both)
    # __init cannot suspend: its await blocks, until the deadline.
    simple("fence_never_signalled_in_init",
           vm_module(func("__init", AWAIT_NEVER) + func("main", RETURN),
                     KEPT_FENCE),
           function="module.__init", devices=both)
    simple("queue_wait_fence_never_signalled",
           vm_module(func("main", QUEUE_WAIT_NEVER)), devices=both)

    # simple_mul's kernel (workgroups past the first do nothing) over the
    # largest grid the HAL takes (2^24 workgroups), submitted over and over:
    # stopped between workgroups or between submissions.
    simple_mul = EXAMPLES / "simple_mul.mlir"
    elf = executable_rodata("elf-x86_64")
    embedded("largest_grid_repeated", "elf", simple_mul,
             vm_module(func("main", dispatch(4096, 4096, 1, 3, repeat=True)),
                       elf), both)
    # 2^31-1 per dimension, about 2^93 workgroups: as constants, refused at
    # load; computed at run time, refused by the dispatch.
    too_many = (r"workgroup count 2147483647x2147483647x2147483647 exceeds "
                r"the limit of 65535 per dimension")
    embedded("huge_grid_constant_counts", "elf", simple_mul,
             vm_module(func("main", dispatch(2**31 - 1, 2**31 - 1, 2**31 - 1,
                                             3)), elf), both,
             error=r"initializing module 'module': invalid bytecode in "
                   r"function 'main' .*hal\.command_buffer\.dispatch.*" +
                   too_many)
    embedded("huge_grid_run_time_counts", "elf", simple_mul,
             vm_module(func("main", dispatch(2**31 - 1, 2**31 - 1, 2**31 - 1,
                                             3, run_time_counts=True)), elf),
             both, error=r"INVALID_ARGUMENT: .*" + too_many)
    # 65535 x 65535 x 1 fits each dimension but not the grid (2^24).
    embedded("grid_past_dispatch_limit", "elf", simple_mul,
             vm_module(func("main", dispatch(65535, 65535, 1, 3,
                                             run_time_counts=True)), elf),
             both, error=r"workgroup count 65535x65535x1 \(4294836225 "
                         r"workgroups\) exceeds the limit of 16777216")

    kernel_source = out_dir / "spin_kernel.mlir"
    kernel_source.write_text(VMVX_SPIN_KERNEL)
    embedded("vmvx_kernel_never_ends", "whole", kernel_source,
             vm_module(func("main", dispatch(4, 1, 1, 1)),
                       executable_rodata("vmvx-bytecode-fb")), both)
    return cases


def first_elf(data):
    start = data.find(b"\x7fELF")
    if start < 0:
        raise SystemExit("no ELF image in the module")
    shoff, = struct.unpack_from("<Q", data, start + 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, start + 0x3A)
    return data[start:start + shoff + shentsize * shnum]


def embed(kind, smod, template, out):
    data = pathlib.Path(smod).read_bytes()
    if kind == "elf":
        data = first_elf(data)
    value = f"dense<\"0x{data.hex().upper()}\"> : vector<{len(data)}xi8>"
    text = pathlib.Path(template).read_text().replace("@@DATA@@", value)
    pathlib.Path(out).write_text(text)


if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[1] != "embed":
        raise SystemExit(__doc__)
    embed(*sys.argv[2:])
