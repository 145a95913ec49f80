// A small JSON reader for tests that check files the runtime writes (the
// profiling trace): the whole of RFC 8259 except that \u escapes outside
// ASCII are kept as '?'. Returns nullopt on any syntax error, so a test
// also fails on malformed output.
#ifndef STRATA_TESTS_RUNTIME_HAL_JSON_VALUE_H_
#define STRATA_TESTS_RUNTIME_HAL_JSON_VALUE_H_

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata::testing {

struct JsonValue {
  using Array = std::vector<JsonValue>;
  using Object = std::map<std::string, JsonValue>;
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> value;

  bool is_number() const { return std::holds_alternative<double>(value); }
  bool is_string() const { return std::holds_alternative<std::string>(value); }
  bool is_array() const { return std::holds_alternative<Array>(value); }
  bool is_object() const { return std::holds_alternative<Object>(value); }
  double number() const { return is_number() ? std::get<double>(value) : 0; }
  std::string string() const {
    return is_string() ? std::get<std::string>(value) : "";
  }
  const Array &array() const {
    static const Array empty;
    return is_array() ? std::get<Array>(value) : empty;
  }
  // The member `key` of an object; null when absent or not an object.
  const JsonValue *Find(const std::string &key) const {
    if (!is_object())
      return nullptr;
    const Object &object = std::get<Object>(value);
    auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
  }
};

namespace json_detail {

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::optional<JsonValue> ParseDocument() {
    std::optional<JsonValue> value = ParseValue(0);
    SkipSpace();
    if (!value || pos_ != text_.size())
      return std::nullopt;
    return value;
  }

private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool Consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token)
      return false;
    pos_ += token.size();
    return true;
  }

  std::optional<std::string> ParseString() {
    if (!Consume("\""))
      return std::nullopt;
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        return std::nullopt;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size())
        return std::nullopt;
      char escape = text_[pos_++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out.push_back(escape);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        if (pos_ + 4 > text_.size())
          return std::nullopt;
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text_[pos_++];
          if (!std::isxdigit(static_cast<unsigned char>(h)))
            return std::nullopt;
          code =
              code * 16 +
              unsigned(std::isdigit(h) ? h - '0' : std::tolower(h) - 'a' + 10);
        }
        out.push_back(code < 0x80 ? char(code) : '?');
        break;
      }
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::optional<JsonValue> ParseNumber() {
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-')
      ++pos_;
    if (pos_ >= text_.size() || !std::isdigit(text_[pos_]))
      return std::nullopt;
    while (pos_ < text_.size() &&
           (std::isdigit(text_[pos_]) || text_[pos_] == '.' ||
            text_[pos_] == 'e' || text_[pos_] == 'E' || text_[pos_] == '+' ||
            text_[pos_] == '-'))
      ++pos_;
    std::string number(text_.substr(start, pos_ - start));
    char *end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size())
      return std::nullopt;
    return JsonValue{value};
  }

  std::optional<JsonValue> ParseValue(int depth) {
    SkipSpace();
    if (pos_ >= text_.size() || depth > kMaxDepth)
      return std::nullopt;
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      JsonValue::Object object;
      SkipSpace();
      if (Consume("}"))
        return JsonValue{std::move(object)};
      while (true) {
        SkipSpace();
        std::optional<std::string> key = ParseString();
        SkipSpace();
        if (!key || !Consume(":"))
          return std::nullopt;
        std::optional<JsonValue> member = ParseValue(depth + 1);
        if (!member || object.count(*key))
          return std::nullopt;
        object.emplace(std::move(*key), std::move(*member));
        SkipSpace();
        if (Consume("}"))
          return JsonValue{std::move(object)};
        if (!Consume(","))
          return std::nullopt;
      }
    }
    if (c == '[') {
      ++pos_;
      JsonValue::Array array;
      SkipSpace();
      if (Consume("]"))
        return JsonValue{std::move(array)};
      while (true) {
        std::optional<JsonValue> element = ParseValue(depth + 1);
        if (!element)
          return std::nullopt;
        array.push_back(std::move(*element));
        SkipSpace();
        if (Consume("]"))
          return JsonValue{std::move(array)};
        if (!Consume(","))
          return std::nullopt;
      }
    }
    if (c == '"') {
      std::optional<std::string> text = ParseString();
      if (!text)
        return std::nullopt;
      return JsonValue{std::move(*text)};
    }
    if (Consume("true"))
      return JsonValue{true};
    if (Consume("false"))
      return JsonValue{false};
    if (Consume("null"))
      return JsonValue{nullptr};
    return ParseNumber();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

} // namespace json_detail

inline std::optional<JsonValue> ParseJson(std::string_view text) {
  return json_detail::Parser(text).ParseDocument();
}

} // namespace strata::testing

#endif // STRATA_TESTS_RUNTIME_HAL_JSON_VALUE_H_
