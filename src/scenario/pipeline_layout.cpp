// parallelism.pipeline_layout: Megatron-LM's --pipeline-model-parallel-layout, parsed and checked as
// megatron/core/transformer/pipeline_parallel_layer_layout.py does (PipelineParallelLayerLayout.parse_str_to_list,
// __init__ and validate_layer_layout), with errors that say where the text is wrong.
//
// Syntax (Megatron's): E embedding, t decoder layer, m MTP layer, L output layer + loss, '|' between (virtual)
// pipeline stages, "(...)*n" repeats a group (one level: Megatron's regex does not nest), "X*n" repeats one
// character (any of the above, '|' included), commas are cosmetic and ignored.
//
// Order (Megatron's __init__): the list has pipeline x virtual_pipeline entries; entry i is model chunk
// i / pipeline of pipeline rank i % pipeline, so reading the list left to right walks the layers in their global
// order (chunk 0 of every rank, then chunk 1, ...), the same order as Megatron's layer offsets.
#include <algorithm>

#include "core/error.hpp"
#include "scenario/validation.hpp"

namespace trainsim::scenario_detail {

namespace {

constexpr const char* kKey = "parallelism.pipeline_layout";
// Far beyond any real layout (Megatron's largest recipes have a few hundred entries); stops "t*99999999999".
constexpr std::size_t kMaxExpanded = 1 << 20;

bool is_layer_char(char c) { return c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|'; }

class LayoutParser {
 public:
  LayoutParser(const Scenario& s, const std::string& text) : s_(s), text_(text) {}

  std::string expand() {
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ',') {  // "purely cosmetic commas" (parse_str_to_list)
        ++pos_;
      } else if (c == '(') {
        const std::size_t open = pos_++;
        std::string group;
        while (pos_ < text_.size() && text_[pos_] != ')') {
          const char g = text_[pos_];
          if (g == '(') fail(pos_, "nested parentheses are not supported (Megatron expands one level of (...)*n)");
          if (g == ',') {
            ++pos_;
            continue;
          }
          if (!is_layer_char(g)) fail_char(pos_);
          group += g;
          ++pos_;
          group = repeat_last(group);
        }
        if (pos_ >= text_.size()) fail(open, "'(' is never closed");
        if (group.empty()) fail(open, "empty group '()'");
        ++pos_;  // ')'
        if (pos_ >= text_.size() || text_[pos_] != '*')
          fail(open, "a group (...) must be followed by *n (a repeat count)");
        append(out, group, count_after_star());
      } else if (c == ')') {
        fail(pos_, "')' without a matching '('");
      } else if (c == '*') {
        fail(pos_, "'*' must follow a layer character (E, t, m, L, |) or a group (...)");
      } else if (is_layer_char(c)) {
        out += c;
        ++pos_;
        out = repeat_last(out);
      } else {
        fail_char(pos_);
      }
      if (out.size() > kMaxExpanded) fail(pos_ - 1, "expands to more than " + str(kMaxExpanded) + " entries");
    }
    return out;
  }

 private:
  // "X*n" right after a character: replace the last character by n copies of it.
  std::string repeat_last(std::string s) {
    if (pos_ >= text_.size() || text_[pos_] != '*') return s;
    const char last = s.back();
    s.pop_back();
    append(s, std::string(1, last), count_after_star());
    return s;
  }

  // At a '*': the decimal count that follows it.
  std::size_t count_after_star() {
    const std::size_t star = pos_++;
    std::size_t n = 0;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      n = n * 10 + static_cast<std::size_t>(text_[pos_] - '0');
      if (n > kMaxExpanded) fail(start, "repeat count is too large");
      ++pos_;
    }
    if (pos_ == start) fail(star, "'*' must be followed by a repeat count (digits)");
    return n;
  }

  void append(std::string& out, const std::string& group, std::size_t n) {
    if (group.size() * n > kMaxExpanded) fail(pos_ - 1, "expands to more than " + str(kMaxExpanded) + " entries");
    for (std::size_t i = 0; i < n; ++i) out += group;
  }

  [[noreturn]] void fail_char(std::size_t at) {
    fail(at, std::string("unknown character '") + text_[at] +
                 "'; known: E (embedding), t (decoder layer), m (MTP layer), L (output layer + loss), | (between "
                 "stages), (...)*n and X*n (repeats), ',' (ignored)");
  }
  [[noreturn]] void fail(std::size_t at, const std::string& message) {
    throw ScenarioError(s_.file, kKey,
                        "\"" + text_ + "\" at character " + str(static_cast<std::int64_t>(at + 1)) + ": " + message);
  }

  const Scenario& s_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> parse_pipeline_layout(const Scenario& s) {
  const ParallelSpec& p = s.parallelism;
  const std::string& text = *p.pipeline_layout;
  const auto fail = [&](const std::string& message) -> void { throw ScenarioError(s.file, kKey, message); };
  if (p.first_stage_layers || p.last_stage_layers || p.account_for_embedding_in_pipeline_split ||
      p.account_for_loss_in_pipeline_split)
    fail(
        "pipeline_layout cannot be combined with first_stage_layers, last_stage_layers or "
        "account_for_embedding/loss_in_pipeline_split (Megatron: \"pipeline_model_parallel_layout cannot be set with "
        "other pipeline layout arguments\"); the layout places every layer itself");

  const std::string expanded = LayoutParser(s, text).expand();
  std::vector<std::string> stages(1);
  for (char c : expanded) {
    if (c == '|')
      stages.emplace_back();
    else
      stages.back() += c;
  }

  // Number of stages: pipeline x virtual_pipeline (Megatron derives the virtual size from it; a stated
  // virtual_pipeline must agree).
  const auto n = static_cast<std::int64_t>(stages.size());
  const std::string count = "pipeline_layout has " + str(n) + " stage" + (n == 1 ? "" : "s") + " (separated by '|')";
  if (n % p.pipeline != 0)
    fail(count + ", not a multiple of parallelism.pipeline " + str(p.pipeline) +
         "; it needs pipeline x virtual_pipeline entries");
  const std::int64_t v = n / p.pipeline;
  if (p.virtual_pipeline_given && v != p.virtual_pipeline)
    fail(count + ", but pipeline " + str(p.pipeline) + " x virtual_pipeline " + str(p.virtual_pipeline) + " = " +
         str(static_cast<std::int64_t>(p.pipeline) * p.virtual_pipeline) + " model chunks need that many");

  // validate_layer_layout: E first and once, L last and once, the layer counts, MTP placement.
  const auto total = [&](char c) { return std::count(expanded.begin(), expanded.end(), c); };
  std::string flat;
  for (const auto& st : stages) flat += st;
  if (flat.empty() || flat.front() != 'E')
    fail(std::string("the first layer must be E (the embedding), got ") +
         (flat.empty() ? "nothing" : std::string("'") + flat.front() + "'"));
  if (flat.back() != 'L')
    fail(std::string("the last layer must be L (the output layer + loss), got '") + flat.back() + "'");
  if (total('E') != 1) fail("E (the embedding) appears " + str(total('E')) + " times; it must appear exactly once");
  if (total('L') != 1)
    fail("L (the output layer + loss) appears " + str(total('L')) + " times; it must appear exactly once");
  if (total('t') != s.model.num_layers)
    fail("pipeline_layout has " + str(total('t')) + " decoder layers (t), but model.num_layers is " +
         str(s.model.num_layers));
  if (total('m') != s.model.mtp_layers)
    fail("pipeline_layout has " + str(total('m')) + " MTP layers (m), but model.mtp_layers is " +
         str(s.model.mtp_layers));
  if (const auto first_m = flat.find('m'); first_m != std::string::npos && flat.find('t', first_m) != std::string::npos)
    fail("decoder layers (t) must all come before the MTP layers (m)");
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& st = stages[static_cast<std::size_t>(i)];
    if (st.find('m') == std::string::npos) continue;
    const std::int64_t rank = i % p.pipeline, chunk = i / p.pipeline;
    if (chunk != v - 1)
      fail("stage " + str(i) + " (model chunk " + str(chunk) + " of pipeline rank " + str(rank) +
           ") holds MTP layers; Megatron places MTP only in the last virtual pipeline chunk of a rank (chunk " +
           str(v - 1) + ")");
    if (std::count(st.begin(), st.end(), 'm') != s.model.mtp_layers)
      fail("the MTP layers (m) are split over several stages; Megatron needs them all in one stage");
  }
  return stages;
}

}  // namespace trainsim::scenario_detail
