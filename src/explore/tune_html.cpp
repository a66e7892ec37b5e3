#include "explore/tune_html.hpp"

#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "explore/tune_json.hpp"
#include "report/format_utils.hpp"
#include "report/html_page.hpp"
#include "report/svg_chart.hpp"

namespace trainsim::explore {

namespace {

using Json = nlohmann::ordered_json;
using html::put;
using html::put_text;
using html::putf;
namespace rf = report_format;

// What the page reads besides the JSON it embeds.
struct TunePage : html::Page {
  TunePage(const TuneOutcome& o, const Objective& objective_in, std::size_t top_in, const std::string& path)
      : html::Page(tune_json(o, objective_in, top_in)),
        outcome(o),
        objective(objective_in),
        top(top_in),
        scenario_path(path) {}
  const TuneOutcome& outcome;
  const Objective& objective;
  std::size_t top;
  const std::string& scenario_path;

  std::string objective_text(double v) const {
    return objective.kind == ObjectiveKind::TokensPerS ? rf::group_digits(v) : fmt::format("{:.4g}", v);
  }
  std::string unit() const { return objective_unit(objective.kind); }
};

// The number at j.a(.b), 0 when there is none.
double number(const Json& j, const char* a, const char* b = nullptr) {
  const Json* v = html::resolve_path(j, b ? std::string(a) + "." + b : std::string(a));
  return v && v->is_number() ? v->get<double>() : 0;
}

void write_header(TunePage& p) {
  const TuneOutcome& o = p.outcome;
  html::Buffer& b = p.b;
  put(b, "<header>\n<h1>trainsim tune: ");
  put_text(b, o.scenario);
  put(b, "</h1>\n<p class=\"meta\">model ");
  put_text(b, o.model);
  if (!o.varies_num_gpus) putf(b, " on {} x", o.basis.num_gpus);
  put(b, " ");
  put_text(b, o.gpu);
  put(b, " &middot; scenario <code>");
  put_text(b, p.scenario_path);
  put(b, "</code></p>\n<p class=\"meta\">objective <code>");
  put_text(b, objective_name(p.objective.kind));
  putf(b, "</code> ({}, {})", maximises(p.objective.kind) ? "maximise" : "minimise", html_escape(p.unit()));
  if (p.objective.kind == ObjectiveKind::Cost && p.objective.gpu_hour_price_usd > 0) {
    put(b, " at ");
    p.num("span", "objective.gpu_hour_price_usd", fmt::format("{:g}", p.objective.gpu_hour_price_usd));
    put(b, " USD per GPU-hour");
  }
  if (p.objective.tokens > 0) {
    put(b, " for ");
    p.num("span", "objective.tokens", fmt::format("{:g}", p.objective.tokens));
    put(b, " tokens");
  }
  if (p.objective.run_level()) put(b, ", the whole run (failures, restarts, checkpoints: <code>trainsim plan</code>)");
  put(b, "</p>\n");
  p.base_overrides_line("for every candidate");
  put(b, "</header>\n");
}

// The best configuration's numbers and the command that reproduces it.
void write_best(TunePage& p) {
  const Json& j = p.block();
  html::Buffer& b = p.b;
  const Json& best = j["ranked"][0];
  const Json& r = best["result"];
  put(b, "<section id=\"best\">\n<h2>The best configuration: ");
  put_text(b, p.outcome.ranked.front().candidate.label(p.outcome.varies_num_gpus));
  put(b, "</h2>\n<div class=\"cards\">\n");
  putf(b, "<div class=\"card\"><div class=\"label\">{}</div>", html_escape(objective_name(p.objective.kind)));
  p.num("div", "ranked[0].objective", p.objective_text(best["objective"].get<double>()), html::kResultBlock,
        "value num");
  putf(b, "<div class=\"sub\">{}</div></div>\n", html_escape(p.unit()));
  put(b, "<div class=\"card\"><div class=\"label\">iteration</div>");
  p.num("div", "ranked[0].result.iteration_time_s", fmt::format("{:.4f} s", number(r, "iteration_time_s")),
        html::kResultBlock, "value num");
  put(b, "</div>\n<div class=\"card\"><div class=\"label\">tokens/s per GPU</div>");
  p.num("div", "ranked[0].result.tokens_per_s_per_gpu", rf::group_digits(number(r, "tokens_per_s_per_gpu")),
        html::kResultBlock, "value num");
  put(b, "</div>\n<div class=\"card\"><div class=\"label\">MFU</div>");
  p.num("div", "ranked[0].result.mfu", rf::percent(number(r, "mfu")), html::kResultBlock, "value num");
  put(b, "</div>\n");
  if (r.contains("memory") && r["memory"].is_object()) {
    put(b, "<div class=\"card\"><div class=\"label\">memory per GPU</div>");
    p.num("div", "ranked[0].result.memory.peak", fmt::format("{:.1f} GiB", number(r, "memory", "peak")),
          html::kResultBlock, "value num");
    put(b, "<div class=\"sub\">of ");
    p.num("span", "ranked[0].result.memory.capacity", fmt::format("{:.1f}", number(r, "memory", "capacity")));
    put(b, " GiB</div></div>\n");
  }
  put(b,
      "</div>\n<p class=\"note\">The same configuration as a run (the --set list of the search, then the "
      "configuration's own settings):</p>\n<pre id=\"best-command\" class=\"command\">trainsim run ");
  put_text(b, shell_word(p.scenario_path));
  const auto overrides = [&](const char* array, const Json& list) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      put(b, " \\\n    --set ");
      p.num("span", fmt::format("{}[{}]", array, i), shell_word(list[i].get<std::string>()), html::kResultBlock, "set");
    }
  };
  overrides("base_overrides", j["base_overrides"]);
  overrides("ranked[0].overrides", best["overrides"]);
  put(b, "</pre>\n</section>\n");
}

// The settings that tell the listed configurations apart, for the bars' labels ("TP 2 DP 4 mbs 1"): the full
// label would not fit beside a bar. Every setting when they are all alike (one configuration listed).
std::vector<std::string> distinguishing_labels(const Json& ranked) {
  static constexpr std::pair<const char*, const char*> kSettings[] = {
      {"num_gpus", "GPUs"},       {"tensor", "TP"},
      {"pipeline", "PP"},         {"data", "DP"},
      {"context", "CP"},          {"expert", "EP"},
      {"virtual_pipeline", "VP"}, {"sequence_parallel", "SP"},
      {"zero_stage", "ZeRO"},     {"micro_batch_size", "mbs"},
      {"recompute", "recompute"}};
  std::vector<bool> differs(std::size(kSettings), false);
  bool any = false;
  for (std::size_t s = 0; s < std::size(kSettings); ++s)
    for (const Json& c : ranked) {
      if (c["configuration"][kSettings[s].first] != ranked[0]["configuration"][kSettings[s].first]) {
        differs[s] = any = true;
        break;
      }
    }
  std::vector<std::string> labels;
  for (const Json& c : ranked) {
    std::string label;
    for (std::size_t s = 0; s < std::size(kSettings); ++s) {
      if (any ? !differs[s] : s == 0) continue;  // GPUs only when they differ
      const Json& v = c["configuration"][kSettings[s].first];
      label += fmt::format("{}{} {}", label.empty() ? "" : " ", kSettings[s].second,
                           v.is_boolean()  ? (v.get<bool>() ? "on" : "off")
                           : v.is_string() ? v.get<std::string>()
                                           : v.dump());
    }
    labels.push_back(std::move(label));
  }
  return labels;
}

void write_chart(TunePage& p) {
  const Json& ranked = p.block()["ranked"];
  const std::vector<std::string> short_labels = distinguishing_labels(ranked);
  svg::BarChart chart;
  chart.id = "tune-chart";
  chart.value_label = fmt::format("{} ({}, {})", objective_name(p.objective.kind), p.unit(),
                                  maximises(p.objective.kind) ? "higher is better" : "lower is better");
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const Json& c = ranked[i];
    svg::Bar bar;
    const std::string label = p.outcome.ranked[i].candidate.label(p.outcome.varies_num_gpus);
    bar.label = fmt::format("#{} {}", i + 1, short_labels[i]);
    bar.value = c["objective"].get<double>();
    bar.value_text = p.objective_text(bar.value);
    bar.attributes = fmt::format(" data-rank=\"{}\"", i + 1) + p.data(fmt::format("ranked[{}].objective", i));
    bar.title = fmt::format("#{} {}: {} {}, {:.4f} s per iteration", i + 1, label, bar.value_text, p.unit(),
                            number(c["result"], "iteration_time_s"));
    bar.highlight = i == 0;
    chart.bars.push_back(std::move(bar));
  }
  html::Buffer& b = p.b;
  putf(b, "<section id=\"ranking\">\n<h2>The {} best configurations</h2>\n", ranked.size());
  put(b, svg::bar_chart(chart));
  put(b,
      "<p class=\"note\">Each bar is labelled with the settings in which the listed configurations differ; hover "
      "it for the whole configuration.</p>\n");
}

void write_table(TunePage& p) {
  const Json& ranked = p.block()["ranked"];
  html::Buffer& b = p.b;
  const bool gpus = p.outcome.varies_num_gpus;
  put(b, "<table id=\"tune-table\" class=\"sortable\">\n<thead><tr><th>rank</th>");
  if (gpus) put(b, "<th>GPUs</th>");
  put(b,
      "<th>TP</th><th>PP</th><th>DP</th><th>CP</th><th>EP</th><th>VP</th><th>SP</th><th>ZeRO</th><th>mbs</th>"
      "<th class=\"l\">recompute</th><th>iter (s)</th><th>tokens/s/GPU</th><th>MFU</th><th>memory GiB</th>");
  putf(b, "<th>{}</th></tr></thead>\n<tbody>\n", html_escape(p.unit()));
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const Json& c = ranked[i];
    const std::string at = fmt::format("ranked[{}].", i);
    put(b, i == 0 ? "<tr class=\"best\">" : "<tr>");
    p.num("td", at + "rank", fmt::format("{}", i + 1));
    const auto setting = [&](const char* key, const char* cls = "num") {
      const Json& v = c["configuration"][key];
      p.num("td", at + "configuration." + key,
            v.is_boolean()  ? (v.get<bool>() ? "on" : "off")
            : v.is_string() ? v.get<std::string>()
                            : v.dump(),
            html::kResultBlock, cls);
    };
    if (gpus) setting("num_gpus");
    for (const char* key : {"tensor", "pipeline", "data", "context", "expert", "virtual_pipeline", "sequence_parallel",
                            "zero_stage", "micro_batch_size"})
      setting(key);
    setting("recompute", "num l");
    const Json& r = c["result"];
    p.num("td", at + "result.iteration_time_s", fmt::format("{:.4g}", number(r, "iteration_time_s")));
    p.num("td", at + "result.tokens_per_s_per_gpu", fmt::format("{:.0f}", number(r, "tokens_per_s_per_gpu")));
    p.num("td", at + "result.mfu", fmt::format("{:.1f}%", 100 * number(r, "mfu")));
    if (r.contains("memory") && r["memory"].is_object()) {
      put(b, "<td>");
      p.num("span", at + "result.memory.peak", fmt::format("{:.1f}", number(r, "memory", "peak")));
      put(b, " / ");
      p.num("span", at + "result.memory.capacity", fmt::format("{:.1f}", number(r, "memory", "capacity")));
      put(b, "</td>");
    } else {
      put(b, "<td>-</td>");
    }
    p.num("td", at + "objective", p.objective_text(c["objective"].get<double>()));
    put(b, "</tr>\n");
  }
  put(b, "</tbody>\n</table>\n");
  const Json& why = p.block()["explanations"];
  if (!why.empty()) {
    put(b,
        "<h2>Why each beats the next</h2>\n<p class=\"note\">The critical rank's time, this one minus the next.</p>"
        "\n<ul id=\"explanations\">\n");
    for (const Json& e : why) {
      put(b, "<li>");
      put_text(b, e["text"].get<std::string>());
      put(b, "</li>\n");
    }
    put(b, "</ul>\n");
  }
  put(b, "</section>\n");
}

// Each rule's count and why it discards (docs/tune.md, "Pruning"), then the failures.
void write_pruning(TunePage& p) {
  const Json& j = p.block();
  html::Buffer& b = p.b;
  put(b,
      "<section id=\"pruning\">\n<h2>Candidates and pruning</h2>\n<table id=\"pruning-table\">\n<thead><tr><th "
      "class=\"l\">candidates</th><th>count</th><th class=\"l\">why</th></tr></thead>\n<tbody>\n");
  const auto row = [&](const char* label, const char* key, const char* why, bool sub = false) {
    putf(b, "<tr{}><td class=\"l\">{}</td>", sub ? " class=\"sub\"" : "", label);
    const std::size_t n = j["counts"][key].get<std::size_t>();
    p.num("td", fmt::format("counts.{}", key), rf::group_digits(static_cast<std::int64_t>(n)));
    put(b, "<td class=\"l wrap\">");
    put(b, why);
    put(b, "</td></tr>\n");
  };
  row("enumerated", "candidates", "every configuration of the space (<code>--space</code>, docs/tune.md)");
  row("TP beyond scale-up", "tp_beyond_scale_up",
      "tensor wider than the scale-up domain: its collectives would cross the scale-out network on every layer "
      "(<code>--allow-tp-beyond-scale-up</code> keeps them)",
      true);
  row("invalid", "invalid",
      "the scenario refuses the configuration (divisibility of heads, layers or the batch, settings the framework "
      "does not support)",
      true);
  row("out of memory", "out_of_memory",
      "the memory model says the worst pipeline stage does not fit: <code>trainsim run</code> would refuse it too",
      true);
  row("dominated", "dominated",
      "a lighter <code>training.recompute</code> of the same configuration fits, and is never slower", true);
  row("simulated", "simulated", "ranked by the objective", true);
  row("stopped before the engine", "bounded",
      "of the simulated: their compute kernels alone are slower than the listed configurations", true);
  row("failed", "failed", "of the simulated: the simulation ended in an error (a bug worth reporting)", true);
  put(b, "</tbody>\n</table>\n");
  if (j.contains("first_failure")) {
    put(b, "<p class=\"bad\" id=\"first-failure\">The first failed simulation: ");
    put_text(b, j["first_failure"].get<std::string>());
    put(b, "</p>\n");
  }
  if (p.outcome.ranked.empty()) {
    put(b, "<p class=\"bad\" id=\"nothing-ranked\">Nothing was ranked: ");
    put_text(b, tune_nothing_ranked_message(p.outcome));
    put(b, "</p>\n");
  }
  if (j.contains("closest_out_of_memory")) {
    put(b, "<p class=\"note\" id=\"closest-miss\">The closest to fitting, ");
    put_text(b, p.outcome.closest_miss->candidate.label(p.outcome.varies_num_gpus));
    put(b, ", needs ");
    p.num("span", "closest_out_of_memory.peak_gib", fmt::format("{:.2f}", p.outcome.closest_miss->peak_gib));
    put(b, " GiB per GPU of ");
    p.num("span", "closest_out_of_memory.capacity_gib", fmt::format("{:.2f}", p.outcome.closest_miss->capacity_gib));
    put(b, " GiB.</p>\n");
  }
  put(b, "</section>\n");
}

}  // namespace

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_./=:,+-@%") == std::string::npos;
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string render_tune_html(const TuneOutcome& outcome, const Objective& objective, std::size_t top,
                             const std::string& scenario_path) {
  TunePage p(outcome, objective, top, scenario_path);
  p.begin("trainsim tune: " + outcome.scenario);
  write_header(p);
  if (!p.block()["ranked"].empty()) {
    write_best(p);
    write_chart(p);
    write_table(p);
  }
  write_pruning(p);
  return p.finish("The search as JSON (the same as <code>trainsim tune --json</code>)");
}

}  // namespace trainsim::explore
