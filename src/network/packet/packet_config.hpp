#pragma once
// Parameters of the packet-level RoCE network (docs/packet-network.md), with their defaults and
// where the defaults come from. These are what a scenario will set (simulation.packet.*), so a bad
// value is a trainsim::Error naming the field (validate()), not an internal error.
#include <cstdint>

#include "core/time.hpp"

namespace trainsim {

// DCQCN reaction point (the sender NIC) and notification point (the receiver NIC).
// Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM'15 (DCQCN), §3-§5:
// g = 1/256, alpha update period K = 55 us, rate increase timer T = 55 us, byte counter B = 10 MB,
// fast-recovery steps F = 5, additive increase R_AI = 40 Mb/s, CNP interval N = 50 us.
// NICs expose the same knobs (mlx5: rpg_time_reset, rpg_byte_reset, rpg_threshold, rpg_ai_rate,
// rpg_hai_rate, rpg_min_rate, dce_tcp_g, min_time_between_cnps) with their own firmware defaults.
struct DcqcnConfig {
  double g = 1.0 / 256;                      // alpha gain (paper)
  SimTime alpha_period = 55'000'000;         // K: alpha decays once per 55 us without CNP (paper)
  SimTime increase_period = 55'000'000;      // T: rate increase timer, 55 us (paper)
  std::int64_t increase_bytes = 10'000'000;  // B: byte counter, 10 MB (paper)
  int fast_recovery_steps = 5;               // F (paper)
  double additive_increase_Bps = 40e6 / 8;   // R_AI = 40 Mb/s (paper)
  // R_HAI: the paper leaves it to configuration; 10 x R_AI is our assumption (ns-3 RDMA models
  // commonly use a hyper step an order of magnitude above the additive one).
  double hyper_increase_Bps = 400e6 / 8;
  double min_rate_Bps = 100e6 / 8;    // floor of a cut, 100 Mb/s (assumption)
  SimTime cnp_interval = 50'000'000;  // N: at most one CNP per flow per 50 us (paper)
  double initial_alpha = 1.0;         // paper: alpha starts at 1
};

// TIMELY (the delay-based alternative): Mittal et al., SIGCOMM'15, §6: "segment size of 16 KB, Tlow of 50 us, Thigh
// of 500 us, additive increment of 10 Mbps, and a multiplicative decrement factor (beta) of 0.8"; the EWMA weight
// alpha 0.875, min RTT 20 us and the 5 completions before hyper-active increase as the ns-3 RDMA model of the HPCC
// paper sets them (TimelyAlpha, TimelyMinRtt). The paper ran 10 Gb/s NICs: its 10 Mb/s step is 0.1% of the line
// rate, the share the scenario's default keeps on faster NICs (flow_setup.cpp).
struct TimelyConfig {
  std::int64_t segment_bytes = 16 * 1024;  // an RTT sample per completed segment
  double ewma_alpha = 0.875;
  double beta = 0.8;
  SimTime t_low = 50'000'000;    // 50 us
  SimTime t_high = 500'000'000;  // 500 us
  SimTime min_rtt = 20'000'000;  // 20 us: normalises the gradient
  double additive_increase_Bps = 10e6 / 8;
  int hai_after = 5;
  double min_rate_Bps = 100e6 / 8;  // floor of a cut, as DCQCN's
};

// The senders' congestion control. DCQCN reacts to ECN marks (switches mark only under it); TIMELY to round-trip
// times; none leaves PFC alone to hold the network.
enum class CongestionControl : std::uint8_t { None, Dcqcn, Timely };

// RED-style ECN marking at switch egress queues (by the queue's bytes when a packet joins it).
// Defaults: the DCQCN settings of the HPCC paper's simulations (Li et al., SIGCOMM'19) for
// 25 Gb/s ports: Kmin 100 KB, Kmax 400 KB, Pmax 0.2. (The DCQCN paper itself used Kmin 5 KB,
// Kmax 200 KB, Pmax 1% on 40 Gb/s.) Scale Kmin/Kmax with the port speed for faster links.
struct EcnConfig {
  bool enabled = true;
  std::int64_t kmin_bytes = 100'000;
  std::int64_t kmax_bytes = 400'000;
  double pmax = 0.2;
};

// Priority flow control (IEEE 802.1Qbb), one lossless class. Thresholds are static, per ingress
// (bytes queued at a node that came in over one upstream link); real switches derive them from a
// shared buffer dynamically. XOFF above Kmax/number of ingresses usually, so that ECN acts first.
struct PfcConfig {
  bool enabled = true;                   // false: lossy RoCE (drops, go-back-N)
  std::int64_t xoff_bytes = 256 * 1024;  // PAUSE upstream above this (assumption, order of a port's share)
  std::int64_t xon_bytes = 240 * 1024;   // RESUME at or below this: ~4 packets of hysteresis
};

// A shared buffer per switch with dynamic thresholds (switch_buffer.hpp), in place of the per-port limits above
// (PfcConfig's XOFF/XON and port_buffer_bytes), which then apply only where no switch is (a NIC forwarding to its
// host). Off by default (size 0): the per-port model is what earlier results used.
struct SwitchBufferConfig {
  std::int64_t size_bytes = 0;  // each switch's buffer; 0: none (per-port thresholds)
  // alpha of the dynamic threshold, 1/8: the HPCC paper's ns-3 RDMA model (pfc_a_shift 3) for ports at the NIC rate.
  double alpha = 0.125;
  // Headroom of each lossless ingress; -1: pfc_headroom_bytes of its link (2 x bandwidth-delay + 2 packets).
  std::int64_t headroom_bytes = -1;
  // A paused ingress resumes this far below the threshold: 3 KiB, as the ns-3 model's resume_offset.
  std::int64_t resume_offset_bytes = 3 * 1024;
};

// Lossy mode only: go-back-N recovery as RoCE NICs without selective repeat do it.
struct RetransmitConfig {
  // Sender watchdog: no delivery progress for this long with packets outstanding -> go back to the
  // first undelivered packet. Real NICs wait far longer (IB timeout 4.096 us x 2^n, ms); 200 us
  // keeps tail-drop recovery visible in short runs.
  SimTime timeout = 200'000'000;
};

// How a flow given several routes (PacketNetwork::start with routes) spreads its packets over them.
enum class Multipath : std::uint8_t {
  Spray,     // per-packet spraying: the flow's packets take its routes in turn
  Adaptive,  // adaptive routing: at each switch where its routes part, a packet takes the one whose next port has
             // the least queued
};

// How packets cross host links (NVLink, PCIe: PacketNetwork::set_host_link). Fifo: each is a FIFO, so packets that
// meet on one queue behind each other, as on the fabric. Delay: a packet crosses each in its serialization and latency
// whatever else crosses it, and a run of host links costs one event instead of one per link: NVLink traffic inside a
// scale-up domain is not what a packet-level run looks at, and a coupled ring channel's path is mostly host links.
enum class HostLinkModel : std::uint8_t { Fifo, Delay };

struct PacketConfig {
  std::int32_t mtu_payload_bytes = 4096;  // RoCE path MTU 4096 (the largest IB MTU)
  // Per packet on the wire: Ethernet 14 + FCS 4 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 62 B.
  // Preamble and inter-frame gap (20 B) are not counted: link capacities are data rates.
  std::int32_t header_bytes = 62;
  // Egress queue limit per port. Lossy mode drops a packet that does not fit; lossless mode relies
  // on PFC and only records the peak (1 MiB: a shallow-buffer switch's share per port).
  std::int64_t port_buffer_bytes = 1024 * 1024;
  std::uint64_t seed = 1;  // ECN marking draws: hash(seed, flow serial, packet, hop)
  CongestionControl congestion_control = CongestionControl::Dcqcn;
  EcnConfig ecn;
  PfcConfig pfc;
  DcqcnConfig dcqcn;
  TimelyConfig timely;
  SwitchBufferConfig switch_buffer;
  RetransmitConfig retransmit;
  Multipath multipath = Multipath::Spray;
  HostLinkModel host_links = HostLinkModel::Fifo;

  // Throws trainsim::Error naming the first bad field.
  void validate() const;
};

}  // namespace trainsim
