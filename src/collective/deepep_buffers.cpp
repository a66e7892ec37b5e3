#include "collective/deepep_buffers.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace trainsim {

namespace {

// One row of DeepEP's recommended configs (deep_ep/buffers/legacy.py, Config(num_sms, nvl_send, nvl_recv,
// rdma_send, rdma_recv)): the chunk sizes the buffer hints read.
struct DeepEpConfig {
  int nvl_recv, rdma_send, rdma_recv;
};

struct DeepEpConfigs {
  int ranks;
  DeepEpConfig dispatch, combine;
};

const DeepEpConfigs kConfigs[] = {
    {2, {256, 6, 128}, {256, 6, 128}},    {4, {256, 6, 128}, {256, 6, 128}},    {8, {256, 6, 128}, {256, 6, 128}},
    {16, {288, 20, 128}, {288, 12, 128}}, {24, {288, 8, 128}, {288, 8, 128}},   {32, {288, 8, 128}, {288, 8, 128}},
    {48, {288, 8, 128}, {288, 8, 128}},   {64, {288, 8, 128}, {288, 8, 128}},   {96, {480, 12, 128}, {480, 8, 128}},
    {128, {560, 12, 128}, {560, 8, 128}}, {144, {720, 12, 128}, {720, 8, 128}}, {160, {720, 12, 128}, {720, 8, 128}},
};

constexpr int kNvlPeers = 8;        // LEGACY_NUM_MAX_NVL_PEERS
constexpr double kMaxTopK = 128;    // the hints' kNumMaxTopK
constexpr double kMaxScales = 128;  // kNumMaxScales
constexpr double kSourceMeta = 8;   // internode::SourceMeta: two ints
constexpr double kTopkIndex = 8;    // topk_idx_t: int64
constexpr double kFloat = 4, kInt = 4, kInt4 = 16;

double nvl_bytes(const DeepEpConfig& c, double hidden_bytes, int ranks, int sms) {
  const double rdma_ranks = std::max(ranks / kNvlPeers, 1), nvl_ranks = std::min(ranks, kNvlPeers);
  const double lanes = (sms / 2) * nvl_ranks, tokens = lanes * c.nvl_recv;
  return lanes * (2 * rdma_ranks + 3) * kInt +
         tokens * (hidden_bytes + kSourceMeta + kMaxTopK * kTopkIndex + kMaxTopK * kFloat + kMaxScales * kFloat);
}

double rdma_bytes(const DeepEpConfig& c, double hidden_bytes, int ranks, int sms) {
  if (ranks <= kNvlPeers) return 0;  // inside one node: no RDMA buffer
  // Config's constructor rounds the receive chunk up to a multiple of the send chunk.
  const int recv = (c.rdma_recv + c.rdma_send - 1) / c.rdma_send * c.rdma_send;
  const double lanes = (sms / 2) * static_cast<double>(ranks / kNvlPeers), tokens = lanes * recv;
  return lanes * (kNvlPeers * 2 + 2) * 2 * kInt +
         2 * tokens *
             (hidden_bytes + kSourceMeta + kMaxTopK * kTopkIndex + kMaxTopK * kFloat + kMaxScales * kFloat + kInt4);
}

double aligned(double bytes) { return static_cast<double>((static_cast<std::int64_t>(bytes) + 127) / 128 * 128); }

}  // namespace

const std::vector<int>& deepep_supported_ranks() {
  static const std::vector<int> ranks = [] {
    std::vector<int> out;
    for (const DeepEpConfigs& c : kConfigs) out.push_back(c.ranks);
    return out;
  }();
  return ranks;
}

bool deepep_supports(int ranks) {
  const auto& all = deepep_supported_ranks();
  return std::find(all.begin(), all.end(), ranks) != all.end();
}

double deepep_buffer_bytes(std::int64_t hidden_bytes, int ranks, int sms) {
  const auto it =
      std::find_if(std::begin(kConfigs), std::end(kConfigs), [&](const DeepEpConfigs& c) { return c.ranks == ranks; });
  TRAINSIM_CHECK(it != std::end(kConfigs), "DeepEP has no config for " + std::to_string(ranks) + " ranks");
  const double h = static_cast<double>(hidden_bytes);
  double nvl = 0, rdma = 0;
  for (const DeepEpConfig& c : {it->dispatch, it->combine}) {
    nvl = std::max(nvl, aligned(nvl_bytes(c, h, ranks, sms)));
    rdma = std::max(rdma, aligned(rdma_bytes(c, h, ranks, sms)));
  }
  return nvl + rdma;
}

}  // namespace trainsim
