#include "strata/vm/signature.h"

namespace strata::vm {
namespace {

bool TypeFromChar(char c, ValueType *type) {
  switch (c) {
  case 'i':
    *type = ValueType::kI32;
    return true;
  case 'I':
    *type = ValueType::kI64;
    return true;
  case 'f':
    *type = ValueType::kF32;
    return true;
  case 'F':
    *type = ValueType::kF64;
    return true;
  case 'r':
    *type = ValueType::kRef;
    return true;
  default:
    return false;
  }
}

Status ParseList(std::string_view text, std::string_view calling_convention,
                 std::string_view side, std::vector<SignatureEntry> *entries) {
  auto error = [&](auto... details) {
    return InvalidArgumentError("malformed calling convention '",
                                calling_convention, "': ", details...);
  };
  if (text == "v")
    return OkStatus();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    SignatureEntry entry;
    if (TypeFromChar(c, &entry.type)) {
      entries->push_back(std::move(entry));
      continue;
    }
    if (c == 'v')
      return error("'v' must stand alone in the ", side);
    if (c != 'C')
      return error("unexpected character '", c, "' in the ", side);
    for (++i; i < text.size() && text[i] != 'D'; ++i) {
      ValueType type;
      if (!TypeFromChar(text[i], &type))
        return error("unexpected character '", text[i],
                     "' in a variadic segment");
      entry.tuple_types.push_back(type);
    }
    if (i >= text.size())
      return error("variadic segment without closing 'D'");
    if (entry.tuple_types.empty())
      return error("empty variadic segment");
    entries->push_back(std::move(entry));
  }
  return OkStatus();
}

std::string FormatEntries(const std::vector<SignatureEntry> &entries) {
  std::string text = "(";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i)
      text += ", ";
    const SignatureEntry &entry = entries[i];
    if (!entry.is_variadic()) {
      text += ValueTypeName(entry.type);
      continue;
    }
    text += "[";
    for (size_t j = 0; j < entry.tuple_types.size(); ++j) {
      if (j)
        text += ", ";
      text += ValueTypeName(entry.tuple_types[j]);
    }
    text += "]...";
  }
  return text + ")";
}

} // namespace

Result<Signature> Signature::Parse(std::string_view calling_convention) {
  if (calling_convention.empty())
    return InvalidArgumentError("empty calling convention");
  if (calling_convention[0] != '0')
    return InvalidArgumentError("calling convention '", calling_convention,
                                "' has unsupported version '",
                                calling_convention[0], "' (expected '0')");
  std::string_view body = calling_convention.substr(1);
  size_t separator = body.find('_');
  if (separator == std::string_view::npos)
    return InvalidArgumentError("malformed calling convention '",
                                calling_convention, "': missing '_'");
  if (body.find('_', separator + 1) != std::string_view::npos)
    return InvalidArgumentError("malformed calling convention '",
                                calling_convention, "': more than one '_'");

  Signature signature;
  signature.calling_convention_ = std::string(calling_convention);
  STRATA_RETURN_IF_ERROR(ParseList(body.substr(0, separator),
                                   calling_convention, "arguments",
                                   &signature.arguments_));
  STRATA_RETURN_IF_ERROR(ParseList(body.substr(separator + 1),
                                   calling_convention, "results",
                                   &signature.results_));
  for (const SignatureEntry &entry : signature.results_) {
    if (entry.is_variadic())
      return InvalidArgumentError("malformed calling convention '",
                                  calling_convention,
                                  "': results cannot be variadic");
    signature.result_types_.push_back(entry.type);
  }
  for (const SignatureEntry &entry : signature.arguments_) {
    if (entry.is_variadic())
      ++signature.variadic_segment_count_;
  }
  if (signature.variadic_segment_count_ == 0) {
    for (const SignatureEntry &entry : signature.arguments_)
      signature.argument_types_.push_back(entry.type);
  }
  return signature;
}

Status Signature::ExpandArgumentTypes(std::span<const uint16_t> segment_sizes,
                                      std::vector<ValueType> *types) const {
  if (segment_sizes.size() != variadic_segment_count_)
    return InvalidArgumentError("calling convention '", calling_convention_,
                                "' has ", variadic_segment_count_,
                                " variadic segments, call gives ",
                                segment_sizes.size());
  types->clear();
  size_t segment = 0;
  for (const SignatureEntry &entry : arguments_) {
    if (!entry.is_variadic()) {
      types->push_back(entry.type);
      continue;
    }
    for (uint16_t tuple = 0; tuple < segment_sizes[segment]; ++tuple)
      types->insert(types->end(), entry.tuple_types.begin(),
                    entry.tuple_types.end());
    ++segment;
  }
  return OkStatus();
}

void AppendToString(std::string &out, const FunctionName &name) {
  if (!name.module.empty()) {
    out.append(name.module);
    out.push_back('.');
  }
  out.append(name.function);
}

Status Signature::CheckArguments(std::span<const Value> arguments,
                                 const FunctionName &function_name) const {
  size_t index = 0;
  auto check_one = [&](ValueType expected) -> Status {
    if (index >= arguments.size())
      return InvalidArgumentError(
          "'", function_name, "' received too few arguments (",
          arguments.size(), ") for calling convention ", calling_convention_);
    ValueType actual = arguments[index].type();
    if (actual != expected)
      return InvalidArgumentError("'", function_name, "' argument ", index,
                                  " has type ", ValueTypeName(actual),
                                  ", expected ", ValueTypeName(expected));
    ++index;
    return OkStatus();
  };
  for (const SignatureEntry &entry : arguments_) {
    if (!entry.is_variadic()) {
      STRATA_RETURN_IF_ERROR(check_one(entry.type));
      continue;
    }
    size_t count_index = index;
    STRATA_RETURN_IF_ERROR(check_one(ValueType::kI32));
    int32_t tuple_count = arguments[count_index].i32();
    if (tuple_count < 0)
      return InvalidArgumentError("'", function_name, "' argument ",
                                  count_index, " is a negative tuple count (",
                                  tuple_count, ")");
    for (int32_t tuple = 0; tuple < tuple_count; ++tuple) {
      for (ValueType type : entry.tuple_types)
        STRATA_RETURN_IF_ERROR(check_one(type));
    }
  }
  if (index != arguments.size())
    return InvalidArgumentError("'", function_name, "' takes ", index,
                                " arguments, got ", arguments.size());
  return OkStatus();
}

Status Signature::CheckResults(std::span<const Value> results,
                               const FunctionName &function_name) const {
  if (results.size() != result_types_.size())
    return InvalidArgumentError("'", function_name, "' has ",
                                result_types_.size(), " results, got ",
                                results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].type() != result_types_[i])
      return InvalidArgumentError(
          "'", function_name, "' result ", i, " has type ",
          ValueTypeName(results[i].type()), ", expected ",
          ValueTypeName(result_types_[i]));
  }
  return OkStatus();
}

std::string Signature::ToDisplayString() const {
  return FormatEntries(arguments_) + " -> " + FormatEntries(results_);
}

} // namespace strata::vm
