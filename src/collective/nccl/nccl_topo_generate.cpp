// The node NCCL would detect on a DGX/HGX-like machine built from the scenario's cluster block
// (docs/collectives.md): two CPU sockets, one PCIe switch per GPU holding that GPU and its NIC(s),
// and the scale-up fabric as NVLinks. Ampere (SM 80-89) follows the DGX-A100 / HGX-A100 board
// instead: GPUs in pairs, each pair's two GPUs and their NICs on separate downstream ports of one
// PCIe switch, so both GPUs of a pair reach both NICs of the pair through two bridges - the PXB that
// `nvidia-smi topo -m` prints on a DGX A100 (GPU0/GPU1 to mlx5_0/mlx5_1: PXB, to the others: SYS).
// That PXB matters: NCCL's ring search then closes each channel on one NIC at PXB (crossNic 0) and
// pre-Hopper LL128 is enabled only up to PXB (tuning.cc), whereas one private switch per GPU makes
// the search close rings through another GPU's NIC (PXN), which disables LL128 on A100. It is written as an
// NCCL_TOPO_FILE document and read back with the XML reader, so generated and user-supplied topologies go through one
// code path.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "collective/nccl/nccl_node_topology.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

std::string hex_bus(int domain, int bus) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:00.0", domain, bus);
  return buf;
}

bool is_amd(const std::string& vendor) {
  std::string v = vendor;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return v == "amd";
}

struct Layout {
  int ngpus = 0;
  int sm = 90;
  bool amd = false;
  std::string host_cpu;    // GpuSpec::host_cpu: "grace", "intel", "amd" or "" (the GPU vendor's usual x86 host)
  std::string link_speed;  // PCIe generation of GPUs, NICs and switches
  int nics = 0;
  int nvlinks = 0;  // NVLinks per GPU
  bool nvswitch = false;
  int domain = 1;  // GPUs per NVLink island (mesh / small NVSwitch domains)
};

Layout layout_of(const ClusterSpec& c) {
  Layout l;
  l.ngpus = c.gpus_per_node;
  if (l.ngpus <= 0)
    throw ScenarioError("", "cluster.gpus_per_node", "must be positive to build the NCCL node topology");
  if (l.ngpus > 512)
    throw ScenarioError("", "cluster.gpus_per_node", "more than 512 GPUs in one node is not supported");
  l.sm = c.gpu.sm_version > 0 ? c.gpu.sm_version : 90;  // AMD / custom parts: Hopper-class
  l.amd = is_amd(c.gpu.vendor);
  l.host_cpu = c.gpu.host_cpu.empty() ? (l.amd ? "amd" : "intel") : c.gpu.host_cpu;
  // PCIe by generation: SM90+ Gen5 x16 (48 GB/s), SM80 Gen4 (24), older Gen3 (12) (NCCL's topo.cc: width x speed).
  l.link_speed = l.sm >= 90 ? "32.0 GT/s PCIe" : l.sm >= 80 ? "16.0 GT/s PCIe" : "8.0 GT/s PCIe";
  l.nics = std::max(0, c.nics_per_node);
  if (l.nics > 13 * l.ngpus) throw ScenarioError("", "cluster.nics_per_node", "more than 13 NICs per GPU");
  const double bw = c.scale_up.bandwidth_GBps > 0 ? c.scale_up.bandwidth_GBps : c.gpu.scale_up_GBps;
  // NVLink count from the nominal per-link rate (25 GB/s up to NVLink4, 50 GB/s NVLink5), e.g.
  // H100 450 / 25 = 18 links, which NCCL then counts at 20.6 GB/s each (topo.h, SM90 NVLink bandwidth).
  const double per_link = l.sm >= 100 ? 50.0 : 25.0;
  if (c.scale_up.kind != ScaleUpKind::PCIe && bw > 0) l.nvlinks = static_cast<int>(std::lround(bw / per_link));
  const int domain = c.scale_up.domain_size > 0 ? c.scale_up.domain_size : l.ngpus;
  l.domain = std::min(domain, l.ngpus);
  l.nvswitch = c.scale_up.kind == ScaleUpKind::NVSwitch && l.domain >= l.ngpus && l.nvlinks > 0;
  return l;
}

// Busids: PCI domain g / 8, switch at bus 0x10 + 0x10·(g mod 8), its GPU one bus below, NICs after.
std::string switch_bus(int g) { return hex_bus(g / 8, 0x10 + 0x10 * (g % 8)); }
std::string gpu_bus(int g) { return hex_bus(g / 8, 0x11 + 0x10 * (g % 8)); }
std::string nic_bus(int g, int k) { return hex_bus(g / 8, 0x12 + k + 0x10 * (g % 8)); }
// Paired (Ampere) layout: downstream ports of GPU g's switch; the pair's top switch is switch_bus of
// its first GPU, so ports use domain 0x100 + g / 8 to stay distinct from the buses above.
std::string gpu_port_bus(int g) { return hex_bus(0x100 + g / 8, 0x10 + 0x10 * (g % 8)); }
std::string nic_port_bus(int g, int k) { return hex_bus(0x100 + g / 8, 0x11 + k + 0x10 * (g % 8)); }

bool paired_layout(const Layout& l) { return l.sm >= 80 && l.sm < 90 && !l.amd && l.ngpus >= 2; }

}  // namespace

std::string generate_node_topology_xml(const ClusterSpec& cluster) {
  const Layout l = layout_of(cluster);
  // NIC j sits under the switch of GPU floor(j·G/N): N/G NICs per GPU, or one NIC per G/N GPUs under
  // the first of them.
  std::vector<std::vector<int>> nics_of(static_cast<std::size_t>(l.ngpus));
  for (int j = 0; j < l.nics; ++j) {
    nics_of[static_cast<std::size_t>(static_cast<long long>(j) * l.ngpus / l.nics)].push_back(j);
  }
  const long long mbps = std::max(1LL, std::llround(cluster.nic_gbps * 1000.0));
  const auto socket_of = [&](int g) { return l.ngpus >= 2 ? g * 2 / l.ngpus : 0; };

  std::ostringstream x;
  x << "<system version=\"1\">\n";
  const bool pairs = paired_layout(l);
  for (int s = 0; s < 2; ++s) {
    if (l.host_cpu == "grace") {
      // NVIDIA Grace (GB200 / GB300 trays): arm64, which NCCL's XML gives no vendor.
      x << " <cpu numaid=\"" << s << "\" arch=\"arm64\">\n";
    } else if (l.host_cpu == "amd") {
      x << " <cpu numaid=\"" << s << "\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"25\" modelid=\"1\">\n";
    } else {
      // Sapphire Rapids (model 143) with Hopper and newer, an Ice Lake-class part before.
      x << " <cpu numaid=\"" << s << "\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\""
        << (l.sm >= 90 ? 143 : 106) << "\">\n";
    }
    for (int g = 0; g < l.ngpus; ++g) {
      if (socket_of(g) != s) continue;
      // Paired layout: the pair's top switch opens before its first GPU and closes after its last.
      const bool pair_first = pairs && (g % 2 == 0 || (g > 0 && socket_of(g - 1) != s));
      const bool pair_last = pairs && (g % 2 == 1 || g + 1 == l.ngpus || socket_of(g + 1) != s);
      if (!pairs || pair_first) {
        x << "  <pci busid=\"" << switch_bus(g) << "\" class=\"0x060400\" link_speed=\"" << l.link_speed
          << "\" link_width=\"16\">\n";
      }
      if (pairs) {
        x << "  <pci busid=\"" << gpu_port_bus(g) << "\" class=\"0x060400\" link_speed=\"" << l.link_speed
          << "\" link_width=\"16\">\n";
      }
      x << "   <pci busid=\"" << gpu_bus(g) << "\" class=\"0x030200\" vendor=\"" << (l.amd ? "0x1002" : "0x10de")
        << "\" link_speed=\"" << l.link_speed << "\" link_width=\"16\">\n";
      x << "    <gpu dev=\"" << g << "\" sm=\"" << l.sm << "\" rank=\"" << g << "\" gdr=\"1\">\n";
      if (l.nvswitch) {
        x << "     <nvlink target=\"fffffff:ff:ff.0\" count=\"" << l.nvlinks << "\" tclass=\"0x068000\"/>\n";
      } else if (l.nvlinks > 0 && l.domain > 1) {
        // Mesh (or an NVSwitch domain smaller than the node): direct links to the GPUs of the same
        // island, the GPU's links split evenly; other islands are reached over PCIe / SYS.
        const int first = g / l.domain * l.domain;
        const int last = std::min(first + l.domain, l.ngpus);
        const int peers = last - first - 1;
        const int count = peers > 0 ? std::max(1, static_cast<int>(std::lround(double(l.nvlinks) / peers))) : 0;
        for (int p = first; p < last && count > 0; ++p) {
          if (p != g)
            x << "     <nvlink target=\"" << gpu_bus(p) << "\" count=\"" << count << "\" tclass=\"0x030200\"/>\n";
        }
      }
      x << "    </gpu>\n   </pci>\n";
      if (pairs) x << "  </pci>\n";  // the GPU's downstream port
      const auto& mine = nics_of[static_cast<std::size_t>(g)];
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const int j = mine[k];
        char guid[32];
        std::snprintf(guid, sizeof guid, "0x%016llx",
                      0xa87cb10003e10000ULL + static_cast<unsigned long long>(j) * 0x100);
        if (pairs) {
          x << "  <pci busid=\"" << nic_port_bus(g, static_cast<int>(k)) << "\" class=\"0x060400\" link_speed=\""
            << l.link_speed << "\" link_width=\"16\">\n";
        }
        x << "   <pci busid=\"" << nic_bus(g, static_cast<int>(k))
          << "\" class=\"0x020000\" vendor=\"0x15b3\" device=\"0x1021\" link_speed=\"" << l.link_speed
          << "\" link_width=\"16\">\n";
        x << "    <nic><net name=\"mlx5_" << j << "\" dev=\"" << j << "\" speed=\"" << mbps
          << "\" port=\"1\" latency=\"0\" guid=\"" << guid << "\" maxconn=\"131072\" gdr=\"1\"/></nic>\n";
        x << "   </pci>\n";
        if (pairs) x << "  </pci>\n";  // the NIC's downstream port
      }
      if (!pairs || pair_last) x << "  </pci>\n";
    }
    x << " </cpu>\n";
  }
  x << "</system>\n";
  return x.str();
}

NodeTopology generate_node_topology(const ClusterSpec& cluster) {
  return parse_nccl_topology_xml(generate_node_topology_xml(cluster), "generated node topology", "cluster");
}

}  // namespace trainsim
