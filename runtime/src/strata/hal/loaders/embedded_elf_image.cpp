#include "strata/hal/loaders/embedded_elf_image.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "strata/hal/local/elf_validation.h"

namespace strata::hal {
namespace {

// Limits that turn corrupt sizes into errors instead of huge reservations
// or endless loops. Real executables are far below all of them.
constexpr uint64_t kMaxImageSpan = uint64_t(1) << 30;
constexpr uint64_t kMaxSegmentAlignment = uint64_t(1) << 16;
constexpr uint64_t kMaxVaddr = uint64_t(1) << 40;
constexpr uint32_t kMaxSymbols = 1u << 20;

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", (unsigned long long)value);
  return text;
}

const char *RelocationName(uint32_t type) {
  switch (type) {
  case R_X86_64_NONE:
    return "R_X86_64_NONE";
  case R_X86_64_64:
    return "R_X86_64_64";
  case R_X86_64_PC32:
    return "R_X86_64_PC32";
  case R_X86_64_GOT32:
    return "R_X86_64_GOT32";
  case R_X86_64_PLT32:
    return "R_X86_64_PLT32";
  case R_X86_64_COPY:
    return "R_X86_64_COPY";
  case R_X86_64_GLOB_DAT:
    return "R_X86_64_GLOB_DAT";
  case R_X86_64_JUMP_SLOT:
    return "R_X86_64_JUMP_SLOT";
  case R_X86_64_RELATIVE:
    return "R_X86_64_RELATIVE";
  case R_X86_64_GOTPCREL:
    return "R_X86_64_GOTPCREL";
  case R_X86_64_32:
    return "R_X86_64_32";
  case R_X86_64_32S:
    return "R_X86_64_32S";
  case R_X86_64_16:
    return "R_X86_64_16";
  case R_X86_64_PC16:
    return "R_X86_64_PC16";
  case R_X86_64_8:
    return "R_X86_64_8";
  case R_X86_64_PC8:
    return "R_X86_64_PC8";
  case R_X86_64_DTPMOD64:
    return "R_X86_64_DTPMOD64";
  case R_X86_64_DTPOFF64:
    return "R_X86_64_DTPOFF64";
  case R_X86_64_TPOFF64:
    return "R_X86_64_TPOFF64";
  case R_X86_64_PC64:
    return "R_X86_64_PC64";
  case R_X86_64_IRELATIVE:
    return "R_X86_64_IRELATIVE";
  default:
    return "unknown";
  }
}

} // namespace

struct EmbeddedElfImage::DynamicInfo {
  uint64_t rela = 0, rela_size = 0, rela_entry = sizeof(Elf64_Rela);
  uint64_t jmprel = 0, jmprel_size = 0;
  uint64_t hash = 0, gnu_hash = 0;
  bool has_symtab = false, has_strtab = false, has_strsz = false;
  bool text_relocs = false;
  bool has_needed = false;
  uint64_t needed_name = 0;
};

Result<std::unique_ptr<EmbeddedElfImage>>
EmbeddedElfImage::Load(std::span<const uint8_t> bytes) {
  STRATA_RETURN_IF_ERROR(ValidateElfX86_64SharedObject(bytes));
  std::unique_ptr<EmbeddedElfImage> image(new EmbeddedElfImage());
  long page_size = ::sysconf(_SC_PAGESIZE);
  image->page_size_ = page_size > 0 ? size_t(page_size) : 4096;
  STRATA_RETURN_IF_ERROR(image->ParseSegments(bytes));
  STRATA_RETURN_IF_ERROR(image->Reserve());
  STRATA_RETURN_IF_ERROR(image->CopySegments(bytes));
  DynamicInfo info;
  STRATA_RETURN_IF_ERROR(image->ReadDynamic(info));
  STRATA_RETURN_IF_ERROR(image->SizeSymbolTable(info));
  STRATA_RETURN_IF_ERROR(image->ApplyRelocations(info));
  STRATA_RETURN_IF_ERROR(image->Protect());
  return image;
}

EmbeddedElfImage::~EmbeddedElfImage() {
  if (initialized_) {
    // Finalizers in reverse order of construction; entries failing the
    // checks RunInitializers applied are skipped.
    uint64_t count = fini_array_size_ / sizeof(uint64_t);
    for (uint64_t i = count; i-- > 0;) {
      uint64_t entry = 0;
      if (!ReadAt(fini_array_ + i * 8, &entry, 8))
        break;
      auto *function = reinterpret_cast<void *>(entry);
      if (entry != 0 && entry != ~uint64_t(0) && IsCode(function))
        reinterpret_cast<void (*)()>(function)();
    }
    if (fini_ && IsCodeVaddr(fini_))
      reinterpret_cast<void (*)()>(At(fini_))();
  }
  if (reservation_)
    ::munmap(reservation_, reserved_size_);
}

Status EmbeddedElfImage::ParseSegments(std::span<const uint8_t> bytes) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  uint64_t max_alignment = page_size_;
  bool has_dynamic = false;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr;
    std::memcpy(&phdr, bytes.data() + header.e_phoff + i * sizeof(phdr),
                sizeof(phdr));
    switch (phdr.p_type) {
    case PT_LOAD:
      break;
    case PT_DYNAMIC:
      has_dynamic = true;
      dynamic_vaddr_ = phdr.p_vaddr;
      dynamic_size_ = phdr.p_memsz;
      continue;
    case PT_GNU_RELRO:
      relro_vaddr_ = phdr.p_vaddr;
      relro_size_ = phdr.p_memsz;
      continue;
    case PT_TLS:
      return UnimplementedError("ELF segment ", i,
                                " is thread-local storage (PT_TLS), which "
                                "executables cannot use");
    default:
      continue;
    }
    if (phdr.p_memsz == 0)
      continue;
    if (phdr.p_filesz > phdr.p_memsz)
      return InvalidArgumentError("ELF segment ", i, ": file size ",
                                  phdr.p_filesz, " exceeds memory size ",
                                  phdr.p_memsz);
    if (phdr.p_vaddr >= kMaxVaddr || phdr.p_memsz >= kMaxVaddr)
      return InvalidArgumentError("ELF segment ", i, ": address ",
                                  Hex(phdr.p_vaddr), " or size ",
                                  Hex(phdr.p_memsz), " out of range");
    uint64_t align = phdr.p_align ? phdr.p_align : 1;
    if (align & (align - 1))
      return InvalidArgumentError("ELF segment ", i, ": alignment ", align,
                                  " is not a power of two");
    if (align > kMaxSegmentAlignment)
      return InvalidArgumentError("ELF segment ", i, ": alignment ", align,
                                  " exceeds the supported ",
                                  kMaxSegmentAlignment);
    if (phdr.p_vaddr % align != phdr.p_offset % align)
      return InvalidArgumentError(
          "ELF segment ", i, ": address ", Hex(phdr.p_vaddr), " and offset ",
          Hex(phdr.p_offset), " differ modulo the alignment ", align);
    if (!(phdr.p_flags & PF_R))
      return InvalidArgumentError("ELF segment ", i, " is not readable");
    if ((phdr.p_flags & PF_W) && (phdr.p_flags & PF_X))
      return InvalidArgumentError("ELF segment ", i,
                                  " is both writable and executable (W^X)");
    // Code comes whole from the file: a zero-filled tail in an executable
    // segment only appears in damaged files (and would run as code).
    if ((phdr.p_flags & PF_X) && phdr.p_filesz != phdr.p_memsz)
      return InvalidArgumentError("ELF executable segment ", i,
                                  " has file size ", phdr.p_filesz,
                                  " but memory size ", phdr.p_memsz);
    if (!segments_.empty()) {
      const Segment &last = segments_.back();
      if (phdr.p_vaddr < last.vaddr + last.memsz)
        return InvalidArgumentError(
            "ELF segment ", i, " at ", Hex(phdr.p_vaddr),
            " overlaps or precedes the previous loadable segment [",
            Hex(last.vaddr), ", ", Hex(last.vaddr + last.memsz), ")");
    }
    max_alignment = std::max(max_alignment, align);
    segments_.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset,
                         phdr.p_filesz, phdr.p_flags});
  }
  if (segments_.empty())
    return InvalidArgumentError("ELF file has no non-empty loadable segment");
  if (!has_dynamic)
    return InvalidArgumentError(
        "ELF file has no dynamic segment (PT_DYNAMIC), so no symbols");
  min_vaddr_ = segments_.front().vaddr & ~(max_alignment - 1);
  uint64_t end = segments_.back().vaddr + segments_.back().memsz;
  max_vaddr_ = (end + page_size_ - 1) & ~uint64_t(page_size_ - 1);
  if (max_vaddr_ - min_vaddr_ > kMaxImageSpan)
    return InvalidArgumentError("ELF segments span ", max_vaddr_ - min_vaddr_,
                                " bytes; the limit is ", kMaxImageSpan);
  // Over-reserve so the base can be aligned for the strictest segment.
  alignment_ = max_alignment;
  reserved_size_ = size_t(max_vaddr_ - min_vaddr_ + max_alignment - page_size_);
  return OkStatus();
}

Status EmbeddedElfImage::Reserve() {
  void *memory = ::mmap(nullptr, reserved_size_, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return ResourceExhaustedError("reserving ", reserved_size_,
                                  " bytes for the executable failed");
  reservation_ = static_cast<uint8_t *>(memory);
  uintptr_t address = reinterpret_cast<uintptr_t>(reservation_);
  address = (address + alignment_ - 1) & ~uintptr_t(alignment_ - 1);
  base_ = reinterpret_cast<uint8_t *>(address);
  return OkStatus();
}

Status EmbeddedElfImage::CopySegments(std::span<const uint8_t> bytes) {
  // Offsets and file sizes were checked against `bytes` by
  // ValidateElfX86_64SharedObject.
  for (const Segment &segment : segments_)
    if (segment.filesz)
      std::memcpy(At(segment.vaddr), bytes.data() + segment.offset,
                  segment.filesz);
  return OkStatus();
}

const EmbeddedElfImage::Segment *
EmbeddedElfImage::FindSegment(uint64_t vaddr, uint64_t size) const {
  for (const Segment &segment : segments_)
    if (vaddr >= segment.vaddr && vaddr - segment.vaddr <= segment.memsz &&
        size <= segment.memsz - (vaddr - segment.vaddr))
      return &segment;
  return nullptr;
}

bool EmbeddedElfImage::ReadAt(uint64_t vaddr, void *out, size_t size) const {
  if (!FindSegment(vaddr, size))
    return false;
  std::memcpy(out, At(vaddr), size);
  return true;
}

Status EmbeddedElfImage::ReadDynamic(DynamicInfo &info) {
  if (!FindSegment(dynamic_vaddr_, dynamic_size_))
    return InvalidArgumentError("ELF dynamic segment [", Hex(dynamic_vaddr_),
                                ", +", dynamic_size_,
                                ") is not inside a loadable segment");
  uint64_t count = dynamic_size_ / sizeof(Elf64_Dyn);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Dyn entry;
    std::memcpy(&entry, At(dynamic_vaddr_ + i * sizeof(entry)), sizeof(entry));
    uint64_t value = entry.d_un.d_val;
    switch (entry.d_tag) {
    case DT_NULL:
      i = count;
      break;
    case DT_NEEDED:
      if (!info.has_needed)
        info.needed_name = value;
      info.has_needed = true;
      break;
    case DT_PLTRELSZ:
      info.jmprel_size = value;
      break;
    case DT_HASH:
      info.hash = value;
      break;
    case DT_STRTAB:
      strtab_vaddr_ = value;
      info.has_strtab = true;
      break;
    case DT_SYMTAB:
      symtab_vaddr_ = value;
      info.has_symtab = true;
      break;
    case DT_RELA:
      info.rela = value;
      break;
    case DT_RELASZ:
      info.rela_size = value;
      break;
    case DT_RELAENT:
      info.rela_entry = value;
      break;
    case DT_STRSZ:
      strtab_size_ = value;
      info.has_strsz = true;
      break;
    case DT_SYMENT:
      if (value != sizeof(Elf64_Sym))
        return InvalidArgumentError("ELF DT_SYMENT is ", value, ", not ",
                                    sizeof(Elf64_Sym));
      break;
    case DT_INIT:
      init_ = value;
      break;
    case DT_FINI:
      fini_ = value;
      break;
    case DT_REL:
    case DT_RELSZ:
      return UnimplementedError("ELF file uses REL relocations (DT_REL); "
                                "only RELA is supported on x86-64");
    case DT_RELR:
    case DT_RELRSZ:
      return UnimplementedError("ELF file uses packed relative relocations "
                                "(DT_RELR), which are not supported");
    case DT_PLTREL:
      if (value != DT_RELA)
        return InvalidArgumentError("ELF DT_PLTREL is ", value,
                                    "; only DT_RELA (7) is supported");
      break;
    case DT_TEXTREL:
      info.text_relocs = true;
      break;
    case DT_JMPREL:
      info.jmprel = value;
      break;
    case DT_INIT_ARRAY:
      init_array_ = value;
      break;
    case DT_FINI_ARRAY:
      fini_array_ = value;
      break;
    case DT_INIT_ARRAYSZ:
      init_array_size_ = value;
      break;
    case DT_FINI_ARRAYSZ:
      fini_array_size_ = value;
      break;
    case DT_FLAGS:
      info.text_relocs |= (value & DF_TEXTREL) != 0;
      break;
    case DT_GNU_HASH:
      info.gnu_hash = value;
      break;
    default:
      break;
    }
  }
  if (!info.has_symtab || !info.has_strtab || !info.has_strsz)
    return InvalidArgumentError(
        "ELF dynamic section lacks DT_SYMTAB, DT_STRTAB or DT_STRSZ");
  if (!FindSegment(strtab_vaddr_, strtab_size_))
    return InvalidArgumentError("ELF string table [", Hex(strtab_vaddr_), ", +",
                                strtab_size_,
                                ") is not inside a loadable segment");
  if (info.has_needed) {
    std::string name = "?";
    if (info.needed_name < strtab_size_ &&
        std::memchr(At(strtab_vaddr_ + info.needed_name), 0,
                    strtab_size_ - info.needed_name))
      name =
          reinterpret_cast<const char *>(At(strtab_vaddr_) + info.needed_name);
    return InvalidArgumentError("ELF file needs the shared library '", name,
                                "' (DT_NEEDED); executables must be "
                                "self-contained");
  }
  if (info.rela_entry != sizeof(Elf64_Rela))
    return InvalidArgumentError("ELF DT_RELAENT is ", info.rela_entry, ", not ",
                                sizeof(Elf64_Rela));
  return OkStatus();
}

Status EmbeddedElfImage::SizeSymbolTable(const DynamicInfo &info) {
  uint64_t count = 0;
  if (info.hash) {
    // DT_HASH: nbucket, nchain; nchain is the symbol count.
    uint32_t header[2];
    if (!ReadAt(info.hash, header, sizeof(header)))
      return InvalidArgumentError("ELF DT_HASH table at ", Hex(info.hash),
                                  " is not inside a loadable segment");
    count = header[1];
  } else if (info.gnu_hash) {
    // DT_GNU_HASH: the highest bucket start, then its chain up to the entry
    // with the low bit set, bounds the hashed symbols.
    uint32_t header[4]; // nbuckets, symoffset, bloom_size, bloom_shift
    if (!ReadAt(info.gnu_hash, header, sizeof(header)))
      return InvalidArgumentError("ELF DT_GNU_HASH table at ",
                                  Hex(info.gnu_hash),
                                  " is not inside a loadable segment");
    uint64_t buckets = info.gnu_hash + 16 + uint64_t(header[2]) * 8;
    uint64_t chains = buckets + uint64_t(header[0]) * 4;
    uint32_t max_bucket = 0;
    if (header[0] > kMaxSymbols || header[2] > kMaxSymbols)
      return InvalidArgumentError("ELF DT_GNU_HASH table is too large");
    for (uint32_t i = 0; i < header[0]; ++i) {
      uint32_t bucket;
      if (!ReadAt(buckets + uint64_t(i) * 4, &bucket, 4))
        return InvalidArgumentError("ELF DT_GNU_HASH buckets are truncated");
      max_bucket = std::max(max_bucket, bucket);
    }
    count = header[1];
    if (max_bucket >= header[1]) {
      count = max_bucket;
      for (uint32_t steps = 0;; ++steps, ++count) {
        uint32_t chain;
        if (steps > kMaxSymbols ||
            !ReadAt(chains + (count - header[1]) * 4, &chain, 4))
          return InvalidArgumentError("ELF DT_GNU_HASH chains are truncated");
        if (chain & 1)
          break;
      }
      ++count;
    }
  } else {
    return InvalidArgumentError(
        "ELF file has neither DT_HASH nor DT_GNU_HASH, so the size of its "
        "symbol table is unknown");
  }
  if (count > kMaxSymbols)
    return InvalidArgumentError("ELF symbol table claims ", count,
                                " symbols; the limit is ", kMaxSymbols);
  if (!FindSegment(symtab_vaddr_, count * sizeof(Elf64_Sym)))
    return InvalidArgumentError("ELF symbol table [", Hex(symtab_vaddr_), ", +",
                                count,
                                " symbols) is not inside a "
                                "loadable segment");
  symbol_count_ = uint32_t(count);
  return OkStatus();
}

Result<uint64_t> EmbeddedElfImage::SymbolValue(uint32_t index,
                                               std::string_view *name) const {
  if (index >= symbol_count_)
    return InvalidArgumentError("symbol index ", index,
                                " is past the symbol table (", symbol_count_,
                                " symbols)");
  Elf64_Sym symbol;
  std::memcpy(&symbol, At(symtab_vaddr_ + uint64_t(index) * sizeof(symbol)),
              sizeof(symbol));
  if (symbol.st_name >= strtab_size_ ||
      !std::memchr(At(strtab_vaddr_ + symbol.st_name), 0,
                   strtab_size_ - symbol.st_name))
    return InvalidArgumentError("symbol ", index,
                                " has a name outside the string table");
  *name = reinterpret_cast<const char *>(At(strtab_vaddr_ + symbol.st_name));
  if (symbol.st_shndx == SHN_UNDEF) {
    if (ELF64_ST_BIND(symbol.st_info) == STB_WEAK)
      return uint64_t(0);
    return InvalidArgumentError("undefined symbol '", *name,
                                "': executables cannot import symbols");
  }
  if (ELF64_ST_TYPE(symbol.st_info) == STT_GNU_IFUNC ||
      ELF64_ST_TYPE(symbol.st_info) == STT_TLS)
    return UnimplementedError("symbol '", *name,
                              "' is an indirect function or thread-local");
  if (symbol.st_shndx == SHN_ABS)
    return uint64_t(symbol.st_value);
  if (!FindSegment(symbol.st_value, 0))
    return InvalidArgumentError("symbol '", *name, "' at ",
                                Hex(symbol.st_value),
                                " is not inside a loadable segment");
  return uint64_t(reinterpret_cast<uintptr_t>(At(symbol.st_value)));
}

Status EmbeddedElfImage::ApplyRelocations(const DynamicInfo &info) {
  if (info.rela_size)
    STRATA_RETURN_IF_ERROR(ApplyRelocationTable(info.rela, info.rela_size,
                                                info.text_relocs, "DT_RELA"));
  if (info.jmprel_size)
    STRATA_RETURN_IF_ERROR(ApplyRelocationTable(info.jmprel, info.jmprel_size,
                                                info.text_relocs, "DT_JMPREL"));
  return OkStatus();
}

Status EmbeddedElfImage::ApplyRelocationTable(uint64_t vaddr, uint64_t size,
                                              bool text_relocs,
                                              const char *table) {
  if (size % sizeof(Elf64_Rela) != 0 || !FindSegment(vaddr, size))
    return InvalidArgumentError("ELF relocation table ", table, " [",
                                Hex(vaddr), ", +", size,
                                ") is misaligned or not inside a loadable "
                                "segment");
  // Read the table before writing anything: a relocation may not rewrite
  // the relocations after it.
  std::vector<Elf64_Rela> relocations(size / sizeof(Elf64_Rela));
  std::memcpy(relocations.data(), At(vaddr), size);
  // The load bias: image address = bias + vaddr.
  const uint64_t base =
      uint64_t(reinterpret_cast<uintptr_t>(base_)) - min_vaddr_;
  for (size_t i = 0; i < relocations.size(); ++i) {
    const Elf64_Rela &rela = relocations[i];
    uint32_t type = ELF64_R_TYPE(rela.r_info);
    uint32_t symbol_index = ELF64_R_SYM(rela.r_info);
    auto error = [&](auto... args) {
      return InvalidArgumentError("ELF relocation ", i, " of ", table, " (",
                                  RelocationName(type), " at ",
                                  Hex(rela.r_offset), "): ", args...);
    };
    size_t width;
    switch (type) {
    case R_X86_64_NONE:
      continue;
    case R_X86_64_RELATIVE:
    case R_X86_64_GLOB_DAT:
    case R_X86_64_JUMP_SLOT:
    case R_X86_64_64:
      width = 8;
      break;
    case R_X86_64_32:
    case R_X86_64_32S:
    case R_X86_64_PC32:
      width = 4;
      break;
    default:
      return UnimplementedError("ELF relocation ", i, " of ", table,
                                " has unsupported type ", RelocationName(type),
                                " (", type, ")");
    }
    const Segment *segment = FindSegment(rela.r_offset, width);
    if (!segment)
      return error("target is not inside a loadable segment");
    if (!(segment->flags & PF_W) && !text_relocs)
      return error("target is in a read-only segment and the file has no "
                   "DT_TEXTREL");
    uint64_t symbol = 0;
    std::string_view name;
    if (type != R_X86_64_RELATIVE && symbol_index != 0) {
      auto value = SymbolValue(symbol_index, &name);
      if (!value.ok())
        return value.status().Annotate(
            StrCat("ELF relocation ", i, " of ", table));
      symbol = *value;
    } else if (type != R_X86_64_RELATIVE) {
      return error("no symbol");
    }
    uint64_t addend = uint64_t(rela.r_addend);
    uint64_t place = base + rela.r_offset;
    uint64_t value64 = 0;
    uint32_t value32 = 0;
    switch (type) {
    case R_X86_64_RELATIVE:
      value64 = base + addend;
      break;
    case R_X86_64_GLOB_DAT:
    case R_X86_64_JUMP_SLOT:
      value64 = symbol;
      break;
    case R_X86_64_64:
      value64 = symbol + addend;
      break;
    case R_X86_64_32: {
      uint64_t value = symbol + addend;
      if (value > UINT32_MAX)
        return error("value ", Hex(value), " of '", name,
                     "' does not fit in 32 bits");
      value32 = uint32_t(value);
      break;
    }
    case R_X86_64_32S:
    case R_X86_64_PC32: {
      int64_t value =
          int64_t(symbol + addend - (type == R_X86_64_PC32 ? place : 0));
      if (value < INT32_MIN || value > INT32_MAX)
        return error("value ", value, " of '", name,
                     "' does not fit in signed 32 bits");
      value32 = uint32_t(int32_t(value));
      break;
    }
    }
    if (width == 8)
      std::memcpy(At(rela.r_offset), &value64, 8);
    else
      std::memcpy(At(rela.r_offset), &value32, 4);
  }
  return OkStatus();
}

Status EmbeddedElfImage::Protect() {
  const uint64_t page = page_size_;
  size_t page_count = size_t((max_vaddr_ - min_vaddr_) / page);
  std::vector<uint32_t> flags(page_count, 0);
  for (const Segment &segment : segments_) {
    size_t first = size_t((segment.vaddr - min_vaddr_) / page);
    size_t last =
        size_t((segment.vaddr + segment.memsz - 1 - min_vaddr_) / page);
    for (size_t p = first; p <= last; ++p)
      flags[p] |= segment.flags;
  }
  for (size_t p = 0; p < page_count; ++p)
    if ((flags[p] & PF_W) && (flags[p] & PF_X))
      return InvalidArgumentError(
          "ELF page at ", Hex(min_vaddr_ + p * page),
          " holds a writable and an executable segment (W^X)");
  if (relro_size_) {
    if (!FindSegment(relro_vaddr_, relro_size_))
      return InvalidArgumentError("ELF RELRO range [", Hex(relro_vaddr_), ", +",
                                  relro_size_,
                                  ") is not inside a loadable segment");
    // As the system loader does: whole pages from the one holding the start
    // up to the one holding the end.
    size_t first = size_t((relro_vaddr_ - min_vaddr_) / page);
    size_t end = size_t((relro_vaddr_ + relro_size_ - min_vaddr_) / page);
    for (size_t p = first; p < end; ++p)
      flags[p] &= ~uint32_t(PF_W);
  }
  auto protection = [](uint32_t segment_flags) {
    int prot = PROT_NONE;
    if (segment_flags & PF_R)
      prot |= PROT_READ;
    if (segment_flags & PF_W)
      prot |= PROT_WRITE;
    if (segment_flags & PF_X)
      prot |= PROT_EXEC;
    return prot;
  };
  for (size_t p = 0; p < page_count;) {
    size_t run = p + 1;
    while (run < page_count && flags[run] == flags[p])
      ++run;
    if (::mprotect(base_ + p * page, (run - p) * page, protection(flags[p])) !=
        0)
      return PermissionDeniedError("protecting executable pages at ",
                                   Hex(min_vaddr_ + p * page), " failed");
    p = run;
  }
  return OkStatus();
}

Status EmbeddedElfImage::RunInitializers() {
  if (init_ && !IsCodeVaddr(init_))
    return InvalidArgumentError("ELF DT_INIT ", Hex(init_),
                                " is not inside an executable segment");
  if (init_array_size_ % sizeof(uint64_t) != 0 ||
      (init_array_size_ && !FindSegment(init_array_, init_array_size_)))
    return InvalidArgumentError("ELF DT_INIT_ARRAY [", Hex(init_array_), ", +",
                                init_array_size_,
                                ") is misaligned or not inside a loadable "
                                "segment");
  if (fini_array_size_ % sizeof(uint64_t) != 0 ||
      (fini_array_size_ && !FindSegment(fini_array_, fini_array_size_)))
    return InvalidArgumentError("ELF DT_FINI_ARRAY [", Hex(fini_array_), ", +",
                                fini_array_size_,
                                ") is misaligned or not inside a loadable "
                                "segment");
  // Check every entry before running any.
  std::vector<void (*)()> functions;
  if (init_)
    functions.push_back(reinterpret_cast<void (*)()>(At(init_)));
  for (uint64_t i = 0; i < init_array_size_ / 8; ++i) {
    uint64_t entry;
    std::memcpy(&entry, At(init_array_ + i * 8), 8);
    if (entry == 0 || entry == ~uint64_t(0))
      continue;
    auto *function = reinterpret_cast<void *>(entry);
    if (!IsCode(function))
      return InvalidArgumentError("ELF DT_INIT_ARRAY entry ", i, " (",
                                  Hex(entry),
                                  ") is not inside an executable segment");
    functions.push_back(reinterpret_cast<void (*)()>(function));
  }
  initialized_ = true;
  for (void (*function)() : functions)
    function();
  return OkStatus();
}

Result<const void *>
EmbeddedElfImage::LookupFunction(std::string_view name) const {
  for (uint32_t i = 1; i < symbol_count_; ++i) {
    Elf64_Sym symbol;
    std::memcpy(&symbol, At(symtab_vaddr_ + uint64_t(i) * sizeof(symbol)),
                sizeof(symbol));
    if (symbol.st_shndx == SHN_UNDEF || symbol.st_name >= strtab_size_)
      continue;
    const char *symbol_name =
        reinterpret_cast<const char *>(At(strtab_vaddr_ + symbol.st_name));
    size_t limit = size_t(strtab_size_ - symbol.st_name);
    if (name.size() >= limit ||
        std::memcmp(symbol_name, name.data(), name.size()) != 0 ||
        symbol_name[name.size()] != 0)
      continue;
    if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC)
      return InvalidArgumentError("ELF symbol '", name, "' is not a function");
    if (symbol.st_shndx == SHN_ABS || !IsCodeVaddr(symbol.st_value))
      return InvalidArgumentError("ELF symbol '", name, "' at ",
                                  Hex(symbol.st_value),
                                  " is not inside an executable segment");
    return static_cast<const void *>(At(symbol.st_value));
  }
  return NotFoundError("ELF file does not export '", name, "'");
}

bool EmbeddedElfImage::IsReadable(const void *pointer, size_t size) const {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  auto base = reinterpret_cast<uintptr_t>(base_);
  if (address < base || address - base >= max_vaddr_ - min_vaddr_)
    return false;
  const Segment *segment = FindSegment(address - base + min_vaddr_, size);
  return segment && (segment->flags & PF_R);
}

bool EmbeddedElfImage::IsCodeVaddr(uint64_t vaddr) const {
  const Segment *segment = FindSegment(vaddr, 1);
  return segment && (segment->flags & PF_X);
}

bool EmbeddedElfImage::IsCode(const void *pointer) const {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  auto base = reinterpret_cast<uintptr_t>(base_);
  if (address < base || address - base >= max_vaddr_ - min_vaddr_)
    return false;
  const Segment *segment = FindSegment(address - base + min_vaddr_, 1);
  return segment && (segment->flags & PF_X);
}

bool EmbeddedElfImage::IsString(const char *text) const {
  auto address = reinterpret_cast<uintptr_t>(text);
  auto base = reinterpret_cast<uintptr_t>(base_);
  if (address < base || address - base >= max_vaddr_ - min_vaddr_)
    return false;
  uint64_t vaddr = address - base + min_vaddr_;
  const Segment *segment = FindSegment(vaddr, 1);
  return segment && (segment->flags & PF_R) &&
         std::memchr(text, 0, segment->vaddr + segment->memsz - vaddr);
}

} // namespace strata::hal
