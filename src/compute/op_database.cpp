#include "compute/op_database.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "compute/op_database_physics.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "hardware/gpu_catalog.hpp"

namespace trainsim {

namespace {

// The header row as the profiler writes it; the format is fixed (docs/op-database.md).
constexpr std::string_view kHeader = "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us";
constexpr std::size_t kFieldCount = 10;

// Every KernelKind, for the op column's names (to_string(KernelKind)); keep in step with the enum.
constexpr std::array<KernelKind, 12> kAllKinds = {
    KernelKind::Gemm,      KernelKind::FlashAttnFwd,  KernelKind::FlashAttnBwd, KernelKind::AttnScoreGemm,
    KernelKind::Softmax,   KernelKind::LayerNorm,     KernelKind::Elementwise,  KernelKind::CrossEntropy,
    KernelKind::Embedding, KernelKind::OptimizerStep, KernelKind::Memset,       KernelKind::TorchLayerNorm};
constexpr std::array<Precision, 6> kAllDtypes = {Precision::FP32, Precision::TF32, Precision::BF16,
                                                 Precision::FP16, Precision::FP8,  Precision::FP4};

bool is_gemm_like(KernelKind kind) { return kind == KernelKind::Gemm || kind == KernelKind::AttnScoreGemm; }

// Only fused attention has a causal variant; for every other kind the column is ignored so that a
// stray 1 does not hide a row from lookups.
bool group_causal(KernelKind kind, bool causal) { return is_flash_attention(kind) && causal; }

std::string_view trim_view(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::vector<std::string_view> split_csv_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    out.push_back(
        trim_view(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// Parses one row; every problem is reported as "PATH:LINE: ...".
class RowParser {
 public:
  RowParser(const std::string& path, int line) : path_(path), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(fmt::format("{}:{}: {}", path_, line_, what)); }

  std::int64_t integer(std::string_view column, std::string_view text) const {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) fail(fmt::format("{} '{}' is out of range", column, text));
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
      fail(fmt::format("{} '{}' is not an integer", column, text));
    }
    if (v < 0) fail(fmt::format("{} must be >= 0, got {}", column, v));
    return v;
  }

  double number(std::string_view column, std::string_view text) const {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(v)) {
      fail(fmt::format("{} '{}' is not a finite number", column, text));
    }
    return v;
  }

  // The op column: a KernelKind name (to_string(KernelKind)) or an alias.
  KernelKind op(std::string_view text) const {
    if (text == "rmsnorm") return KernelKind::LayerNorm;  // same memory-bound pass as LayerNorm
    if (text == "grouped_gemm") return KernelKind::Gemm;  // `batch` equal members = a batched GEMM
    std::vector<std::string> names;
    for (const KernelKind k : kAllKinds) {
      if (text == to_string(k)) return k;
      names.emplace_back(to_string(k));
    }
    names.emplace_back("rmsnorm");
    names.emplace_back("grouped_gemm");
    fail(fmt::format("unknown op '{}'{} (expected one of: {})", text, suggestion(text, names), join(names)));
  }

  Precision dtype(std::string_view text) const {
    std::vector<std::string> names;
    for (const Precision p : kAllDtypes) {
      if (text == to_string(p)) return p;
      names.emplace_back(to_string(p));
    }
    fail(fmt::format("unknown dtype '{}'{} (expected one of: {})", text, suggestion(text, names), join(names, "|")));
  }

 private:
  static std::string suggestion(std::string_view word, const std::vector<std::string>& names) {
    const std::string best = closest_match(word, names);
    return best.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", best);
  }

  const std::string& path_;
  int line_;
};

OpRecord parse_row(const std::vector<std::string_view>& f, const RowParser& p, int line) {
  OpRecord r;
  r.line = line;
  r.gpu = std::string(f[0]);
  if (r.gpu.empty()) p.fail("gpu is empty (expected a GPU catalog name, e.g. H100-SXM)");
  r.kind = p.op(f[1]);
  r.dtype = p.dtype(f[2]);
  r.m = p.integer("m", f[3]);
  r.n = p.integer("n", f[4]);
  r.k = p.integer("k", f[5]);
  r.batch = p.integer("batch", f[6]);
  const std::int64_t causal = p.integer("causal", f[7]);
  if (causal > 1) p.fail(fmt::format("causal must be 0 or 1, got {}", causal));
  r.causal = group_causal(r.kind, causal == 1);
  r.bytes = p.number("bytes", f[8]);
  if (r.bytes < 0) p.fail(fmt::format("bytes must be >= 0, got {}", f[8]));
  r.time_us = p.number("time_us", f[9]);
  if (!(r.time_us > 0)) p.fail(fmt::format("time_us must be > 0, got {}", f[9]));

  // A row without work cannot be placed on the log(work) axis lookups interpolate over.
  if (is_tensor_kind(r.kind)) {
    if (r.m == 0 || r.n == 0 || r.k == 0 || r.batch == 0) {
      p.fail(fmt::format("{} needs m, n, k and batch > 0 (got m={} n={} k={} batch={})", f[1], r.m, r.n, r.k, r.batch));
    }
    r.bytes = 0;  // not part of a tensor kernel's shape (the format says 0)
  } else {
    if (!(r.bytes > 0)) p.fail(fmt::format("{} is memory-bound and needs bytes > 0 (its HBM traffic)", f[1]));
    r.m = r.n = r.k = 0;  // not part of a memory-bound kernel's shape (the format says 0)
    r.batch = 1;
  }
  return r;
}

bool same_shape(const OpRecord& r, KernelKind kind, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                double bytes) {
  if (is_tensor_kind(kind)) return r.m == m && r.n == n && r.k == k && r.batch == batch;
  return r.bytes == bytes;
}

double record_work(const OpRecord& r) { return op_work(r.kind, r.m, r.n, r.k, r.batch, r.causal, r.bytes); }

struct Point {
  double log_work = 0;
  double log_time = 0;
};

// log(time) as a function of log(work) through `points` (sorted by work):
//  * points with the same work (different shapes of equal FLOPs) are merged into one whose log time
//    is their mean (the geometric mean of the times), so the curve is a function;
//  * between two neighbours: straight line in log-log space;
//  * outside the measured range: the nearest point's throughput is kept (time proportional to
//    work, slope 1 in log-log). This is a deliberately plain assumption: it under-estimates small
//    kernels, whose efficiency drops, and is honest about not knowing more. The rule says
//    "extrapolated" so a report can flag it.
OpLookup interpolate(const std::vector<Point>& sorted, double log_work) {
  std::vector<Point> curve;
  std::size_t merged = 0;
  for (const Point& pt : sorted) {
    if (!curve.empty() && curve.back().log_work == pt.log_work) {
      ++merged;
      const double n = static_cast<double>(merged);
      curve.back().log_time = (curve.back().log_time * n + pt.log_time) / (n + 1);
    } else {
      curve.push_back(pt);
      merged = 0;
    }
  }
  OpLookup out;
  if (log_work < curve.front().log_work || log_work > curve.back().log_work) {
    const Point& near = log_work < curve.front().log_work ? curve.front() : curve.back();
    out.time_s = std::exp(near.log_time + (log_work - near.log_work));
    out.rule = LookupRule::Extrapolated;
    return out;
  }
  out.rule = LookupRule::Interpolated;
  for (std::size_t i = 0; i + 1 < curve.size(); ++i) {
    const Point& lo = curve[i];
    const Point& hi = curve[i + 1];
    if (log_work <= hi.log_work) {
      const double f = (log_work - lo.log_work) / (hi.log_work - lo.log_work);
      out.time_s = std::exp(lo.log_time + f * (hi.log_time - lo.log_time));
      return out;
    }
  }
  out.time_s = std::exp(curve.back().log_time);  // a single point with exactly this work
  return out;
}

}  // namespace

const char* to_string(LookupRule r) {
  switch (r) {
    case LookupRule::Exact: return "exact";
    case LookupRule::Interpolated: return "interpolated";
    case LookupRule::Extrapolated: return "extrapolated";
  }
  return "?";
}

bool is_tensor_kind(KernelKind kind) { return is_gemm_like(kind) || is_flash_attention(kind); }

double op_work(KernelKind kind, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, bool causal,
               double bytes) {
  if (!is_tensor_kind(kind)) return std::isfinite(bytes) && bytes > 0 ? bytes : 0.0;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0.0;
  const double mnkb =
      static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
  if (is_gemm_like(kind)) return 2.0 * mnkb;
  const double fwd = causal ? 2.0 * mnkb : 4.0 * mnkb;  // 4*b*m*n*k, halved when causal
  return kind == KernelKind::FlashAttnBwd ? 2.5 * fwd : fwd;
}

double op_work(const KernelDesc& k) {
  return op_work(k.kind, k.m, k.n, k.k, k.batch, group_causal(k.kind, k.causal), k.bytes);
}

OpDatabase OpDatabase::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the op database", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

OpDatabase OpDatabase::parse(std::string_view text, const std::string& path) {
  OpDatabase db;
  db.path_ = path;
  bool header_seen = false;
  int line_no = 0;
  // (group, shape) -> line of its first row, to reject duplicates.
  std::map<std::tuple<GroupKey, std::int64_t, std::int64_t, std::int64_t, std::int64_t, double>, int> seen;

  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto nl = text.find('\n', pos);
    const std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::string_view line = trim_view(raw);
    if (line.empty() || line.front() == '#') continue;

    const RowParser p(path, line_no);
    const auto fields = split_csv_fields(line);
    if (!header_seen) {
      std::string joined;
      for (std::size_t i = 0; i < fields.size(); ++i) joined += (i ? "," : "") + std::string(fields[i]);
      if (joined != kHeader) p.fail(fmt::format("expected the header row '{}' first, got '{}'", kHeader, line));
      header_seen = true;
      continue;
    }
    if (fields.size() != kFieldCount) {
      p.fail(fmt::format("expected {} comma-separated fields ({}), got {}", kFieldCount, kHeader, fields.size()));
    }
    OpRecord r = parse_row(fields, p, line_no);
    const auto key = std::make_tuple(GroupKey{r.gpu, r.kind, r.dtype, r.causal}, r.m, r.n, r.k, r.batch, r.bytes);
    const auto [it, fresh] = seen.emplace(key, line_no);
    if (!fresh) {
      p.fail(fmt::format("duplicate of line {} (same gpu, op, dtype, causal and shape; aliases count as their op)",
                         it->second));
    }
    db.add(std::move(r));
  }
  if (!header_seen)
    throw Error(fmt::format("{}: no header row '{}' (the file is empty or all comments)", path, kHeader));
  if (db.records_.empty()) throw Error(fmt::format("{}: the op database has a header but no measured rows", path));

  // Rows of a catalog GPU cannot beat its peaks (op_database_physics.hpp); rows of a GPU the catalog does not know
  // are checked when a scenario describes it (api/compute_setup.cpp).
  for (const std::string& gpu : db.gpus())
    if (const GpuSpec* spec = GpuCatalog::builtin().find(gpu)) check_rows_within_peak(db, gpu, *spec);

  for (auto& [key, idx] : db.groups_) {
    std::stable_sort(idx.begin(), idx.end(), [&db](std::size_t a, std::size_t b) {
      return record_work(db.records_[a]) < record_work(db.records_[b]);
    });
  }
  return db;
}

void OpDatabase::add(OpRecord r) {
  groups_[GroupKey{r.gpu, r.kind, r.dtype, r.causal}].push_back(records_.size());
  records_.push_back(std::move(r));
}

std::optional<OpLookup> OpDatabase::lookup(const std::string& gpu, const KernelDesc& k) const {
  // The database has no window column: a sliding-window attention is never one of its rows (the caller's fallback
  // prices it).
  if (k.window > 0) return std::nullopt;
  if (k.block_scaled) return std::nullopt;  // no scaling column either: an MXFP8 GEMM is priced by the fallback
  const double work = op_work(k);
  if (!(work > 0) || !std::isfinite(work)) return std::nullopt;
  const auto group = groups_.find(GroupKey{gpu, k.kind, k.dtype, group_causal(k.kind, k.causal)});
  if (group == groups_.end()) return std::nullopt;
  const std::vector<std::size_t>& idx = group->second;

  for (const std::size_t i : idx) {
    const OpRecord& r = records_[i];
    if (same_shape(r, k.kind, k.m, k.n, k.k, k.batch, k.bytes)) return OpLookup{r.time_us * 1e-6, LookupRule::Exact};
  }

  // GEMM efficiency depends on the aspect as much as on the FLOPs, so a GEMM is read off the
  // points that differ from it only in m (and batch, which is m in disguise for equal members)
  // when there are any: e.g. the same weight matrix at other token counts.
  const bool by_aspect = is_gemm_like(k.kind) && std::any_of(idx.begin(), idx.end(), [&](std::size_t i) {
                           return records_[i].n == k.n && records_[i].k == k.k;
                         });
  std::vector<Point> points;
  for (const std::size_t i : idx) {
    const OpRecord& r = records_[i];
    if (by_aspect && (r.n != k.n || r.k != k.k)) continue;
    // log(time_us) - log(1e6) rather than log(time_us * 1e-6): finite for every positive time_us,
    // even one so small that the product would round to 0 s.
    points.push_back(Point{std::log(record_work(r)), std::log(r.time_us) - std::log(1e6)});
  }
  return interpolate(points, std::log(work));
}

std::optional<double> OpDatabase::time_s(const std::string& gpu, const KernelDesc& k) const {
  const auto hit = lookup(gpu, k);
  if (!hit) return std::nullopt;
  return hit->time_s;
}

bool OpDatabase::has_gpu(const std::string& gpu) const {
  return std::any_of(records_.begin(), records_.end(), [&gpu](const OpRecord& r) { return r.gpu == gpu; });
}

std::vector<std::string> OpDatabase::gpus() const {
  std::vector<std::string> out;
  for (const OpRecord& r : records_) {
    if (std::find(out.begin(), out.end(), r.gpu) == out.end()) out.push_back(r.gpu);
  }
  return out;
}

}  // namespace trainsim
