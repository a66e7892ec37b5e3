#pragma once
// DeepEP's communication buffers (deepseek-ai/DeepEP, normal kernels): the expert-parallel sizes it has a config for
// and the NVLink and RDMA buffers Megatron's DeepEP manager allocates once per process (get_buffer: the larger of
// the dispatch and combine configs' size hints for the group).
#include <cstdint>
#include <vector>

namespace trainsim {

// SMs DeepEP's normal kernels hold, and its buffers are sized for (Megatron --moe-deepep-num-sms, default 20).
inline constexpr int kDeepEpSms = 20;

// The expert-parallel group sizes DeepEP's recommended configs cover (Buffer.get_dispatch_config /
// get_combine_config; any other size is "Unsupported number of EP ranks").
const std::vector<int>& deepep_supported_ranks();
bool deepep_supports(int ranks);

// Bytes of the NVLink buffer plus the RDMA buffer (0 inside one node) for tokens of `hidden_bytes` (hidden x 2 for
// bf16) over `ranks`, with kernels on `sms` SMs (csrc/legacy/config.hpp get_nvl_buffer_size_hint,
// get_rdma_buffer_size_hint). `ranks` must be supported.
double deepep_buffer_bytes(std::int64_t hidden_bytes, int ranks, int sms);

}  // namespace trainsim
