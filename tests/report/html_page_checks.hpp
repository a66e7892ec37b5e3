#pragma once
// Reading trainsim's HTML pages in tests (run, sweep and tune pages): a JSON block, an element, counts, and every
// number's data-json-path turned into a JSON pointer by a reader of its own (not the library's resolver), so that a
// test of a page checks the paths independently of the code that wrote them.
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace html_checks {

// The text of <script type="application/json" id="ID">...</script>.
inline std::string json_block(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const auto start = html.find(open);
  if (start == std::string::npos) return "";
  const auto from = start + open.size();
  return html.substr(from, html.find("</script>", from) - from);
}

// The element <TAG id="ID" ...> up to its first closing tag.
inline std::string element(const std::string& html, const std::string& tag, const std::string& id) {
  const auto start = html.find("<" + tag + " id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  const std::string close = "</" + tag + ">";
  return html.substr(start, html.find(close, start) + close.size() - start);
}

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// HTML attribute text back to its characters (the five escapes html_escape writes).
inline std::string unescape(std::string s) {
  const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, c] : kEntities)
    for (auto at = s.find(entity); at != std::string::npos; at = s.find(entity, at + 1))
      s.replace(at, std::string(entity).size(), c);
  return s;
}

// "points[3].values[\"cluster.nic_gbps\"]" -> /points/3/values/cluster.nic_gbps.
inline nlohmann::ordered_json::json_pointer pointer_of(const std::string& path) {
  static const std::regex step(R"re(\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|([^.\[\]]+))re");
  std::string pointer;
  for (std::sregex_iterator it(path.begin(), path.end(), step), end; it != end; ++it) {
    std::string token = (*it)[1].matched   ? nlohmann::json::parse("\"" + (*it)[1].str() + "\"").get<std::string>()
                        : (*it)[2].matched ? (*it)[2].str()
                                           : (*it)[3].str();
    std::string escaped;
    for (char c : token) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    pointer += "/" + escaped;
  }
  return nlohmann::ordered_json::json_pointer(pointer);
}

// Every number of the main block: (path, data-value), attributes unescaped, in page order.
inline std::vector<std::pair<std::string, std::string>> result_numbers(const std::string& html) {
  static const std::regex attr(R"re(data-json-path="([^"]+)" data-value="([^"]*)")re");
  std::vector<std::pair<std::string, std::string>> out;
  for (std::sregex_iterator it(html.begin(), html.end(), attr), end; it != end; ++it)
    out.emplace_back(unescape((*it)[1]), unescape((*it)[2]));
  return out;
}

}  // namespace html_checks
