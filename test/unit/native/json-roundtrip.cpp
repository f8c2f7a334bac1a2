// Test driver for native/common/json.hpp: one JSON document per stdin line;
// prints the re-serialised document, or "error <offset> <message>".
// Lines starting with "?" query a path instead: "?key1.key2 <json>" prints the
// value's kind and dump, or "type-error <message>".
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "../../../native/common/json.hpp"

namespace json = topod::json;

static void query(const std::string& line) {
  size_t space = line.find(' ');
  std::string path = line.substr(1, space - 1);
  const json::Value doc = json::parse(line.substr(space + 1));
  const json::Value* cur = &doc;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    cur = &cur->get(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::cout << json::kind_name(cur->kind()) << ' ' << json::dump(*cur) << '\n';
}

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    try {
      if (!line.empty() && line[0] == '?') {
        query(line);
      } else {
        std::cout << json::dump(json::parse(line)) << '\n';
      }
    } catch (const json::ParseError& e) {
      std::cout << "error " << e.offset() << ' ' << e.what() << '\n';
    } catch (const json::TypeError& e) {
      std::cout << "type-error " << e.what() << '\n';
    }
  }
  json::Value built = json::Value::object();
  built.set("ok", true).set("name", "H100 \"sxm\"\n").set("n", 3).set("x", 0.5);
  json::Value list = json::Value::array();
  list.push(1).push(nullptr).push(-2.25e-3);
  built.set("list", list);
  std::cout << "built " << json::dump(built) << '\n';
  json::Value lists = json::Value::object();
  lists.set("cycles", json::numbers(std::vector<uint32_t>{0, 7, 4294967295u}))
      .set("wide", json::numbers(std::vector<uint64_t>{18446744073709551615ull}))
      .set("signed", json::numbers(std::vector<int>{-3, 12}))
      .set("seconds", json::numbers(std::vector<double>{0.5, 1e-7, 3.0}))
      .set("none", json::numbers(std::vector<uint32_t>{}));
  std::cout << "lists " << json::dump(lists) << '\n';
  return 0;
}
