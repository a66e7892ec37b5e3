// `trainsim validate` on a terminal: case | gpu | confidence | field | measured | simulated | error,
// one line per reference field (the headline field marked '*'), failed cases with their message,
// then bias, median and p90 |headline error| overall, per group, per GPU generation and per GPU.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "report/format_utils.hpp"
#include "report/validation_report.hpp"

namespace trainsim {

namespace {

using report_format::abs_percent;
using report_format::compact_number;
using report_format::signed_percent;

void write_summary_rows(fmt::memory_buffer& buf, const char* title,
                        const std::map<std::string, ValidationSummary>& by) {
  std::size_t w = std::string_view(title).size();
  for (const auto& [name, s] : by) w = std::max(w, name.size());
  fmt::format_to(std::back_inserter(buf), "  {:<{}}  {:>6}  {:>9}  {:>6}  {:>7}  {:>12}  {:>9}\n", title, w, "cases",
                 "simulated", "failed", "bias", "median |err|", "p90 |err|");
  for (const auto& [name, s] : by) {
    const bool any = s.samples > 0;
    fmt::format_to(std::back_inserter(buf), "  {:<{}}  {:>6}  {:>9}  {:>6}  {:>7}  {:>12}  {:>9}\n", name, w, s.cases,
                   s.simulated, s.failed, any ? signed_percent(s.bias) : "-",
                   any ? abs_percent(s.median_abs_error) : "-", any ? abs_percent(s.p90_abs_error) : "-");
  }
}

}  // namespace

void write_validation_table(std::ostream& out, const std::vector<ValidationCase>& cases) {
  fmt::memory_buffer buf;
  auto put = std::back_inserter(buf);

  std::size_t name_w = 4, gpu_w = 3, conf_w = 10, field_w = 6;
  for (const ValidationCase& c : cases) {
    name_w = std::max(name_w, c.name.size());
    gpu_w = std::max(gpu_w, c.gpu.size());
    conf_w = std::max(conf_w, c.confidence.size());
    for (const ValidationField& f : c.fields) field_w = std::max(field_w, f.field.size() + 1);  // +1 for '*'
  }

  fmt::format_to(put, "{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>8}\n", "case", name_w, "gpu", gpu_w,
                 "confidence", conf_w, "field", field_w, "measured", "simulated", "error");
  std::vector<const ValidationCase*> failed;
  for (const ValidationCase& c : cases) {
    if (!c.error.empty()) {
      failed.push_back(&c);
      continue;
    }
    const ValidationField* headline = c.headline();
    bool first = true;
    for (const ValidationField& f : c.fields) {
      const std::string field = (&f == headline ? "*" : " ") + f.field;
      fmt::format_to(put, "{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>8}\n", first ? c.name : "", name_w,
                     first ? c.gpu : "", gpu_w, first ? c.confidence : "", conf_w, field, field_w,
                     compact_number(f.measured), compact_number(f.simulated), signed_percent(f.error()));
      first = false;
    }
    if (first) {  // simulated, but the case carries no reference number to compare with
      fmt::format_to(put, "{:<{}}  {:<{}}  {:<{}}  (no reference fields)\n", c.name, name_w, c.gpu, gpu_w, c.confidence,
                     conf_w);
    }
  }
  fmt::format_to(put,
                 "(* = headline field: the first present of iteration_time_s, tflops_per_gpu, mfu, hfu, "
                 "tokens_per_s_per_gpu, busbw_GBps; error = (simulated - measured) / measured)\n");

  std::vector<const ValidationCase*> over_memory;
  for (const ValidationCase& c : cases)
    if (c.error.empty() && c.over_memory()) over_memory.push_back(&c);
  if (!over_memory.empty()) {
    fmt::format_to(put, "\nOver trainsim's memory model, simulated anyway (the measured runs fit) ({}):\n",
                   over_memory.size());
    for (const ValidationCase* c : over_memory)
      fmt::format_to(put, "  {} ({}): {}\n", c->name, c->gpu, c->memory_note());
  }

  if (!failed.empty()) {
    fmt::format_to(put, "\nFailed cases ({}):\n", failed.size());
    for (const ValidationCase* c : failed) fmt::format_to(put, "  {} ({}): {}\n", c->name, c->gpu, c->error);
  }

  const ValidationSummary s = summarize(cases);
  fmt::format_to(put, "\nSummary: {} cases, {} simulated, {} failed; headline |error| median {}, p90 {}; bias {}\n",
                 s.cases, s.simulated, s.failed, s.samples > 0 ? abs_percent(s.median_abs_error) : "-",
                 s.samples > 0 ? abs_percent(s.p90_abs_error) : "-", s.samples > 0 ? signed_percent(s.bias) : "-");
  fmt::format_to(put,
                 "(bias = signed median of the headline error as an iteration-time error: negative = simulated "
                 "faster than measured)\n\n");
  write_summary_rows(buf, "group", summarize_by_group(cases));
  buf.push_back('\n');
  write_summary_rows(buf, "generation", summarize_by_generation(cases));
  buf.push_back('\n');
  write_summary_rows(buf, "GPU", summarize_by_gpu(cases));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace trainsim
