// The embedded ELF loader: relocations and initialisers (reloc_library.c),
// every header check (by patching a real library), and damaged executables
// from the compiler (truncations and byte flips: clean errors, no crash).
#include <gtest/gtest.h>

#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <vector>

#include "strata/hal/api.h"
#include "strata/hal/drivers/local_sync/local_sync_driver.h"
#include "strata/hal/loaders/embedded_elf_loader.h"
#include "strata/hal/local/executable_library.h"
#include "strata/vm/bytecode_module.h"

namespace strata::hal {
namespace {

constexpr const char *kFormat = STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64;
constexpr QueueAffinity kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;

std::vector<uint8_t> ReadFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

std::vector<uint8_t> ReadLibrary(std::string_view name) {
  return ReadFile(StrCat(HAL_FREESTANDING_DIR, "/", name, ".so"));
}

// Read/patch access to the structures of a well-formed ELF file.
class ElfPatcher {
public:
  explicit ElfPatcher(std::vector<uint8_t> &bytes) : bytes_(bytes) {
    std::memcpy(&header_, bytes.data(), sizeof(header_));
  }

  template <typename T> T Get(uint64_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  template <typename T> void Set(uint64_t offset, const T &value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
  }

  uint64_t PhdrOffset(int index) const {
    return header_.e_phoff + uint64_t(index) * sizeof(Elf64_Phdr);
  }
  Elf64_Phdr Phdr(int index) const {
    return Get<Elf64_Phdr>(PhdrOffset(index));
  }
  int phnum() const { return header_.e_phnum; }
  // Index of the `n`th program header of `type`, or -1.
  int FindPhdr(uint32_t type, int n = 0) const {
    for (int i = 0; i < phnum(); ++i)
      if (Phdr(i).p_type == type && n-- == 0)
        return i;
    return -1;
  }

  uint64_t FileOffset(uint64_t vaddr) const {
    for (int i = 0; i < phnum(); ++i) {
      Elf64_Phdr phdr = Phdr(i);
      if (phdr.p_type == PT_LOAD && vaddr >= phdr.p_vaddr &&
          vaddr < phdr.p_vaddr + phdr.p_filesz)
        return phdr.p_offset + (vaddr - phdr.p_vaddr);
    }
    ADD_FAILURE() << "vaddr " << vaddr << " not in the file";
    return 0;
  }

  // File offset of the dynamic entry with `tag`.
  uint64_t DynamicEntry(int64_t tag) const {
    Elf64_Phdr dynamic = Phdr(FindPhdr(PT_DYNAMIC));
    for (uint64_t off = dynamic.p_offset;
         off < dynamic.p_offset + dynamic.p_filesz; off += sizeof(Elf64_Dyn)) {
      if (Get<Elf64_Dyn>(off).d_tag == tag)
        return off;
    }
    ADD_FAILURE() << "no dynamic tag " << tag;
    return 0;
  }
  uint64_t DynamicValue(int64_t tag) const {
    return Get<Elf64_Dyn>(DynamicEntry(tag)).d_un.d_val;
  }

  // File offsets of the RELA entries of `type`.
  std::vector<uint64_t> Relocations(uint32_t type) const {
    std::vector<uint64_t> offsets;
    uint64_t table = FileOffset(DynamicValue(DT_RELA));
    uint64_t size = DynamicValue(DT_RELASZ);
    for (uint64_t off = table; off < table + size; off += sizeof(Elf64_Rela))
      if (ELF64_R_TYPE(Get<Elf64_Rela>(off).r_info) == type)
        offsets.push_back(off);
    return offsets;
  }

  // File offset of the st_value of dynamic symbol `name`.
  uint64_t SymbolValueOffset(std::string_view name) const {
    uint64_t symtab = FileOffset(DynamicValue(DT_SYMTAB));
    uint64_t strtab = FileOffset(DynamicValue(DT_STRTAB));
    for (uint64_t off = symtab + sizeof(Elf64_Sym); off < strtab;
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol = Get<Elf64_Sym>(off);
      if (reinterpret_cast<const char *>(bytes_.data() + strtab +
                                         symbol.st_name) == name)
        return off + offsetof(Elf64_Sym, st_value);
    }
    ADD_FAILURE() << "no symbol " << name;
    return 0;
  }

private:
  std::vector<uint8_t> &bytes_;
  Elf64_Ehdr header_;
};

class EmbeddedElfTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto device = CreateLocalSyncDriver()->CreateDevice("?loader=embedded");
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
  }

  Result<RefPtr<Executable>> Load(std::span<const uint8_t> bytes) {
    return EmbeddedElfLoader().Load(kFormat, bytes, {});
  }

  // Runs export 0 of `executable` over one workgroup on a 16-byte buffer.
  std::vector<uint32_t> RunCheck(Executable &executable) {
    auto buffer = device_->allocator()->AllocateBuffer(
        STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
        16);
    EXPECT_TRUE(buffer.ok());
    auto cb = device_->CreateCommandBuffer(
        STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
        STRATA_HAL_COMMAND_CATEGORY_DISPATCH, kAny, 0);
    EXPECT_TRUE(cb.ok());
    BufferBinding bindings[] = {{buffer->get()}};
    EXPECT_TRUE((*cb)->Dispatch(&executable, 0, {1, 1, 1}, {}, bindings).ok());
    EXPECT_TRUE((*cb)->Finalize().ok());
    CommandBuffer *list[] = {cb->get()};
    EXPECT_TRUE(device_->QueueExecute(kAny, nullptr, nullptr, list).ok());
    std::vector<uint32_t> values(4);
    EXPECT_TRUE(
        (*buffer)
            ->ReadData(0, {reinterpret_cast<uint8_t *>(values.data()), 16})
            .ok());
    return values;
  }

  void ExpectError(std::span<const uint8_t> bytes, StatusCode code,
                   std::string_view needle) {
    auto result = Load(bytes);
    ASSERT_FALSE(result.ok()) << "loaded, expected: " << needle;
    EXPECT_EQ(result.status().code(), code) << result.status().ToString();
    EXPECT_NE(result.status().message().find(needle), std::string_view::npos)
        << "expected '" << needle << "' in " << result.status().ToString();
  }

  RefPtr<Device> device_;
};

TEST_F(EmbeddedElfTest, RelocationsAndInitializers) {
  std::vector<uint8_t> bytes = ReadLibrary("reloc_library");
  auto executable = Load(bytes);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  EXPECT_EQ((*executable)->name(), "reloc_library");
  std::vector<uint32_t> values = RunCheck(**executable);
  EXPECT_EQ(values[0], 6u) << "the DT_INIT_ARRAY constructor did not run";
  EXPECT_EQ(values[1], 22u) << "GOT/PLT/64-bit relocations are wrong";
  // Loads are independent: a second copy has its own globals.
  auto second = Load(bytes);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(RunCheck(**second)[1], 22u);
}

TEST_F(EmbeddedElfTest, ThirtyTwoBitRelocations) {
  std::vector<uint8_t> original = ReadLibrary("reloc_library");
  ElfPatcher reader(original);
  // R_X86_64_64 relocations: global_ptr, then the three anchor slots.
  std::vector<uint64_t> absolute = reader.Relocations(R_X86_64_64);
  ASSERT_EQ(absolute.size(), 4u);
  uint64_t highest = 0;
  for (uint64_t off : absolute)
    highest = std::max<uint64_t>(highest, reader.Get<Elf64_Rela>(off).r_offset);
  // The highest target is anchor_slots[2]; anchor_slots[0] is 16 below.
  uint64_t slot0_target = highest - 16;
  uint64_t anchor_slot = 0;
  for (uint64_t off : absolute)
    if (reader.Get<Elf64_Rela>(off).r_offset == slot0_target)
      anchor_slot = off;
  ASSERT_EQ(reader.Get<Elf64_Rela>(anchor_slot).r_offset, slot0_target);

  auto with_type = [&](uint32_t type) {
    std::vector<uint8_t> bytes = original;
    ElfPatcher patcher(bytes);
    Elf64_Rela rela = patcher.Get<Elf64_Rela>(anchor_slot);
    rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), type);
    patcher.Set(anchor_slot, rela);
    return bytes;
  };
  std::vector<uint8_t> pc32 = with_type(R_X86_64_PC32);
  auto executable = Load(pc32);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  std::vector<uint32_t> values = RunCheck(**executable);
  EXPECT_EQ(values[2], values[3]) << "PC32 must store anchor - place";

  // The image lives far above 4 GiB on x86-64 Linux, so absolute 32-bit
  // forms overflow; should it ever land low, they must load instead.
  for (uint32_t type : {R_X86_64_32, R_X86_64_32S}) {
    std::vector<uint8_t> bytes = with_type(type);
    auto result = Load(bytes);
    if (!result.ok())
      EXPECT_NE(result.status().message().find("does not fit"),
                std::string_view::npos)
          << result.status().ToString();
  }
  ExpectError(with_type(R_X86_64_IRELATIVE), StatusCode::kUnimplemented,
              "unsupported type R_X86_64_IRELATIVE (37)");
  ExpectError(with_type(R_X86_64_TPOFF64), StatusCode::kUnimplemented,
              "R_X86_64_TPOFF64 (18)");
  ExpectError(with_type(200), StatusCode::kUnimplemented, "(200)");
}

TEST_F(EmbeddedElfTest, RelocationTargetsAndSymbolsAreChecked) {
  std::vector<uint8_t> original = ReadLibrary("reloc_library");
  uint64_t entry = ElfPatcher(original).Relocations(R_X86_64_64)[0];
  auto patched = [&](auto mutate) {
    std::vector<uint8_t> bytes = original;
    ElfPatcher patcher(bytes);
    Elf64_Rela rela = patcher.Get<Elf64_Rela>(entry);
    mutate(rela, patcher);
    patcher.Set(entry, rela);
    return bytes;
  };
  ExpectError(
      patched([](Elf64_Rela &r, ElfPatcher &) { r.r_offset = 0x7fff0000; }),
      StatusCode::kInvalidArgument, "not inside a loadable segment");
  ExpectError(patched([](Elf64_Rela &r, ElfPatcher &p) {
                // The first segment (headers, symbols) is read-only.
                r.r_offset = p.Phdr(p.FindPhdr(PT_LOAD)).p_vaddr + 64;
              }),
              StatusCode::kInvalidArgument, "read-only segment");
  ExpectError(patched([](Elf64_Rela &r, ElfPatcher &) {
                r.r_info = ELF64_R_INFO(5000, R_X86_64_64);
              }),
              StatusCode::kInvalidArgument, "past the symbol table");
}

TEST_F(EmbeddedElfTest, HeaderChecks) {
  std::vector<uint8_t> original = ReadLibrary("test_library");
  ASSERT_TRUE(Load(original).ok());
  auto patched = [&](auto mutate) {
    std::vector<uint8_t> bytes = original;
    ElfPatcher patcher(bytes);
    mutate(patcher);
    return bytes;
  };
  auto patch_load = [&](int n, auto mutate) {
    return patched([&](ElfPatcher &p) {
      int index = p.FindPhdr(PT_LOAD, n);
      Elf64_Phdr phdr = p.Phdr(index);
      mutate(phdr);
      p.Set(p.PhdrOffset(index), phdr);
    });
  };
  int writable = -1;
  for (int n = 0; writable < 0; ++n) {
    ElfPatcher p(original);
    int index = p.FindPhdr(PT_LOAD, n);
    ASSERT_GE(index, 0);
    if (p.Phdr(index).p_flags & PF_W)
      writable = n;
  }
  ExpectError(patch_load(writable, [](Elf64_Phdr &p) { p.p_flags |= PF_X; }),
              StatusCode::kInvalidArgument, "writable and executable (W^X)");
  uint64_t second_vaddr = ElfPatcher(original)
                              .Phdr(ElfPatcher(original).FindPhdr(PT_LOAD, 1))
                              .p_vaddr;
  ExpectError(patch_load(0,
                         [&](Elf64_Phdr &p) {
                           p.p_memsz = second_vaddr + 0x10 - p.p_vaddr;
                         }),
              StatusCode::kInvalidArgument, "overlaps or precedes");
  ExpectError(patch_load(1, [](Elf64_Phdr &p) { p.p_vaddr += 8; }),
              StatusCode::kInvalidArgument, "differ modulo the alignment");
  ExpectError(patch_load(0, [](Elf64_Phdr &p) { p.p_filesz = p.p_memsz + 1; }),
              StatusCode::kInvalidArgument, "exceeds memory size");
  ExpectError(patch_load(0, [](Elf64_Phdr &p) { p.p_align = 3; }),
              StatusCode::kInvalidArgument, "not a power of two");
  ExpectError(patch_load(0, [](Elf64_Phdr &p) { p.p_flags = PF_X; }),
              StatusCode::kInvalidArgument, "not readable");
  ExpectError(
      patch_load(writable, [](Elf64_Phdr &p) { p.p_memsz = 1ull << 36; }),
      StatusCode::kInvalidArgument, "the limit is");
  ExpectError(patched([](ElfPatcher &p) {
                int index = p.FindPhdr(PT_DYNAMIC);
                Elf64_Phdr phdr = p.Phdr(index);
                phdr.p_type = PT_NOTE;
                p.Set(p.PhdrOffset(index), phdr);
              }),
              StatusCode::kInvalidArgument, "no dynamic segment");
  ExpectError(patched([](ElfPatcher &p) {
                Elf64_Dyn entry = {DT_NEEDED, {1}};
                p.Set(p.DynamicEntry(DT_FLAGS), entry);
              }),
              StatusCode::kInvalidArgument, "DT_NEEDED");
  ExpectError(patched([](ElfPatcher &p) {
                Elf64_Dyn entry = {DT_REL, {0}};
                p.Set(p.DynamicEntry(DT_FLAGS), entry);
              }),
              StatusCode::kUnimplemented, "DT_REL");
  ExpectError(patched([](ElfPatcher &p) {
                p.Set<uint64_t>(p.SymbolValueOffset(
                                    STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL),
                                0x10);
              }),
              StatusCode::kInvalidArgument,
              "is not inside an executable segment");
}

#if defined(STRATA_HAVE_COMPILED_MODULES)

// The executable inside a compiled module (the rodata that is an ELF file).
std::vector<uint8_t> CompiledExecutable(std::string_view module_name) {
  auto module = vm::LoadBytecodeModuleFromFile(
      StrCat(HAL_FREESTANDING_DIR, "/", module_name, ".smod"));
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok())
    return {};
  for (uint32_t i = 0; i < (*module)->rodata_count(); ++i) {
    std::span<const uint8_t> data = (*module)->rodata(i);
    if (data.size() > 4 && std::memcmp(data.data(), ELFMAG, SELFMAG) == 0)
      return std::vector<uint8_t>(data.begin(), data.end());
  }
  ADD_FAILURE() << module_name << " has no executable";
  return {};
}

TEST_F(EmbeddedElfTest, CompilerExecutablesLoad) {
  for (const char *name : {"simple_mul", "matmul_bias_relu"}) {
    std::vector<uint8_t> bytes = CompiledExecutable(name);
    auto executable = Load(bytes);
    ASSERT_TRUE(executable.ok())
        << name << ": " << executable.status().ToString();
    EXPECT_GE((*executable)->export_count(), 1u);
  }
}

// Damaged executables: every truncation, and byte flips everywhere except in
// code and in the query symbol's address (machine code and entry addresses
// cannot be validated by any loader; everything else must be).
TEST_F(EmbeddedElfTest, DamagedExecutablesAreCleanErrors) {
  for (const char *name : {"simple_mul", "matmul_bias_relu"}) {
    const std::vector<uint8_t> original = CompiledExecutable(name);
    ASSERT_FALSE(original.empty());
    for (size_t size = 0; size < original.size(); ++size) {
      auto result = Load(std::span<const uint8_t>(original.data(), size));
      ASSERT_FALSE(result.ok()) << name << " truncated to " << size;
      ASSERT_FALSE(result.status().message().empty());
    }

    std::vector<uint8_t> copy = original;
    ElfPatcher reader(copy);
    std::vector<std::pair<uint64_t, uint64_t>> skip;
    for (int i = 0; i < reader.phnum(); ++i) {
      Elf64_Phdr phdr = reader.Phdr(i);
      if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X))
        skip.push_back({phdr.p_offset, phdr.p_offset + phdr.p_filesz});
    }
    uint64_t query =
        reader.SymbolValueOffset(STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL);
    skip.push_back({query, query + 8});
    size_t loaded = 0, rejected = 0;
    for (size_t offset = 0; offset < original.size(); ++offset) {
      bool skipped = false;
      for (auto [begin, end] : skip)
        skipped |= offset >= begin && offset < end;
      if (skipped)
        continue;
      for (uint8_t mask : {0x01, 0x10, 0x80, 0xff}) {
        std::vector<uint8_t> bytes = original;
        bytes[offset] ^= mask;
        auto result = Load(bytes);
        if (result.ok()) {
          ++loaded;
        } else {
          ++rejected;
          ASSERT_FALSE(result.status().message().empty());
        }
      }
    }
    // Most flips hit checked structure; some (padding, unused fields) are
    // harmless and load.
    EXPECT_GT(rejected, 0u) << name;
    std::cout << name << ": " << rejected << " damaged copies rejected, "
              << loaded << " loaded\n";
  }
}

#endif // STRATA_HAVE_COMPILED_MODULES

} // namespace
} // namespace strata::hal
