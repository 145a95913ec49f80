// The embedded ELF loader's image: an x86-64 ELF shared object loaded
// without the system dynamic linker (SPEC §4). Load():
//   1. checks the headers (ValidateElfX86_64SharedObject, then every PT_LOAD:
//      sizes, alignment, order, no overlap, never writable and executable),
//   2. reserves one virtual range for all PT_LOAD segments and copies them
//      in (the rest of each segment is zero),
//   3. reads the dynamic section (rejecting DT_NEEDED: executables are
//      self-contained) and applies the RELA relocations (RELATIVE,
//      JUMP_SLOT, GLOB_DAT, 64, 32, 32S, PC32), each target checked to lie
//      inside a loaded segment (a writable one unless DT_TEXTREL),
//   4. protects each page as its segments ask (W^X; PT_GNU_RELRO read-only;
//      pages no segment covers are inaccessible).
// RunInitializers() then runs DT_INIT and DT_INIT_ARRAY; the destructor runs
// DT_FINI_ARRAY and DT_FINI (if initialised) and unmaps the image.
// Every rejection is INVALID_ARGUMENT (UNIMPLEMENTED for valid but
// unsupported features) naming the failed check.
#ifndef STRATA_HAL_LOADERS_EMBEDDED_ELF_IMAGE_H_
#define STRATA_HAL_LOADERS_EMBEDDED_ELF_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "strata/base/status.h"

namespace strata::hal {

class EmbeddedElfImage {
public:
  static Result<std::unique_ptr<EmbeddedElfImage>>
  Load(std::span<const uint8_t> bytes);
  ~EmbeddedElfImage();

  EmbeddedElfImage(const EmbeddedElfImage &) = delete;
  EmbeddedElfImage &operator=(const EmbeddedElfImage &) = delete;

  // Runs DT_INIT, then DT_INIT_ARRAY in order. Call once, after Load.
  Status RunInitializers();

  // The address of the defined function `name` in the dynamic symbol table;
  // NOT_FOUND if absent, INVALID_ARGUMENT if it is not inside code.
  Result<const void *> LookupFunction(std::string_view name) const;

  // Whether [pointer, pointer + size) lies inside one loaded segment.
  bool IsReadable(const void *pointer, size_t size) const;
  // Whether `pointer` lies inside an executable segment.
  bool IsCode(const void *pointer) const;
  // Whether `text` is NUL-terminated inside one loaded segment.
  bool IsString(const char *text) const;

  // Bytes reserved for the image.
  size_t reserved_size() const { return reserved_size_; }

private:
  struct Segment {
    uint64_t vaddr;
    uint64_t memsz;
    uint64_t offset;
    uint64_t filesz;
    uint32_t flags; // PF_R | PF_W | PF_X
  };
  struct DynamicInfo;

  EmbeddedElfImage() = default;

  Status ParseSegments(std::span<const uint8_t> bytes);
  Status Reserve();
  Status CopySegments(std::span<const uint8_t> bytes);
  Status ReadDynamic(DynamicInfo &info);
  Status SizeSymbolTable(const DynamicInfo &info);
  Status ApplyRelocations(const DynamicInfo &info);
  Status ApplyRelocationTable(uint64_t vaddr, uint64_t size, bool text_relocs,
                              const char *table);
  Status Protect();
  Result<uint64_t> SymbolValue(uint32_t index, std::string_view *name) const;

  // The segment holding [vaddr, vaddr + size), or null.
  const Segment *FindSegment(uint64_t vaddr, uint64_t size) const;
  // Whether `vaddr` lies inside an executable segment.
  bool IsCodeVaddr(uint64_t vaddr) const;
  // Image address of `vaddr` (checked by the caller).
  uint8_t *At(uint64_t vaddr) const { return base_ + (vaddr - min_vaddr_); }
  // Copies `size` bytes at `vaddr` out of the image if they are inside a
  // loaded segment.
  bool ReadAt(uint64_t vaddr, void *out, size_t size) const;

  std::vector<Segment> segments_;
  uint64_t min_vaddr_ = 0; // page-aligned
  uint64_t max_vaddr_ = 0; // page-aligned, exclusive
  uint64_t relro_vaddr_ = 0, relro_size_ = 0;
  uint64_t dynamic_vaddr_ = 0, dynamic_size_ = 0;
  uint8_t *reservation_ = nullptr;
  size_t reserved_size_ = 0;
  uint8_t *base_ = nullptr; // image address of min_vaddr_
  size_t page_size_ = 4096;
  uint64_t alignment_ = 4096; // of base_: the strictest segment's

  // Dynamic symbol table.
  uint64_t symtab_vaddr_ = 0, strtab_vaddr_ = 0, strtab_size_ = 0;
  uint32_t symbol_count_ = 0;

  // Initializers and finalizers (image vaddrs; arrays hold pointers).
  uint64_t init_ = 0, init_array_ = 0, init_array_size_ = 0;
  uint64_t fini_ = 0, fini_array_ = 0, fini_array_size_ = 0;
  bool initialized_ = false;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOADERS_EMBEDDED_ELF_IMAGE_H_
