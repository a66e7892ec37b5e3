#pragma once
// What every trainsim HTML page shares (`run --html`, `sweep --html`, `tune --html`): the shell (head, CSS, the
// checker script), JSON documents embedded as <script type="application/json" id="..."> blocks that no string can
// close, and numbers that carry their JSON path and full-precision value (data-json-path, data-value) so that the
// page's script checks each against its block and sorts tables by the value rather than the text. One page is
// self-contained: it fetches nothing. Deterministic: same input, same bytes.
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trainsim {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);

namespace html {

using Json = nlohmann::ordered_json;
using Buffer = fmt::memory_buffer;

// The id of a page's main block: what the command that wrote the page prints with --json.
inline constexpr const char* kResultBlock = "trainsim-result";

// The value of `root` at `path`, nullptr when there is none. A path is keys after dots, array indices in brackets
// and, for a key that holds '.', '[', ']' or '"', the key as a JSON string in brackets:
// "comm[2].time_s", "points[3].values[\"cluster.nic_gbps\"]".
const Json* resolve_path(const Json& root, std::string_view path);

// `key` as the next step of a path: ".key", or "[\"key\"]" for a key resolve_path would split (no dot first
// when `first`).
std::string path_key(std::string_view key, bool first = false);

// `j` as the text of a <script type="application/json"> block, indented by `indent` (-1: on one line): '<', '>'
// and '&' only occur inside JSON strings, where \u003c, \u003e and \u0026 mean the same characters, so the block
// parses to `j` and can never close the script element.
std::string script_json(const Json& j, int indent = 2);

inline void put(Buffer& b, std::string_view s) { b.append(s.data(), s.data() + s.size()); }
inline void put_text(Buffer& b, std::string_view s) { put(b, html_escape(s)); }
template <typename... Args>
void putf(Buffer& b, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(b), format, std::forward<Args>(args)...);
}

// One page being written: its JSON blocks and its text so far.
class Page {
 public:
  // `indent`: of the blocks' JSON; -1 writes them on one line (a sweep's thousand results: 40% smaller).
  explicit Page(Json result, int indent = 2) : indent_(indent) {
    blocks_.emplace_back(kResultBlock, std::move(result));
  }

  // A further block, written after the result (the run page's every-stage memory and links).
  void add_block(std::string id, Json json) { blocks_.emplace_back(std::move(id), std::move(json)); }
  const Json& block(std::string_view id = kResultBlock) const;

  // ` data-json-path="PATH" data-value="VALUE"` (with data-json-block when not the result): the attributes of an
  // element that shows the value at PATH. A path with no scalar there is an internal error: the page would lie.
  std::string data(std::string_view path, std::string_view block = kResultBlock) const;
  // <TAG class="CLS" data-...>TEXT</TAG>
  void num(std::string_view tag, std::string_view path, std::string_view text, std::string_view block = kResultBlock,
           std::string_view cls = "num");

  // The `--set` overrides every point or candidate ran with (the result's "base_overrides"), as a meta line after
  // `caption` (HTML), each checked against the result; nothing when there are none.
  void base_overrides_line(std::string_view caption);

  // <!DOCTYPE html> to <body>, the title escaped.
  void begin(std::string_view title);
  // The raw-JSON view (`json_summary` is its <summary>, HTML), every block, the script and </html>: the page.
  std::string finish(std::string_view json_summary);

  Buffer b;

 private:
  int indent_;
  std::vector<std::pair<std::string, Json>> blocks_;
};

}  // namespace html
}  // namespace trainsim
