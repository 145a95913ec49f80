#include "strata/vm/bytecode_disassembler.h"

#include <bit>
#include <cstdio>

#include "strata/schema/module_generated.h"

namespace strata::vm {
namespace {

const char kBankLetters[kRegisterBankCount] = {'i', 'I', 'f', 'F', 'r'};

std::string Hex4(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%04llx",
                static_cast<unsigned long long>(value));
  return text;
}

std::string PlainRegister(char kind, uint64_t ordinal) {
  return StrCat("%", kind, ordinal);
}

std::string TypedRegister(uint16_t reg) {
  return StrCat("%", kBankLetters[TypedRegisterBank(reg)],
                TypedRegisterOrdinal(reg));
}

std::string RegisterList(const DecodedOperand &list) {
  std::string text;
  for (uint16_t i = 0; i < list.count; ++i)
    text += (i ? ", " : "") + TypedRegister(list.entry(i));
  return text;
}

std::string FloatText(double value) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

// True when the op's first operand is a register it writes.
bool WritesFirstOperand(Opcode opcode) {
  switch (opcode) {
  case Opcode::GlobalStoreI32:
  case Opcode::GlobalStoreI64:
  case Opcode::GlobalStoreF32:
  case Opcode::GlobalStoreF64:
  case Opcode::GlobalStoreRef:
  case Opcode::ListResize:
  case Opcode::ListSetI32:
  case Opcode::ListSetI64:
  case Opcode::ListSetRef:
  case Opcode::BufferStoreI8:
  case Opcode::BufferStoreI32:
  case Opcode::BufferStoreI64:
  case Opcode::BufferStoreF32:
  case Opcode::BufferCopy:
  case Opcode::Branch:
  case Opcode::CondBranch:
  case Opcode::Call:
  case Opcode::CallVariadic:
  case Opcode::Return:
  case Opcode::Fail:
    return false;
  default:
    return true;
  }
}

std::string CalleeName(const BytecodeModule &module, uint64_t callee) {
  if (callee & kCalleeImportBit) {
    uint64_t ordinal = callee & ~uint64_t(kCalleeImportBit);
    if (ordinal < module.imports().size())
      return StrCat("@", module.imports()[ordinal].full_name);
    return StrCat("@import#", ordinal);
  }
  if (callee < module.functions().size())
    return StrCat("@", module.functions()[callee].name);
  return StrCat("@function#", callee);
}

std::string FormatOperand(const BytecodeModule &module,
                          const DecodedOperand &operand) {
  switch (operand.kind) {
  case 'i':
  case 'I':
  case 'f':
  case 'F':
  case 'r':
    return PlainRegister(operand.kind, operand.value);
  case 'k':
    return StrCat(static_cast<int32_t>(operand.value));
  case 'm':
    return operand.value < kUnaryMathFunctionCount
               ? std::string(kUnaryMathFunctionNames[operand.value])
               : StrCat("math#", operand.value);
  case 'n':
    return operand.value < kBinaryMathFunctionCount
               ? std::string(kBinaryMathFunctionNames[operand.value])
               : StrCat("math#", operand.value);
  case 'K':
    return StrCat(static_cast<int64_t>(operand.value));
  case 'x':
    return FloatText(
        std::bit_cast<float>(static_cast<uint32_t>(operand.value)));
  case 'X':
    return FloatText(std::bit_cast<double>(operand.value));
  case 'g':
    return StrCat("global[", operand.value, "]");
  case 'd': {
    std::string text = StrCat("rodata[", operand.value, "]");
    const auto *rodata = module.def().rodata();
    if (rodata && operand.value < rodata->size() &&
        rodata->Get(operand.value)->name())
      text += StrCat(" \"", rodata->Get(operand.value)->name()->str(), "\"");
    return text;
  }
  case 'c':
    return CalleeName(module, operand.value);
  case 's': {
    std::string text = "segments[";
    for (uint16_t i = 0; i < operand.count; ++i)
      text += StrCat(i ? ", " : "", operand.entry(i));
    return text + "]";
  }
  case 'l':
    return StrCat("(", RegisterList(operand), ")");
  case 'b': {
    std::string text = StrCat("^", Hex4(operand.value));
    if (operand.count) {
      text += " [";
      for (uint16_t i = 0; i < operand.count; ++i)
        text += StrCat(i ? ", " : "", TypedRegister(operand.remap_source(i)),
                       " -> ", TypedRegister(operand.remap_target(i)));
      text += "]";
    }
    return text;
  }
  default:
    return "?";
  }
}

void WriteHeader(const BytecodeModule &module, std::ostream &os) {
  const schema::ModuleDef &def = module.def();
  os << "module \"" << module.name() << "\" version " << module.version()
     << " (schema " << def.schema_version() << ", bytecode "
     << def.bytecode_version() << ")\n";

  os << "dependencies: " << module.dependencies().size() << "\n";
  for (const ModuleDependency &dependency : module.dependencies())
    os << "  " << dependency.name << " >= " << dependency.minimum_version
       << (dependency.is_optional ? " (optional)" : "") << "\n";

  os << "imports: " << module.imports().size() << "\n";
  for (size_t i = 0; i < module.imports().size(); ++i) {
    const ModuleImport &import = module.imports()[i];
    os << "  [" << i << "] " << import.full_name << " "
       << import.signature.calling_convention() << " "
       << import.signature.ToDisplayString()
       << (import.is_optional ? " (optional)" : "") << "\n";
  }

  os << "exports: " << module.exports().size() << "\n";
  for (uint32_t i = 0; i < module.exports().size(); ++i) {
    const ModuleExport &module_export = module.exports()[i];
    uint32_t function = module.export_function_ordinal(i);
    os << "  [" << i << "] " << module_export.name << " "
       << module_export.signature.calling_convention() << " -> function "
       << function;
    std::string tensors = module_export.FormatTensorTypes();
    if (!tensors.empty())
      os << " " << tensors;
    os << "\n";
    for (const auto &[key, value] : module_export.attributes)
      os << "      " << key << " = \"" << value << "\"\n";
  }

  // Call sites of executables, numbered as the dispatch flags carry them.
  if (const auto *sites = def.dispatch_sites()) {
    os << "dispatch sites: " << sites->size() << "\n";
    for (uint32_t i = 0; i < sites->size(); ++i) {
      const schema::DispatchSiteDef *site = sites->Get(i);
      os << "  [" << i + 1 << "] " << site->name()->str();
      if (site->executable())
        os << " -> " << site->executable()->str();
      if (site->flops())
        os << ", " << site->flops() << " FLOP";
      os << "\n";
    }
  }

  os << "rodata: " << module.rodata_count() << "\n";
  for (uint32_t i = 0; i < module.rodata_count(); ++i) {
    const schema::RodataDef *segment = def.rodata()->Get(i);
    os << "  [" << i << "] ";
    if (segment->name())
      os << "\"" << segment->name()->str() << "\" ";
    os << module.rodata(i).size() << " bytes, align " << segment->alignment()
       << "\n";
  }

  const GlobalCounts &globals = module.global_counts();
  os << "globals: i32 " << globals.i32 << ", i64 " << globals.i64 << ", f32 "
     << globals.f32 << ", f64 " << globals.f64 << ", ref " << globals.ref
     << "\n";
}

void WriteFunction(const BytecodeModule &module, uint32_t ordinal,
                   std::ostream &os, const DisassemblyOptions &options) {
  const BytecodeFunction &function = module.functions()[ordinal];
  const RegisterCounts &counts = function.register_counts;
  os << "  [" << ordinal << "] " << function.name << " "
     << function.signature.calling_convention() << " "
     << function.signature.ToDisplayString() << "\n"
     << "      registers: i32 " << counts.i32 << ", i64 " << counts.i64
     << ", f32 " << counts.f32 << ", f64 " << counts.f64 << ", ref "
     << counts.ref << "; bytecode +" << Hex4(function.bytecode_offset) << ", "
     << function.bytecode_length << " bytes\n";
  if (!options.include_bytecode)
    return;
  std::span<const uint8_t> code = module.FunctionCode(ordinal);
  DecodedInstruction instruction;
  std::string last_location;
  for (uint32_t offset = 0; offset < code.size();
       offset += instruction.length) {
    // Verified at load, so decoding cannot fail; stay defensive anyway.
    if (!DecodeInstruction(code, offset, &instruction).ok()) {
      os << "    " << Hex4(offset) << ": <undecodable>\n";
      return;
    }
    os << "    " << Hex4(offset) << ": "
       << FormatInstruction(module, instruction);
    // Locations apply until the next one; print them where they change.
    std::string location = module.FormatSourceLocation(ordinal, offset);
    if (!location.empty() && location != last_location)
      os << "  // " << location;
    last_location = std::move(location);
    os << "\n";
  }
}

} // namespace

std::string FormatInstruction(const BytecodeModule &module,
                              const DecodedInstruction &instruction) {
  const char *mnemonic = instruction.info().mnemonic;
  const DecodedOperand *operands = instruction.operands;
  switch (instruction.opcode) {
  case Opcode::Call:
  case Opcode::CallVariadic: {
    bool variadic = instruction.opcode == Opcode::CallVariadic;
    const DecodedOperand &arguments = operands[variadic ? 2 : 1];
    const DecodedOperand &results = operands[variadic ? 3 : 2];
    std::string text;
    if (results.count)
      text = RegisterList(results) + " = ";
    text += StrCat(mnemonic, " ", CalleeName(module, operands[0].value));
    if (variadic)
      text += " " + FormatOperand(module, operands[1]);
    return text + "(" + RegisterList(arguments) + ")";
  }
  case Opcode::Return:
    return StrCat(mnemonic, " ", RegisterList(operands[0]));
  default:
    break;
  }
  std::string text;
  uint8_t first = 0;
  if (WritesFirstOperand(instruction.opcode) && instruction.operand_count) {
    text = FormatOperand(module, operands[0]) + " = ";
    first = 1;
  }
  text += mnemonic;
  for (uint8_t i = first; i < instruction.operand_count; ++i)
    text += (i == first ? " " : ", ") + FormatOperand(module, operands[i]);
  return text;
}

void DisassembleModule(const BytecodeModule &module, std::ostream &os,
                       const DisassemblyOptions &options) {
  WriteHeader(module, os);
  os << "functions: " << module.functions().size() << "\n";
  for (uint32_t i = 0; i < module.functions().size(); ++i)
    WriteFunction(module, i, os, options);
}

Status DisassembleModuleFile(std::span<const uint8_t> bytes, std::ostream &os,
                             const DisassemblyOptions &options) {
  // Borrow the caller's bytes: the module does not outlive this call.
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<BytecodeModule> module,
      BytecodeModule::FromMemory(OwnedBytes::Wrap(bytes, nullptr)));
  DisassembleModule(*module, os, options);
  return OkStatus();
}

} // namespace strata::vm
