// Contracts checked against signatures, and calls against their callees'
// contracts (call_contract.h). For the calls, a forward dataflow over each
// function's blocks tracks which i32 registers hold constants and which ref
// registers hold a waitable that the function created and nothing else has seen
// yet; each call of a contracted import is then checked with what is known just
// before it. Runs on verified bytecode only, so every decoded operand is in
// range.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strata/vm/call_contract.h"

#include "strata/base/checked_math.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/bytecode_decoder.h"
#include "strata/vm/bytecode_module.h"

namespace strata::vm {
namespace {

// What is known at one point of a function. Only facts that hold on every
// path reaching the point are kept.
struct Facts {
  bool reached = false;
  // i32 register ordinal -> the constant it holds.
  std::map<uint16_t, int32_t> constants;
  // ref register ordinal -> offset of the call that created the waitable it
  // holds, while that waitable has not escaped (passed to another call,
  // stored, returned).
  std::map<uint16_t, uint32_t> fresh_waitables;

  // Keeps what `other` knows too; true when anything was dropped.
  bool IntersectWith(const Facts &other) {
    bool dropped_constants = IntersectMap(constants, other.constants);
    bool dropped_waitables =
        IntersectMap(fresh_waitables, other.fresh_waitables);
    return dropped_constants || dropped_waitables;
  }

  // The waitable created at `site` escaped: no register holds a fresh one.
  void Escape(uint32_t site) {
    std::erase_if(fresh_waitables,
                  [&](const auto &entry) { return entry.second == site; });
  }

  // A register of `bank` was overwritten with an unknown value.
  void Forget(uint8_t bank, uint16_t ordinal) {
    if (bank == uint8_t(RegisterBank::kI32))
      constants.erase(ordinal);
    else if (bank == uint8_t(RegisterBank::kRef))
      fresh_waitables.erase(ordinal);
  }

  // A ref register is read by something that may keep or complete it.
  void EscapeRegister(uint16_t ordinal) {
    auto it = fresh_waitables.find(ordinal);
    if (it != fresh_waitables.end())
      Escape(it->second);
  }

private:
  template <typename Map>
  static bool IntersectMap(Map &mine, const Map &other) {
    return std::erase_if(mine, [&](const auto &entry) {
             auto it = other.find(entry.first);
             return it == other.end() || it->second != entry.second;
           }) > 0;
  }
};

// Ops whose first operand is a register they read rather than write; every
// other op with a register first operand writes it (bytecode_ops.def:
// destinations come first).
bool WritesFirstOperand(const DecodedInstruction &instruction) {
  switch (instruction.opcode) {
  case Opcode::CondBranch:
  case Opcode::Fail:
  case Opcode::ListResize:
  case Opcode::ListSetI32:
  case Opcode::ListSetI64:
  case Opcode::ListSetRef:
  case Opcode::BufferStoreI8:
  case Opcode::BufferStoreI16:
  case Opcode::BufferStoreI32:
  case Opcode::BufferStoreI64:
  case Opcode::BufferStoreF32:
  case Opcode::BufferStoreF64:
  case Opcode::BufferCopy:
    return false;
  default:
    return instruction.operand_count > 0 &&
           std::string_view("iIfFr").find(instruction.operands[0].kind) !=
               std::string_view::npos;
  }
}

uint8_t BankOfKind(char kind) {
  switch (kind) {
  case 'i':
    return uint8_t(RegisterBank::kI32);
  case 'I':
    return uint8_t(RegisterBank::kI64);
  case 'f':
    return uint8_t(RegisterBank::kF32);
  case 'F':
    return uint8_t(RegisterBank::kF64);
  default:
    return uint8_t(RegisterBank::kRef);
  }
}

// Where each argument of `signature` (a variadic segment counting as one)
// lies in a call's flat argument register list: [begin, end).
std::vector<std::pair<size_t, size_t>>
ArgumentRanges(const Signature &signature, const DecodedOperand *segments) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t position = 0, segment = 0;
  for (const SignatureEntry &entry : signature.arguments()) {
    size_t width = 1;
    if (entry.is_variadic())
      width = size_t(segments->entry(segment++)) * entry.tuple_types.size();
    ranges.emplace_back(position, position + width);
    position += width;
  }
  return ranges;
}

class ContractVerifier {
public:
  ContractVerifier(const BytecodeFunction &function,
                   std::span<const uint8_t> code,
                   std::span<const ModuleImport> imports,
                   std::span<const CallContract *const> import_contracts)
      : function_(function), code_(code), imports_(imports),
        import_contracts_(import_contracts) {}

  Status Verify() {
    STRATA_RETURN_IF_ERROR(Decode());
    if (!CallsContractedImport())
      return OkStatus();
    STRATA_RETURN_IF_ERROR(SplitBlocks());
    Propagate();
    // Check each reachable block once with its final entry facts.
    for (size_t block = 0; block < block_starts_.size(); ++block) {
      if (!entry_facts_[block].reached)
        continue;
      Facts facts = entry_facts_[block];
      for (size_t i = block_starts_[block]; i < BlockEnd(block); ++i)
        STRATA_RETURN_IF_ERROR(Step(instructions_[i], facts, /*check=*/true));
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

  Status Decode() {
    DecodedInstruction instruction;
    for (uint32_t offset = 0; offset < code_.size();
         offset += instruction.length) {
      // Verified already; a failure here would be a verifier bug.
      STRATA_RETURN_IF_ERROR(DecodeInstruction(code_, offset, &instruction));
      instructions_.push_back(instruction);
    }
    return OkStatus();
  }

  // The contract of the import `instruction` calls, or null.
  const CallContract *ContractOf(const DecodedInstruction &instruction) const {
    if (instruction.opcode != Opcode::Call &&
        instruction.opcode != Opcode::CallVariadic)
      return nullptr;
    uint64_t callee = instruction.operands[0].value;
    if (!(callee & kCalleeImportBit))
      return nullptr;
    uint64_t ordinal = callee & ~uint64_t(kCalleeImportBit);
    const CallContract *contract = import_contracts_[ordinal];
    return contract && !contract->empty() ? contract : nullptr;
  }

  bool CallsContractedImport() const {
    for (const DecodedInstruction &instruction : instructions_)
      if (ContractOf(instruction))
        return true;
    return false;
  }

  // Blocks start at offset 0, at branch targets and after terminators.
  Status SplitBlocks() {
    std::vector<bool> starts(instructions_.size(), false);
    for (size_t i = 0; i < instructions_.size(); ++i)
      index_of_offset_[instructions_[i].offset] = i;
    starts[0] = true;
    for (size_t i = 0; i < instructions_.size(); ++i) {
      const DecodedInstruction &instruction = instructions_[i];
      for (uint8_t k = 0; k < instruction.operand_count; ++k) {
        if (instruction.operands[k].kind != 'b')
          continue;
        auto target =
            index_of_offset_.find(uint32_t(instruction.operands[k].value));
        // Verified already; a failure here would be a verifier bug.
        if (target == index_of_offset_.end())
          return InternalError("unverified branch target in function '",
                               function_.name, "'");
        starts[target->second] = true;
      }
      if (IsTerminator(instruction.opcode) && i + 1 < instructions_.size())
        starts[i + 1] = true;
    }
    block_of_instruction_.resize(instructions_.size());
    for (size_t i = 0; i < instructions_.size(); ++i) {
      if (starts[i])
        block_starts_.push_back(i);
      block_of_instruction_[i] = block_starts_.size() - 1;
    }
    entry_facts_.resize(block_starts_.size());
    return OkStatus();
  }

  size_t BlockEnd(size_t block) const {
    return block + 1 < block_starts_.size() ? block_starts_[block + 1]
                                            : instructions_.size();
  }

  // Runs every reached block until the entry facts stop shrinking. Facts
  // only ever shrink, so this ends.
  void Propagate() {
    entry_facts_[0].reached = true;
    std::vector<size_t> worklist = {0};
    std::vector<bool> queued(block_starts_.size(), false);
    queued[0] = true;
    while (!worklist.empty()) {
      size_t block = worklist.back();
      worklist.pop_back();
      queued[block] = false;
      Facts facts = entry_facts_[block];
      for (size_t i = block_starts_[block]; i < BlockEnd(block); ++i)
        Step(instructions_[i], facts, /*check=*/false).IgnoreError();
      const DecodedInstruction &last = instructions_[BlockEnd(block) - 1];
      auto flow = [&](size_t target, const DecodedOperand *branch) {
        Facts incoming = branch ? Remapped(facts, *branch) : facts;
        Facts &entry = entry_facts_[target];
        bool changed;
        if (!entry.reached) {
          entry = std::move(incoming);
          changed = true;
        } else {
          changed = entry.IntersectWith(incoming);
        }
        if (changed && !queued[target]) {
          queued[target] = true;
          worklist.push_back(target);
        }
      };
      for (uint8_t k = 0; k < last.operand_count; ++k)
        if (last.operands[k].kind == 'b')
          flow(BlockOfOffset(uint32_t(last.operands[k].value)),
               &last.operands[k]);
      if (!IsTerminator(last.opcode) && block + 1 < block_starts_.size())
        flow(block + 1, nullptr);
    }
  }

  // `offset` is a branch target, checked by SplitBlocks.
  size_t BlockOfOffset(uint32_t offset) const {
    return block_of_instruction_[index_of_offset_.find(offset)->second];
  }

  // `facts` after a branch's remap list (parallel copies).
  static Facts Remapped(const Facts &facts, const DecodedOperand &branch) {
    Facts result = facts;
    for (size_t pair = 0; pair < branch.count; ++pair) {
      uint16_t target = branch.remap_target(pair);
      result.Forget(TypedRegisterBank(target), TypedRegisterOrdinal(target));
    }
    for (size_t pair = 0; pair < branch.count; ++pair) {
      uint16_t source = branch.remap_source(pair);
      uint16_t target = branch.remap_target(pair);
      uint16_t from = TypedRegisterOrdinal(source);
      uint16_t to = TypedRegisterOrdinal(target);
      if (TypedRegisterBank(source) == uint8_t(RegisterBank::kI32)) {
        if (auto it = facts.constants.find(from); it != facts.constants.end())
          result.constants[to] = it->second;
      } else if (TypedRegisterBank(source) == uint8_t(RegisterBank::kRef)) {
        if (auto it = facts.fresh_waitables.find(from);
            it != facts.fresh_waitables.end())
          result.fresh_waitables[to] = it->second;
      }
    }
    return result;
  }

  // Applies `instruction` to `facts`; with `check`, first checks a call
  // against its callee's contract.
  Status Step(const DecodedInstruction &instruction, Facts &facts, bool check) {
    const DecodedOperand *operands = instruction.operands;
    switch (instruction.opcode) {
    case Opcode::ConstI32:
      facts.constants[uint16_t(operands[0].value)] =
          int32_t(uint32_t(operands[1].value));
      return OkStatus();
    case Opcode::MovI32: {
      auto it = facts.constants.find(uint16_t(operands[1].value));
      if (it == facts.constants.end())
        facts.constants.erase(uint16_t(operands[0].value));
      else
        facts.constants[uint16_t(operands[0].value)] = it->second;
      return OkStatus();
    }
    case Opcode::MovRef: {
      auto it = facts.fresh_waitables.find(uint16_t(operands[1].value));
      if (it == facts.fresh_waitables.end())
        facts.fresh_waitables.erase(uint16_t(operands[0].value));
      else
        facts.fresh_waitables[uint16_t(operands[0].value)] = it->second;
      return OkStatus();
    }
    case Opcode::CmpEqRef:
    case Opcode::CmpNzRef:
      // Comparing a ref neither keeps nor completes it.
      facts.constants.erase(uint16_t(operands[0].value));
      return OkStatus();
    case Opcode::Call:
    case Opcode::CallVariadic:
      return StepCall(instruction, facts, check);
    case Opcode::Return:
      for (size_t i = 0; i < operands[0].count; ++i) {
        uint16_t reg = operands[0].entry(i);
        if (TypedRegisterBank(reg) == uint8_t(RegisterBank::kRef))
          facts.EscapeRegister(TypedRegisterOrdinal(reg));
      }
      return OkStatus();
    default:
      break;
    }
    // Reads first (a destination may alias a source), then the write.
    bool writes = WritesFirstOperand(instruction);
    for (uint8_t k = writes ? 1 : 0; k < instruction.operand_count; ++k)
      if (operands[k].kind == 'r')
        facts.EscapeRegister(uint16_t(operands[k].value));
    if (writes)
      facts.Forget(BankOfKind(operands[0].kind), uint16_t(operands[0].value));
    return OkStatus();
  }

  Status StepCall(const DecodedInstruction &instruction, Facts &facts,
                  bool check) {
    bool variadic = instruction.opcode == Opcode::CallVariadic;
    const DecodedOperand &arguments = instruction.operands[variadic ? 2 : 1];
    const DecodedOperand &results = instruction.operands[variadic ? 3 : 2];
    const CallContract *contract = ContractOf(instruction);
    std::pair<size_t, size_t> awaited = {0, 0};
    if (contract) {
      uint64_t ordinal =
          instruction.operands[0].value & ~uint64_t(kCalleeImportBit);
      const ModuleImport &callee = imports_[ordinal];
      std::vector<std::pair<size_t, size_t>> ranges = ArgumentRanges(
          callee.signature, variadic ? &instruction.operands[1] : nullptr);
      if (contract->awaits_argument >= 0)
        awaited = ranges[size_t(contract->awaits_argument)];
      if (check)
        STRATA_RETURN_IF_ERROR(
            CheckCall(instruction, callee, *contract, ranges, facts));
    }
    // A waitable passed anywhere but where the callee only waits on it may
    // be kept or completed by the callee.
    for (size_t i = 0; i < arguments.count; ++i) {
      uint16_t reg = arguments.entry(i);
      bool only_awaited = i >= awaited.first && i < awaited.second;
      if (TypedRegisterBank(reg) == uint8_t(RegisterBank::kRef) &&
          !only_awaited)
        facts.EscapeRegister(TypedRegisterOrdinal(reg));
    }
    for (size_t i = 0; i < results.count; ++i) {
      uint16_t reg = results.entry(i);
      facts.Forget(TypedRegisterBank(reg), TypedRegisterOrdinal(reg));
    }
    if (contract && contract->creates_waitable_result >= 0) {
      uint16_t reg = results.entry(size_t(contract->creates_waitable_result));
      facts.fresh_waitables[TypedRegisterOrdinal(reg)] = instruction.offset;
      creators_[instruction.offset] =
          imports_[instruction.operands[0].value & ~uint64_t(kCalleeImportBit)]
              .full_name;
    }
    return OkStatus();
  }

  Status CheckCall(const DecodedInstruction &instruction,
                   const ModuleImport &callee, const CallContract &contract,
                   const std::vector<std::pair<size_t, size_t>> &ranges,
                   const Facts &facts) const {
    const DecodedOperand &arguments =
        instruction
            .operands[instruction.opcode == Opcode::CallVariadic ? 2 : 1];
    std::string prefix = StrCat("call to '", callee.full_name, "': ");
    const CallContract::BoundedCounts &bounded = contract.bounded_counts;
    if (bounded.count) {
      std::vector<std::optional<int64_t>> values;
      for (size_t j = 0; j < bounded.count; ++j) {
        uint16_t reg =
            arguments.entry(ranges[bounded.first_argument + j].first);
        auto it = facts.constants.find(TypedRegisterOrdinal(reg));
        values.push_back(it == facts.constants.end()
                             ? std::nullopt
                             : std::optional<int64_t>(it->second));
      }
      std::string shown;
      for (size_t j = 0; j < values.size(); ++j)
        shown +=
            StrCat(j ? "x" : "", values[j] ? std::to_string(*values[j]) : "?");
      std::vector<uint64_t> known;
      for (const std::optional<int64_t> &value : values) {
        if (!value)
          continue;
        if (*value < 0 || uint64_t(*value) > bounded.max_each)
          return Error(instruction.offset,
                       StrCat(prefix, bounded.name, " ", shown,
                              " exceeds the limit of ", bounded.max_each, " ",
                              bounded.each_unit));
        known.push_back(uint64_t(*value));
      }
      std::optional<uint64_t> product = CheckedProduct(known);
      if (known.size() == values.size() &&
          (!product || *product > bounded.max_product))
        return Error(instruction.offset,
                     StrCat(prefix, bounded.name, " ", shown, " (",
                            product ? std::to_string(*product) : "> 2^64",
                            ") exceeds the limit of ", bounded.max_product, " ",
                            bounded.product_unit));
    }
    if (contract.awaits_argument >= 0) {
      auto [begin, end] = ranges[size_t(contract.awaits_argument)];
      for (size_t i = begin; i < end; ++i) {
        uint16_t reg = arguments.entry(i);
        if (TypedRegisterBank(reg) != uint8_t(RegisterBank::kRef))
          continue;
        auto it = facts.fresh_waitables.find(TypedRegisterOrdinal(reg));
        if (it == facts.fresh_waitables.end())
          continue;
        char where[16];
        std::snprintf(where, sizeof(where), "+0x%04x", it->second);
        auto creator = creators_.find(it->second);
        std::string_view created_by =
            creator == creators_.end() ? "?" : creator->second;
        return Error(instruction.offset,
                     StrCat(prefix, "waits on the result of '", created_by,
                            "' at ", where,
                            ", which nothing can signal: it is not passed to "
                            "any other call, stored or returned before the "
                            "wait"));
      }
    }
    return OkStatus();
  }

  const BytecodeFunction &function_;
  std::span<const uint8_t> code_;
  std::span<const ModuleImport> imports_;
  std::span<const CallContract *const> import_contracts_;

  std::vector<DecodedInstruction> instructions_;
  std::map<uint32_t, size_t> index_of_offset_;
  std::vector<size_t> block_starts_;         // first instruction per block
  std::vector<size_t> block_of_instruction_; // block per instruction
  std::vector<Facts> entry_facts_;           // per block
  // Offset of a waitable-creating call -> the import it calls.
  std::map<uint32_t, std::string_view> creators_;
};

} // namespace

Status CheckCallContract(const CallContract &contract,
                         const Signature &signature) {
  const std::vector<SignatureEntry> &arguments = signature.arguments();
  const CallContract::BoundedCounts &bounded = contract.bounded_counts;
  for (size_t j = 0; j < bounded.count; ++j) {
    size_t index = size_t(bounded.first_argument) + j;
    if (index >= arguments.size() || arguments[index].is_variadic() ||
        arguments[index].type != ValueType::kI32)
      return InvalidArgumentError("call contract: argument ", index,
                                  " is not an i32 count");
  }
  if (bounded.count &&
      (!bounded.name || !bounded.each_unit || !bounded.product_unit))
    return InvalidArgumentError("call contract: bounded counts need names");
  if (contract.creates_waitable_result >= 0) {
    size_t index = size_t(contract.creates_waitable_result);
    if (index >= signature.result_types().size() ||
        signature.result_types()[index] != ValueType::kRef)
      return InvalidArgumentError("call contract: result ", index,
                                  " is not a ref");
  }
  if (contract.awaits_argument >= 0) {
    size_t index = size_t(contract.awaits_argument);
    if (index >= arguments.size() || !arguments[index].is_variadic())
      return InvalidArgumentError("call contract: argument ", index,
                                  " is not a variadic segment");
  }
  return OkStatus();
}

Status VerifyCallContracts(std::span<const uint8_t> bytecode,
                           std::span<const BytecodeFunction> functions,
                           std::span<const ModuleImport> imports,
                           std::span<const CallContract *const> contracts) {
  if (contracts.size() != imports.size())
    return InternalError("call contracts for ", contracts.size(),
                         " imports, the module has ", imports.size());
  bool any = false;
  for (const CallContract *contract : contracts)
    any |= contract && !contract->empty();
  if (!any)
    return OkStatus();
  for (const BytecodeFunction &function : functions) {
    ContractVerifier verifier(
        function,
        bytecode.subspan(function.bytecode_offset, function.bytecode_length),
        imports, contracts);
    STRATA_RETURN_IF_ERROR(verifier.Verify());
  }
  return OkStatus();
}

} // namespace strata::vm
