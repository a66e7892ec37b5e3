// RunResult -> one self-contained HTML page (`trainsim run --html`). Everything inline: charts as SVG drawn here; the
// CSS and the script that checks each number against the embedded JSON and sorts tables are html_page.cpp's. The
// page fetches nothing, so it opens offline and can be mailed as one file.
#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "report/format_utils.hpp"
#include "report/reports.hpp"

namespace trainsim {

namespace {

using Json = nlohmann::ordered_json;
using html::Buffer;
using html::kResultBlock;
using html::put;
using html::put_text;
using html::putf;
using report_format::group_digits;
using report_format::human_bytes;
using report_format::human_duration;
using report_format::kUnknown;
using report_format::or_dash;
using report_format::percent;
using report_format::share_of;

constexpr const char* kExtraBlock = "trainsim-extra";
constexpr std::size_t kMaxLinks = 48;     // rows of the links heat map
constexpr std::size_t kMaxSpans = 20000;  // rectangles of the timeline (the longest, when there are more)

// The page's data: the result's JSON (the main block) and the extra block, for the data-value of every number.
struct Page : html::Page {
  Page(const RunResult& result_in, const HtmlReportExtras& extras, Json extra)
      : html::Page(to_json(result_in)), r(result_in), x(extras) {
    add_block(kExtraBlock, std::move(extra));
  }
  const RunResult& r;
  const HtmlReportExtras& x;
};

// Utilisation 0..1 -> a background from pale yellow (idle) to deep red (saturated).
std::string heat_color(double u) {
  const double v = std::isfinite(u) ? std::clamp(u, 0.0, 1.0) : 0.0;
  return fmt::format("hsl({:.0f},95%,{:.0f}%)", 55 * (1 - v), 92 - 50 * v);
}

// Colours of the time categories (breakdown, timeline) and of the memory parts.
std::string category_color(std::string_view c) {
  static const std::map<std::string_view, std::string_view> kColors = {
      {"compute", "#4e79a7"},
      {"tp", "#f28e2b"},
      {"cp", "#edc948"},
      {"dp", "#e15759"},
      {"pp", "#76b7b2"},
      {"ep", "#b07aa1"},
      {"comm-other", "#ff9da7"},
      {"bubble", "#bab0ac"},
      {"optimizer", "#59a14f"},
      {"other", "#9c755f"},
      {"weights", "#4e79a7"},
      {"grads", "#f28e2b"},
      {"optimizer-states", "#59a14f"},
      {"activations", "#e15759"},
      {"memory-other", "#bab0ac"},
  };
  const auto it = kColors.find(c);
  return std::string(it != kColors.end() ? it->second : "#8c8c8c");
}

void write_header(Page& p) {
  const RunResult& r = p.r;
  Buffer& b = p.b;
  put(b, "<header>\n<h1>trainsim run: ");
  put_text(b, or_dash(r.scenario));
  put(b, "</h1>\n<p class=\"meta\">model ");
  put_text(b, or_dash(r.model_name));
  put(b, " &middot; gpu ");
  put_text(b, or_dash(r.gpu_name));
  if (!r.precision.empty()) {
    put(b, " (");
    put_text(b, r.precision);
    put(b, ")");
  }
  putf(b, " &middot; {} GPUs", r.num_gpus);
  if (r.seq_length > 0 || r.global_batch_size > 0)
    putf(b, " &middot; sequence length {} &middot; global batch size {}", r.seq_length, r.global_batch_size);
  if (r.parallelism_known) {
    putf(b, "</p>\n<p class=\"meta\">parallelism TP {} &middot; PP {} &middot; DP {} &middot; CP {}", r.tensor,
         r.pipeline, r.data, r.context);
    if (r.virtual_pipeline > 1) putf(b, " &middot; VP {}", r.virtual_pipeline);
    if (r.expert > 1 || (r.expert_tensor != 0 && r.expert_tensor != r.tensor))
      putf(b, " &middot; EP {} &middot; ETP {}", r.expert, r.expert_tensor);
    putf(b, " &middot; micro-batches {}</p>\n", r.micro_batches);
  } else {  // a workload file that does not state them, on a scenario without a model block
    putf(b,
         "</p>\n<p class=\"meta\">parallelism TP {0} &middot; PP {0} &middot; DP {0} &middot; CP {0} &middot; "
         "micro-batches {0}</p>\n",
         kUnknown);
  }
  if (!r.inferred.empty() || !r.warnings.empty()) {
    put(b, "<ul class=\"meta\">\n");
    for (const InferredSetting& v : r.inferred) {
      put(b, "<li>chosen: <code>");
      put_text(b, v.key);
      put(b, "</code> = ");
      put_text(b, v.value);
      put(b, " (");
      put_text(b, v.why);
      put(b, ")</li>\n");
    }
    for (const ScenarioWarningNote& w : r.warnings) {
      put(b, "<li class=\"bad\">warning: <code>");
      put_text(b, w.key);
      put(b, "</code>: ");
      put_text(b, w.message);
      put(b, "</li>\n");
    }
    put(b, "</ul>\n");
  }
  put(b, "</header>\n");
}

void card_begin(Buffer& b, std::string_view label) {
  put(b, "<div class=\"card\"><div class=\"label\">");
  put_text(b, label);
  put(b, "</div>");
}

void write_headline(Page& p) {
  const RunResult& r = p.r;
  Buffer& b = p.b;
  put(b, "<section id=\"headline\">\n<div class=\"cards\">\n");
  card_begin(b, "iteration time");
  p.num("div", "iteration_time_s", fmt::format("{:.4f} s", r.iteration_time_s), kResultBlock, "value num");
  put(b, "</div>\n");
  // Without a model block nothing counts tokens or FLOPs: the cards say so (their JSON values are null).
  const bool known = r.throughput_known;
  auto shown = [&](std::string text) { return known ? text : std::string(kUnknown); };
  card_begin(b, "throughput");
  p.num("div", "tokens_per_s", shown(group_digits(r.tokens_per_s) + " tokens/s"), kResultBlock, "value num");
  put(b, "<div class=\"sub\">");
  if (known) {
    p.num("span", "tokens_per_s_per_gpu", fmt::format("{:.1f}", r.tokens_per_s_per_gpu));
    put(b, " per GPU</div></div>\n");
  } else {
    put(b, "no model block: tokens and FLOPs unknown</div></div>\n");
  }
  card_begin(b, "TFLOPS/GPU");
  p.num("div", "tflops_per_gpu", shown(fmt::format("{:.1f}", r.tflops_per_gpu)), kResultBlock, "value num");
  if (known && r.peak_tflops > 0) putf(b, "<div class=\"sub\">peak {:.1f}</div>", r.peak_tflops);
  put(b, "</div>\n");
  card_begin(b, "MFU");
  p.num("div", "mfu", shown(percent(r.mfu)), kResultBlock, "value num");
  put(b, "</div>\n");
  card_begin(b, "HFU");
  p.num("div", "hfu", shown(percent(r.hfu)), kResultBlock, "value num");
  put(b, "</div>\n");
  card_begin(b, "memory");
  if (r.memory) {
    p.num("div", "memory.fits", r.memory->fits ? "fits" : "DOES NOT FIT", kResultBlock,
          r.memory->fits ? "value num ok" : "value num bad");
    put(b, "<div class=\"sub\">");
    p.num("span", "memory.peak", fmt::format("{:.2f}", r.memory->peak));
    put(b, " of ");
    p.num("span", "memory.capacity", fmt::format("{:.2f}", r.memory->capacity));
    put(b, " GiB</div>");
  } else {
    put(b, "<div class=\"value\">-</div>");
  }
  put(b, "</div>\n");
  if (r.faults) {
    card_begin(b, "fault slowdown");
    p.num("div", "faults.slowdown", fmt::format("{:.1f}%", (r.faults->slowdown - 1) * 100), kResultBlock, "value num");
    put(b, "<div class=\"sub\">fault-free ");
    p.num("span", "faults.fault_free_iteration_time_s", fmt::format("{:.4f} s", r.faults->fault_free_iteration_time_s));
    put(b, "</div></div>\n");
  }
  put(b, "</div>\n</section>\n");
}

struct Category {
  const char* label;
  const char* short_label;  // under "exposed comm" in the table
  const char* id;           // data-category and colour
  const char* path;         // in the result's JSON
  double seconds;
};

void write_breakdown(Page& p) {
  const RunResult& r = p.r;
  const Breakdown& bd = r.breakdown;
  Buffer& b = p.b;
  const Category cats[] = {
      {"compute", "compute", "compute", "breakdown.compute", bd.compute},
      {"exposed comm: tensor-parallel", "tensor-parallel", "tp", "breakdown.exposed_comm_by_group.tp", bd.exposed_tp},
      {"exposed comm: context-parallel", "context-parallel", "cp", "breakdown.exposed_comm_by_group.cp", bd.exposed_cp},
      {"exposed comm: data-parallel", "data-parallel", "dp", "breakdown.exposed_comm_by_group.dp", bd.exposed_dp},
      {"exposed comm: pipeline p2p", "pipeline p2p", "pp", "breakdown.exposed_comm_by_group.pp", bd.exposed_pp},
      {"exposed comm: expert-parallel", "expert-parallel", "ep", "breakdown.exposed_comm_by_group.ep", bd.exposed_ep},
      {"exposed comm: other", "other", "comm-other", "breakdown.exposed_comm_by_group.other", bd.exposed_other},
      {"pipeline bubble", "pipeline bubble", "bubble", "breakdown.bubble", bd.bubble},
      {"optimizer", "optimizer", "optimizer", "breakdown.optimizer", bd.optimizer},
      {"other", "other", "other", "breakdown.other", bd.other},
  };
  double total = 0;
  for (const Category& c : cats) total += std::max(0.0, c.seconds);
  putf(b, "<section id=\"breakdown\">\n<h2>Where the time goes (critical rank {})</h2>\n", r.critical_rank);
  constexpr double kWidth = 1000, kHeight = 44;
  putf(b,
       "<svg id=\"breakdown-chart\" viewBox=\"0 0 {0:.0f} {1:.0f}\" width=\"100%\" role=\"img\" "
       "aria-label=\"iteration time by category\">\n",
       kWidth, kHeight);
  double x = 0;
  for (const Category& c : cats) {
    if (!(c.seconds > 0) || !(total > 0)) continue;
    const double w = kWidth * c.seconds / total;
    putf(b,
         "<rect class=\"seg\" data-category=\"{}\"{} x=\"{:.3f}\" y=\"4\" width=\"{:.3f}\" height=\"{:.0f}\" "
         "fill=\"{}\">"
         "<title>",
         c.id, p.data(c.path), x, w, kHeight - 8, category_color(c.id));
    put_text(b, fmt::format("{}: {:.4f} s ({}%)", c.label, c.seconds, share_of(c.seconds, r.iteration_time_s)));
    put(b, "</title></rect>\n");
    // A label where it fits (about 7 units a character at this size).
    const std::string label = fmt::format("{} {}%", c.short_label, share_of(c.seconds, r.iteration_time_s));
    if (w > 7.2 * static_cast<double>(label.size()) + 8)
      putf(b, "<text class=\"seg-label\" x=\"{:.3f}\" y=\"27\">{}</text>\n", x + 5, html_escape(label));
    x += w;
  }
  put(b,
      "</svg>\n<table id=\"breakdown-table\">\n<thead><tr><th "
      "class=\"l\">part</th><th>seconds</th><th>%</th></tr></thead>\n<tbody>\n");
  auto row = [&](std::string_view label, const char* id, const char* path, double seconds, bool sub = false) {
    put(b, sub ? "<tr class=\"sub\"><td class=\"l\">" : "<tr><td class=\"l\">");
    if (id) putf(b, "<span class=\"swatch\" style=\"background:{}\"></span>", category_color(id));
    put_text(b, label);
    put(b, "</td>");
    p.num("td", path, fmt::format("{:.4f}", seconds));
    putf(b, "<td>{}</td></tr>\n", share_of(seconds, r.iteration_time_s));
  };
  row("compute", "compute", "breakdown.compute", bd.compute);
  row("exposed comm", nullptr, "breakdown.exposed_comm", bd.exposed_comm);
  for (std::size_t i = 1; i <= 6; ++i) row(cats[i].short_label, cats[i].id, cats[i].path, cats[i].seconds, true);
  row("pipeline bubble", "bubble", "breakdown.bubble", bd.bubble);
  row("optimizer", "optimizer", "breakdown.optimizer", bd.optimizer);
  row("other", "other", "breakdown.other", bd.other);
  // As the text report: worth a line when the GPU waited on the host for at least 1% of the step.
  if (bd.host > 0 && bd.host >= 0.01 * r.iteration_time_s)
    row("waiting on the host", nullptr, "breakdown.other_by_cause.host_launch", bd.host, true);
  put(b, "<tr><td class=\"l\">iteration</td>");
  p.num("td", "iteration_time_s", fmt::format("{:.4f}", r.iteration_time_s));
  putf(b, "<td>{}</td></tr>\n</tbody>\n</table>\n</section>\n", share_of(r.iteration_time_s, r.iteration_time_s));
}

// One stage's bar: its parts and where each number lives.
struct MemoryBar {
  std::string label;
  std::string path_prefix;  // "memory." or "memory_stages[3]."
  const char* block;
  bool worst = false;
  double parts[5];
};

void write_memory(Page& p) {
  const RunResult& r = p.r;
  Buffer& b = p.b;
  put(b, "<section id=\"memory\">\n<h2>Memory per GPU</h2>\n");
  if (!r.memory) {
    put(b, "<p class=\"note\">This result holds no memory estimate.</p>\n</section>\n");
    return;
  }
  const MemoryUsage& m = *r.memory;
  static constexpr const char* kPartNames[] = {"weights", "gradients", "optimizer states", "activations", "other"};
  static constexpr const char* kPartIds[] = {"weights", "grads", "optimizer-states", "activations", "memory-other"};
  static constexpr const char* kResultKeys[] = {"weights", "grads", "optimizer", "activations", "other"};
  std::vector<MemoryBar> bars;
  if (!p.x.memory_stages.empty()) {
    for (std::size_t i = 0; i < p.x.memory_stages.size(); ++i) {
      const MemoryStageRow& s = p.x.memory_stages[i];
      bars.push_back({fmt::format("stage {}", s.stage),
                      fmt::format("memory_stages[{}].", i),
                      kExtraBlock,
                      s.stage == m.worst_stage,
                      {s.weights, s.grads, s.optimizer, s.activations, s.other}});
    }
    putf(b,
         "<p class=\"note\">GiB per GPU of each pipeline stage (the memory model, as <code>trainsim memory</code> "
         "prints it); the result's numbers are those of the worst, stage {}.</p>\n",
         m.worst_stage);
  } else {
    bars.push_back({fmt::format("stage {}", m.worst_stage),
                    "memory.",
                    kResultBlock,
                    true,
                    {m.weights, m.grads, m.optimizer, m.activations, m.other}});
    putf(b,
         "<p class=\"note\">GiB per GPU. The result holds the worst pipeline stage only (stage {}); "
         "<code>trainsim memory SCENARIO</code> lists every stage.</p>\n",
         m.worst_stage);
  }
  double most = m.capacity;
  for (const MemoryBar& bar : bars)
    most = std::max(most, std::accumulate(std::begin(bar.parts), std::end(bar.parts), 0.0));
  const double scale_max = most > 0 ? most * 1.08 : 1;
  constexpr double kLabel = 90, kPlot = 880, kRow = 22, kTop = 18;
  const double height = kTop + kRow * static_cast<double>(bars.size()) + 8;
  putf(b,
       "<svg id=\"memory-chart\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
       "aria-label=\"memory per GPU by stage\">\n",
       kLabel + kPlot + 30, height);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const MemoryBar& bar = bars[i];
    const double y = kTop + kRow * static_cast<double>(i);
    putf(b, "<text x=\"4\" y=\"{:.1f}\"{}>{}</text>\n", y + 14, bar.worst ? " font-weight=\"bold\"" : "",
         html_escape(bar.label));
    double x = kLabel;
    for (int k = 0; k < 5; ++k) {
      if (!(bar.parts[k] > 0)) continue;
      const double w = kPlot * bar.parts[k] / scale_max;
      putf(
          b,
          "<rect class=\"mem-seg\" data-category=\"{}\"{} x=\"{:.3f}\" y=\"{:.1f}\" width=\"{:.3f}\" height=\"{:.0f}\" "
          "fill=\"{}\"><title>",
          kPartIds[k], p.data(bar.path_prefix + kResultKeys[k], bar.block), x, y + 2, w, kRow - 5,
          category_color(kPartIds[k]));
      put_text(b, fmt::format("{} {}: {:.2f} GiB", bar.label, kPartNames[k], bar.parts[k]));
      put(b, "</title></rect>\n");
      x += w;
    }
  }
  const double cap_x = kLabel + kPlot * m.capacity / scale_max;
  putf(b,
       "<line id=\"memory-capacity\" x1=\"{0:.3f}\" x2=\"{0:.3f}\" y1=\"12\" y2=\"{1:.1f}\" stroke=\"#b3261e\" "
       "stroke-width=\"2\" stroke-dasharray=\"5,3\"></line>\n",
       cap_x, height - 4);
  putf(b, "<text x=\"{:.3f}\" y=\"11\" text-anchor=\"middle\" fill=\"#b3261e\">capacity {:.2f} GiB</text>\n", cap_x,
       m.capacity);
  put(b, "</svg>\n<p class=\"note\">");
  for (int k = 0; k < 5; ++k) {
    putf(b, "<span class=\"swatch\" style=\"background:{}\"></span>", category_color(kPartIds[k]));
    put_text(b, kPartNames[k]);
    put(b, k < 4 ? " &nbsp; " : "");
  }
  put(b,
      "</p>\n<table id=\"memory-table\">\n<thead><tr><th class=\"l\">stage</th><th>weights</th><th>gradients</th>"
      "<th>optimizer</th><th>activations</th><th>other</th><th>total</th><th>capacity</th><th class=\"l\">fits</th>"
      "</tr></thead>\n<tbody>\n");
  for (const MemoryBar& bar : bars) {
    putf(b, "<tr{}><td class=\"l\">{}{}</td>", bar.worst ? " class=\"worst\"" : "", html_escape(bar.label),
         bar.worst ? " (worst)" : "");
    for (int k = 0; k < 5; ++k)
      p.num("td", bar.path_prefix + kResultKeys[k], fmt::format("{:.2f}", bar.parts[k]), bar.block);
    const double total = std::accumulate(std::begin(bar.parts), std::end(bar.parts), 0.0);
    if (bar.worst && bar.block == std::string_view(kResultBlock)) {
      p.num("td", "memory.peak", fmt::format("{:.2f}", m.peak));
    } else if (bar.block == std::string_view(kExtraBlock)) {
      p.num("td", bar.path_prefix + "total", fmt::format("{:.2f}", total), kExtraBlock);
    } else {
      putf(b, "<td>{:.2f}</td>", total);
    }
    p.num("td", "memory.capacity", fmt::format("{:.2f}", m.capacity));
    const bool fits = total <= m.capacity;
    putf(b, "<td class=\"l {}\">{}</td></tr>\n", fits ? "ok" : "bad", fits ? "yes" : "NO");
  }
  put(b, "</tbody>\n</table>\n</section>\n");
}

void write_comm(Page& p) {
  const RunResult& r = p.r;
  Buffer& b = p.b;
  put(b, "<section id=\"collectives\">\n<h2>Collectives per iteration (critical rank)</h2>\n");
  if (r.comm.empty()) {
    put(b, "<p class=\"note\">none</p>\n</section>\n");
    return;
  }
  put(b,
      "<table id=\"comm-table\" class=\"sortable\">\n<thead><tr><th class=\"l\">kind</th><th class=\"l\">group</th>"
      "<th>size</th><th>count</th><th>bytes</th><th>time s</th><th>exposed s</th><th>max call</th>"
      "<th class=\"l\">algorithm/protocol</th></tr></thead>\n<tbody>\n");
  for (std::size_t i = 0; i < r.comm.size(); ++i) {
    const CommStat& c = r.comm[i];
    const std::string at = fmt::format("comm[{}].", i);
    put(b, "<tr><td class=\"l\">");
    put_text(b, c.kind);
    put(b, "</td><td class=\"l\">");
    put_text(b, c.group);
    put(b, "</td>");
    p.num("td", at + "group_size", fmt::format("{}", c.group_size));
    p.num("td", at + "count", fmt::format("{}", c.count));
    p.num("td", at + "bytes", human_bytes(c.bytes));
    p.num("td", at + "time_s", fmt::format("{:.6f}", c.time_s));
    p.num("td", at + "exposed_s", fmt::format("{:.6f}", c.exposed_s));
    p.num("td", at + "max_call_s", human_duration(c.max_call_s));
    std::string algo = c.algorithm.empty() ? "-" : c.algorithm;
    if (!c.protocol.empty()) algo += "/" + c.protocol;
    put(b, "<td class=\"l\">");
    put_text(b, algo);
    put(b, "</td></tr>\n");
  }
  put(b, "</tbody>\n</table>\n</section>\n");
}

// The links the heat map shows, busiest first (the same order write_links uses).
std::vector<std::size_t> shown_links(std::span<const LinkUsageRow> links) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < links.size(); ++i)
    if (links[i].bytes > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t c) { return links[a].utilisation > links[c].utilisation; });
  if (order.size() > kMaxLinks) order.resize(kMaxLinks);
  return order;
}

// Flow/packet runs: the busiest links, each row coloured by its utilisation.
void write_links(Page& p) {
  const RunResult& r = p.r;
  Buffer& b = p.b;
  struct Row {
    const LinkUsageRow* link;
    std::string prefix;
    const char* block;
  };
  std::vector<Row> rows;
  std::size_t carried = 0;
  bool all_links = false;
  if (!p.x.links.empty()) {
    all_links = true;
    carried = static_cast<std::size_t>(
        std::count_if(p.x.links.begin(), p.x.links.end(), [](const LinkUsageRow& l) { return l.bytes > 0; }));
    const std::vector<std::size_t> order = shown_links(p.x.links);
    for (std::size_t k = 0; k < order.size(); ++k)
      rows.push_back({&p.x.links[order[k]], fmt::format("links[{}].", k), kExtraBlock});
  } else {
    for (std::size_t k = 0; k < r.hot_links.size(); ++k)
      rows.push_back({&r.hot_links[k], fmt::format("hot_links[{}].", k), kResultBlock});
  }
  if (rows.empty()) return;
  const bool packet = all_links && rows.front().link->packet;
  put(b, "<section id=\"links\">\n<h2>Busiest links (utilisation over the iteration)</h2>\n<p class=\"note\">");
  if (all_links)
    putf(b,
         "{} links that carried traffic ({} links in the fabric), busiest first; "
         "<code>--links-csv FILE</code> writes every link.",
         rows.size() < carried ? fmt::format("The {} busiest of the {}", rows.size(), carried)
                               : fmt::format("All {}", carried),
         p.x.links.size());
  else
    putf(b, "The {} busiest fabric links of the result.", rows.size());
  put(b, " Utilisation: <span class=\"heat-legend\"></span> 0 &rarr; 100%</p>\n");
  put(b,
      "<table id=\"links-table\" class=\"sortable heat\">\n<thead><tr><th class=\"l\">link</th><th "
      "class=\"l\">kind</th>"
      "<th>GB/s</th><th>bytes</th><th>util</th><th>flows</th>");
  if (all_links) put(b, "<th>busy s</th>");
  if (packet) put(b, "<th>queue KB</th><th>pauses</th><th>paused us</th><th>ECN marks</th><th>drops</th>");
  put(b, "</tr></thead>\n<tbody>\n");
  for (const Row& row : rows) {
    const LinkUsageRow& l = *row.link;
    const bool dark = l.utilisation > 0.6;
    putf(b, "<tr style=\"background:{}{}\"><td class=\"l\">", heat_color(l.utilisation), dark ? ";color:#fff" : "");
    put_text(b, l.name);
    put(b, "</td><td class=\"l\">");
    put_text(b, l.kind);
    put(b, "</td>");
    p.num("td", row.prefix + "capacity_GBps", fmt::format("{:.1f}", l.capacity_GBps), row.block);
    p.num("td", row.prefix + "bytes", human_bytes(l.bytes), row.block);
    p.num("td", row.prefix + "utilisation", fmt::format("{:.1f}%", 100 * l.utilisation), row.block);
    p.num("td", row.prefix + "peak_flows", fmt::format("{}", l.peak_flows), row.block);
    if (all_links) p.num("td", row.prefix + "busy_s", fmt::format("{:.6f}", l.busy_s), row.block);
    if (packet) {
      p.num("td", row.prefix + "max_queue_kb", fmt::format("{:.1f}", l.max_queue_kb), row.block);
      p.num("td", row.prefix + "pause_events", group_digits(l.pause_events), row.block);
      p.num("td", row.prefix + "paused_s", fmt::format("{:.1f}", l.paused_s * 1e6), row.block);
      p.num("td", row.prefix + "ecn_marks", group_digits(l.ecn_marks), row.block);
      p.num("td", row.prefix + "drops", group_digits(l.drops), row.block);
    }
    put(b, "</tr>\n");
  }
  put(b, "</tbody>\n</table>\n</section>\n");
}

void write_congestion(Page& p) {
  if (!p.r.congestion) return;
  const Congestion& c = *p.r.congestion;
  Buffer& b = p.b;
  put(b, "<section id=\"congestion\">\n<h2>Congestion (packet level)</h2>\n<table>\n<tbody>\n");
  auto row = [&](std::string_view label, const char* path, const std::string& text) {
    put(b, "<tr><td class=\"l\">");
    put_text(b, label);
    put(b, "</td>");
    p.num("td", path, text);
    put(b, "</tr>\n");
  };
  row("packets", "congestion.packets", group_digits(c.packets));
  row("PFC pauses", "congestion.pause_events", group_digits(c.pause_events));
  row("paused, s (all links)", "congestion.paused_s", fmt::format("{:.6f}", c.paused_s));
  row("ECN marks", "congestion.ecn_marks", group_digits(c.ecn_marks));
  row("CNPs", "congestion.cnps", group_digits(c.cnps));
  row("rate cuts", "congestion.rate_cuts", group_digits(c.rate_cuts));
  row("drops", "congestion.drops", group_digits(c.drops));
  row("retransmitted packets", "congestion.retransmitted_packets", group_digits(c.retransmitted_packets));
  row("transfers", "congestion.transfers", group_digits(c.transfers));
  row("completion time p50, us", "congestion.fct_p50_us", fmt::format("{:.1f}", c.fct_p50_us));
  row("completion time p99, us", "congestion.fct_p99_us", fmt::format("{:.1f}", c.fct_p99_us));
  row("completion time max, us", "congestion.fct_max_us", fmt::format("{:.1f}", c.fct_max_us));
  row("NVLink and PCIe", "congestion.host_links",
      c.host_links == "delay" ? "crossed without queueing" : "queue packets");
  if (c.switch_buffers) {
    row("fullest switch buffer, KB", "congestion.switch_buffers.peak_kb",
        fmt::format("{:.1f}", c.switch_buffers->peak_kb));
    row("drops past PFC headroom", "congestion.switch_buffers.headroom_drops",
        group_digits(c.switch_buffers->headroom_drops));
  }
  put(b, "</tbody>\n</table>\n</section>\n");
}

std::string stream_label(int tid, std::span<const std::string> names) {
  if (tid >= 0 && static_cast<std::size_t>(tid) < names.size()) return names[static_cast<std::size_t>(tid)];
  return fmt::format("stream {}", tid);
}

// With a trace: the critical rank's streams over the iteration, one lane each.
void write_timeline(Page& p) {
  const RunResult& r = p.r;
  Buffer& b = p.b;
  putf(b, "<section id=\"timeline\">\n<h2>Timeline of the critical rank ({})</h2>\n", r.critical_rank);
  const std::string scenario = p.x.scenario_path.empty() ? "SCENARIO" : p.x.scenario_path;
  std::vector<const TraceSpan*> spans;
  for (const TraceSpan& s : p.x.trace)
    if (s.pid == r.critical_rank && std::isfinite(s.start_us) && std::isfinite(s.dur_us)) spans.push_back(&s);
  if (spans.empty()) {
    put(b, "<p class=\"note\" id=\"timeline-note\">");
    if (p.x.traced)
      putf(b,
           "The trace holds no span of rank {0} (<code>--trace-ranks</code> left it out): add it with "
           "<code>--trace-ranks {0}</code> to see its timeline here.",
           r.critical_rank);
    else
      put(b,
          "No trace was collected. Write a Perfetto trace (open it in ui.perfetto.dev or chrome://tracing) and "
          "see the critical rank's timeline here with <code>" +
              html_escape("trainsim run " + scenario + " --trace trace.json --html report.html") + "</code>.");
    put(b, "</p>\n</section>\n");
    return;
  }
  const std::size_t all = spans.size();
  if (spans.size() > kMaxSpans) {
    std::stable_sort(spans.begin(), spans.end(),
                     [](const TraceSpan* a, const TraceSpan* c) { return a->dur_us > c->dur_us; });
    spans.resize(kMaxSpans);
  }
  std::stable_sort(spans.begin(), spans.end(), [](const TraceSpan* a, const TraceSpan* c) {
    return a->tid != c->tid ? a->tid < c->tid : a->start_us < c->start_us;
  });
  std::vector<int> lanes;
  double t0 = spans.front()->start_us, t1 = t0;
  for (const TraceSpan* s : spans) {
    if (lanes.empty() || lanes.back() != s->tid) lanes.push_back(s->tid);
    t0 = std::min(t0, s->start_us);
    t1 = std::max(t1, s->start_us + s->dur_us);
  }
  const double span_us = t1 > t0 ? t1 - t0 : 1;
  constexpr double kLabel = 130, kPlot = 1050, kLane = 20, kTop = 22;
  const double height = kTop + kLane * static_cast<double>(lanes.size()) + 6;
  putf(b,
       "<p class=\"note\">{} spans{}; hover a span for its name and time. The whole trace opens in "
       "ui.perfetto.dev.</p>\n",
       group_digits(static_cast<std::int64_t>(all)),
       all > spans.size()
           ? fmt::format(" (the {} longest drawn)", group_digits(static_cast<std::int64_t>(spans.size())))
           : std::string());
  putf(b,
       "<svg id=\"timeline-chart\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
       "aria-label=\"critical rank timeline\">\n",
       kLabel + kPlot + 20, height);
  for (int k = 0; k <= 5; ++k) {
    const double x = kLabel + kPlot * k / 5.0;
    putf(b,
         "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.0f}\" y2=\"{2:.1f}\" stroke=\"#e1e4ea\"></line>"
         "<text x=\"{0:.1f}\" y=\"13\" text-anchor=\"middle\">{3}</text>\n",
         x, kTop - 4, height - 4, html_escape(human_duration(span_us * 1e-6 * k / 5.0)));
  }
  for (std::size_t i = 0; i < lanes.size(); ++i)
    putf(b, "<text x=\"4\" y=\"{:.1f}\">{}</text>\n", kTop + kLane * static_cast<double>(i) + 14,
         html_escape(stream_label(lanes[i], p.x.stream_names)));
  std::size_t lane = 0;
  for (const TraceSpan* s : spans) {
    while (lanes[lane] != s->tid) ++lane;
    const double x = kLabel + kPlot * (s->start_us - t0) / span_us;
    const double w = std::max(0.4, kPlot * s->dur_us / span_us);
    putf(b, "<rect class=\"span\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\"><title>", x,
         kTop + kLane * static_cast<double>(lane) + 3, w, kLane - 6, category_color(s->category));
    put_text(b, fmt::format("{} ({}): {} at {}", s->name, s->category, human_duration(s->dur_us * 1e-6),
                            human_duration((s->start_us - t0) * 1e-6)));
    put(b, "</title></rect>\n");
  }
  put(b, "</svg>\n</section>\n");
}

void write_footer(Page& p) {
  const SimulationStats& s = p.r.simulation;
  Buffer& b = p.b;
  put(b, "<section id=\"simulation\">\n<h2>Simulation</h2>\n<p class=\"meta\">");
  p.num("span", "simulation.wall_s", fmt::format("{:.3f}", s.wall_s));
  put(b, " s wall, ");
  p.num("span", "simulation.events", group_digits(s.events));
  put(b, " events, ");
  p.num("span", "simulation.flows", group_digits(s.flows));
  put(b, " flows, ");
  p.num("span", "simulation.simulated_ranks", group_digits(s.simulated_ranks));
  put(b, " simulated ranks, ");
  p.num("span", "simulation.ops", group_digits(s.ops));
  put(b, " ops, network model ");
  put_text(b, or_dash(s.network_model));
  put(b, "</p>\n");
  if (!s.compute_model.empty()) {
    put(b, "<p class=\"meta\">compute: ");
    put_text(b, s.compute_model);
    put(b, "</p>\n");
  }
  if (s.interference_s > 0) {
    put(b, "<p class=\"meta\">collectives running beside kernels added ");
    p.num("span", "simulation.interference_s", fmt::format("{:.4f}", s.interference_s));
    put(b, " s of compute on the critical rank</p>\n");
  }
  put(b, "</section>\n");
}

Json extra_json(const HtmlReportExtras& x, const std::vector<std::size_t>& link_order) {
  Json j = Json::object();
  Json stages = Json::array();
  for (const MemoryStageRow& s : x.memory_stages)
    stages.push_back({{"stage", s.stage},
                      {"weights", s.weights},
                      {"grads", s.grads},
                      {"optimizer", s.optimizer},
                      {"activations", s.activations},
                      {"other", s.other},
                      {"total", s.total()}});
  j["memory_stages"] = std::move(stages);
  Json links = Json::array();
  for (std::size_t i : link_order) {
    const LinkUsageRow& l = x.links[i];
    Json row = {{"link", l.name},
                {"kind", l.kind},
                {"capacity_GBps", l.capacity_GBps},
                {"bytes", l.bytes},
                {"busy_s", l.busy_s},
                {"peak_flows", l.peak_flows},
                {"utilisation", l.utilisation}};
    if (l.packet) {
      row["max_queue_kb"] = l.max_queue_kb;
      row["pause_events"] = l.pause_events;
      row["paused_s"] = l.paused_s;
      row["ecn_marks"] = l.ecn_marks;
      row["drops"] = l.drops;
    }
    links.push_back(std::move(row));
  }
  j["links"] = std::move(links);
  return j;
}

}  // namespace

std::string render_html_report(const RunResult& r, const HtmlReportExtras& extras) {
  Page p(r, extras, extra_json(extras, shown_links(extras.links)));
  p.begin("trainsim: " + or_dash(r.scenario));
  write_header(p);
  write_headline(p);
  write_breakdown(p);
  write_memory(p);
  write_comm(p);
  write_links(p);
  write_congestion(p);
  write_timeline(p);
  write_footer(p);
  return p.finish("The result as JSON (the same as <code>trainsim run --json</code>)");
}

void write_html_report(std::ostream& out, const RunResult& r, const HtmlReportExtras& extras) {
  const std::string page = render_html_report(r, extras);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace trainsim
