#include "network/packet/packet_config.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

namespace trainsim {

namespace {
void require(bool ok, const char* field, const std::string& expected) {
  if (!ok) throw Error(fmt::format("packet network: {}: expected {}", field, expected));
}
bool positive_rate(double r) { return std::isfinite(r) && r > 0; }
}  // namespace

void PacketConfig::validate() const {
  require(mtu_payload_bytes > 0 && mtu_payload_bytes <= 1'000'000, "mtu_payload_bytes",
          fmt::format("1..1000000 bytes, got {}", mtu_payload_bytes));
  require(header_bytes >= 0 && header_bytes <= 10'000, "header_bytes",
          fmt::format("0..10000 bytes, got {}", header_bytes));
  require(port_buffer_bytes >= mtu_payload_bytes + header_bytes, "port_buffer_bytes",
          fmt::format("at least one packet ({} bytes), got {}", mtu_payload_bytes + header_bytes, port_buffer_bytes));
  require(ecn.kmin_bytes >= 0 && ecn.kmax_bytes > ecn.kmin_bytes, "ecn.kmin_bytes/kmax_bytes",
          fmt::format("0 <= kmin < kmax, got kmin {} kmax {}", ecn.kmin_bytes, ecn.kmax_bytes));
  require(ecn.pmax >= 0 && ecn.pmax <= 1, "ecn.pmax", fmt::format("a probability in [0, 1], got {}", ecn.pmax));
  require(pfc.xon_bytes >= 0 && pfc.xoff_bytes > pfc.xon_bytes, "pfc.xoff_bytes/xon_bytes",
          fmt::format("0 <= xon < xoff, got xon {} xoff {}", pfc.xon_bytes, pfc.xoff_bytes));
  require(dcqcn.g > 0 && dcqcn.g < 1, "dcqcn.g", fmt::format("0 < g < 1, got {}", dcqcn.g));
  require(dcqcn.alpha_period > 0, "dcqcn.alpha_period", "a positive time");
  require(dcqcn.increase_period > 0, "dcqcn.increase_period", "a positive time");
  require(dcqcn.increase_bytes > 0, "dcqcn.increase_bytes", "a positive byte count");
  require(dcqcn.fast_recovery_steps >= 0, "dcqcn.fast_recovery_steps", "a count >= 0");
  require(positive_rate(dcqcn.additive_increase_Bps), "dcqcn.additive_increase_Bps", "a rate > 0");
  require(positive_rate(dcqcn.hyper_increase_Bps), "dcqcn.hyper_increase_Bps", "a rate > 0");
  require(positive_rate(dcqcn.min_rate_Bps), "dcqcn.min_rate_Bps", "a rate > 0");
  require(dcqcn.cnp_interval >= 0, "dcqcn.cnp_interval", "a time >= 0");
  require(dcqcn.initial_alpha >= 0 && dcqcn.initial_alpha <= 1, "dcqcn.initial_alpha", "a value in [0, 1]");
  require(timely.segment_bytes > 0, "timely.segment_bytes", "a positive byte count");
  require(timely.ewma_alpha > 0 && timely.ewma_alpha <= 1, "timely.ewma_alpha", "a weight in (0, 1]");
  require(timely.beta > 0 && timely.beta <= 1, "timely.beta", "a factor in (0, 1]");
  require(timely.t_low >= 0 && timely.t_high > timely.t_low, "timely.t_low/t_high",
          fmt::format("0 <= t_low < t_high, got t_low {} ps t_high {} ps", timely.t_low, timely.t_high));
  require(timely.min_rtt > 0, "timely.min_rtt", "a positive time");
  require(positive_rate(timely.additive_increase_Bps), "timely.additive_increase_Bps", "a rate > 0");
  require(timely.hai_after >= 1, "timely.hai_after", "a count >= 1");
  require(positive_rate(timely.min_rate_Bps), "timely.min_rate_Bps", "a rate > 0");
  require(switch_buffer.size_bytes >= 0, "switch_buffer.size_bytes", "a byte count >= 0");
  require(std::isfinite(switch_buffer.alpha) && switch_buffer.alpha > 0 && switch_buffer.alpha <= 64,
          "switch_buffer.alpha", fmt::format("0 < alpha <= 64, got {}", switch_buffer.alpha));
  require(switch_buffer.headroom_bytes >= -1, "switch_buffer.headroom_bytes", "a byte count >= 0, or -1 (auto)");
  require(switch_buffer.resume_offset_bytes >= 0, "switch_buffer.resume_offset_bytes", "a byte count >= 0");
  require(retransmit.timeout > 0, "retransmit.timeout", "a positive time");
}

}  // namespace trainsim
