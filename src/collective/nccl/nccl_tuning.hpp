#pragma once
// NCCL's cost model (NCCL 2.30.7 src/tuning, ncclTopoTuneModel): a latency (µs) and an
// algorithm bandwidth (GB/s) per (function, algorithm, protocol), computed once per communicator;
// per call time = lat + nBytes / (1000 · bw) with the call-time corrections of ncclTopoGetAlgoTime, and
// the algorithm/protocol with the smallest time wins (src/enqueue.cc topoGetAlgoInfo).
#include <array>
#include <optional>

#include "collective/nccl/nccl_env.hpp"
#include "collective/nccl/nccl_topology.hpp"

namespace trainsim {

struct NcclCostEntry {
  double latency_us = 0;
  double algbw_GBps = 0;  // 0 = not usable (not applicable, unsupported or disabled)
};

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  double time_us = 0;
  int channels = 0;  // nMaxChannels for this call (topoGetAlgoInfo)
};

class NcclTuningModel {
 public:
  NcclTuningModel(const NcclTopology& topo, const NcclEnv& env);

  // ncclTopoTuneModel's table entry, after enable/disable (bw 0 when unusable).
  NcclCostEntry entry(NcclFunction f, NcclAlgorithm a, NcclProtocol p) const;
  // The same entry before the user's NCCL_ALGO/NCCL_PROTO (what the hardware allows).
  NcclCostEntry hardware_entry(NcclFunction f, NcclAlgorithm a, NcclProtocol p) const;
  // ncclTopoGetAlgoTime for one call of nBytes; nullopt when the combination is unusable.
  std::optional<double> time_us(NcclFunction f, NcclAlgorithm a, NcclProtocol p, double nbytes) const;
  // Fastest usable combination (ties keep NCCL's loop order). If the user's lists leave nothing for
  // `f`, NCCL falls back to Ring with the protocols NCCL_PROTO still allows (NVIDIA/nccl#1304);
  // throws ScenarioError("nccl.NCCL_PROTO"/"nccl.NCCL_ALGO") when even that is empty.
  //
  // A group of calls aggregated for selection (ncclPrepareTasks: same function, sizes within 4×) is chosen on
  // the aggregate's nBytes with `num_pipe_ops` = ceil(#calls / nChannels), which multiplies the
  // latency term (latCount, ncclTopoGetAlgoTime); the result's time is then the whole aggregate's.
  NcclChoice choose(NcclFunction f, double nbytes, int num_pipe_ops = 1) const;
  // nMaxChannels for a call (topoGetAlgoInfo).
  int channels_for(NcclAlgorithm a, NcclProtocol p, double nbytes) const;

  const NcclTopology& topology() const { return topo_; }
  const NcclEnv& env() const { return env_; }

 private:
  static constexpr int kF = kNumNcclFunctions, kA = 7, kP = 3;
  NcclTopology topo_;
  NcclEnv env_;
  std::array<std::array<std::array<NcclCostEntry, kP>, kA>, kF> hw_{};  // hardware table
  std::array<std::array<std::array<bool, kP>, kA>, kF> enabled_{};      // after user lists

  void fill(NcclFunction f, int a, int p);
  double time_for(NcclFunction f, int a, int p, const NcclCostEntry& e, double nbytes, int num_pipe_ops = 1) const;
  int collnet_direct_channels(double nbytes) const;
};

}  // namespace trainsim
