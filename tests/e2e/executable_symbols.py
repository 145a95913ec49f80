#!/usr/bin/python3
"""Checks the CPU executables inside module files against the executable ABI
(runtime/src/strata/hal/local/executable_symbols.def): each ELF shared
object may leave undefined only what the runtime provides through the
import table (provider `runtime`; none today), exports only the library
query function, and needs no shared library (no DT_NEEDED).

    executable_symbols.py --def executable_symbols.def FILE.smod...

A small ELF64 reader: the executables are found by their magic inside the
module's rodata, where the compiler stores them whole."""
import argparse
import re
import struct
import sys

QUERY_SYMBOL = "strata_hal_executable_library_query"
SHT_DYNSYM, SHT_DYNAMIC = 11, 6
DT_NEEDED = 1
STB_GLOBAL, STB_WEAK = 1, 2
STV_DEFAULT, STV_PROTECTED = 0, 3


def runtime_imports(def_path):
    """The symbols the runtime resolves for executables (provider runtime)."""
    text = open(def_path).read()
    entries = re.findall(r'^STRATA_EXECUTABLE_SYMBOL\("([^"]+)", (\w+),', text, re.M)
    if not entries:
        raise SystemExit(f"{def_path}: no STRATA_EXECUTABLE_SYMBOL entries")
    return {name for name, provider in entries if provider == "runtime"}


class Elf:
    """The dynamic symbols and needed libraries of one ELF64 x86-64 shared
    object starting at `offset` in `data`."""

    def __init__(self, data, offset):
        self.data, self.base = data, offset
        ident = data[offset:offset + 16]
        if len(ident) < 16 or ident[4] != 2 or ident[5] != 1:
            raise ValueError("not a little-endian ELF64 file")
        (e_type, e_machine, _, _, _, e_shoff, _, _, _, _, e_shentsize, e_shnum,
         _) = struct.unpack_from("<HHIQQQIHHHHHH", data, offset + 16)
        if e_type != 3 or e_machine != 62:
            raise ValueError(f"type {e_type} machine {e_machine}, not an x86-64 shared object")
        self.sections = []
        for i in range(e_shnum):
            fields = struct.unpack_from("<IIQQQQIIQQ", data, offset + e_shoff + i * e_shentsize)
            self.sections.append(fields)
        self.size = e_shoff + e_shnum * e_shentsize

    def section_bytes(self, index):
        _, _, _, _, sh_offset, sh_size, _, _, _, _ = self.sections[index]
        start = self.base + sh_offset
        return self.data[start:start + sh_size]

    def string(self, strtab, offset):
        end = strtab.index(b"\0", offset)
        return strtab[offset:end].decode()

    def dynamic_symbols(self):
        """(name, undefined, exported) for every named dynamic symbol."""
        symbols = []
        for header in self.sections:
            if header[1] != SHT_DYNSYM:
                continue
            strtab = self.section_bytes(header[6])
            table = self.section_bytes(self.sections.index(header))
            for i in range(0, len(table), 24):
                st_name, st_info, st_other, st_shndx, _, _ = struct.unpack_from(
                    "<IBBHQQ", table, i)
                name = self.string(strtab, st_name)
                if not name:
                    continue
                undefined = st_shndx == 0
                exported = (not undefined and (st_info >> 4) in (STB_GLOBAL, STB_WEAK)
                            and (st_other & 3) in (STV_DEFAULT, STV_PROTECTED))
                symbols.append((name, undefined, exported))
        return symbols

    def needed_libraries(self):
        needed = []
        for header in self.sections:
            if header[1] != SHT_DYNAMIC:
                continue
            strtab = self.section_bytes(header[6])
            table = self.section_bytes(self.sections.index(header))
            for i in range(0, len(table), 16):
                tag, value = struct.unpack_from("<qQ", table, i)
                if tag == DT_NEEDED:
                    needed.append(self.string(strtab, value))
        return needed


def executables_in(module_bytes):
    """Every ELF shared object stored in a module file."""
    found, start = [], 0
    while True:
        at = module_bytes.find(b"\x7fELF", start)
        if at < 0:
            return found
        try:
            elf = Elf(module_bytes, at)
        except (ValueError, struct.error):
            start = at + 1
            continue
        found.append(elf)
        start = at + max(elf.size, 4)


def check_module(path, allowed_imports):
    """Problems with the executables of one module file (empty when fine),
    and how many executables it holds."""
    with open(path, "rb") as f:
        data = f.read()
    problems = []
    elves = executables_in(data)
    for index, elf in enumerate(elves):
        symbols = elf.dynamic_symbols()
        undefined = sorted(n for n, u, _ in symbols if u and n not in allowed_imports)
        exported = sorted(n for n, _, e in symbols if e)
        if undefined:
            problems.append(f"executable {index} needs {undefined}, which the runtime does not provide")
        if exported != [QUERY_SYMBOL]:
            problems.append(f"executable {index} exports {exported}, not just {QUERY_SYMBOL}")
        needed = elf.needed_libraries()
        if needed:
            problems.append(f"executable {index} needs the libraries {needed}")
    return problems, len(elves)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--def", dest="def_file", required=True)
    parser.add_argument("modules", nargs="+")
    args = parser.parse_args()
    allowed = runtime_imports(args.def_file)
    failed = False
    for path in args.modules:
        problems, count = check_module(path, allowed)  # 0: all host work
        for problem in problems:
            print(f"FAIL {path}: {problem}")
        failed |= bool(problems)
        if not problems:
            print(f"ok   {path}: {count} executables")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
