// topod::json — a small header-only JSON value, strict parser and writer (C++17).
//
//   #include "json.hpp"
//   namespace json = topod::json;
//
//   json::Value v = json::parse(R"({"id":7,"args":{"n":[1,2]}})");  // throws json::ParseError
//   v.is_object(); v.has("id"); v.get("id").as_number();              // 7.0
//   v.get("args").get("n").as_array().size();                         // 2
//   v.find("missing");                                                // nullptr when absent
//
//   json::Value out = json::Value::object();
//   out.set("ok", true).set("name", "H100").set("n", 3);
//   json::Value list = json::Value::array(); list.push(1.5); out.set("xs", list);
//   std::string line = json::dump(out);   // {"ok":true,"name":"H100","n":3,"xs":[1.5]}
//
// Kinds: null, boolean, number (double), string, array, object (insertion-ordered),
// and written: JSON text made by json::numbers(list), dumped as it is. A probe
// answer carries 10^5 latencies; one Value each cost more host time than the
// kernel that measured them, so number lists skip the tree.
// Accessors (as_*, get) throw json::TypeError on the wrong kind or a missing key.
// The parser follows RFC 8259: no comments, no trailing commas, no NaN/Infinity,
// no leading zeros, one value per document (surrounding whitespace allowed);
// ParseError::offset() is the byte offset of the problem. The writer prints
// integral numbers (|x| < 2^53) without a fraction, other finite numbers with
// the fewest of 15/17 significant digits that round-trip, non-finite numbers as null, and escapes control
// characters; strings are passed through as UTF-8 (\uXXXX escapes are decoded
// to UTF-8 by the parser, surrogate pairs included).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace topod::json {

class ParseError : public std::runtime_error {
 public:
  ParseError(const std::string& what, size_t offset) : std::runtime_error(what + " at offset " + std::to_string(offset)), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

class TypeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Kind { Null, Boolean, Number, String, Array, Object, Written };

inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Null:
      return "null";
    case Kind::Boolean:
      return "boolean";
    case Kind::Number:
      return "number";
    case Kind::String:
      return "string";
    case Kind::Array:
      return "array";
    case Kind::Object:
      return "object";
    case Kind::Written:
      return "written JSON";
  }
  return "?";
}

class Value {
 public:
  using Array = std::vector<Value>;
  // Insertion-ordered members; lookups are linear, which is fine for protocol-sized objects.
  using Object = std::vector<std::pair<std::string, Value>>;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(Kind::Boolean), bool_(b) {}
  Value(double n) : kind_(Kind::Number), num_(n) {}
  Value(int n) : kind_(Kind::Number), num_(n) {}
  Value(unsigned n) : kind_(Kind::Number), num_(n) {}
  Value(long n) : kind_(Kind::Number), num_(static_cast<double>(n)) {}
  Value(unsigned long n) : kind_(Kind::Number), num_(static_cast<double>(n)) {}
  Value(long long n) : kind_(Kind::Number), num_(static_cast<double>(n)) {}
  Value(unsigned long long n) : kind_(Kind::Number), num_(static_cast<double>(n)) {}
  Value(const char* s) : kind_(Kind::String), str_(s) {}
  Value(std::string s) : kind_(Kind::String), str_(std::move(s)) {}
  Value(std::string_view s) : kind_(Kind::String), str_(s) {}
  Value(Array a) : kind_(Kind::Array), arr_(std::move(a)) {}
  Value(Object o) : kind_(Kind::Object), obj_(std::move(o)) {}

  static Value array() { return Value(Array{}); }
  // Already-valid JSON text (json::numbers makes it), written out verbatim by dump.
  static Value written(std::string text) {
    Value v;
    v.kind_ = Kind::Written;
    v.str_ = std::move(text);
    return v;
  }
  const std::string& as_written() const {
    expect(Kind::Written);
    return str_;
  }
  static Value object() { return Value(Object{}); }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_bool() const { return kind_ == Kind::Boolean; }
  bool is_number() const { return kind_ == Kind::Number; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  bool as_bool() const {
    expect(Kind::Boolean);
    return bool_;
  }
  double as_number() const {
    expect(Kind::Number);
    return num_;
  }
  const std::string& as_string() const {
    expect(Kind::String);
    return str_;
  }
  const Array& as_array() const {
    expect(Kind::Array);
    return arr_;
  }
  Array& as_array() {
    expect(Kind::Array);
    return arr_;
  }
  const Object& as_object() const {
    expect(Kind::Object);
    return obj_;
  }

  bool has(std::string_view key) const { return find(key) != nullptr; }

  // nullptr when this is not an object or the key is absent.
  const Value* find(std::string_view key) const {
    if (kind_ != Kind::Object) return nullptr;
    for (const auto& [k, v] : obj_)
      if (k == key) return &v;
    return nullptr;
  }

  const Value& get(std::string_view key) const {
    expect(Kind::Object);
    const Value* v = find(key);
    if (!v) throw TypeError("missing key \"" + std::string(key) + "\"");
    return *v;
  }

  // Replaces an existing member or appends a new one; returns *this for chaining.
  Value& set(std::string_view key, Value v) {
    expect(Kind::Object);
    for (auto& [k, old] : obj_)
      if (k == key) {
        old = std::move(v);
        return *this;
      }
    obj_.emplace_back(std::string(key), std::move(v));
    return *this;
  }

  Value& push(Value v) {
    expect(Kind::Array);
    arr_.push_back(std::move(v));
    return *this;
  }

 private:
  void expect(Kind k) const {
    if (kind_ != k) throw TypeError(std::string("expected ") + kind_name(k) + ", got " + kind_name(kind_));
  }

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double num_ = 0;
  std::string str_;
  Array arr_;
  Object obj_;
};

namespace detail {

constexpr int kMaxDepth = 256;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Value document() {
    skip_ws();
    Value v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ParseError(what, pos_); }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }

  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  void expect_literal(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) fail("invalid literal, expected " + std::string(lit));
    pos_ += lit.size();
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
    if (at_end()) fail("unexpected end of input");
    switch (peek()) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return Value(string());
      case 't':
        expect_literal("true");
        return Value(true);
      case 'f':
        expect_literal("false");
        return Value(false);
      case 'n':
        expect_literal("null");
        return Value(nullptr);
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return Value(number());
        fail(std::string("unexpected character '") + peek() + "'");
    }
  }

  Value object(int depth) {
    ++pos_;  // '{'
    Value out = Value::object();
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      return out;
    }
    for (;;) {
      skip_ws();
      if (peek() != '"') fail("expected a string key");
      std::string key = string();
      skip_ws();
      if (peek() != ':') fail("expected ':' after key");
      ++pos_;
      skip_ws();
      out.set(key, value(depth + 1));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return out;
      }
      fail(at_end() ? "unterminated object" : "expected ',' or '}' in object");
    }
  }

  Value array(int depth) {
    ++pos_;  // '['
    Value out = Value::array();
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return out;
    }
    for (;;) {
      skip_ws();
      out.push(value(depth + 1));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return out;
      }
      fail(at_end() ? "unterminated array" : "expected ',' or ']' in array");
    }
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        cp |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        cp |= unsigned(c - 'A' + 10);
      else {
        --pos_;
        fail("invalid hex digit in \\u escape");
      }
    }
    return cp;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("unpaired high surrogate");
            pos_ += 2;
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired low surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  double number() {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
      if (is_digit(peek())) fail("leading zeros are not allowed");
    } else if (is_digit(peek())) {
      while (is_digit(peek())) ++pos_;
    } else {
      fail("expected a digit");
    }
    if (peek() == '.') {
      ++pos_;
      if (!is_digit(peek())) fail("expected a digit after '.'");
      while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) fail("expected a digit in exponent");
      while (is_digit(peek())) ++pos_;
    }
    std::string token(s_.substr(start, pos_ - start));
    double v = std::strtod(token.c_str(), nullptr);
    if (!std::isfinite(v)) {
      pos_ = start;
      fail("number out of range");
    }
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

inline void dump_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

template <typename Integer>
void dump_integer(std::string& out, Integer n) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

inline void dump_number(std::string& out, double n) {
  if (!std::isfinite(n)) {
    out += "null";
    return;
  }
  char buf[32];
  if (std::nearbyint(n) == n && std::fabs(n) < 9007199254740992.0) {
    dump_integer(out, static_cast<long long>(n));
    return;
  } else {
    // Shortest of 15 or 17 significant digits that reads back to the same double.
    std::snprintf(buf, sizeof buf, "%.15g", n);
    if (std::strtod(buf, nullptr) != n) std::snprintf(buf, sizeof buf, "%.17g", n);
  }
  out += buf;
}

inline void dump_value(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Null:
      out += "null";
      break;
    case Kind::Boolean:
      out += v.as_bool() ? "true" : "false";
      break;
    case Kind::Number:
      dump_number(out, v.as_number());
      break;
    case Kind::String:
      dump_string(out, v.as_string());
      break;
    case Kind::Written:
      out += v.as_written();
      break;
    case Kind::Array: {
      out += '[';
      bool first = true;
      for (const auto& e : v.as_array()) {
        if (!first) out += ',';
        first = false;
        dump_value(out, e);
      }
      out += ']';
      break;
    }
    case Kind::Object: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.as_object()) {
        if (!first) out += ',';
        first = false;
        dump_string(out, k);
        out += ':';
        dump_value(out, e);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace detail

inline Value parse(std::string_view text) { return detail::Parser(text).document(); }

// A JSON array of the numbers in `values`, written once (see Kind::Written).
template <typename T>
Value numbers(const std::vector<T>& values) {
  std::string text;
  text.reserve(values.size() * 6 + 2);
  text += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    if constexpr (std::is_unsigned_v<T>) {
      detail::dump_integer(text, static_cast<unsigned long long>(values[i]));
    } else if constexpr (std::is_integral_v<T>) {
      detail::dump_integer(text, static_cast<long long>(values[i]));
    } else {
      detail::dump_number(text, static_cast<double>(values[i]));
    }
  }
  text += ']';
  return Value::written(std::move(text));
}

inline std::string dump(const Value& v) {
  std::string out;
  detail::dump_value(out, v);
  return out;
}

}  // namespace topod::json
