// Reads data/gpus.yaml. The file is data with sources in its comments; this code only checks its shape
// and refuses anything ambiguous (unknown keys, missing numbers, duplicate names), naming file and entry.
#include "hardware/gpu_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/data_dir.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Context for error messages: "<file>: gpus[3] (H100-SXM): <key>: <what>".
struct EntryContext {
  const std::string& file;
  std::string entry;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(fmt::format("{}: {}{}{}", file, entry, key.empty() ? "" : ": " + key, ": " + what));
  }
};

double read_number(const YAML::Node& n, const std::string& key, const EntryContext& ctx) {
  if (!n || !n.IsScalar()) ctx.fail(key, "expected a number");
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) { ctx.fail(key, fmt::format("expected a number, got '{}'", n.Scalar())); }
}

double read_non_negative(const YAML::Node& map, const std::string& key, const EntryContext& ctx, bool positive) {
  const double v = read_number(map[key], key, ctx);
  if (positive ? !(v > 0) : !(v >= 0)) ctx.fail(key, fmt::format("must be {} 0, got {}", positive ? ">" : ">=", v));
  return v;
}

int read_int(const YAML::Node& map, const std::string& key, const EntryContext& ctx) {
  const YAML::Node n = map[key];
  if (!n || !n.IsScalar()) ctx.fail(key, "expected an integer");
  try {
    const int v = n.as<int>();
    if (v < 0) ctx.fail(key, fmt::format("must be >= 0, got {}", v));
    return v;
  } catch (const YAML::Exception&) { ctx.fail(key, fmt::format("expected an integer, got '{}'", n.Scalar())); }
}

std::string read_string(const YAML::Node& map, const std::string& key, const EntryContext& ctx) {
  const YAML::Node n = map[key];
  if (!n || !n.IsScalar() || n.Scalar().empty()) ctx.fail(key, "expected a non-empty string");
  return n.Scalar();
}

// A peak is a positive number or null (the GPU lacks that precision). The key itself must be present so
// that a forgotten entry is not mistaken for "unsupported".
std::optional<double> read_peak(const YAML::Node& peaks, const std::string& key, const EntryContext& ctx) {
  const YAML::Node n = peaks[key];
  const std::string path = "peak_tflops." + key;
  if (!n) ctx.fail(path, "missing (write null if the GPU lacks this precision)");
  if (n.IsNull()) return std::nullopt;
  const double v = read_number(n, path, ctx);
  if (!(v > 0)) ctx.fail(path, fmt::format("must be > 0 or null, got {}", v));
  return v;
}

const std::set<std::string> kEntryKeys = {"id",
                                          "aliases",
                                          "vendor",
                                          "architecture",
                                          "sm_version",
                                          "sm_count",
                                          "peak_tflops",
                                          "hbm_GBps",
                                          "memory_gb",
                                          "memory_gib",
                                          "scale_up_GBps",
                                          "scale_up_domain",
                                          "peak_clock_mhz",
                                          "sustained_clock_mhz",
                                          "boost_clock_mhz",
                                          "power_w",
                                          "gemm_plateau",
                                          "host_cpu",
                                          "notes"};
// fp4 is optional (dense FP4 peak; absent = no FP4); the others must be present (null = unsupported).
const std::set<std::string> kPeakKeys = {"fp32", "tf32", "bf16", "fp16", "fp8", "fp4"};
const std::set<std::string> kArchitectures = {"volta", "ampere", "hopper", "blackwell", "cdna2", "cdna3", "cdna4"};
const std::set<std::string> kPlateauKeys = {"bf16", "fp8", "fp4"};
// A sustained clock may exceed the peak-basis clock a little (an H100 boosts to 1980 MHz over its
// 1830 MHz tensor basis) but not by more than this factor: beyond it the entry is a typo.
constexpr double kMaxSustainedOverPeak = 1.1;

void reject_unknown_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& prefix,
                         const EntryContext& ctx) {
  const std::vector<std::string> known_list(known.begin(), known.end());
  for (const auto& kv : map) {
    const std::string k = kv.first.as<std::string>();
    if (known.count(k) == 0) {
      const std::string guess = closest_match(k, known_list);
      ctx.fail(prefix + k,
               guess.empty() ? "unknown key" : fmt::format("unknown key; did you mean {}{}?", prefix, guess));
    }
  }
}

// peak_clock_mhz / sustained_clock_mhz / power_w: each optional, but the two clocks come together (a
// sustained clock means nothing without the clock the peaks are specified at), all positive, and the
// sustained clock at most kMaxSustainedOverPeak x the peak-basis clock. boost_clock_mhz (optional) needs
// both and is at least the sustained clock.
void read_clocks_and_power(const YAML::Node& e, const EntryContext& ctx, GpuSpec& g) {
  const bool peak = static_cast<bool>(e["peak_clock_mhz"]), sustained = static_cast<bool>(e["sustained_clock_mhz"]);
  if (peak != sustained) {
    const char* given = peak ? "peak_clock_mhz" : "sustained_clock_mhz";
    const char* missing = peak ? "sustained_clock_mhz" : "peak_clock_mhz";
    ctx.fail(missing, fmt::format("missing: {} is given, and the two clocks go together", given));
  }
  if (peak) {
    g.peak_clock_mhz = read_non_negative(e, "peak_clock_mhz", ctx, true);
    g.sustained_clock_mhz = read_non_negative(e, "sustained_clock_mhz", ctx, true);
    if (g.sustained_clock_mhz > kMaxSustainedOverPeak * g.peak_clock_mhz) {
      ctx.fail("sustained_clock_mhz", fmt::format("{} MHz exceeds {} x peak_clock_mhz ({} MHz)", g.sustained_clock_mhz,
                                                  kMaxSustainedOverPeak, g.peak_clock_mhz));
    }
  }
  if (e["boost_clock_mhz"]) {
    if (!peak)
      ctx.fail("boost_clock_mhz",
               "needs peak_clock_mhz and sustained_clock_mhz (the boost clock is read against them)");
    g.boost_clock_mhz = read_non_negative(e, "boost_clock_mhz", ctx, true);
    if (g.boost_clock_mhz < g.sustained_clock_mhz) {
      ctx.fail("boost_clock_mhz", fmt::format("{} MHz is below sustained_clock_mhz ({} MHz): the boost clock is the "
                                              "highest the part runs at",
                                              g.boost_clock_mhz, g.sustained_clock_mhz));
    }
  }
  if (e["power_w"]) g.power_w = read_non_negative(e, "power_w", ctx, true);
}

// gemm_plateau (optional): {bf16, fp8, fp4}, each a fraction of that precision's dense peak in (0, 1], measured on
// the part; fp8 and fp4 only where the part has that precision.
void read_gemm_plateau(const YAML::Node& e, const EntryContext& ctx, GpuSpec& g) {
  const YAML::Node n = e["gemm_plateau"];
  if (!n) return;
  if (!n.IsMap()) ctx.fail("gemm_plateau", "expected a mapping {bf16, fp8, fp4}");
  reject_unknown_keys(n, kPlateauKeys, "gemm_plateau.", ctx);
  const auto fraction = [&](const std::string& key) {
    const std::string path = "gemm_plateau." + key;
    const double v = read_number(n[key], path, ctx);
    if (!(v > 0 && v <= 1)) ctx.fail(path, fmt::format("must be a fraction of the dense peak in (0, 1], got {}", v));
    return v;
  };
  if (n["bf16"]) g.gemm_plateau_16 = fraction("bf16");
  if (n["fp8"]) {
    if (!g.fp8_tflops) ctx.fail("gemm_plateau.fp8", "the GPU has no FP8 peak (peak_tflops.fp8 is null)");
    g.gemm_plateau_fp8 = fraction("fp8");
  }
  if (n["fp4"]) {
    if (!g.fp4_tflops) ctx.fail("gemm_plateau.fp4", "the GPU has no FP4 peak (peak_tflops.fp4 is absent)");
    g.gemm_plateau_fp4 = fraction("fp4");
  }
}

GpuSpec parse_entry(const YAML::Node& e, const EntryContext& ctx, std::vector<std::string>& aliases) {
  if (!e.IsMap()) ctx.fail("", "expected a mapping");
  reject_unknown_keys(e, kEntryKeys, "", ctx);
  GpuSpec g;
  g.name = read_string(e, "id", ctx);
  g.vendor = read_string(e, "vendor", ctx);
  g.architecture = read_string(e, "architecture", ctx);
  if (kArchitectures.count(g.architecture) == 0) {
    ctx.fail("architecture",
             fmt::format("'{}' is not one of volta, ampere, hopper, blackwell, cdna2, cdna3, cdna4", g.architecture));
  }
  g.sm_version = read_int(e, "sm_version", ctx);
  g.sm_count = read_int(e, "sm_count", ctx);

  const YAML::Node peaks = e["peak_tflops"];
  if (!peaks || !peaks.IsMap()) ctx.fail("peak_tflops", "expected a mapping {fp32, tf32, bf16, fp16, fp8[, fp4]}");
  reject_unknown_keys(peaks, kPeakKeys, "peak_tflops.", ctx);
  g.fp32_tflops = read_peak(peaks, "fp32", ctx);
  g.tf32_tflops = read_peak(peaks, "tf32", ctx);
  g.bf16_tflops = read_peak(peaks, "bf16", ctx);
  g.fp16_tflops = read_peak(peaks, "fp16", ctx);
  g.fp8_tflops = read_peak(peaks, "fp8", ctx);
  if (peaks["fp4"]) g.fp4_tflops = read_peak(peaks, "fp4", ctx);
  if (!g.bf16_tflops && !g.fp16_tflops) ctx.fail("peak_tflops", "needs at least one of bf16 / fp16");

  g.hbm_GBps = read_non_negative(e, "hbm_GBps", ctx, true);
  g.memory_gib = read_non_negative(e, "memory_gib", ctx, true);
  g.scale_up_GBps = read_non_negative(e, "scale_up_GBps", ctx, false);
  if (e["memory_gb"]) read_non_negative(e, "memory_gb", ctx, true);  // documentation only, but must be sane
  read_clocks_and_power(e, ctx, g);
  read_gemm_plateau(e, ctx, g);
  if (e["host_cpu"]) {
    g.host_cpu = read_string(e, "host_cpu", ctx);
    if (g.host_cpu != "grace" && g.host_cpu != "intel" && g.host_cpu != "amd")
      ctx.fail("host_cpu", fmt::format("'{}' is not one of grace, intel, amd", g.host_cpu));
  }
  if (e["scale_up_domain"]) {
    g.scale_up_domain = read_int(e, "scale_up_domain", ctx);
    if (g.scale_up_domain < 1) ctx.fail("scale_up_domain", fmt::format("must be >= 1, got {}", g.scale_up_domain));
  }

  aliases.clear();
  if (const YAML::Node a = e["aliases"]) {
    if (!a.IsSequence()) ctx.fail("aliases", "expected a list of names");
    for (const auto& item : a) {
      if (!item.IsScalar() || item.Scalar().empty()) ctx.fail("aliases", "expected a list of non-empty names");
      aliases.push_back(item.Scalar());
    }
  }
  return g;
}

}  // namespace

GpuCatalog GpuCatalog::load(const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot open the GPU catalog", file));
  } catch (const YAML::Exception& ex) { throw Error(fmt::format("{}: malformed YAML: {}", file, ex.what())); }
  const YAML::Node list = root["gpus"];
  if (!root.IsMap() || !list || !list.IsSequence())
    throw Error(fmt::format("{}: expected a top-level `gpus:` list", file));

  GpuCatalog cat;
  std::set<std::string> taken;  // lower-cased ids and aliases, all in one namespace
  std::vector<std::string> aliases;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    std::string label = fmt::format("gpus[{}]", i);
    if (e.IsMap() && e["id"] && e["id"].IsScalar()) label += " (" + e["id"].Scalar() + ")";
    const EntryContext ctx{file, label};
    GpuSpec g = parse_entry(e, ctx, aliases);
    const std::size_t index = cat.gpus_.size();
    std::vector<std::string> all_names{g.name};
    all_names.insert(all_names.end(), aliases.begin(), aliases.end());
    for (std::size_t k = 0; k < all_names.size(); ++k) {
      const std::string& n = all_names[k];
      if (!taken.insert(lower(n)).second) {
        ctx.fail(k == 0 ? "id" : "aliases", fmt::format("name '{}' is used twice in the catalog", n));
      }
      if (k > 0) cat.aliases_.emplace_back(n, index);
    }
    cat.gpus_.push_back(std::move(g));
  }
  if (cat.gpus_.empty()) throw Error(fmt::format("{}: the GPU catalog is empty", file));
  return cat;
}

const GpuCatalog& GpuCatalog::builtin() {
  static const GpuCatalog cat = load(data_dir() + "/gpus.yaml");
  return cat;
}

const GpuSpec* GpuCatalog::find(const std::string& name) const {
  const std::string key = lower(name);
  for (const auto& g : gpus_) {
    if (lower(g.name) == key) return &g;
  }
  for (const auto& [alias, index] : aliases_) {
    if (lower(alias) == key) return &gpus_[index];
  }
  return nullptr;
}

std::vector<std::string> GpuCatalog::names() const {
  std::vector<std::string> out;
  out.reserve(gpus_.size());
  for (const auto& g : gpus_) out.push_back(g.name);
  return out;
}

}  // namespace trainsim
