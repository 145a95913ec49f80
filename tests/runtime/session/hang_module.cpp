#include "hang_module.h"

#include <map>
#include <string>
#include <string_view>

#include "module_builder.h"
#include "strata/hal/abi_enums.h"
#include "strata/hal/local/executable_library.h"
#include "strata/hal/local/vmvx_abi.h"

namespace strata::session::testing {
namespace {

using vm::Opcode;
using vm::testing::FunctionBuilder;
using vm::testing::Label;
using vm::testing::ModuleBuilder;
using vm::testing::RegI32;
using vm::testing::RegI64;
using vm::testing::RegRef;

// The calling convention of `full_name` in the hal module's own table.
std::string HalConvention(std::string_view full_name) {
#define STRATA_HAL_IMPORT(identifier, name, calling_convention)                \
  if (full_name == name)                                                       \
    return calling_convention;
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT
  return "";
}

// Declares each hal import once, on first use.
class HalImports {
public:
  explicit HalImports(ModuleBuilder &builder) : builder_(builder) {}
  uint32_t operator()(const std::string &name) {
    auto it = ordinals_.find(name);
    if (it == ordinals_.end())
      it =
          ordinals_.emplace(name, builder_.AddImport(name, HalConvention(name)))
              .first;
    return it->second;
  }

private:
  ModuleBuilder &builder_;
  std::map<std::string, uint32_t> ordinals_;
};

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

// A VMVX executable whose export "spin" (one binding) loops forever.
std::vector<uint8_t> BuildSpinKernel() {
  ModuleBuilder builder("spin_kernel");
  FunctionBuilder &f =
      builder.AddFunction("spin", "0rIIIIII_v", {.i64 = 6, .ref = 1});
  Label loop = f.NewLabel();
  f.Bind(loop);
  f.Op(Opcode::Branch).Branch(loop);
  builder.AddExport("spin", f.ordinal());
  return builder.Build();
}

void AddSpin(ModuleBuilder &builder) {
  FunctionBuilder &f = builder.AddFunction("spin", "0v_v", {});
  Label loop = f.NewLabel();
  f.Bind(loop);
  f.Op(Opcode::Branch).Branch(loop);
  builder.AddExport("spin", f.ordinal());
}

void AddAwaitNever(ModuleBuilder &builder, HalImports &hal) {
  FunctionBuilder &f =
      builder.AddFunction("await_never", "0v_v", {.i32 = 3, .ref = 2});
  f.Op(Opcode::ConstI32).Reg(0).I32(0);
  f.Op(Opcode::Call)
      .Import(hal("hal.devices.get"))
      .List({RegI32(0)})
      .List({RegRef(0)});
  f.Op(Opcode::Call)
      .Import(hal("hal.fence.create"))
      .List({RegRef(0), RegI32(0)})
      .List({RegRef(1)});
  // Kept in a global, the fence could be signalled by a later call as far as
  // the verifier can tell: the hang is left to the deadline.
  f.Op(Opcode::GlobalStoreRef).Global(0).Reg(1);
  f.Op(Opcode::ConstI32).Reg(1).I32(STRATA_HAL_WAIT_FOREVER);
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.fence.await"))
      .Segments({1})
      .List({RegI32(1), RegRef(1)})
      .List({RegI32(2)});
  f.Op(Opcode::Return).List({});
  builder.AddExport("await_never", f.ordinal());
}

struct DispatchSpec {
  const char *name;
  uint32_t format_rodata, data_rodata;
  int32_t x, y, z;
  uint16_t binding_count;
  // Counts read back from globals, so the verifier cannot see them, and the
  // dispatch repeated until the deadline.
  bool repeat_with_run_time_counts = false;
};

// Loads an executable, dispatches export 0 over the grid with every binding
// on one 128-byte buffer, submits and awaits: what a compiled host program
// does, with hostile numbers.
void AddDispatch(ModuleBuilder &builder, HalImports &hal,
                 const DispatchSpec &spec) {
  FunctionBuilder &f =
      builder.AddFunction(spec.name, "0v_v", {.i32 = 11, .i64 = 3, .ref = 10});
  f.Op(Opcode::ConstI32).Reg(0).I32(0);
  f.Op(Opcode::Call)
      .Import(hal("hal.devices.get"))
      .List({RegI32(0)})
      .List({RegRef(0)});
  f.Op(Opcode::Call)
      .Import(hal("hal.device.allocator"))
      .List({RegRef(0)})
      .List({RegRef(1)});
  f.Op(Opcode::ConstI64).Reg(0).I64(STRATA_HAL_QUEUE_AFFINITY_ANY);
  f.Op(Opcode::ConstI64).Reg(1).I64(128);
  f.Op(Opcode::ConstI64).Reg(2).I64(0);
  f.Op(Opcode::ConstI32).Reg(1).I32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL);
  f.Op(Opcode::ConstI32).Reg(2).I32(STRATA_HAL_BUFFER_USAGE_DEFAULT);
  f.Op(Opcode::Call)
      .Import(hal("hal.allocator.allocate"))
      .List({RegRef(1), RegI64(0), RegI32(1), RegI32(2), RegI64(1)})
      .List({RegRef(2)});
  f.Op(Opcode::ConstRefRodata).Reg(3).Rodata(spec.format_rodata);
  f.Op(Opcode::ConstRefRodata).Reg(4).Rodata(spec.data_rodata);
  f.Op(Opcode::ConstRefZero).Reg(5);
  f.Op(Opcode::Call)
      .Import(hal("hal.executable.create"))
      .List({RegRef(0), RegI64(0), RegRef(3), RegRef(4), RegRef(5)})
      .List({RegRef(6)});
  Label repeat = f.NewLabel();
  f.Bind(repeat);
  f.Op(Opcode::ConstI32).Reg(3).I32(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  f.Op(Opcode::ConstI32).Reg(4).I32(STRATA_HAL_COMMAND_CATEGORY_DISPATCH);
  f.Op(Opcode::Call)
      .Import(hal("hal.command_buffer.create"))
      .List({RegRef(0), RegI32(3), RegI32(4), RegI64(0), RegI32(0)})
      .List({RegRef(7)});
  f.Op(Opcode::ConstI32).Reg(5).I32(spec.x);
  f.Op(Opcode::ConstI32).Reg(6).I32(spec.y);
  f.Op(Opcode::ConstI32).Reg(7).I32(spec.z);
  if (spec.repeat_with_run_time_counts) {
    for (uint16_t i = 0; i < 3; ++i) {
      f.Op(Opcode::GlobalStoreI32).Global(i).Reg(5 + i);
      f.Op(Opcode::GlobalLoadI32).Reg(5 + i).Global(i);
    }
  }
  f.Op(Opcode::ConstI32).Reg(8).I32(0);
  std::vector<uint16_t> operands = {RegRef(7), RegRef(6), RegI32(8), RegI32(5),
                                    RegI32(6), RegI32(7), RegI64(2)};
  for (uint16_t i = 0; i < spec.binding_count; ++i)
    operands.insert(operands.end(), {RegRef(2), RegI64(2), RegI64(1)});
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.command_buffer.dispatch"))
      .Segments({0, spec.binding_count})
      .List(operands)
      .List({});
  f.Op(Opcode::Call)
      .Import(hal("hal.command_buffer.finalize"))
      .List({RegRef(7)})
      .List({});
  f.Op(Opcode::Call)
      .Import(hal("hal.fence.create"))
      .List({RegRef(0), RegI32(0)})
      .List({RegRef(8)});
  f.Op(Opcode::ConstRefZero).Reg(9);
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.device.queue.execute"))
      .Segments({1})
      .List({RegRef(0), RegI64(0), RegRef(9), RegRef(8), RegRef(7)})
      .List({});
  f.Op(Opcode::ConstI32).Reg(9).I32(STRATA_HAL_WAIT_FOREVER);
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.fence.await"))
      .Segments({1})
      .List({RegI32(9), RegRef(8)})
      .List({RegI32(10)});
  if (spec.repeat_with_run_time_counts)
    f.Op(Opcode::Branch).Branch(repeat);
  else
    f.Op(Opcode::Return).List({});
  builder.AddExport(spec.name, f.ordinal());
}

} // namespace

std::vector<uint8_t> BuildHangModule(std::span<const uint8_t> library) {
  ModuleBuilder builder("hang");
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION);
  builder.SetGlobalCounts({.i32 = 3, .ref = 1});
  HalImports hal(builder);
  AddSpin(builder);
  AddAwaitNever(builder, hal);
  uint32_t elf_format = builder.AddRodata(
      "elf_format", STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, 1);
  uint32_t elf_data = builder.AddRodata("elf_data", AsText(library), 64);
  // The largest grid the HAL accepts (2^24 workgroups), over and over: the
  // deadline stops it between workgroups or between dispatches.
  AddDispatch(builder, hal,
              {"huge_grid", elf_format, elf_data, 4096, 4096, 1, 3,
               /*repeat_with_run_time_counts=*/true});
  uint32_t vmvx_format =
      builder.AddRodata("vmvx_format", STRATA_HAL_EXECUTABLE_FORMAT_VMVX, 1);
  std::vector<uint8_t> kernel = BuildSpinKernel();
  uint32_t vmvx_data = builder.AddRodata("vmvx_data", AsText(kernel), 64);
  AddDispatch(builder, hal, {"vmvx_spin", vmvx_format, vmvx_data, 4, 1, 1, 1});
  return builder.Build();
}

std::vector<uint8_t> BuildInitSpinModule() {
  ModuleBuilder builder("init_spin");
  FunctionBuilder &init = builder.AddFunction("__init", "0v_v", {});
  Label loop = init.NewLabel();
  init.Bind(loop);
  init.Op(Opcode::Branch).Branch(loop);
  return builder.Build();
}

} // namespace strata::session::testing
