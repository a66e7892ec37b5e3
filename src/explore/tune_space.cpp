#include "explore/tune_space.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim::explore {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    parts.push_back(trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string searchable_keys() {
  std::string out;
  for (TuneDim d : tune_dims()) out += (out.empty() ? "" : ", ") + std::string(tune_key(d));
  return out;
}

// One value of dimension `d` from its text; nullopt when malformed or out of range.
std::optional<int> parse_value(TuneDim d, const std::string& text) {
  if (d == TuneDim::SequenceParallel) {
    if (text == "true") return 1;
    if (text == "false") return 0;
    return std::nullopt;
  }
  if (d == TuneDim::Recompute) {
    if (text == "none") return static_cast<int>(RecomputeGranularity::None);
    if (text == "selective") return static_cast<int>(RecomputeGranularity::Selective);
    if (text == "full") return static_cast<int>(RecomputeGranularity::Full);
    return std::nullopt;
  }
  int v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  if (d == TuneDim::ZeroStage) return v >= 0 && v <= 3 ? std::optional<int>(v) : std::nullopt;
  return v > 0 ? std::optional<int>(v) : std::nullopt;
}

const char* expected_values(TuneDim d) {
  switch (d) {
    case TuneDim::SequenceParallel: return "true or false";
    case TuneDim::Recompute: return "none, selective or full";
    case TuneDim::ZeroStage: return "0, 1, 2 or 3";
    default: return "positive integers";
  }
}

bool divides(std::int64_t divisor, std::int64_t value) { return divisor > 0 && value % divisor == 0; }

}  // namespace

const std::array<TuneDim, kTuneDims>& tune_dims() {
  static const std::array<TuneDim, kTuneDims> dims = {
      TuneDim::NumGpus,        TuneDim::Tensor,          TuneDim::Context,          TuneDim::Pipeline,
      TuneDim::Expert,         TuneDim::VirtualPipeline, TuneDim::SequenceParallel, TuneDim::ZeroStage,
      TuneDim::MicroBatchSize, TuneDim::Recompute};
  return dims;
}

const char* tune_key(TuneDim d) {
  switch (d) {
    case TuneDim::NumGpus: return "cluster.num_gpus";
    case TuneDim::Tensor: return "parallelism.tensor";
    case TuneDim::Context: return "parallelism.context";
    case TuneDim::Pipeline: return "parallelism.pipeline";
    case TuneDim::Expert: return "parallelism.expert";
    case TuneDim::VirtualPipeline: return "parallelism.virtual_pipeline";
    case TuneDim::SequenceParallel: return "parallelism.sequence_parallel";
    case TuneDim::ZeroStage: return "parallelism.zero_stage";
    case TuneDim::MicroBatchSize: return "training.micro_batch_size";
    case TuneDim::Recompute: return "training.recompute";
  }
  return "";
}

std::optional<TuneDim> find_tune_dim(const std::string& key) {
  for (TuneDim d : tune_dims()) {
    const std::string full = tune_key(d);
    if (key == full || key == full.substr(full.find('.') + 1)) return d;
  }
  return std::nullopt;
}

std::string format_value(TuneDim d, int value) {
  if (d == TuneDim::SequenceParallel) return value ? "true" : "false";
  if (d == TuneDim::Recompute) return to_string(static_cast<RecomputeGranularity>(value));
  return std::to_string(value);
}

void add_space_values(SpaceSpec& spec, const std::string& text, const std::string& flag) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos)
    throw Error(fmt::format("{} '{}': expected key=v1,v2,... (searchable keys: {})", flag, text, searchable_keys()));
  const std::string key = trim(text.substr(0, eq));
  if (key == "parallelism.data" || key == "data")
    throw Error(
        fmt::format("{} {}: tune never searches parallelism.data; it is always num_gpus / (tensor x "
                    "pipeline x context). Search cluster.num_gpus or the other keys instead",
                    flag, key));
  const std::optional<TuneDim> dim = find_tune_dim(key);
  if (!dim)
    throw Error(fmt::format("{} '{}': unknown key '{}'; searchable keys: {}", flag, text, key, searchable_keys()));
  if (spec.given.count(*dim))
    throw Error(
        fmt::format("{} {}: the key is given twice (by --space or --set); give its values once", flag, tune_key(*dim)));
  std::vector<int> values;
  for (const std::string& token : split_commas(text.substr(eq + 1))) {
    const std::optional<int> v = parse_value(*dim, token);
    if (!v)
      throw Error(fmt::format("{} {}: '{}' is not a valid value; expected {}", flag, tune_key(*dim), token,
                              expected_values(*dim)));
    values.push_back(*v);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  spec.given[*dim] = std::move(values);
}

std::vector<std::string> absorb_pinned_overrides(SpaceSpec& spec, const std::vector<std::string>& sets) {
  std::vector<std::string> pass;
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    const std::string key = eq == std::string::npos ? "" : trim(set.substr(0, eq));
    if (key == "parallelism.data")
      throw Error(
          "--set parallelism.data: tune derives data as num_gpus / (tensor x pipeline x context) at every "
          "point; remove it (pin cluster.num_gpus or the other keys instead)");
    if (key == "parallelism.first_stage_layers" || key == "parallelism.last_stage_layers" ||
        key == "training.recompute_num_layers")
      throw Error(
          fmt::format("--set {}: tune searches pipeline sizes and recompute, so per-stage settings cannot be "
                      "kept; remove it (tune uses even splits and recomputes every layer of a stage)",
                      key));
    // Only full keys pin: `--set` takes scenario key paths, as in `trainsim run`.
    const std::optional<TuneDim> dim = find_tune_dim(key);
    if (dim && key == tune_key(*dim))
      add_space_values(spec, set, "--set");
    else
      pass.push_back(set);
  }
  return pass;
}

SpaceBasis space_basis(const Scenario& base) {
  SpaceBasis b;
  b.num_gpus = base.cluster.num_gpus;
  b.num_layers = base.model.num_layers;
  b.heads = base.model.num_attention_heads;
  b.query_groups = base.model.num_query_groups;
  b.seq_length = base.model.seq_length;
  b.num_experts = base.model.moe.enabled() ? base.model.moe.num_experts : 0;
  b.global_batch_size = base.training.global_batch_size;
  b.scale_up_domain = base.cluster.scale_up.domain_size;
  b.framework = base.parallelism.framework;
  b.reset_stage_keys = base.parallelism.first_stage_layers || base.parallelism.last_stage_layers ||
                       !base.training.recompute_num_layers.empty();
  return b;
}

int TuneCandidate::value(TuneDim d) const {
  switch (d) {
    case TuneDim::NumGpus: return num_gpus;
    case TuneDim::Tensor: return tensor;
    case TuneDim::Context: return context;
    case TuneDim::Pipeline: return pipeline;
    case TuneDim::Expert: return expert;
    case TuneDim::VirtualPipeline: return virtual_pipeline;
    case TuneDim::SequenceParallel: return sequence_parallel ? 1 : 0;
    case TuneDim::ZeroStage: return zero_stage;
    case TuneDim::MicroBatchSize: return micro_batch_size;
    case TuneDim::Recompute: return static_cast<int>(recompute);
  }
  return 0;
}

std::array<int, kTuneDims> TuneCandidate::key() const {
  std::array<int, kTuneDims> k{};
  for (std::size_t i = 0; i < kTuneDims; ++i) k[i] = value(tune_dims()[i]);
  return k;
}

std::vector<std::string> TuneCandidate::overrides(bool reset_stage_keys) const {
  std::vector<std::string> out;
  for (TuneDim d : tune_dims()) {
    out.push_back(fmt::format("{}={}", tune_key(d), format_value(d, value(d))));
    // Explicit, so that a `data:` in the scenario file cannot disagree with the searched sizes.
    if (d == TuneDim::Pipeline)
      out.push_back(data > 0 ? fmt::format("parallelism.data={}", data) : "parallelism.data=null");
  }
  if (reset_stage_keys) {
    out.emplace_back("parallelism.first_stage_layers=null");
    out.emplace_back("parallelism.last_stage_layers=null");
    out.emplace_back("training.recompute_num_layers=null");
  }
  return out;
}

std::string TuneCandidate::label(bool with_gpus) const {
  return fmt::format("{}TP {} PP {} DP {} CP {} EP {} VP {} SP {} ZeRO {} mbs {} recompute {}",
                     with_gpus ? fmt::format("GPUs {} ", num_gpus) : "", tensor, pipeline, data, context, expert,
                     virtual_pipeline, sequence_parallel ? "on" : "off", zero_stage, micro_batch_size,
                     to_string(recompute));
}

bool key_less(const TuneCandidate& a, const TuneCandidate& b) { return a.key() < b.key(); }

bool same_but_recompute(const TuneCandidate& a, const TuneCandidate& b) {
  for (TuneDim d : tune_dims())
    if (d != TuneDim::Recompute && a.value(d) != b.value(d)) return false;
  return true;
}

namespace {

// The default lists (docs/tune.md, "The space"). Each takes what it depends on.
struct Defaults {
  const SpaceBasis& b;

  // Powers of two dividing the heads and the query groups (Megatron splits both over TP) and the GPUs.
  // Those beyond the scale-up domain stay in the list: pruning counts them.
  std::vector<int> tensor(int gpus) const {
    std::vector<int> out;
    for (std::int64_t t = 1; t <= gpus; t *= 2)
      if (divides(t, b.heads) && divides(t, b.query_groups) && divides(t, gpus)) out.push_back(static_cast<int>(t));
    return out;
  }
  // Context parallelism pays off only for long sequences: 1, and from 32K tokens also 2, 4, 8 where
  // load-balanced CP can cut the sequence into 2c chunks.
  std::vector<int> context(int gpus, int t) const {
    std::vector<int> out = {1};
    if (b.seq_length < 32768) return out;
    for (int c : {2, 4, 8})
      if (divides(2 * c, b.seq_length) && divides(static_cast<std::int64_t>(t) * c, gpus)) out.push_back(c);
    return out;
  }
  // Divisors of the layers (even stages) that leave an integer data-parallel size.
  std::vector<int> pipeline(int gpus, int t, int c) const {
    std::vector<int> out;
    for (int p = 1; p <= b.num_layers; ++p)
      if (divides(p, b.num_layers) && divides(static_cast<std::int64_t>(t) * c * p, gpus)) out.push_back(p);
    return out;
  }
  // Divisors of the experts that divide the data x context ranks (Megatron carves EP out of them).
  std::vector<int> expert(int data, int c) const {
    if (b.num_experts <= 0 || data <= 0) return {1};
    std::vector<int> out;
    for (int e = 1; e <= b.num_experts; ++e)
      if (divides(e, b.num_experts) && divides(e, static_cast<std::int64_t>(data) * c)) out.push_back(e);
    return out;
  }
  // 1, and with a pipeline up to three interleaving depths that split the stage's layers evenly.
  std::vector<int> virtual_pipeline(int p) const {
    std::vector<int> out = {1};
    if (p <= 1) return out;
    for (int v = 2; out.size() < 4 && static_cast<std::int64_t>(p) * v <= b.num_layers; ++v)
      if (divides(static_cast<std::int64_t>(p) * v, b.num_layers)) out.push_back(v);
    return out;
  }
  std::vector<int> zero_stage() const {
    switch (b.framework) {
      case Framework::Megatron: return {0, 1};  // 1 = distributed optimizer
      case Framework::DeepSpeed: return {0, 1, 2, 3};
      case Framework::FSDP: return {2, 3};  // SHARD_GRAD_OP, FULL_SHARD
    }
    return {0};
  }
  // Powers of two up to 8 that divide the sequences of one data-parallel rank.
  std::vector<int> micro_batch(int data) const {
    if (data <= 0 || !divides(data, b.global_batch_size)) return {1};
    const std::int64_t per_rank = b.global_batch_size / data;
    std::vector<int> out;
    for (int m : {1, 2, 4, 8})
      if (divides(m, per_rank)) out.push_back(m);
    return out;
  }
};

}  // namespace

std::vector<TuneCandidate> enumerate_candidates(const SpaceBasis& basis, const SpaceSpec& spec) {
  const Defaults def{basis};
  const auto pick = [&](TuneDim d, std::vector<int> defaults) {
    const auto it = spec.given.find(d);
    return it != spec.given.end() ? it->second : defaults;
  };
  std::vector<TuneCandidate> out;
  TuneCandidate c;
  for (int g : pick(TuneDim::NumGpus, {basis.num_gpus})) {
    c.num_gpus = g;
    for (int t : pick(TuneDim::Tensor, def.tensor(g))) {
      c.tensor = t;
      for (int cp : pick(TuneDim::Context, def.context(g, t))) {
        c.context = cp;
        for (int p : pick(TuneDim::Pipeline, def.pipeline(g, t, cp))) {
          c.pipeline = p;
          const std::int64_t model_parallel = static_cast<std::int64_t>(t) * cp * p;
          c.data = divides(model_parallel, g) ? static_cast<int>(g / model_parallel) : 0;
          for (int e : pick(TuneDim::Expert, def.expert(c.data, cp))) {
            c.expert = e;
            for (int v : pick(TuneDim::VirtualPipeline, def.virtual_pipeline(p))) {
              c.virtual_pipeline = v;
              // Megatron turns sequence parallelism off at tensor 1, so there it is one value whatever the list.
              const std::vector<int> sp_values = t == 1 ? std::vector<int>{0} : pick(TuneDim::SequenceParallel, {1});
              for (int sp : sp_values) {
                c.sequence_parallel = sp != 0;
                for (int z : pick(TuneDim::ZeroStage, def.zero_stage())) {
                  c.zero_stage = z;
                  for (int m : pick(TuneDim::MicroBatchSize, def.micro_batch(c.data))) {
                    c.micro_batch_size = m;
                    for (int r : pick(TuneDim::Recompute, {0, 1, 2})) {
                      c.recompute = static_cast<RecomputeGranularity>(r);
                      out.push_back(c);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace trainsim::explore
