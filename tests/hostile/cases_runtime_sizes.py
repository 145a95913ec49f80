"""Run-time sizes: module files a compiler would never produce, and tool
inputs, that ask the runtime for sizes and offsets past what fits (shape
products, byte lengths, ranges whose end wraps 2^64, workgroup grids) or past
the device's memory. Each must end in an error naming the operation, never a
wrap into a small buffer, a crash or an OOM kill.

Modules are written as `vm.module` MLIR text, which strata-compile
serializes as written. Executables for dispatches are VMVX bytecode
modules compiled the same way and embedded as rodata.
"""
import pathlib
import struct

from run_hostile import Case

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
I64_MAX = 2**63 - 1

# Each hal import a case may use, declared only when its body does.
HAL_IMPORTS = {
    "hal.devices.get": "(i32) -> !vm.ref<!hal.device> cconv \"0i_r\"",
    "hal.device.allocator":
        "(!vm.ref<!hal.device>) -> !vm.ref<!hal.allocator> cconv \"0r_r\"",
    "hal.allocator.allocate":
        "(!vm.ref<!hal.allocator>, i64, i32, i32, i64) -> !vm.ref<!hal.buffer>"
        " cconv \"0rIiiI_r\"",
    "hal.allocator.import":
        "(!vm.ref<!hal.allocator>, i64, i32, i32, !vm.ref<!vm.buffer>, i64,"
        " i64) -> !vm.ref<!hal.buffer> cconv \"0rIiirII_r\"",
    "hal.buffer_view.create":
        "(!vm.ref<!hal.buffer>, i64, i64, i32, i32, i64, i64)"
        " -> !vm.ref<!hal.buffer_view> cconv \"0rIIiiCID_r\"",
    "hal.command_buffer.create":
        "(!vm.ref<!hal.device>, i32, i32, i64, i32)"
        " -> !vm.ref<!hal.command_buffer> cconv \"0riiIi_r\"",
    "hal.command_buffer.fill_buffer":
        "(!vm.ref<!hal.command_buffer>, !vm.ref<!hal.buffer>, i64, i64, i32,"
        " i32) -> () cconv \"0rrIIii_v\"",
    "hal.command_buffer.copy_buffer":
        "(!vm.ref<!hal.command_buffer>, !vm.ref<!hal.buffer>, i64,"
        " !vm.ref<!hal.buffer>, i64, i64) -> () cconv \"0rrIrII_v\"",
    "hal.command_buffer.dispatch":
        "(!vm.ref<!hal.command_buffer>, !vm.ref<!hal.executable>, i32, i32,"
        " i32, i32, i64, !vm.ref<!hal.buffer>, i64, i64) -> ()"
        " cconv \"0rriiiiICiDCrIID_v\"",
    "hal.executable.create":
        "(!vm.ref<!hal.device>, i64, !vm.ref<!vm.buffer>, !vm.ref<!vm.buffer>,"
        " !vm.ref<!vm.buffer>) -> !vm.ref<!hal.executable>"
        " cconv \"0rIrrr_r\"",
    "hal.fence.create":
        "(!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence> cconv \"0ri_r\"",
    "hal.fence.await":
        "(i32, !vm.ref<!hal.fence>) -> i32 cconv \"0iCrD_i\"",
}

# The prologue every case's @main starts with: %device, %allocator and a few
# constants.
PROLOGUE = """\
      %c0 = vm.const.i32 0
      %c1 = vm.const.i32 1
      %any = vm.const.i64 -1
      %z = vm.const.i64 0
      %local = vm.const.i32 3
      %usage = vm.const.i32 7
      %device = vm.call @hal.devices.get(%c0) : (i32) -> !vm.ref<!hal.device>
      %allocator = vm.call @hal.device.allocator(%device) : (!vm.ref<!hal.device>) -> !vm.ref<!hal.allocator>
"""


def host_module(body, extra=""):
    """A vm.module with `@main() -> i32` running PROLOGUE + `body`."""
    text = PROLOGUE + body + extra
    imports = "".join(
        f"    vm.import @{name} : {signature}\n"
        for name, signature in HAL_IMPORTS.items()
        if f"@{name}(" in text)
    return f"""module {{
  vm.module @module {{
{imports}    vm.dependency "hal" version 1
    vm.func @main() -> i32 attributes {{exported}} {{
{PROLOGUE}{body}      vm.return %c0 : i32
    }}
{extra}  }}
}}
"""


def allocate(name, size_value):
    return (f"      {name} = vm.call @hal.allocator.allocate(%allocator, %any,"
            f" %local, %usage, {size_value}) : (!vm.ref<!hal.allocator>, i64,"
            f" i32, i32, i64) -> !vm.ref<!hal.buffer>\n")


def command_buffer(name="%cmd", categories=3):
    return (f"      %categories = vm.const.i32 {categories}\n"
            f"      {name} = vm.call @hal.command_buffer.create(%device, %c1,"
            f" %categories, %any, %c0) : (!vm.ref<!hal.device>, i32, i32, i64,"
            f" i32) -> !vm.ref<!hal.command_buffer>\n")


def dispatch(executable, x, y, z, offset="%z", length="%any"):
    """Dispatch of export 0 with one binding (%buffer) and counts x, y, z."""
    return (f"      vm.call @hal.command_buffer.dispatch(%cmd, {executable},"
            f" %c0, {x}, {y}, {z}, %z, %buffer, {offset}, {length})"
            " {segment_sizes = array<i32: 0, 1>} : (!vm.ref<!hal.command_buffer>,"
            " !vm.ref<!hal.executable>, i32, i32, i32, i32, i64,"
            " !vm.ref<!hal.buffer>, i64, i64) -> ()\n")


# A VMVX executable: export @k takes one binding and the six workgroup
# values, and does nothing.
KERNEL = """module {
  vm.module @kernels {
    vm.func @k(%b: !vm.ref<!vm.buffer>, %x: i64, %y: i64, %z: i64, %cx: i64, %cy: i64, %cz: i64) attributes {exported} {
      vm.return
    }
  }
}
"""


def executable_prologue():
    """Body lines that create %executable from the embedded kernel, and the
    rodata ops it needs; "@KERNEL@" becomes the kernel's bytes once an
    earlier step has compiled it."""
    body = """\
      %format = vm.const.ref.rodata @format : !vm.ref<!vm.buffer>
      %data = vm.const.ref.rodata @kernel : !vm.ref<!vm.buffer>
      %none = vm.const.ref.zero : !vm.ref<!vm.buffer>
      %executable = vm.call @hal.executable.create(%device, %any, %format, %data, %none) : (!vm.ref<!hal.device>, i64, !vm.ref<!vm.buffer>, !vm.ref<!vm.buffer>, !vm.ref<!vm.buffer>) -> !vm.ref<!hal.executable>
"""
    extra = ('    vm.rodata @format "vmvx-bytecode-fb" {alignment = 1 : i64}\n'
             '    vm.rodata @kernel "@KERNEL@" {alignment = 64 : i64}\n')
    return body, extra


def npy(header, data=b"", version=1):
    header = header.encode()
    if version == 1:
        prefix = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
    else:
        prefix = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header))
    return prefix + header + data


def make_cases(out_dir):
    cases = []

    def module_case(name, text, error, run_flags=(), kernel=False):
        source = out_dir / f"{name}.mlir"
        smod = out_dir / f"{name}.smod"
        steps = []
        if kernel:
            kernel_mlir = out_dir / "kernel.mlir"
            kernel_mlir.write_text(KERNEL)
            kernel_smod = out_dir / f"{name}_kernel.smod"
            template = out_dir / f"{name}.template.mlir"
            template.write_text(text)
            steps.append(["strata-compile", kernel_mlir, "-o", kernel_smod])
            # Embeds the kernel's bytes as rodata (python, not a tool).
            steps.append(["/usr/bin/python3", "-c",
                          "import sys;k=open(sys.argv[1],'rb').read();"
                          "t=open(sys.argv[2]).read();"
                          "open(sys.argv[3],'w').write(t.replace('@KERNEL@',"
                          "''.join('\\\\%02X'%b for b in k)))",
                          str(kernel_smod), str(template), str(source)])
        else:
            source.write_text(text)
        steps.append(["strata-compile", source, "-o", smod])
        steps.append(["strata-run", f"--module={smod}", "--function=main",
                      *run_flags])
        cases.append(Case(name, steps, error))

    # --- allocations --------------------------------------------------------
    module_case(
        "allocate_2_62_bytes",
        host_module("      %huge = vm.const.i64 4611686018427387904\n" +
                    allocate("%b", "%huge")),
        r"RESOURCE_EXHAUSTED: hal\.allocator\.allocate: allocation of "
        r"4611686018427387904 bytes exceeds the limit of allocator "
        r"'local-sync' \(\d+ bytes\)")
    module_case(
        "allocate_negative",
        host_module("      %neg = vm.const.i64 -4096\n" +
                    allocate("%b", "%neg")),
        r"hal\.allocator\.allocate: allocation size must be >= 0, got -4096")
    module_case(
        "allocate_past_flag_limit",
        host_module("      %size = vm.const.i64 67108864\n" +
                    allocate("%b", "%size")),
        r"RESOURCE_EXHAUSTED: hal\.allocator\.allocate: allocation of "
        r"67108864 bytes exceeds the limit of allocator 'local-sync' "
        r"\(1048576 bytes\)",
        run_flags=["--device-memory-limit=1M"])
    module_case(
        "allocate_live_bytes_past_limit",
        host_module("      %size = vm.const.i64 6291456\n" +
                    allocate("%a", "%size") + allocate("%b", "%size") +
                    allocate("%c", "%size")),
        r"RESOURCE_EXHAUSTED: hal\.allocator\.allocate: allocation of "
        r"6291456 bytes would bring allocator 'local-sync' to 18874368 live "
        r"bytes, over its memory limit of 16777216 bytes \(12582912 bytes "
        r"already live\)",
        run_flags=["--device-memory-limit=16M"])
    # A limit far past physical memory lets the request reach the system,
    # which refuses 2^62 bytes: still an error, not an abort.
    module_case(
        "allocate_refused_by_the_system",
        host_module("      %huge = vm.const.i64 4611686018427387904\n" +
                    allocate("%b", "%huge")),
        r"RESOURCE_EXHAUSTED: hal\.allocator\.allocate: the system refused "
        r"4611686018427387904 bytes to allocator 'local-sync'",
        run_flags=["--device-memory-limit=16777215T"])
    module_case(
        "vm_buffer_2_40_bytes",
        host_module("      %len = vm.const.i64 1099511627776\n"
                    "      %b = vm.buffer.alloc %len : !vm.ref<!vm.buffer>\n"),
        r"RESOURCE_EXHAUSTED: vm\.buffer of 1099511627776 bytes exceeds the "
        r"limit of 2147483648")

    # --- buffer views and ranges -------------------------------------------
    view_call = ("      %v = vm.call @hal.buffer_view.create(%buffer, {offset},"
                 " {length}, %f32, %dense, {dims}) {{segment_sizes ="
                 " array<i32: 2>}} : (!vm.ref<!hal.buffer>, i64, i64, i32, i32,"
                 " i64, i64) -> !vm.ref<!hal.buffer_view>\n")
    view_prologue = ("      %size = vm.const.i64 64\n" +
                     allocate("%buffer", "%size") +
                     "      %f32 = vm.const.i32 553648160\n"
                     "      %dense = vm.const.i32 1\n"
                     "      %big = vm.const.i64 4294967296\n"
                     "      %four = vm.const.i64 4\n"
                     f"      %max = vm.const.i64 {I64_MAX}\n"
                     "      %eight = vm.const.i64 8\n")
    module_case(
        "view_shape_wraps_64_bits",
        host_module(view_prologue + view_call.format(
            offset="%z", length="%any", dims="%big, %big")),
        r"INVALID_ARGUMENT: hal\.buffer_view\.create: shape "
        r"4294967296x4294967296 x 4 bytes overflows 64 bits")
    module_case(
        "view_shape_negative",
        host_module(view_prologue +
                    "      %neg = vm.const.i64 -1\n" + view_call.format(
                        offset="%z", length="%any", dims="%four, %neg")),
        r"hal\.buffer_view\.create: negative dimension -1 in shape 4x-1")
    module_case(
        "view_range_wraps_64_bits",
        host_module(view_prologue + view_call.format(
            offset="%eight", length="%max", dims="%four, %four")),
        r"OUT_OF_RANGE: hal\.buffer_view\.create: buffer subspan: range "
        r"\[8, 8 \+ 9223372036854775807\) exceeds a buffer of 64 bytes")
    module_case(
        "import_range_wraps_64_bits",
        host_module(
            f"      %max = vm.const.i64 {I64_MAX}\n"
            "      %bytes = vm.const.ref.rodata @bytes : !vm.ref<!vm.buffer>\n"
            "      %b = vm.call @hal.allocator.import(%allocator, %any, %local,"
            " %usage, %bytes, %max, %max) : (!vm.ref<!hal.allocator>, i64, i32,"
            " i32, !vm.ref<!vm.buffer>, i64, i64) -> !vm.ref<!hal.buffer>\n",
            extra='    vm.rodata @bytes "sixteen bytes..." {alignment = 1 : i64}\n'),
        r"OUT_OF_RANGE: hal\.allocator\.import: 9223372036854775807 bytes at "
        r"offset 9223372036854775807 are outside the 16-byte source")
    module_case(
        "fill_range_wraps_64_bits",
        host_module(view_prologue + command_buffer() +
                    "      vm.call @hal.command_buffer.fill_buffer(%cmd, %buffer,"
                    " %eight, %max, %c0, %c1) : (!vm.ref<!hal.command_buffer>,"
                    " !vm.ref<!hal.buffer>, i64, i64, i32, i32) -> ()\n"),
        r"OUT_OF_RANGE: hal\.command_buffer\.fill_buffer: fill_buffer target: "
        r"range \[8, 8 \+ 9223372036854775807\) exceeds a buffer of 64 bytes")
    module_case(
        "copy_offset_past_2_63",
        host_module(view_prologue + command_buffer() +
                    "      vm.call @hal.command_buffer.copy_buffer(%cmd, %buffer,"
                    " %max, %buffer, %z, %eight) : (!vm.ref<!hal.command_buffer>,"
                    " !vm.ref<!hal.buffer>, i64, !vm.ref<!hal.buffer>, i64, i64)"
                    " -> ()\n"),
        r"OUT_OF_RANGE: hal\.command_buffer\.copy_buffer: copy_buffer source: "
        r"offset 9223372036854775807 is past the end of a buffer of 64 bytes")

    # --- dispatches ----------------------------------------------------------
    # Constant counts past the limits: the verifier refuses the module
    # before anything runs (the null executable is never touched).
    grid_prologue = ("      %size = vm.const.i64 64\n" +
                     allocate("%buffer", "%size") + command_buffer() +
                     "      %noexe = vm.const.ref.zero : !vm.ref<!hal.executable>\n")
    module_case(
        "dispatch_constant_2_31_workgroups",
        host_module(grid_prologue + "      %wide = vm.const.i32 2147483647\n" +
                    dispatch("%noexe", "%wide", "%c1", "%c1")),
        r"INVALID_ARGUMENT: .*initializing module 'module': invalid bytecode "
        r"in function 'main' at \+0x[0-9a-f]{4}: call to "
        r"'hal\.command_buffer\.dispatch': workgroup count 2147483647x1x1 "
        r"exceeds the limit of 65535 per dimension")
    module_case(
        "dispatch_constant_total_workgroups",
        host_module(grid_prologue + "      %n = vm.const.i32 4096\n"
                    "      %two = vm.const.i32 2\n" +
                    dispatch("%noexe", "%n", "%n", "%two")),
        r"invalid bytecode in function 'main' at \+0x[0-9a-f]{4}: call to "
        r"'hal\.command_buffer\.dispatch': workgroup count 4096x4096x2 "
        r"\(33554432\) exceeds the limit of 16777216 workgroups per dispatch")
    # The same constant carried through a block argument.
    module_case(
        "dispatch_constant_through_branch",
        host_module(grid_prologue + "      %wide = vm.const.i32 100000\n"
                    "      vm.br ^bb1(%wide : i32)\n"
                    "    ^bb1(%count: i32):\n" +
                    dispatch("%noexe", "%c1", "%count", "%c1")),
        r"call to 'hal\.command_buffer\.dispatch': workgroup count 1x100000x1 "
        r"exceeds the limit of 65535 per dimension")
    # Computed at run time: the verifier cannot see it; command buffer
    # validation refuses it.
    body, extra = executable_prologue()
    module_case(
        "dispatch_computed_2_31_workgroups",
        host_module(grid_prologue + body +
                    "      %half = vm.const.i32 1073741823\n"
                    "      %wide = vm.add.i32 %half, %half\n" +
                    dispatch("%executable", "%wide", "%wide", "%wide"),
                    extra=extra),
        r"INVALID_ARGUMENT: hal\.command_buffer\.dispatch: dispatch of 'k': "
        r"workgroup count 2147483646x2147483646x2147483646 exceeds the limit "
        r"of 65535 per dimension",
        kernel=True)
    module_case(
        "dispatch_binding_range_wraps_64_bits",
        host_module(grid_prologue + body +
                    "      %eight = vm.const.i64 8\n"
                    f"      %max = vm.const.i64 {I64_MAX}\n" +
                    dispatch("%executable", "%c1", "%c1", "%c1",
                             offset="%eight", length="%max"),
                    extra=extra),
        r"OUT_OF_RANGE: hal\.command_buffer\.dispatch: dispatch of 'k': "
        r"binding 0: range \[8, 8 \+ 9223372036854775807\) exceeds a buffer "
        r"of 64 bytes",
        kernel=True)

    # --- fences nothing can signal -------------------------------------------
    fence = ("      %fence = vm.call @hal.fence.create(%device, %c0) :"
             " (!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence>\n")
    await_fence = ("      %forever = vm.const.i32 -1\n"
                   "      %r = vm.call @hal.fence.await(%forever, {fence})"
                   " {{segment_sizes = array<i32: 1>}} : (i32,"
                   " !vm.ref<!hal.fence>) -> i32\n")
    module_case(
        "await_fence_never_signalled",
        host_module(fence + await_fence.format(fence="%fence")),
        r"INVALID_ARGUMENT: .*initializing module 'module': invalid bytecode "
        r"in function 'main' at \+0x[0-9a-f]{4}: call to 'hal\.fence\.await': "
        r"waits on the result of 'hal\.fence\.create' at \+0x[0-9a-f]{4}, "
        r"which nothing can signal")
    module_case(
        "await_fence_never_signalled_through_branch",
        host_module(fence + "      vm.br ^bb1(%fence : !vm.ref<!hal.fence>)\n"
                    "    ^bb1(%f: !vm.ref<!hal.fence>):\n" +
                    await_fence.format(fence="%f")),
        r"call to 'hal\.fence\.await': waits on the result of "
        r"'hal\.fence\.create' at \+0x[0-9a-f]{4}, which nothing can signal")

    # --- tool inputs ---------------------------------------------------------
    # Each case compiles its own copy: cases run in parallel, and a module
    # file rewritten while another process maps it is not what is tested.
    def compile_simple_mul(name):
        smod = out_dir / f"{name}_simple_mul.smod"
        return smod, ["strata-compile", REPO / "examples/simple_mul.mlir",
                      "-o", smod]

    def input_case(name, argument, error, flags=()):
        smod, compile_step = compile_simple_mul(name)
        cases.append(Case(name, [
            compile_step,
            ["strata-run", f"--module={smod}", "--function=simple_mul",
             f"--input={argument}", "--input=4xf32=1", *flags]], error))

    input_case("input_shape_wraps_64_bits", "4294967296x4294967296xf32=0",
               r"INVALID_ARGUMENT: input 0: shape 4294967296x4294967296 x 4 "
               r"bytes overflows 64 bits")
    input_case("input_element_count_past_2_64",
               "4294967296x4294967296x4294967296xi8=1",
               r"input 0: shape 4294967296x4294967296x4294967296 x 1 bytes "
               r"overflows 64 bits")
    input_case("input_dimension_past_int64", "99999999999999999999xf32=0",
               r"input 0: dimension 99999999999999999999 in "
               r"'99999999999999999999xf32' does not fit 64 bits")
    input_case("input_4_exabytes", "1000000000x1000000000xf32=0",
               r"RESOURCE_EXHAUSTED: input 0: allocation of "
               r"4000000000000000000 bytes exceeds the limit of allocator "
               r"'local-sync'")
    input_case("input_past_flag_limit", "1024xf32=0",
               r"RESOURCE_EXHAUSTED: input 0: allocation of 4096 bytes "
               r"exceeds the limit of allocator 'local-sync' \(1024 bytes\)",
               flags=["--device-memory-limit=1K"])
    smod, compile_step = compile_simple_mul("memory_limit_flag_past_2_64")
    cases.append(Case("memory_limit_flag_past_2_64", [
        compile_step,
        ["strata-run", f"--module={smod}", "--function=simple_mul",
         "--device-memory-limit=16777216T"]],
        r"--device-memory-limit: byte count '16777216T' does not fit 64 bits"))

    def npy_case(name, data, error, flags=()):
        path = out_dir / f"{name}.npy"
        path.write_bytes(data)
        input_case(name, f"@{path}", error, flags)

    npy_case("npy_shape_wraps_64_bits",
             npy("{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (4294967296, 4294967296), }"),
             r"INVALID_ARGUMENT: input 0: .*npy_shape_wraps_64_bits\.npy: "
             r"shape 4294967296x4294967296 x 4 bytes overflows 64 bits")
    npy_case("npy_dimension_past_int64",
             npy("{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (99999999999999999999,), }"),
             r"npy shape dimension is too large")
    npy_case("npy_shape_without_data",
             npy("{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (1000000000, 1000000000), }", b"\0" * 16),
             r"\.npy data is 16 bytes but shape and dtype need "
             r"4000000000000000000")
    npy_case("npy_rank_40",
             npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                 "1, " * 40 + "), }", b"\0" * 4),
             r"input 0: .*rank 40 exceeds the maximum of 16")
    npy_case("npy_header_length_4_gib",
             b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}",
             r"\.npy header is truncated")
    # An 8 GiB file (sparse): mapped, so only its header is read before the
    # limit refuses the tensor.
    sparse = out_dir / "npy_8_gib_sparse.npy"
    header = npy("{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (1073741824, 2), }")
    with open(sparse, "wb") as file:
        file.write(header)
        file.truncate(len(header) + (8 << 30))
    input_case("npy_8_gib_past_flag_limit", f"@{sparse}",
               r"RESOURCE_EXHAUSTED: input 0: .*allocation of 8589934592 "
               r"bytes exceeds the limit of allocator 'local-sync' "
               r"\(16777216 bytes\)",
               flags=["--device-memory-limit=16M"])
    return cases
