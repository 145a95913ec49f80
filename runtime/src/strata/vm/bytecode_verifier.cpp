#include "strata/vm/bytecode_verifier.h"

#include <cstdio>
#include <vector>

#include "strata/schema/module_generated.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/bytecode_decoder.h"
#include "strata_runtime_config.h"

namespace strata::vm {

Result<const schema::ModuleDef *>
VerifyModuleFile(std::span<const uint8_t> bytes) {
  // Size prefix + root offset + identifier is the smallest possible header.
  if (bytes.size() < 12)
    return InvalidArgumentError("module file is too small (", bytes.size(),
                                " bytes)");
  static_assert(kMaxModuleFileSize == FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  if (bytes.size() > kMaxModuleFileSize)
    return ResourceExhaustedError("module file of ", bytes.size(),
                                  " bytes exceeds the limit of ",
                                  kMaxModuleFileSize, " bytes");
  if (!flatbuffers::BufferHasIdentifier(bytes.data(),
                                        schema::ModuleDefIdentifier(),
                                        /*size_prefixed=*/true))
    return InvalidArgumentError("not a Strata module file (missing the '",
                                schema::ModuleDefIdentifier(),
                                "' file identifier)");
  // The FlatBuffer is size-prefixed so a truncated (or extended) file is
  // caught even where the verifier would not notice the missing bytes.
  uint32_t recorded_size = flatbuffers::ReadScalar<uint32_t>(bytes.data());
  if (recorded_size != bytes.size() - sizeof(uint32_t))
    return InvalidArgumentError("module file is truncated or damaged: it "
                                "records ",
                                recorded_size + sizeof(uint32_t),
                                " bytes but has ", bytes.size());
  flatbuffers::Verifier::Options options;
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  if (!schema::VerifySizePrefixedModuleDefBuffer(verifier))
    return InvalidArgumentError(
        "module file is corrupt (FlatBuffer verification failed)");
  const schema::ModuleDef *def = schema::GetSizePrefixedModuleDef(bytes.data());
  if (def->schema_version() != kSchemaVersion)
    return InvalidArgumentError("module built for schema version ",
                                def->schema_version(), ", runtime supports ",
                                kSchemaVersion);
  if (def->bytecode_version() < kMinBytecodeVersion ||
      def->bytecode_version() > kBytecodeVersion)
    return InvalidArgumentError("module built for bytecode version ",
                                def->bytecode_version(),
                                ", runtime supports versions ",
                                kMinBytecodeVersion, " to ", kBytecodeVersion);
  return def;
}

namespace {

const char kBankChars[kRegisterBankCount] = {'i', 'I', 'f', 'F', 'r'};

// Register bank named by a plain register operand kind.
int BankOfOperandKind(char kind) {
  switch (kind) {
  case 'i':
    return 0;
  case 'I':
    return 1;
  case 'f':
    return 2;
  case 'F':
    return 3;
  case 'r':
    return 4;
  default:
    return -1;
  }
}

// Bank of the global a global.load/store op addresses.
RegisterBank GlobalBankOf(Opcode opcode) {
  switch (opcode) {
  case Opcode::GlobalLoadI32:
  case Opcode::GlobalStoreI32:
    return RegisterBank::kI32;
  case Opcode::GlobalLoadI64:
  case Opcode::GlobalStoreI64:
    return RegisterBank::kI64;
  case Opcode::GlobalLoadF32:
  case Opcode::GlobalStoreF32:
    return RegisterBank::kF32;
  case Opcode::GlobalLoadF64:
  case Opcode::GlobalStoreF64:
    return RegisterBank::kF64;
  default:
    return RegisterBank::kRef;
  }
}

class FunctionVerifier {
public:
  FunctionVerifier(const schema::ModuleDef &def,
                   std::span<const BytecodeFunction> functions,
                   std::span<const ModuleImport> imports,
                   const BytecodeFunction &function,
                   std::span<const uint8_t> code)
      : def_(def), functions_(functions), imports_(imports),
        function_(function), code_(code) {
    register_counts_[0] = function.register_counts.i32;
    register_counts_[1] = function.register_counts.i64;
    register_counts_[2] = function.register_counts.f32;
    register_counts_[3] = function.register_counts.f64;
    register_counts_[4] = function.register_counts.ref;
    global_counts_[0] = def.global_i32_count();
    global_counts_[1] = def.global_i64_count();
    global_counts_[2] = def.global_f32_count();
    global_counts_[3] = def.global_f64_count();
    global_counts_[4] = def.global_ref_count();
  }

  Status Verify() {
    if (code_.empty())
      return Error(0, "function has no instructions");
    STRATA_RETURN_IF_ERROR(CheckArgumentRegisters());
    std::vector<bool> instruction_starts(code_.size(), false);
    std::vector<std::pair<uint32_t, uint32_t>> branches; // (at, target)
    DecodedInstruction instruction;
    uint32_t offset = 0;
    while (offset < code_.size()) {
      Status status = DecodeInstruction(code_, offset, &instruction);
      if (!status.ok())
        return Error(offset, status.message());
      instruction_starts[offset] = true;
      if (static_cast<uint32_t>(instruction.opcode) >=
          FirstOpcodeAfterVersion(def_.bytecode_version()))
        return Error(offset,
                     StrCat("'",
                            kOpcodeInfos[uint8_t(instruction.opcode)].mnemonic,
                            "' needs bytecode version ", kBytecodeVersion,
                            " but the module declares version ",
                            def_.bytecode_version()));
      STRATA_RETURN_IF_ERROR(CheckInstruction(instruction, &branches));
      offset += instruction.length;
    }
    if (!IsTerminator(instruction.opcode))
      return Error(instruction.offset,
                   "function does not end with a terminator (br, cond_br, "
                   "ret or fail)");
    for (auto [at, target] : branches) {
      if (target >= code_.size())
        return Error(at, StrCat("branch target ", target,
                                " is past the end of the function (",
                                code_.size(), " bytes)"));
      if (!instruction_starts[target])
        return Error(at, StrCat("branch target ", target,
                                " is not the start of an instruction"));
    }
    return OkStatus();
  }

private:
  Status Error(uint32_t offset, std::string_view message) const {
    char where[16];
    std::snprintf(where, sizeof(where), "+0x%04x", offset);
    return InvalidArgumentError("invalid bytecode in function '",
                                function_.name, "' at ", where, ": ", message);
  }

  Status CheckArgumentRegisters() const {
    uint32_t per_bank[kRegisterBankCount] = {};
    for (ValueType type : function_.signature.argument_types())
      ++per_bank[static_cast<int>(RegisterBankOf(type))];
    for (int bank = 0; bank < kRegisterBankCount; ++bank) {
      if (per_bank[bank] > register_counts_[bank])
        return Error(0, StrCat("function takes ", per_bank[bank], " '",
                               kBankChars[bank], "' arguments but has only ",
                               register_counts_[bank], " such registers"));
    }
    return OkStatus();
  }

  Status CheckRegister(uint32_t at, int bank, uint64_t ordinal) const {
    if (ordinal >= register_counts_[bank])
      return Error(at, StrCat("register ", kBankChars[bank], ordinal,
                              " out of range (the function has ",
                              register_counts_[bank], ")"));
    return OkStatus();
  }

  Status CheckTypedRegister(uint32_t at, uint16_t reg) const {
    uint8_t bank = TypedRegisterBank(reg);
    if (bank >= kRegisterBankCount)
      return Error(
          at, StrCat("typed register ", reg, " has invalid bank ", int(bank)));
    return CheckRegister(at, bank, TypedRegisterOrdinal(reg));
  }

  // Checks a typed register list against expected value types.
  Status CheckRegisterList(uint32_t at, const DecodedOperand &list,
                           std::span<const ValueType> types,
                           std::string_view what) const {
    if (list.count != types.size())
      return Error(at, StrCat(what, " list has ", list.count,
                              " registers, expected ", types.size()));
    for (size_t i = 0; i < list.count; ++i) {
      uint16_t reg = list.entry(i);
      STRATA_RETURN_IF_ERROR(CheckTypedRegister(at, reg));
      if (TypedRegisterBank(reg) !=
          static_cast<uint8_t>(RegisterBankOf(types[i])))
        return Error(at, StrCat(what, " ", i, " is register ",
                                kBankChars[TypedRegisterBank(reg)],
                                TypedRegisterOrdinal(reg), " but must be ",
                                ValueTypeName(types[i])));
    }
    return OkStatus();
  }

  Status CheckCall(const DecodedInstruction &instruction) const {
    uint32_t at = instruction.offset;
    bool is_variadic_call = instruction.opcode == Opcode::CallVariadic;
    uint64_t callee = instruction.operands[0].value;
    const Signature *signature;
    std::string callee_name;
    if (callee & kCalleeImportBit) {
      uint64_t ordinal = callee & ~uint64_t(kCalleeImportBit);
      if (ordinal >= imports_.size())
        return Error(at, StrCat("import ordinal ", ordinal, " out of range (",
                                imports_.size(), " imports)"));
      signature = &imports_[ordinal].signature;
      callee_name = imports_[ordinal].full_name;
    } else {
      if (callee >= functions_.size())
        return Error(at, StrCat("function ordinal ", callee, " out of range (",
                                functions_.size(), " functions)"));
      signature = &functions_[callee].signature;
      callee_name = std::string(functions_[callee].name);
    }
    const DecodedOperand &arguments =
        instruction.operands[is_variadic_call ? 2 : 1];
    const DecodedOperand &results =
        instruction.operands[is_variadic_call ? 3 : 2];
    std::string what = StrCat("call to '", callee_name, "': argument");
    if (!is_variadic_call) {
      if (signature->is_variadic())
        return Error(
            at, StrCat("'", callee_name, "' is variadic; use call.variadic"));
      STRATA_RETURN_IF_ERROR(
          CheckRegisterList(at, arguments, signature->argument_types(), what));
    } else {
      const DecodedOperand &segments = instruction.operands[1];
      if (segments.count != signature->variadic_segment_count())
        return Error(at, StrCat("call to '", callee_name, "' gives ",
                                segments.count, " variadic segment sizes, ",
                                "its calling convention has ",
                                signature->variadic_segment_count()));
      // Count first so absurd segment sizes cannot allocate much.
      uint64_t expected = 0;
      size_t segment = 0;
      for (const SignatureEntry &entry : signature->arguments()) {
        expected += entry.is_variadic() ? uint64_t(segments.entry(segment++)) *
                                              entry.tuple_types.size()
                                        : 1;
      }
      if (expected != arguments.count)
        return Error(at, StrCat("call to '", callee_name, "' passes ",
                                arguments.count, " argument registers, its ",
                                "segment sizes require ", expected));
      std::vector<uint16_t> sizes(segments.count);
      for (size_t i = 0; i < sizes.size(); ++i)
        sizes[i] = segments.entry(i);
      std::vector<ValueType> types;
      STRATA_RETURN_IF_ERROR(signature->ExpandArgumentTypes(sizes, &types));
      STRATA_RETURN_IF_ERROR(CheckRegisterList(at, arguments, types, what));
    }
    return CheckRegisterList(at, results, signature->result_types(),
                             StrCat("call to '", callee_name, "': result"));
  }

  Status
  CheckInstruction(const DecodedInstruction &instruction,
                   std::vector<std::pair<uint32_t, uint32_t>> *branches) {
    uint32_t at = instruction.offset;
    for (uint8_t i = 0; i < instruction.operand_count; ++i) {
      const DecodedOperand &operand = instruction.operands[i];
      int bank = BankOfOperandKind(operand.kind);
      if (bank >= 0) {
        STRATA_RETURN_IF_ERROR(CheckRegister(at, bank, operand.value));
        continue;
      }
      switch (operand.kind) {
      case 'g': {
        int global_bank = static_cast<int>(GlobalBankOf(instruction.opcode));
        if (operand.value >= global_counts_[global_bank])
          return Error(at, StrCat("global ", kBankChars[global_bank],
                                  operand.value, " out of range (",
                                  global_counts_[global_bank], ")"));
        break;
      }
      case 'm':
      case 'n':
        if (!STRATA_VM_F64_MATH && (instruction.opcode == Opcode::MathF64 ||
                                    instruction.opcode == Opcode::Math2F64))
          return Error(at, "f64 math is not in this build of the runtime "
                           "(STRATA_VM_F64_MATH=OFF)");
        if (operand.kind == 'm' && operand.value >= kUnaryMathFunctionCount)
          return Error(at,
                       StrCat("unknown unary math function ", operand.value));
        if (operand.kind == 'n' && operand.value >= kBinaryMathFunctionCount)
          return Error(at,
                       StrCat("unknown binary math function ", operand.value));
        break;
      case 'd': {
        uint32_t rodata_count = def_.rodata() ? def_.rodata()->size() : 0;
        if (operand.value >= rodata_count)
          return Error(at, StrCat("rodata ordinal ", operand.value,
                                  " out of range (", rodata_count, ")"));
        break;
      }
      case 'b':
        branches->emplace_back(at, static_cast<uint32_t>(operand.value));
        for (size_t pair = 0; pair < operand.count; ++pair) {
          uint16_t source = operand.remap_source(pair);
          uint16_t target = operand.remap_target(pair);
          STRATA_RETURN_IF_ERROR(CheckTypedRegister(at, source));
          STRATA_RETURN_IF_ERROR(CheckTypedRegister(at, target));
          if (TypedRegisterBank(source) != TypedRegisterBank(target))
            return Error(at, "branch remap between different banks");
        }
        break;
      case 'l':
        for (size_t entry = 0; entry < operand.count; ++entry)
          STRATA_RETURN_IF_ERROR(CheckTypedRegister(at, operand.entry(entry)));
        break;
      default: // immediates, callee and segment sizes: checked below
        break;
      }
    }
    switch (instruction.opcode) {
    case Opcode::Call:
    case Opcode::CallVariadic:
      return CheckCall(instruction);
    case Opcode::Return:
      return CheckRegisterList(at, instruction.operands[0],
                               function_.signature.result_types(),
                               "return value");
    default:
      return OkStatus();
    }
  }

  const schema::ModuleDef &def_;
  std::span<const BytecodeFunction> functions_;
  std::span<const ModuleImport> imports_;
  const BytecodeFunction &function_;
  std::span<const uint8_t> code_;
  uint32_t register_counts_[kRegisterBankCount];
  uint32_t global_counts_[kRegisterBankCount];
};

} // namespace

Status VerifyModuleBytecode(const schema::ModuleDef &def,
                            std::span<const uint8_t> bytecode,
                            std::span<const BytecodeFunction> functions,
                            std::span<const ModuleImport> imports) {
  for (const BytecodeFunction &function : functions) {
    if (function.bytecode_offset > bytecode.size() ||
        function.bytecode_length > bytecode.size() - function.bytecode_offset)
      return InvalidArgumentError(
          "function '", function.name, "' bytecode range [",
          function.bytecode_offset, ", +", function.bytecode_length,
          ") is outside the module's bytecode (", bytecode.size(), " bytes)");
    FunctionVerifier verifier(
        def, functions, imports, function,
        bytecode.subspan(function.bytecode_offset, function.bytecode_length));
    STRATA_RETURN_IF_ERROR(verifier.Verify());
  }
  return OkStatus();
}

} // namespace strata::vm
