#include "strata/hal/local/elf_validation.h"

#include <cstring>
#include <elf.h>

namespace strata::hal {
namespace {

// True if [offset, offset + count * entry_size) fits in `size` bytes.
bool TableFits(uint64_t size, uint64_t offset, uint64_t count,
               uint64_t entry_size) {
  if (offset > size)
    return false;
  if (entry_size && count > (size - offset) / entry_size)
    return false;
  return true;
}

} // namespace

Status ValidateElfX86_64SharedObject(std::span<const uint8_t> bytes) {
  if (bytes.size() < EI_NIDENT ||
      std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    return InvalidArgumentError("executable is not an ELF file (bad magic)");
  if (bytes.size() < sizeof(Elf64_Ehdr))
    return InvalidArgumentError("ELF file truncated: ", bytes.size(),
                                " bytes is smaller than an ELF64 header");
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64)
    return InvalidArgumentError("ELF file is not 64-bit (class ",
                                int(header.e_ident[EI_CLASS]), ")");
  if (header.e_ident[EI_DATA] != ELFDATA2LSB)
    return InvalidArgumentError("ELF file is not little-endian");
  if (header.e_machine != EM_X86_64)
    return InvalidArgumentError("ELF file is for machine ", header.e_machine,
                                ", not x86-64 (", EM_X86_64, ")");
  if (header.e_type != ET_DYN)
    return InvalidArgumentError("ELF file is of type ", header.e_type,
                                ", not a shared object (ET_DYN)");

  uint64_t size = bytes.size();
  if (header.e_phnum == 0)
    return InvalidArgumentError("ELF file has no program headers");
  if (header.e_phentsize != sizeof(Elf64_Phdr))
    return InvalidArgumentError("ELF program header size ", header.e_phentsize,
                                " is not ", sizeof(Elf64_Phdr));
  if (!TableFits(size, header.e_phoff, header.e_phnum, header.e_phentsize))
    return InvalidArgumentError(
        "ELF file truncated: program headers extend past its ", size, " bytes");
  if (header.e_shoff != 0 &&
      !TableFits(size, header.e_shoff, header.e_shnum, header.e_shentsize))
    return InvalidArgumentError(
        "ELF file truncated: section headers extend past its ", size, " bytes");

  bool has_load = false;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr;
    std::memcpy(&phdr, bytes.data() + header.e_phoff + i * sizeof(phdr),
                sizeof(phdr));
    if (phdr.p_type != PT_LOAD && phdr.p_type != PT_DYNAMIC)
      continue;
    has_load |= phdr.p_type == PT_LOAD;
    if (!TableFits(size, phdr.p_offset, phdr.p_filesz, 1))
      return InvalidArgumentError(
          "ELF file truncated: segment ", i, " [", phdr.p_offset, ", ",
          phdr.p_offset + phdr.p_filesz, ") extends past its ", size, " bytes");
  }
  if (!has_load)
    return InvalidArgumentError("ELF file has no loadable segments");
  return OkStatus();
}

} // namespace strata::hal
