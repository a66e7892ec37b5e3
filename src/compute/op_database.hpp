#pragma once
// A measured op database: kernel times taken on real GPUs by a profiler, read from a CSV file
// (`compute.database: PATH` in the scenario). The format and the lookup rules are documented in
// docs/op-database.md; in short:
//
//   # comments and blank lines are ignored
//   gpu,op,dtype,m,n,k,batch,causal,bytes,time_us
//   H100-SXM,gemm,bf16,8192,12288,4096,1,0,0,1250.0
//
// A lookup answers from the rows of one group (gpu, op kind, dtype, and causal for fused
// attention): an exact shape match gives that row's time; otherwise log(time) is interpolated
// linearly in log(work) between the two measured neighbours, and outside the measured range the
// nearest point is extrapolated at constant throughput. No rows in the group: no answer, and the
// caller (MeasuredComputeModel) falls back to its model.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "core/kernel_desc.hpp"

namespace trainsim {

// One measured row, after aliases are resolved (rmsnorm -> LayerNorm, grouped_gemm -> Gemm).
struct OpRecord {
  std::string gpu;
  KernelKind kind = KernelKind::Gemm;
  Precision dtype = Precision::BF16;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool causal = false;  // kept for fused attention only; false for every other kind
  double bytes = 0;     // HBM bytes; the shape of memory-bound kinds
  double time_us = 0;
  int line = 0;  // where it came from, for messages
};

// How a lookup got its answer.
enum class LookupRule { Exact, Interpolated, Extrapolated };
const char* to_string(LookupRule r);

struct OpLookup {
  double time_s = 0;
  LookupRule rule = LookupRule::Exact;
};

// Kinds whose shape is (m, n, k, batch) and whose work is FLOPs: GEMMs and attention. Every other
// kind is memory-bound and its shape is its HBM bytes.
bool is_tensor_kind(KernelKind kind);

// The work measure lookups interpolate over, from the shape as src/workload/kernels_factory.cpp
// computes FLOPs: gemm / attention_unfused 2*m*n*k*batch; flash forward 4*batch*m*n*k (halved when
// causal), backward 2.5x that; memory-bound kinds: bytes. 0 when the shape has no work.
double op_work(KernelKind kind, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, bool causal,
               double bytes);
double op_work(const KernelDesc& k);

class OpDatabase {
 public:
  // Throws trainsim::Error "PATH:LINE: <what is wrong>" for the first malformed row (or
  // "PATH: ..." when the file cannot be read, has no header or no rows).
  static OpDatabase load(const std::string& path);
  static OpDatabase parse(std::string_view text, const std::string& path_for_messages);

  // Time of kernel `k` on `gpu` (exact, case-sensitive GPU name), or nullopt when the database has
  // no row of that (gpu, kind, dtype[, causal]) group or the kernel has no work.
  std::optional<double> time_s(const std::string& gpu, const KernelDesc& k) const;
  std::optional<OpLookup> lookup(const std::string& gpu, const KernelDesc& k) const;

  const std::vector<OpRecord>& records() const { return records_; }
  const std::string& path() const { return path_; }
  bool has_gpu(const std::string& gpu) const;
  std::vector<std::string> gpus() const;  // distinct GPU names, in order of first appearance

 private:
  using GroupKey = std::tuple<std::string, KernelKind, Precision, bool>;  // gpu, kind, dtype, causal
  void add(OpRecord r);

  std::string path_;
  std::vector<OpRecord> records_;
  // Each group's rows as indexes into records_, sorted by work (rows of equal work in file order).
  std::map<GroupKey, std::vector<std::size_t>> groups_;
};

}  // namespace trainsim
