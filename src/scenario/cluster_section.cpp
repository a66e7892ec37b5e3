// The `cluster:` block: GPUs, nodes, the scale-up fabric, NICs and the scale-out network.
#include <cctype>
#include <filesystem>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"
#include "topology/simai_fabric.hpp"

namespace trainsim::scenario_detail {

namespace {

// The scale-up fabric is the GPU vendor's: NVLink (through NVSwitch, or a mesh) on NVIDIA parts, Infinity
// Fabric (xGMI links, fully connected within a platform) on AMD ones; PCIe on either. The default follows the
// vendor, so an MI300X node is not described as an NVSwitch system (with NVSwitch paths in the NCCL/RCCL
// topology); a kind of the other vendor is refused. A gpu_spec without a vendor keeps every choice.
ScaleUpKind scale_up_kind(const Section& scale_up, const GpuSpec& gpu) {
  const std::string vendor = to_lower(gpu.vendor);
  const bool amd = vendor == "amd", nvidia = vendor == "nvidia";
  const auto kind = scale_up.choice<ScaleUpKind>("kind", {{"nvswitch", ScaleUpKind::NVSwitch},
                                                          {"nvlink-mesh", ScaleUpKind::NVLinkMesh},
                                                          {"pcie", ScaleUpKind::PCIe},
                                                          {"infinity-fabric", ScaleUpKind::InfinityFabric}});
  if (!kind) return amd ? ScaleUpKind::InfinityFabric : ScaleUpKind::NVSwitch;
  const bool nvlink = *kind == ScaleUpKind::NVSwitch || *kind == ScaleUpKind::NVLinkMesh;
  if (amd && nvlink)
    scale_up.fail("kind", std::string(to_string(*kind)) + " is NVIDIA's NVLink; " + gpu.name +
                              " is an AMD GPU, whose GPUs connect over Infinity Fabric (xGMI): use infinity-fabric "
                              "(the default for AMD GPUs) or pcie");
  if (nvidia && *kind == ScaleUpKind::InfinityFabric)
    scale_up.fail("kind", "infinity-fabric is AMD's xGMI; " + gpu.name +
                              " is an NVIDIA GPU: use nvswitch (the default), nvlink-mesh or pcie");
  return *kind;
}

// `file_GBps`: the NVLink bandwidth a SimAI topology file gives each GPU, the default instead of the GPU's.
ScaleUpSpec read_scale_up(const Section& scale_up, const GpuSpec& gpu, int gpus_per_node,
                          std::optional<double> file_GBps) {
  ScaleUpSpec s;
  s.kind = scale_up_kind(scale_up, gpu);
  // Defaults: the GPU's own scale-up bandwidth, and a domain of one node.
  s.bandwidth_GBps = file_GBps.value_or(gpu.scale_up_GBps);
  scale_up.read("bandwidth_GBps", s.bandwidth_GBps, Bound::Positive);
  if (scale_up.has("bandwidth_GBps"))
    require_at_least(scale_up, "bandwidth_GBps", s.bandwidth_GBps, kMinLinkGBps, "GB/s",
                     "one PCIe Gen3 lane; NVLink and Infinity Fabric give 20-900 GB/s per GPU");
  if (s.bandwidth_GBps <= 0)
    scale_up.missing("bandwidth_GBps", "GPU " + gpu.name + " has no scale-up bandwidth to default to");
  s.domain_size = gpus_per_node;
  scale_up.read("domain_size", s.domain_size, Bound::Positive);
  // A domain is part of a node (two NVLink pairs in a PCIe box) or spans whole nodes (NVL72).
  if (gpus_per_node % s.domain_size != 0 && s.domain_size % gpus_per_node != 0)
    scale_up.fail("domain_size", "domain_size " + std::to_string(s.domain_size) + " must divide gpus_per_node " +
                                     std::to_string(gpus_per_node) + " or be a multiple of it");
  s.hardware_domain_size = s.domain_size;
  return s;
}

// The GPUs of each scale-up domain the job's ranks occupy. A domain that spans nodes (NVL72: 18 trays of 4 GPUs)
// is rarely filled to the last tray by a job whose node count it does not divide: NVIDIA's launchers for such
// systems ask Slurm for a segment (segment_gpus_per_domain), so 64 nodes run as 4 racks x 16 trays, every
// parallel group of 64 ranks inside one NVLink domain. auto does the same; a number places that many GPUs per
// domain (ranks fill one domain, then the next; the last may hold fewer).
void resolve_job_placement(const Section& scale_up, ClusterSpec& c) {
  ScaleUpSpec& s = c.scale_up;
  const int node = c.gpus_per_node, hardware = s.hardware_domain_size;
  const bool spans_nodes = hardware > node;
  const std::string key = "job_gpus_per_domain";
  if (scale_up.has(key) && !scale_up.is_auto(key)) {
    const YAML::Node value = scale_up.get(key);
    if (!value.IsScalar() || value.Scalar().find_first_not_of("0123456789") != std::string::npos)
      scale_up.fail(key, "expected auto or a positive whole number of GPUs, got " + describe_node(value));
    const int used = *scale_up.int_value(key, Bound::Positive);
    s.job_placement_auto = false;
    if (!spans_nodes) {
      if (used != hardware)
        scale_up.fail(key, "job_gpus_per_domain " + std::to_string(used) +
                               " applies to scale-up domains that span "
                               "several nodes; this domain (domain_size " +
                               std::to_string(hardware) + ") is within a node of " + std::to_string(node) +
                               " GPUs: leave it out or give " + std::to_string(hardware));
      return;
    }
    if (used > hardware || used % node != 0)
      scale_up.fail(key, "job_gpus_per_domain " + std::to_string(used) + " must be a whole number of nodes of " +
                             std::to_string(node) + " GPUs and at most domain_size " + std::to_string(hardware));
    s.domain_size = used;
    return;
  }
  s.domain_size = segment_gpus_per_domain(c.num_gpus, node, hardware);
}

// cluster.network.roce: the packet-level network's RoCE settings (docs/packet-network.md).
NetworkSpec::Roce read_roce(const Section& roce) {
  NetworkSpec::Roce r;
  roce.read("mtu_bytes", r.mtu_bytes, Bound::Positive);
  if (r.mtu_bytes != 256 && r.mtu_bytes != 512 && r.mtu_bytes != 1024 && r.mtu_bytes != 2048 && r.mtu_bytes != 4096)
    roce.fail("mtu_bytes", "RoCE path MTUs are 256, 512, 1024, 2048 or 4096 bytes, got " + std::to_string(r.mtu_bytes));
  roce.read("lossless", r.lossless);
  using Cc = NetworkSpec::Roce::CongestionControl;
  if (auto cc =
          roce.choice<Cc>("congestion_control", {{"dcqcn", Cc::Dcqcn}, {"timely", Cc::Timely}, {"none", Cc::None}}))
    r.congestion_control = *cc;
  roce.read("timely_tlow_us", r.timely_tlow_us, Bound::NonNegative);
  roce.read("timely_thigh_us", r.timely_thigh_us, Bound::Positive);
  if (r.timely_thigh_us <= r.timely_tlow_us)
    roce.fail("timely_thigh_us", fmt::format("timely_thigh_us ({:g}) is not above timely_tlow_us ({:g}): TIMELY cuts "
                                             "by the gradient between them",
                                             r.timely_thigh_us, r.timely_tlow_us));
  roce.read("ecn_kmin_kb", r.ecn_kmin_kb, Bound::Positive);
  roce.read("ecn_kmax_kb", r.ecn_kmax_kb, Bound::Positive);
  roce.read("ecn_pmax", r.ecn_pmax, Bound::Positive);
  if (r.ecn_kmax_kb <= r.ecn_kmin_kb)
    roce.fail("ecn_kmax_kb", "ecn_kmax_kb (" + fmt::format("{:g}", r.ecn_kmax_kb) + ") is not above ecn_kmin_kb (" +
                                 fmt::format("{:g}", r.ecn_kmin_kb) +
                                 "): marking starts at Kmin and is certain at Kmax");
  if (r.ecn_pmax > 1)
    roce.fail("ecn_pmax", "a marking probability is at most 1, got " + fmt::format("{:g}", r.ecn_pmax));
  roce.read("pfc_xoff_kb", r.pfc_xoff_kb, Bound::Positive);
  roce.read("pfc_xon_kb", r.pfc_xon_kb, Bound::Positive);
  if (r.pfc_xon_kb >= r.pfc_xoff_kb)
    roce.fail("pfc_xon_kb", "pfc_xon_kb (" + fmt::format("{:g}", r.pfc_xon_kb) + ") is not below pfc_xoff_kb (" +
                                fmt::format("{:g}", r.pfc_xoff_kb) +
                                "): a paused port resumes below the threshold that paused it");
  roce.read("port_buffer_mb", r.port_buffer_mb, Bound::Positive);
  // A port holds at least one packet with its headers (62 B: Ethernet, IP, UDP, BTH, ICRC), or nothing moves.
  if (r.port_buffer_mb * 1e6 < r.mtu_bytes + 62)
    roce.fail("port_buffer_mb", fmt::format("{:g} MB holds less than one packet of mtu_bytes {} plus 62 header bytes",
                                            r.port_buffer_mb, r.mtu_bytes));
  roce.read("switch_buffer_mb", r.switch_buffer_mb, Bound::NonNegative);
  roce.read("buffer_alpha", r.buffer_alpha, Bound::Positive);
  require_at_most(roce, "buffer_alpha", r.buffer_alpha, 64, "",
                  "a queue allowed 64 x the free buffer is unbounded in practice");
  if (roce.has("pfc_headroom_kb") && !roce.is_auto("pfc_headroom_kb")) {
    double kb = 0;
    roce.read("pfc_headroom_kb", kb, Bound::NonNegative);
    r.pfc_headroom_kb = kb;
  }
  // Sizes become whole bytes in the packet network: beyond any switch's memory they would not fit its integers.
  for (auto [key, value, limit] : {std::tuple{"port_buffer_mb", r.port_buffer_mb, 1e6},
                                   {"switch_buffer_mb", r.switch_buffer_mb, 1e6},
                                   {"pfc_xoff_kb", r.pfc_xoff_kb, 1e9},
                                   {"pfc_xon_kb", r.pfc_xon_kb, 1e9},
                                   {"pfc_headroom_kb", r.pfc_headroom_kb.value_or(0), 1e9}})
    require_at_most(roce, key, value, limit, std::string(key).ends_with("_mb") ? "MB" : "KB",
                    "a switch buffer of a terabyte is beyond any switch");
  if (r.switch_buffer_mb > 0) {
    // The shared buffer's dynamic thresholds replace the per-port ones: a per-port value given beside it would be
    // ignored at every switch.
    for (const char* key : {"pfc_xoff_kb", "pfc_xon_kb", "port_buffer_mb"})
      if (roce.has(key))
        roce.fail(key, std::string(key) + " is a per-port limit; with switch_buffer_mb each switch's ports share its " +
                           "buffer by dynamic thresholds (buffer_alpha, pfc_headroom_kb): leave it out");
  }
  for (auto [key, step] : {std::pair{"dcqcn_ai_mbps", &r.dcqcn_ai_mbps},
                           {"dcqcn_hai_mbps", &r.dcqcn_hai_mbps},
                           {"timely_ai_mbps", &r.timely_ai_mbps}}) {
    if (!roce.has(key) || roce.is_auto(key)) continue;
    double v = 0;
    roce.read(key, v, Bound::Positive);
    require_at_most(roce, key, v, 1e7, "Mb/s", "a rate step above 10 Tb/s is beyond any NIC's line rate");
    *step = v;
  }
  return r;
}

// cluster.network.simai_topology: a SimAI topology file, resolved next to the scenario (as compute.database is), read
// and given meaning here so that a bad line or a fabric trainsim cannot build fails when the scenario loads. The keys
// that shape a generated fabric would be ignored beside it, so they are refused.
std::optional<SimaiFabric> read_simai_file(const Section& network) {
  std::optional<std::string> path;
  network.read("simai_topology", path);
  if (!path) return std::nullopt;
  if (path->empty()) network.fail("simai_topology", "expected the path of a SimAI topology file, got an empty string");
  for (const char* key :
       {"topology", "tiers", "oversubscription", "pod_size", "switch_radix", "link_latency_ns", "dual_tor"})
    if (network.has(key))
      network.fail(key, std::string(key) +
                            " shapes a generated fabric; with cluster.network.simai_topology the file's switches, "
                            "links, rates and delays are the fabric: leave it out");
  std::filesystem::path file(*path);
  if (file.is_relative() && !network.file().empty() && network.file() != "<string>")
    file = (std::filesystem::path(network.file()).parent_path() / file).lexically_normal();
  try {
    return read_simai_fabric(file.string());
  } catch (const Error& e) { network.fail("simai_topology", e.what()); }
}

NetworkSpec read_network(const Section& network, const std::optional<SimaiFabric>& file) {
  NetworkSpec n;
  if (file) {
    n.topology = NetworkTopology::SimaiFile;
    n.simai_topology = file->file.path;
  }
  if (auto t = network.choice<NetworkTopology>("topology", {{"rail-optimized", NetworkTopology::RailOptimized},
                                                            {"fat-tree", NetworkTopology::FatTree},
                                                            {"hpn", NetworkTopology::HPN},
                                                            {"dragonfly", NetworkTopology::Dragonfly},
                                                            {"ideal", NetworkTopology::Ideal}}))
    n.topology = *t;
  network.read("tiers", n.tiers, Bound::Positive);
  if (network.has("oversubscription")) {
    const YAML::Node node = network.get("oversubscription");
    const std::string path = network.path_of("oversubscription");
    n.oversubscription.clear();
    if (node.IsSequence()) {
      if (node.size() == 0)
        network.fail("oversubscription", "expected a positive number or a list of them, got an empty list");
      for (std::size_t i = 0; i < node.size(); ++i)
        n.oversubscription.push_back(
            parse_number(node[i], path + "[" + std::to_string(i) + "]", network.file(), Bound::Positive));
    } else {
      n.oversubscription.push_back(parse_number(node, path, network.file(), Bound::Positive));
    }
    for (std::size_t i = 0; i < n.oversubscription.size(); ++i)
      require_at_most(network, node.IsSequence() ? "oversubscription[" + std::to_string(i) + "]" : "oversubscription",
                      n.oversubscription[i], kMaxOversubscription, "(down:up)",
                      "built fabrics taper at most about 16:1; beyond 100 an uplink carries under 1% of a port");
    if (n.oversubscription.size() > static_cast<std::size_t>(n.tiers))
      network.fail("oversubscription", std::to_string(n.oversubscription.size()) + " values for " +
                                           std::to_string(n.tiers) +
                                           " tiers (cluster.network.tiers); give at most one per tier");
  }
  network.read("pod_size", n.pod_size, Bound::Positive);
  network.read("switch_radix", n.switch_radix, Bound::Positive);
  if (n.switch_radix < 2)
    network.fail("switch_radix", "a switch needs at least 2 ports, got " + std::to_string(n.switch_radix));
  network.read("link_latency_ns", n.link_latency_ns, Bound::NonNegative);
  network.read("switch_latency_ns", n.switch_latency_ns, Bound::NonNegative);
  require_time_in_range(network, "link_latency_ns", n.link_latency_ns, 1e-9);
  require_time_in_range(network, "switch_latency_ns", n.switch_latency_ns, 1e-9);
  network.read("pcie_GBps", n.pcie_GBps, Bound::Positive);
  require_at_least(network, "pcie_GBps", n.pcie_GBps, kMinLinkGBps, "GB/s",
                   "one PCIe Gen3 lane; a NIC's x16 slot gives 16-64 GB/s");
  if (auto r = network.choice<NetworkSpec::Routing>("routing", {{"ecmp", NetworkSpec::Routing::Ecmp},
                                                                {"adaptive", NetworkSpec::Routing::Adaptive},
                                                                {"spray", NetworkSpec::Routing::Spray}}))
    n.routing = *r;
  n.roce = read_roce(network.child("roce"));
  network.read("dual_tor", n.dual_tor);
  // Dual-ToR is a choice only for the fat-tree; HPN is dual-ToR by design (docs/topologies.md).
  if (network.has("dual_tor") && n.topology != NetworkTopology::FatTree &&
      !(n.topology == NetworkTopology::HPN && n.dual_tor))
    network.fail("dual_tor",
                 n.topology == NetworkTopology::HPN
                     ? std::string("topology hpn is always dual-ToR; dual_tor: false does not apply to it")
                     : std::string("dual_tor applies to topology fat-tree (hpn is always dual-ToR), not to ") +
                           to_string(n.topology));
  return n;
}

}  // namespace

ClusterSpec read_cluster(const Section& cluster) {
  if (!cluster.present()) cluster.fail("", "missing required section cluster");
  ClusterSpec c;
  c.gpu = read_gpu(cluster);
  c.num_gpus = cluster.require_int("num_gpus", Bound::Positive);
  // A SimAI topology file states the servers, NICs and rates: they are the defaults, and what the scenario gives
  // must agree with them (checked at the end, naming the key and the file's line).
  const std::optional<SimaiFabric> file = read_simai_file(cluster.child("network"));
  if (file) c.gpus_per_node = file->file.gpus_per_server;
  cluster.read("gpus_per_node", c.gpus_per_node, Bound::Positive);
  if (c.num_gpus % c.gpus_per_node != 0)
    cluster.fail("num_gpus", "num_gpus " + std::to_string(c.num_gpus) + " is not a multiple of gpus_per_node " +
                                 std::to_string(c.gpus_per_node) + " (set cluster.gpus_per_node for smaller machines)");
  c.scale_up = read_scale_up(cluster.child("scale_up"), c.gpu, c.gpus_per_node,
                             file ? std::optional<double>(static_cast<double>(file->nvlink_bps) / 8e9) : std::nullopt);
  resolve_job_placement(cluster.child("scale_up"), c);
  if (file) {
    c.nics_per_node = file->file.gpus_per_server;
    if (file->nic_bps > 0) c.nic_gbps = static_cast<double>(file->nic_bps) / 1e9;
  }
  cluster.read("nics_per_node", c.nics_per_node, Bound::Positive);
  cluster.read("nic_gbps", c.nic_gbps, Bound::Positive);
  require_at_least(cluster, "nic_gbps", c.nic_gbps, kMinNicGbps, "Gb/s",
                   "1 Gb/s Ethernet is the slowest server port; GPU clusters use 100-800 Gb/s");
  c.network = read_network(cluster.child("network"), file);
  if (c.network.pod_size && c.network.pod_size.value() % c.gpus_per_node != 0)
    cluster.fail("network.pod_size", "pod_size " + std::to_string(*c.network.pod_size) +
                                         " GPUs is not a whole number of nodes of " + std::to_string(c.gpus_per_node));
  if (file) {
    try {
      check_cluster_matches(*file, c);
    } catch (const ScenarioError& e) { throw ScenarioError(cluster.file(), e.key(), e.detail()); }
  }
  return c;
}

}  // namespace trainsim::scenario_detail
