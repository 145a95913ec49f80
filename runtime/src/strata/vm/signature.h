// Calling conventions: the compact signature strings of functions, imports
// and exports, e.g. "0rr_r" (two refs in, one ref out).
//
//   signature := '0' arguments '_' results
//   list      := 'v' | (type | 'C' type+ 'D')*       ('v' or empty: none)
//   type      := 'i' (i32) | 'I' (i64) | 'f' (f32) | 'F' (f64) | 'r' (ref)
//
// 'C' types 'D' is a variadic segment: any number of tuples of those types.
// Only arguments may be variadic, and only native functions may have
// variadic signatures (bytecode functions cannot receive them).
//
// How variadic arguments travel:
//  * In bytecode, `call.variadic` lists the tuple values flattened and gives
//    each segment's tuple count in its segment-size operand.
//  * Native functions (and Module::Call in general) receive each segment as
//    an i32 tuple count followed by the flattened tuple values. Example:
//    "0iCiD_i" called with 5 and segment {1, 2, 3} receives
//    [i32 5, i32 3, i32 1, i32 2, i32 3].
#ifndef STRATA_VM_SIGNATURE_H_
#define STRATA_VM_SIGNATURE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/status.h"
#include "strata/vm/value.h"

namespace strata::vm {

// One position of an argument or result list.
struct SignatureEntry {
  // Type of a single value; kNone for a variadic segment.
  ValueType type = ValueType::kNone;
  // Types of one tuple of a variadic segment; empty for a single value.
  std::vector<ValueType> tuple_types;

  bool is_variadic() const { return !tuple_types.empty(); }
  bool operator==(const SignatureEntry &other) const = default;
};

// A function's qualified name, "module.function" ("function" alone without a
// module), carried as views and formatted only into error messages.
struct FunctionName {
  std::string_view module;
  std::string_view function;
};
void AppendToString(std::string &out, const FunctionName &name);

class Signature {
public:
  Signature() = default;

  // Parses and validates a calling convention string.
  static Result<Signature> Parse(std::string_view calling_convention);

  // The string this was parsed from.
  const std::string &calling_convention() const { return calling_convention_; }
  const std::vector<SignatureEntry> &arguments() const { return arguments_; }
  const std::vector<SignatureEntry> &results() const { return results_; }

  bool is_variadic() const { return variadic_segment_count_ > 0; }
  size_t variadic_segment_count() const { return variadic_segment_count_; }

  // Flat types of the arguments; only for non-variadic signatures (empty
  // otherwise).
  const std::vector<ValueType> &argument_types() const {
    return argument_types_;
  }
  // Flat types of the results (results are never variadic).
  const std::vector<ValueType> &result_types() const { return result_types_; }

  // Argument types as registers list them at a call: variadic segments
  // flattened to `segment_sizes[k]` tuples each, without the counts.
  Status ExpandArgumentTypes(std::span<const uint16_t> segment_sizes,
                             std::vector<ValueType> *types) const;

  // Checks values passed in the Module::Call form (variadic segments as an
  // i32 count followed by the tuples). `function_name` goes into errors:
  // "'mod.fn' argument 1 has type f32, expected i32".
  Status CheckArguments(std::span<const Value> arguments,
                        const FunctionName &function_name) const;
  // Checks results; an unset (none) value for a ref result is an error too.
  Status CheckResults(std::span<const Value> results,
                      const FunctionName &function_name) const;

  // Structural equality: "0_v" equals "0v_v".
  bool operator==(const Signature &other) const {
    return arguments_ == other.arguments_ && results_ == other.results_;
  }

  // Readable form: "(i32, ref, [i64]...) -> (ref)".
  std::string ToDisplayString() const;

private:
  std::string calling_convention_;
  std::vector<SignatureEntry> arguments_;
  std::vector<SignatureEntry> results_;
  std::vector<ValueType> argument_types_;
  std::vector<ValueType> result_types_;
  size_t variadic_segment_count_ = 0;
};

} // namespace strata::vm

#endif // STRATA_VM_SIGNATURE_H_
