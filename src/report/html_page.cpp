// The shell of trainsim's HTML pages: CSS, the checker script, JSON blocks and paths into them. Everything inline,
// so a page opens offline and can be mailed as one file.
#include "report/html_page.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace trainsim {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace html {

namespace {

constexpr std::string_view kStyle = R"CSS(
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
body { max-width: 1240px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 1.5em; margin: 8px 0 4px; } h2 { font-size: 1.15em; margin: 28px 0 8px; border-bottom: 1px solid #d5d9e0; padding-bottom: 4px; }
.meta { color: #4a5263; margin: 2px 0; } .note { color: #4a5263; font-size: 0.92em; } code { background: #e8ebf0; padding: 1px 4px; border-radius: 3px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: 8px 14px; min-width: 130px; }
.card .label { font-size: 0.8em; color: #5b6475; text-transform: uppercase; letter-spacing: 0.04em; }
.card .value { font-size: 1.35em; font-weight: 600; } .card .sub { font-size: 0.85em; color: #5b6475; }
.bad { color: #b3261e; font-weight: 600; } .ok { color: #1e7b34; }
table { border-collapse: collapse; background: #fff; font-size: 0.9em; margin: 6px 0; }
th, td { border: 1px solid #d5d9e0; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #eef0f4; } td.l, th.l { text-align: left; } tr.sub td.l { padding-left: 24px; }
td.wrap { white-space: normal; max-width: 520px; } tr.failed td { background: #fbeeed; } tr.best td { background: #e7f4ea; }
table.sortable th { cursor: pointer; } table.sortable th[data-sort=asc]::after { content: " \25B2"; } table.sortable th[data-sort=desc]::after { content: " \25BC"; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
svg { background: #fff; border: 1px solid #d5d9e0; border-radius: 4px; display: block; margin: 6px 0; }
svg text { font-size: 11px; fill: #1d2330; } svg text.seg-label { fill: #fff; font-size: 12px; pointer-events: none; }
svg .grid { stroke: #e1e4ea; } svg .axis { stroke: #8c93a1; } svg .mark.failed { stroke: #b3261e; stroke-width: 2; }
.legend { font-size: 0.88em; color: #4a5263; } .legend span.item { margin-right: 14px; white-space: nowrap; }
pre.command { white-space: pre-wrap; word-break: break-all; } div.scroll { overflow-x: auto; }
.heat-legend { display: inline-block; width: 160px; height: 10px; vertical-align: middle; border: 1px solid #d5d9e0;
  background: linear-gradient(to right, hsl(55,95%,92%), hsl(27,95%,67%), hsl(0,95%,42%)); }
details { margin-top: 24px; } pre { background: #fff; border: 1px solid #d5d9e0; padding: 8px; overflow: auto; max-height: 480px; font-size: 0.85em; }
)CSS";

// Reads every embedded JSON block, marks each number data-check="ok" when it equals the value at its path (a page
// edited by hand or a bug in the renderer shows here), fills the raw-JSON view (when opened, for a block over a
// million characters) and makes tables sortable by a click on a header (by the numbers' values; empty cells last
// either way). The page is complete without it.
constexpr std::string_view kScript = R"JS(
(function () {
  "use strict";
  var blocks = {};
  Array.prototype.forEach.call(document.querySelectorAll("script[type='application/json']"), function (el) {
    blocks[el.id] = JSON.parse(el.textContent);
  });
  var step = /\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|([^.\[\]]+)/g;
  function resolve(root, path) {
    var v = root, m;
    step.lastIndex = 0;
    while ((m = step.exec(path)) !== null) {
      if (v === null || v === undefined) return undefined;
      if (m[1] !== undefined) v = v[JSON.parse('"' + m[1] + '"')];
      else if (m[2] !== undefined) v = Array.isArray(v) ? v[Number(m[2])] : undefined;
      else v = Array.isArray(v) ? undefined : v[m[3]];
    }
    return v;
  }
  var nodes = document.querySelectorAll("[data-json-path]");
  var bad = 0;
  Array.prototype.forEach.call(nodes, function (el) {
    var root = blocks[el.getAttribute("data-json-block") || "trainsim-result"];
    var want = resolve(root, el.getAttribute("data-json-path"));
    var ok = want !== undefined && JSON.stringify(want) === JSON.stringify(JSON.parse(el.getAttribute("data-value")));
    el.setAttribute("data-check", ok ? "ok" : "mismatch");
    if (!ok) bad++;
  });
  var check = document.getElementById("json-check");
  check.textContent = bad === 0 ? nodes.length + " numbers on this page checked against the embedded JSON: all match"
                                 : bad + " of " + nodes.length + " numbers on this page differ from the embedded JSON";
  check.className = bad === 0 ? "ok" : "bad";
  // The raw view of a large block (a sweep of a thousand points) is drawn when it is opened, not on every load.
  var raw = document.getElementById("raw-json");
  function fill() { if (!raw.textContent) raw.textContent = JSON.stringify(blocks["trainsim-result"], null, 2); }
  if (document.getElementById("trainsim-result").textContent.length < 1000000) fill();
  else document.getElementById("json").addEventListener("toggle", fill);
  function key(cell) {
    var n = cell.hasAttribute("data-value") ? cell : cell.querySelector("[data-value]");
    if (n) { var v = JSON.parse(n.getAttribute("data-value")); if (typeof v === "number") return v; }
    var t = cell.textContent;
    return t === "" || t === "-" ? null : t;
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.title = "sort";
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var asc = th.getAttribute("data-sort") !== "asc";
        var rows = Array.prototype.map.call(body.rows, function (row) { return { row: row, key: key(row.cells[col]) }; });
        rows.sort(function (a, b) {
          var x = a.key, y = b.key;
          if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1);
          var c = (typeof x === "number" && typeof y === "number") ? x - y
                                                                   : String(x).localeCompare(String(y), undefined, { numeric: true });
          return asc ? c : -c;
        });
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("data-sort"); });
        th.setAttribute("data-sort", asc ? "asc" : "desc");
        rows.forEach(function (r) { body.appendChild(r.row); });
      });
    });
  });
  document.body.setAttribute("data-js", "ready");
})();
)JS";

bool needs_quoting(std::string_view key) { return key.find_first_of(".[]\"") != std::string_view::npos; }

}  // namespace

const Json* resolve_path(const Json& root, std::string_view path) {
  const Json* v = &root;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      continue;
    }
    if (path[i] == '[' && i + 1 < path.size() && path[i + 1] == '"') {  // ["key"]: a JSON string up to `"]`
      std::size_t end = i + 2;
      while (end < path.size() && path[end] != '"') end += path[end] == '\\' ? 2 : 1;
      if (end + 1 >= path.size() || path[end + 1] != ']' || !v->is_object()) return nullptr;
      const Json key = Json::parse(path.substr(i + 1, end - i), nullptr, false);
      if (!key.is_string() || !v->contains(key.get<std::string>())) return nullptr;
      v = &(*v)[key.get<std::string>()];
      i = end + 2;
      continue;
    }
    if (path[i] == '[') {
      const std::size_t end = path.find(']', i);
      if (end == std::string_view::npos || end == i + 1 || !v->is_array()) return nullptr;
      std::size_t index = 0;
      for (std::size_t k = i + 1; k < end; ++k) {
        if (path[k] < '0' || path[k] > '9') return nullptr;
        index = index * 10 + static_cast<std::size_t>(path[k] - '0');
      }
      if (index >= v->size()) return nullptr;
      v = &(*v)[index];
      i = end + 1;
      continue;
    }
    const std::size_t end = std::min(path.find_first_of(".[", i), path.size());
    const std::string key(path.substr(i, end - i));
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    i = end;
  }
  return v;
}

std::string path_key(std::string_view key, bool first) {
  if (needs_quoting(key)) return "[" + Json(std::string(key)).dump() + "]";
  return (first ? "" : ".") + std::string(key);
}

std::string script_json(const Json& j, int indent) {
  const std::string text = j.dump(indent);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

const Json& Page::block(std::string_view id) const {
  for (const auto& [name, json] : blocks_)
    if (name == id) return json;
  TRAINSIM_UNREACHABLE(fmt::format("html page: no block {}", id));
}

std::string Page::data(std::string_view path, std::string_view block_id) const {
  const bool in_result = block_id == kResultBlock;
  const Json* v = resolve_path(block(block_id), path);
  TRAINSIM_CHECK(v != nullptr && !v->is_structured(), fmt::format("html page: no value at {} in {}", path, block_id));
  return fmt::format(R"( data-json-path="{}"{} data-value="{}")", html_escape(path),
                     in_result ? "" : fmt::format(R"( data-json-block="{}")", html_escape(block_id)),
                     html_escape(v->dump()));
}

void Page::num(std::string_view tag, std::string_view path, std::string_view text, std::string_view block_id,
               std::string_view cls) {
  putf(b, R"(<{} class="{}"{}>)", tag, cls, data(path, block_id));
  put_text(b, text);
  putf(b, "</{}>", tag);
}

void Page::base_overrides_line(std::string_view caption) {
  const Json* sets = resolve_path(block(), "base_overrides");
  if (sets == nullptr || sets->empty()) return;
  putf(b, "<p class=\"meta\">{}:", caption);
  for (std::size_t i = 0; i < sets->size(); ++i) {
    put(b, " <code>--set ");
    num("span", fmt::format("base_overrides[{}]", i), (*sets)[i].get<std::string>(), kResultBlock, "set");
    put(b, "</code>");
  }
  put(b, "</p>\n");
}

void Page::begin(std::string_view title) {
  put(b,
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" "
      "content=\"trainsim\">\n<title>");
  put_text(b, title);
  put(b, "</title>\n<style>");
  put(b, kStyle);
  put(b, "</style>\n</head>\n<body>\n");
}

std::string Page::finish(std::string_view json_summary) {
  put(b, "<details id=\"json\">\n<summary>");
  put(b, json_summary);
  put(b,
      "</summary>\n<p id=\"json-check\" class=\"note\">The numbers are checked against the JSON when scripts run.</p>\n"
      "<pre id=\"raw-json\"></pre>\n</details>\n");
  for (const auto& [id, json] : blocks_) {
    putf(b, "<script type=\"application/json\" id=\"{}\">\n", html_escape(id));
    put(b, script_json(json, indent_));
    put(b, "\n</script>\n");
  }
  put(b, "<script>");
  put(b, kScript);
  put(b, "</script>\n</body>\n</html>\n");
  return fmt::to_string(b);
}

}  // namespace html
}  // namespace trainsim
