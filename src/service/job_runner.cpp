#include "service/job_runner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "trainsim/errors.hpp"
#include "trainsim/explore.hpp"
#include "trainsim/memory.hpp"
#include "trainsim/plan.hpp"
#include "trainsim/report.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::service {

namespace {

using json = nlohmann::json;

// The options each command takes, by their Python keyword names (docs/python.md), and what kind of value.
enum class Kind { Bool, Int, Number, String, Strings };
struct OptionSpec {
  const char* name;
  Kind kind;
};
const std::vector<OptionSpec>& options_of(const std::string& command) {
  static const std::vector<OptionSpec> run{
      {"per_rank", Kind::Bool}, {"allow_oom", Kind::Bool}, {"explain", Kind::Bool}, {"trace", Kind::Bool}};
  static const std::vector<OptionSpec> memory{{"allow_oom", Kind::Bool}};
  static const std::vector<OptionSpec> nccl_test{
      {"op", Kind::String},        {"minbytes", Kind::String}, {"maxbytes", Kind::String}, {"stepfactor", Kind::Number},
      {"stepbytes", Kind::String}, {"datatype", Kind::String}, {"redop", Kind::String},    {"root", Kind::Int},
      {"gpus", Kind::Int},         {"agg_iters", Kind::Int}};
  static const std::vector<OptionSpec> sweep{{"vary", Kind::Strings},   {"zip", Kind::Strings},
                                             {"allow_oom", Kind::Bool}, {"objective", Kind::String},
                                             {"tokens", Kind::String},  {"gpu_hour_price", Kind::Number}};
  static const std::vector<OptionSpec> tune{{"space", Kind::Strings},    {"top", Kind::Int},
                                            {"objective", Kind::String}, {"gpu_hour_price", Kind::Number},
                                            {"tokens", Kind::String},    {"allow_tp_beyond_scale_up", Kind::Bool}};
  static const std::vector<OptionSpec> plan{{"tokens", Kind::String},
                                            {"iterations", Kind::String},
                                            {"days", Kind::String},
                                            {"trials", Kind::Int},
                                            {"seed", Kind::Int}};
  if (command == "run") return run;
  if (command == "memory") return memory;
  if (command == "nccl-test") return nccl_test;
  if (command == "sweep") return sweep;
  if (command == "tune") return tune;
  return plan;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Bool: return "true or false";
    case Kind::Int: return "an integer";
    case Kind::Number: return "a number";
    case Kind::String: return "a string";
    case Kind::Strings: return "a list of strings";
  }
  return "?";
}

bool has_kind(const json& v, Kind k) {
  switch (k) {
    case Kind::Bool: return v.is_boolean();
    case Kind::Int: return v.is_number_integer();
    case Kind::Number: return v.is_number();
    case Kind::String: return v.is_string() || v.is_number();  // "15T" or 15e12
    case Kind::Strings:
      return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); });
  }
  return false;
}

// Typed readers of a checked options object.
bool flag(const json& o, const char* name) { return o.contains(name) && o.at(name).get<bool>(); }
std::optional<std::string> text(const json& o, const char* name) {
  if (!o.contains(name)) return std::nullopt;
  const json& v = o.at(name);
  return v.is_string() ? v.get<std::string>() : v.dump();
}
std::vector<std::string> strings(const json& o, const char* name) {
  return o.contains(name) ? o.at(name).get<std::vector<std::string>>() : std::vector<std::string>{};
}
template <class T>
T number(const json& o, const char* name, T fallback) {
  return o.contains(name) ? o.at(name).get<T>() : fallback;
}

void check_options(const JobRequest& r) {
  if (!r.options.is_object()) throw ScenarioError("", "options", "expected an object of the command's options");
  const auto& specs = options_of(r.command);
  for (const auto& [name, value] : r.options.items()) {
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return name == s.name; });
    if (it == specs.end()) {
      std::string known;
      for (const auto& s : specs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      throw ScenarioError("", "options." + name,
                          "not an option of " + r.command + " (its options: " + (known.empty() ? "none" : known) + ")");
    }
    if (!has_kind(value, it->kind))
      throw ScenarioError("", "options." + name, std::string("expected ") + kind_name(it->kind));
  }
  if (r.command == "plan") {
    const int targets = static_cast<int>(r.options.contains("tokens")) + static_cast<int>(r.options.contains("days")) +
                        static_cast<int>(r.options.contains("iterations"));
    if (targets != 1)
      throw ScenarioError("", "options.tokens",
                          "plan needs exactly one of options.tokens, options.iterations, options.days");
  }
  if (r.command == "sweep" && strings(r.options, "vary").empty() && strings(r.options, "zip").empty())
    throw ScenarioError("", "options.vary", "a sweep needs at least one axis: options.vary (or options.zip)");
}

// What a scenario key does with a file, from the key table (type "path"; those under output. write) and NCCL's
// variables (NCCL_*_FILE; the *_DUMP_FILE ones write): a key declared later is covered without a change here.
enum class FileUse { None, Reads, Writes };
FileUse file_use(const std::string& path) {
  if (path.starts_with("nccl.NCCL_") && path.ends_with("_FILE"))
    return path.find("DUMP") != std::string::npos ? FileUse::Writes : FileUse::Reads;
  const ScenarioKey* key = find_scenario_key(path);
  if (!key || key->type != "path") return FileUse::None;
  return path.starts_with("output.") ? FileUse::Writes : FileUse::Reads;
}

// A scenario served from a shared machine reads only the server's uploaded files and writes nothing: a key that
// reads a file must name an upload (a bare file name, resolved beside the scenario in the server's files
// directory), and a key that writes one is refused.
void check_file_keys(const YAML::Node& node, const std::string& path, const std::string& label) {
  if (node.IsMap()) {
    for (const auto& kv : node)
      check_file_keys(kv.second, path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar(), label);
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) check_file_keys(node[i], path + "[" + std::to_string(i) + "]", label);
  } else if (node.IsScalar()) {
    static const std::regex bare_name(R"([A-Za-z0-9_][A-Za-z0-9_.\-]{0,127})");
    switch (file_use(path)) {
      case FileUse::None: break;
      case FileUse::Writes: throw ScenarioError(label, path, "the server writes no files: leave it out");
      case FileUse::Reads:
        if (!std::regex_match(node.Scalar(), bare_name) || node.Scalar().find("..") != std::string::npos)
          throw ScenarioError(label, path,
                              "on the server a file is named by its upload name (POST /api/files), without "
                              "directories; got '" +
                                  node.Scalar() + "'");
        // Files resolve beside the scenario (the server's files directory): one never uploaded is refused now, not
        // when the job runs.
        if (const std::filesystem::path dir = std::filesystem::path(label).parent_path();
            !dir.empty() && !std::filesystem::exists(dir / node.Scalar()))
          throw ScenarioError(label, path,
                              "no uploaded file '" + node.Scalar() +
                                  "': upload it first (POST /api/files) and name it "
                                  "by the name the upload returns");
    }
  }
}

void check_paths(const JobRequest& r) {
  YAML::Node root;
  try {
    root = YAML::Load(r.scenario);
  } catch (const YAML::Exception&) {
    return;  // load_scenario says what is wrong, with the line
  }
  check_file_keys(scenario_detail::apply_overrides(root, r.overrides), "", r.label);
}

ScenarioSource source_of(const JobRequest& r) { return ScenarioSource::from_text(r.scenario, r.label); }

ScenarioNeeds needs_of(const std::string& command) {
  return command == "nccl-test" ? ScenarioNeeds::ClusterOnly : ScenarioNeeds::Job;
}

void check_limits(const Scenario& s, const JobRequest& r, const JobLimits& limits) {
  if (limits.max_gpus > 0 && s.cluster.num_gpus > limits.max_gpus)
    throw ScenarioError(
        r.label, "cluster.num_gpus",
        fmt::format("{} GPUs is more than this server simulates ({} at most)", s.cluster.num_gpus, limits.max_gpus));
  if (limits.max_ops > 0 && (s.simulation.max_ops == 0 || s.simulation.max_ops > limits.max_ops))
    throw ScenarioError(
        r.label, "simulation.max_ops",
        fmt::format("this server refuses runs above {} ops; leave simulation.max_ops at most that", limits.max_ops));
}

std::int64_t size_option(const json& o, const char* name, std::int64_t fallback) {
  const auto t = text(o, name);
  if (!t) return fallback;
  const auto bytes = parse_byte_size(*t);
  if (!bytes)
    throw ScenarioError(
        "", std::string("options.") + name,
        "'" + *t + "' is not a size: bytes with an optional K, M or G (powers of 1024), e.g. 8, 64K, 8G");
  return *bytes;
}

NcclTestOptions nccl_test_options(const Scenario& s, const json& o) {
  NcclTestOptions n;
  if (const auto op = text(o, "op")) {
    const auto parsed = parse_collective_op(*op);
    if (!parsed)
      throw ScenarioError(
          "", "options.op",
          "unknown collective '" + *op +
              "'; valid: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv");
    n.op = *parsed;
  } else if (s.collective) {
    n.op = s.collective->op;
  }
  n.min_bytes = size_option(o, "minbytes", 8);
  n.max_bytes = size_option(o, "maxbytes", n.min_bytes);
  n.factor = number<double>(o, "stepfactor", 2.0);
  n.increment = size_option(o, "stepbytes", 0);
  n.dtype = text(o, "datatype").value_or("float");
  n.redop = text(o, "redop").value_or("sum");
  n.root = number<int>(o, "root", 0);
  if (o.contains("gpus")) n.gpus = o.at("gpus").get<int>();
  n.agg_iters = number<int>(o, "agg_iters", 1);
  return n;
}

// The objective's settings as a job names them.
const explore::ObjectiveFlags kObjectiveOptions{"options.objective", "options.gpu_hour_price", "options.tokens"};

std::optional<double> price_option(const JobRequest& r) {
  if (!r.options.contains("gpu_hour_price")) return std::nullopt;
  return r.options.at("gpu_hour_price").get<double>();
}

explore::SweepObjective sweep_objective_of(const JobRequest& r) {
  return explore::read_sweep_objective(text(r.options, "objective").value_or(""), price_option(r),
                                       text(r.options, "tokens"), kObjectiveOptions);
}

explore::Sweep sweep_of(const JobRequest& r, const JobLimits& limits) {
  const explore::Sweep grid = explore::make_sweep(strings(r.options, "vary"), strings(r.options, "zip"), 0);
  explore::check_no_set_conflict(grid, r.overrides);
  if (limits.max_sweep_points > 0 && grid.size() > static_cast<std::size_t>(limits.max_sweep_points))
    throw ScenarioError("", "options.vary",
                        fmt::format("{} points is more than this server sweeps in one job ({} at most)", grid.size(),
                                    limits.max_sweep_points));
  return grid;
}

explore::TuneRequest tune_request(const JobRequest& r) {
  explore::TuneRequest req;
  req.scenario = source_of(r);
  req.overrides = r.overrides;
  req.objective = explore::read_objective(text(r.options, "objective").value_or("tokens_per_s"), price_option(r),
                                          text(r.options, "tokens"), kObjectiveOptions);
  const int top = number<int>(r.options, "top", 5);
  if (top < 1 || top > 100) throw ScenarioError("", "options.top", "expected 1 to 100 configurations");
  req.top = static_cast<std::size_t>(top) + 1;  // the listed ones and the next, which the last is explained against
  req.threads = 1;                              // the server's workers are its parallelism
  for (const std::string& s : strings(r.options, "space")) explore::add_space_values(req.space, s, "options.space");
  req.space.allow_tp_beyond_scale_up = flag(r.options, "allow_tp_beyond_scale_up");
  return req;
}

PlanRequest plan_request(const JobRequest& r) {
  PlanRequest p;
  const char* target = r.options.contains("tokens") ? "tokens" : r.options.contains("days") ? "days" : "iterations";
  const std::string amount = *text(r.options, target);
  const std::optional<double> count = explore::parse_token_count(amount);
  if (!count)
    throw ScenarioError("", std::string("options.") + target,
                        "expected a positive number (tokens may carry a K, M, B or T suffix), got '" + amount + "'");
  p.target = std::string(target) == "tokens" ? PlanRequest::Target::Tokens
             : std::string(target) == "days" ? PlanRequest::Target::Days
                                             : PlanRequest::Target::Iterations;
  p.amount = *count;
  p.trials = number<int>(r.options, "trials", 0);
  p.seed = number<std::uint64_t>(r.options, "seed", 1);
  return p;
}

// Polled from progress callbacks: a stop request or the wall-time limit ends the job there.
class StopCheck {
 public:
  StopCheck(const std::atomic<bool>& stop, double max_wall_s)
      : stop_(stop),
        deadline_(max_wall_s > 0 ? std::chrono::steady_clock::now() +
                                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                           std::chrono::duration<double>(max_wall_s))
                                 : std::chrono::steady_clock::time_point::max()),
        max_wall_s_(max_wall_s) {}
  void operator()() const {
    if (stop_.load()) throw JobStopped{true, "cancelled"};
    if (std::chrono::steady_clock::now() > deadline_)
      throw JobStopped{false, fmt::format("stopped after {:g} s, this server's limit for one job", max_wall_s_)};
  }

 private:
  const std::atomic<bool>& stop_;
  std::chrono::steady_clock::time_point deadline_;
  double max_wall_s_;
};

}  // namespace

const std::vector<std::string>& job_commands() {
  static const std::vector<std::string> commands{"run", "memory", "nccl-test", "sweep", "tune", "plan"};
  return commands;
}

JobRequest job_request_from_json(const json& body) {
  if (!body.is_object()) throw ScenarioError("", "", "the request body must be a JSON object");
  JobRequest r;
  for (const auto& [name, value] : body.items()) {
    if (name == "command") {
      if (!value.is_string()) throw ScenarioError("", "command", "expected a string");
      r.command = value.get<std::string>();
    } else if (name == "scenario") {
      if (!value.is_string()) throw ScenarioError("", "scenario", "expected the scenario's YAML (or JSON) as a string");
      r.scenario = value.get<std::string>();
    } else if (name == "label") {
      r.label = value.is_string() ? value.get<std::string>() : "";
      const std::string base = r.label.substr(r.label.find_last_of("/\\") + 1);
      const bool printable = std::all_of(r.label.begin(), r.label.end(),
                                         [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
      if (base.empty() || base == "." || base == ".." || r.label.size() > 200 || !printable)
        throw ScenarioError("", "label", "expected a short file name such as my-job.yaml");
    } else if (name == "overrides") {
      if (!has_kind(value, Kind::Strings))
        throw ScenarioError("", "overrides", "expected a list of \"key=value\" strings");
      r.overrides = value.get<std::vector<std::string>>();
    } else if (name == "options") {
      if (!value.is_null()) r.options = value;  // null: no options
    } else {
      throw ScenarioError("", name, "not a field of a job (command, scenario, label, overrides, options)");
    }
  }
  const auto& commands = job_commands();
  if (std::find(commands.begin(), commands.end(), r.command) == commands.end())
    throw ScenarioError("", "command",
                        "'" + r.command + "' is not a command; one of run, memory, nccl-test, sweep, tune, plan");
  if (r.scenario.empty()) throw ScenarioError("", "scenario", "missing: the scenario's YAML text");
  // The label names the scenario in messages and is where relative file names resolve: keep only its base name.
  if (const auto slash = r.label.find_last_of("/\\"); slash != std::string::npos) r.label = r.label.substr(slash + 1);
  return r;
}

void check_job_request(const JobRequest& r, const JobLimits& limits) {
  check_options(r);
  check_paths(r);
  const Scenario s = load_scenario(source_of(r), r.overrides, needs_of(r.command));
  check_limits(s, r, limits);
  if (r.command == "nccl-test") nccl_test_options(s, r.options);
  if (r.command == "sweep") {
    sweep_of(r, limits);
    sweep_objective_of(r);
  }
  if (r.command == "tune") tune_request(r);
  if (r.command == "plan") plan_request(r);
}

std::string options_json_of(const JobRequest& r) {
  return json{{"overrides", r.overrides}, {"options", r.options}}.dump();
}

JobRequest job_request_of(const JobRecord& job) {
  JobRequest r;
  r.command = job.command;
  r.label = job.label;
  r.scenario = job.scenario;
  const json stored = json::parse(job.options_json);
  r.overrides = stored.at("overrides").get<std::vector<std::string>>();
  r.options = stored.at("options");
  return r;
}

JobOutput run_job(const JobRequest& r, const JobLimits& limits, const std::function<void(double)>& progress,
                  const std::atomic<bool>& stop) {
  const StopCheck check(stop, limits.max_wall_s);
  const ScenarioSource source = source_of(r);
  JobOutput out;
  if (r.command == "run") {
    const Scenario s = load_scenario(source, r.overrides);
    RunOptions o;
    o.per_rank = flag(r.options, "per_rank");
    o.allow_oom = flag(r.options, "allow_oom");
    o.explain = flag(r.options, "explain");
    o.threads = 1;  // the server's workers run several jobs at a time
    o.want_trace = flag(r.options, "trace");
    // A trace is about 130 bytes per op (133 measured on the GPT-3 175B example, 128 on the 8-GPU one): a run whose
    // estimate is already above the limit is refused before it simulates and builds the spans.
    constexpr double kTraceBytesPerOp = 130;
    const auto refuse_trace = [&](double bytes) {
      throw ScenarioError("", "options.trace",
                          fmt::format("the trace is {:.0f} MB, more than this server keeps for a job ({:.0f} MB): "
                                      "trace a smaller job, or run it with `trainsim run --trace` yourself",
                                      bytes / 1e6, static_cast<double>(limits.max_trace_bytes) / 1e6));
    };
    o.progress = [&](const RunProgress& p) {
      check();
      if (p.stage != RunProgress::Stage::Estimated) {
        progress(std::clamp(p.fraction, 0.0, 0.99));
      } else if (o.want_trace && p.estimated_ops * kTraceBytesPerOp > static_cast<double>(limits.max_trace_bytes)) {
        refuse_trace(p.estimated_ops * kTraceBytesPerOp);
      }
    };
    const RunOutput result = run_scenario(s, o);
    out.result_json = to_json(result.result).dump(2);
    out.html = run_html_page(s, result, o.want_trace, r.label);
    if (o.want_trace) {
      std::ostringstream trace;
      write_chrome_trace(trace, result.trace, result.stream_names, result.counters);
      out.trace = std::move(trace).str();
      if (static_cast<std::int64_t>(out.trace.size()) > limits.max_trace_bytes)
        refuse_trace(static_cast<double>(out.trace.size()));
    }
  } else if (r.command == "memory") {
    const Scenario s = load_scenario(source, r.overrides);
    const std::vector<StageMemory> stages = estimate_memory(s);
    if (!memory_fits(s, stages) && !flag(r.options, "allow_oom"))
      throw OutOfMemoryError(memory_does_not_fit_message(s, stages));
    out.result_json = memory_json(s, stages).dump(2);
  } else if (r.command == "nccl-test") {
    const Scenario s = load_scenario(source, r.overrides, ScenarioNeeds::ClusterOnly);
    const NcclTestOptions o = nccl_test_options(s, r.options);
    out.result_json = to_json(run_nccl_test(s, o, [&](const NcclTestTable&) { check(); })).dump(2);
  } else if (r.command == "sweep") {
    const explore::Sweep grid = sweep_of(r, limits);
    explore::PointOptions options;
    options.allow_oom = flag(r.options, "allow_oom");
    const explore::SweepObjective objective = sweep_objective_of(r);
    explore::apply_sweep_objective(objective, options);
    const auto points = grid.overrides(r.overrides);
    // Points run one after another here (the server's workers are its parallelism), so a stop lands between points.
    std::vector<explore::PointOutcome> outcomes;
    outcomes.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      check();
      outcomes.push_back(explore::evaluate_point(source, points[i], options));
      progress(static_cast<double>(i + 1) / static_cast<double>(points.size()));
    }
    // Named as the CLI names it: the scenario file's stem.
    auto sweep = explore::sweep_json(grid, outcomes, std::filesystem::path(r.label).stem().string(), r.overrides);
    if (const auto& o = objective.objective)
      sweep["objective"] = explore::sweep_objective_json(*o, explore::best_point(outcomes, *o), outcomes.size());
    out.result_json = sweep.dump(2);
  } else if (r.command == "tune") {
    explore::TuneRequest req = tune_request(r);
    req.progress = [&](std::size_t done, std::size_t total) {
      if (total > 0) progress(static_cast<double>(done) / static_cast<double>(total));
    };
    const explore::TuneOutcome outcome = explore::run_tune(req);
    check();  // a tune runs to its end; a stop asked meanwhile discards it
    if (outcome.ranked.empty()) throw Error(explore::tune_nothing_ranked_message(outcome));
    out.result_json = explore::tune_json(outcome, req.objective, req.top - 1).dump(2);
  } else if (r.command == "plan") {
    const Scenario s = load_scenario(source, r.overrides);
    check();
    out.result_json = plan_json(plan_run(s, plan_request(r))).dump(2);
  } else {
    throw ScenarioError("", "command", "'" + r.command + "' is not a command");
  }
  progress(1.0);
  return out;
}

}  // namespace trainsim::service
