//===- BytecodeEncoder.cpp ------------------------------------------------===//
#include "strata/compiler/Serialization/BytecodeEncoder.h"

#include <cstring>

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace strata {

using ::strata::vm::Opcode;
using ::strata::vm::RegisterBank;

FailureOr<RegisterBank> getRegisterBank(Type type) {
  if (type.isInteger(32))
    return RegisterBank::kI32;
  if (type.isInteger(64))
    return RegisterBank::kI64;
  if (type.isF32())
    return RegisterBank::kF32;
  if (type.isF64())
    return RegisterBank::kF64;
  if (isa<vm::RefType>(type))
    return RegisterBank::kRef;
  return failure();
}

static char getBankChar(RegisterBank bank) {
  switch (bank) {
  case RegisterBank::kI32:
    return 'i';
  case RegisterBank::kI64:
    return 'I';
  case RegisterBank::kF32:
    return 'f';
  case RegisterBank::kF64:
    return 'F';
  case RegisterBank::kRef:
    return 'r';
  }
  return '?';
}

FailureOr<std::string> getCallingConvention(FunctionType type) {
  auto append = [](std::string &out, TypeRange types) -> LogicalResult {
    if (types.empty()) {
      out += 'v';
      return success();
    }
    for (Type type : types) {
      auto bank = getRegisterBank(type);
      if (failed(bank))
        return failure();
      out += getBankChar(*bank);
    }
    return success();
  };
  std::string cconv = "0";
  if (failed(append(cconv, type.getInputs())))
    return failure();
  cconv += '_';
  if (failed(append(cconv, type.getResults())))
    return failure();
  return cconv;
}

namespace {

class FunctionEncoder {
public:
  FunctionEncoder(vm::FuncOp func, ModuleOrdinals &ordinals)
      : func(func), ordinals(ordinals) {}

  FailureOr<EncodedFunction> encode();

private:
  LogicalResult allocateRegisters();
  LogicalResult encodeOp(Operation *op);
  LogicalResult encodeRegisterOp(Operation *op);

  void emitOpcode(Opcode opcode) {
    out.push_back(static_cast<uint8_t>(opcode));
  }
  template <typename T> void emitRaw(T value) {
    uint8_t bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.insert(out.end(), bytes, bytes + sizeof(T));
  }
  void emitU16(uint16_t value) { emitRaw(value); }
  void emitU32(uint32_t value) { emitRaw(value); }
  void emitReg(Value value) { emitU16(registers.lookup(value)); }
  uint16_t typedReg(Value value) {
    return ::strata::vm::MakeTypedRegister(*getRegisterBank(value.getType()),
                                           registers.lookup(value));
  }
  void emitTypedList(ValueRange values) {
    emitU16(values.size());
    for (Value value : values)
      emitU16(typedReg(value));
  }
  void emitBranch(Block *dest, ValueRange operands) {
    fixups.push_back({out.size(), dest});
    emitU32(0);
    emitU16(operands.size());
    for (auto [src, dst] : llvm::zip(operands, dest->getArguments())) {
      emitU16(typedReg(src));
      emitU16(typedReg(dst));
    }
  }
  FailureOr<uint32_t> lookupOrdinal(const llvm::StringMap<uint32_t> &table,
                                    StringRef name, Operation *op,
                                    StringRef what) {
    auto it = table.find(name);
    if (it == table.end()) {
      op->emitOpError("refers to unknown ") << what << " @" << name;
      return failure();
    }
    return it->second;
  }

  vm::FuncOp func;
  ModuleOrdinals &ordinals;
  std::vector<uint8_t> out;
  DenseMap<Value, uint16_t> registers;
  uint16_t counts[::strata::vm::kRegisterBankCount] = {};
  DenseMap<Block *, uint32_t> blockOffsets;
  struct Fixup {
    size_t at;
    Block *block;
  };
  SmallVector<Fixup> fixups;
};

LogicalResult FunctionEncoder::allocateRegisters() {
  auto assign = [&](Value value) -> LogicalResult {
    auto bank = getRegisterBank(value.getType());
    if (failed(bank))
      return func.emitOpError("has a value of type ")
             << value.getType() << " that no register bank holds";
    uint16_t &count = counts[static_cast<int>(*bank)];
    if (count >= ::strata::vm::kMaxRegistersPerBank)
      return func.emitOpError("needs more than ")
             << ::strata::vm::kMaxRegistersPerBank << " registers in one bank";
    registers[value] = count++;
    return success();
  };
  // Entry arguments first: the VM passes arguments in registers 0..n-1 of
  // each bank, in order.
  for (Block &block : func.getBody()) {
    for (BlockArgument arg : block.getArguments())
      if (failed(assign(arg)))
        return failure();
    for (Operation &op : block)
      for (Value result : op.getResults())
        if (failed(assign(result)))
          return failure();
  }
  return success();
}

LogicalResult FunctionEncoder::encodeOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](vm::ConstI32Op c) {
        emitOpcode(Opcode::ConstI32);
        emitReg(c.getResult());
        emitRaw<int32_t>(c.getValue());
        return success();
      })
      .Case([&](vm::ConstI64Op c) {
        emitOpcode(Opcode::ConstI64);
        emitReg(c.getResult());
        emitRaw<int64_t>(c.getValue());
        return success();
      })
      .Case([&](vm::ConstF32Op c) {
        emitOpcode(Opcode::ConstF32);
        emitReg(c.getResult());
        emitRaw<float>(c.getValue().convertToFloat());
        return success();
      })
      .Case([&](vm::ConstF64Op c) {
        emitOpcode(Opcode::ConstF64);
        emitReg(c.getResult());
        emitRaw<double>(c.getValue().convertToDouble());
        return success();
      })
      .Case([&](vm::ConstRefZeroOp c) {
        emitOpcode(Opcode::ConstRefZero);
        emitReg(c.getResult());
        return success();
      })
      .Case([&](vm::ConstRefRodataOp c) -> LogicalResult {
        auto ordinal =
            lookupOrdinal(ordinals.rodata, c.getRodata(), op, "rodata");
        if (failed(ordinal))
          return failure();
        emitOpcode(Opcode::ConstRefRodata);
        emitReg(c.getResult());
        emitU32(*ordinal);
        return success();
      })
      .Case([&](vm::GlobalLoadRefOp g) -> LogicalResult {
        auto ordinal =
            lookupOrdinal(ordinals.refGlobals, g.getGlobal(), op, "global");
        if (failed(ordinal))
          return failure();
        emitOpcode(Opcode::GlobalLoadRef);
        emitReg(g.getResult());
        emitU32(*ordinal);
        return success();
      })
      .Case([&](vm::GlobalStoreRefOp g) -> LogicalResult {
        auto ordinal =
            lookupOrdinal(ordinals.refGlobals, g.getGlobal(), op, "global");
        if (failed(ordinal))
          return failure();
        emitOpcode(Opcode::GlobalStoreRef);
        emitU32(*ordinal);
        emitReg(g.getValue());
        return success();
      })
      .Case([&](vm::CallOp call) -> LogicalResult {
        StringRef callee = call.getCallee();
        uint32_t calleeOperand;
        if (auto it = ordinals.imports.find(callee);
            it != ordinals.imports.end())
          calleeOperand = it->second | ::strata::vm::kCalleeImportBit;
        else if (auto fn = ordinals.functions.find(callee);
                 fn != ordinals.functions.end())
          calleeOperand = fn->second;
        else
          return call.emitOpError("calls unknown function @") << callee;
        auto segments = call.getSegmentSizes();
        emitOpcode(segments ? Opcode::CallVariadic : Opcode::Call);
        emitU32(calleeOperand);
        if (segments) {
          emitU16(segments->size());
          for (int32_t size : *segments)
            emitU16(size);
        }
        emitTypedList(call.getOperands());
        emitTypedList(call.getResults());
        return success();
      })
      .Case([&](vm::ReturnOp ret) {
        emitOpcode(Opcode::Return);
        emitTypedList(ret.getOperands());
        return success();
      })
      .Case([&](vm::BranchOp br) {
        emitOpcode(Opcode::Branch);
        emitBranch(br.getDest(), br.getDestOperands());
        return success();
      })
      .Case([&](vm::CondBranchOp br) {
        emitOpcode(Opcode::CondBranch);
        emitReg(br.getCondition());
        emitBranch(br.getTrueDest(), br.getTrueDestOperands());
        emitBranch(br.getFalseDest(), br.getFalseDestOperands());
        return success();
      })
      .Case([&](vm::FailOp fail) {
        emitOpcode(Opcode::Fail);
        emitReg(fail.getStatus());
        emitU32(ordinals.firstExtraRodataOrdinal + ordinals.extraRodata.size());
        ordinals.extraRodata.push_back(fail.getMessage().str());
        return success();
      })
      .Case([&](vm::CmpNeI64Op cmp) {
        emitOpcode(Opcode::CmpNeI64);
        emitReg(cmp.getResult());
        emitReg(cmp.getLhs());
        emitReg(cmp.getRhs());
        return success();
      })
      .Case([&](vm::CmpNzI32Op cmp) {
        emitOpcode(Opcode::CmpNzI32);
        emitReg(cmp.getResult());
        emitReg(cmp.getOperand());
        return success();
      })
      .Default([&](Operation *other) { return encodeRegisterOp(other); });
}

// Opcodes by mnemonic ("add.f32").
const llvm::StringMap<Opcode> &getOpcodesByMnemonic() {
  static const llvm::StringMap<Opcode> *table = [] {
    auto *map = new llvm::StringMap<Opcode>();
    for (uint32_t i = 0; i < ::strata::vm::kOpcodeCount; ++i)
      (*map)[::strata::vm::kOpcodeInfos[i].mnemonic] = static_cast<Opcode>(i);
    return map;
  }();
  return *table;
}

FailureOr<uint32_t> getMathFunctionId(Operation *op, char kind) {
  auto name = op->getAttrOfType<StringAttr>("function");
  if (!name)
    return op->emitOpError("needs a `function` attribute"), failure();
  ArrayRef<const char *> names =
      kind == 'm' ? ArrayRef(::strata::vm::kUnaryMathFunctionNames)
                  : ArrayRef(::strata::vm::kBinaryMathFunctionNames);
  for (auto [id, candidate] : llvm::enumerate(names))
    if (name.getValue() == candidate)
      return static_cast<uint32_t>(id);
  return op->emitOpError("names unknown math function '")
             << name.getValue() << "'",
         failure();
}

// Ops made of registers only (plus a math function id): the op name minus
// "vm." is the mnemonic, results come before operands, and each register's
// bank must be the one the format names.
LogicalResult FunctionEncoder::encodeRegisterOp(Operation *op) {
  StringRef mnemonic = op->getName().getStringRef();
  if (!mnemonic.consume_front("vm."))
    return op->emitOpError("has no bytecode encoding");
  auto it = getOpcodesByMnemonic().find(mnemonic);
  if (it == getOpcodesByMnemonic().end())
    return op->emitOpError("has no bytecode encoding");
  Opcode opcode = it->second;
  StringRef format =
      ::strata::vm::kOpcodeInfos[static_cast<int>(opcode)].format;
  SmallVector<Value> registers(op->getResults());
  llvm::append_range(registers, op->getOperands());
  emitOpcode(opcode);
  size_t next = 0;
  for (char kind : format) {
    if (kind == 'm' || kind == 'n') {
      FailureOr<uint32_t> id = getMathFunctionId(op, kind);
      if (failed(id))
        return failure();
      emitU32(*id);
      continue;
    }
    if (next >= registers.size())
      return op->emitOpError("has fewer values than '") << format << "' needs";
    Value value = registers[next++];
    FailureOr<RegisterBank> bank = getRegisterBank(value.getType());
    if (failed(bank) || getBankChar(*bank) != kind)
      return op->emitOpError("has a value of type ")
             << value.getType() << " where '" << format << "' needs '" << kind
             << "'";
    emitReg(value);
  }
  if (next != registers.size())
    return op->emitOpError("has more values than '") << format << "' takes";
  return success();
}

FailureOr<EncodedFunction> FunctionEncoder::encode() {
  if (failed(allocateRegisters()))
    return failure();
  for (Block &block : func.getBody()) {
    blockOffsets[&block] = out.size();
    for (Operation &op : block)
      if (failed(encodeOp(&op)))
        return failure();
  }
  for (const Fixup &fixup : fixups) {
    uint32_t target = blockOffsets.lookup(fixup.block);
    std::memcpy(out.data() + fixup.at, &target, sizeof(target));
  }
  EncodedFunction result;
  result.bytecode = std::move(out);
  std::copy(std::begin(counts), std::end(counts), result.registerCounts);
  return result;
}

} // namespace

FailureOr<EncodedFunction> encodeFunction(vm::FuncOp func,
                                          ModuleOrdinals &ordinals) {
  return FunctionEncoder(func, ordinals).encode();
}

} // namespace strata
