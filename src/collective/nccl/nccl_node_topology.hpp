#pragma once
// One node as NCCL sees it (NCCL src/graph/xml.cc, topo.cc, paths.cc): GPUs, PCIe switches, NVSwitch,
// CPUs, NICs and their network ports, joined by directed links with NCCL's bandwidth constants; the
// best path between every pair of endpoints with NCCL's path types and bottleneck bandwidths (incl.
// the P2P, PXN and GDR rules); and each GPU's NIC per channel. Built either from an XML file in
// NCCL_TOPO_FILE format or generated from the scenario's cluster block.
//
// Vertices are stored in one vector; NCCL's node types become `TopoKind`. Links are directed (one per
// direction) and repeated links to the same remote vertex are summed, as NCCL does.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster_spec.hpp"

namespace trainsim {

enum class TopoKind : std::uint8_t { Gpu, Pci, NvSwitch, Cpu, Nic, Net };
enum class TopoLinkType : std::uint8_t { Loc, Nvl, C2c, Pci, Sys, Net };
// NCCL's path types, in NCCL's order (lower = better): LOC 0 ... DIS 11 (src/graph/topo.h).
enum class PathType : std::uint8_t { Loc, Nvl, Nvb, C2c, Pix, Pxb, P2c, Pxn, Phb, Sys, Net, Dis };
const char* to_string(PathType t);
const char* to_string(TopoKind k);

enum class CpuArch : std::uint8_t { X86, Arm, Power };
enum class CpuVendor : std::uint8_t { Intel, Amd, Zhaoxin, Other };

struct TopoLink {
  int to = -1;  // vertex index
  TopoLinkType type = TopoLinkType::Pci;
  double bw = 0;  // GB/s, this direction
};

struct TopoVertex {
  TopoKind kind = TopoKind::Pci;
  std::int64_t id = 0;  // PCI bus id as a number (GPU/PCI/NIC), NUMA id (CPU), net dev (NET)
  std::vector<TopoLink> links;
  // GPU
  int dev = -1;   // CUDA/NVML device index on the node (drives NIC choice, ncclTopoGetLocalNet)
  int rank = -1;  // local rank (index into NodeTopology::gpus)
  int sm = 0;     // compute capability ×10
  bool gdr = false;
  // NET (one port of a NIC)
  double net_bw = 0;       // speed / 8000, GB/s
  double latency_us = 0;   // NIC "latency" attribute
  std::uint64_t guid = 0;  // ASIC id; ports of one NIC share it
  int port = 0;
  int rail = -1, plane = -1;  // optional hints from the XML
  // CPU
  CpuArch arch = CpuArch::X86;
  CpuVendor vendor = CpuVendor::Intel;
  double inter_socket_bw = 0;  // SYS link bandwidth this CPU model gives (topo.h)
  std::string name;            // for messages and --json dumps (e.g. "mlx5_0", "GPU 3")
};

// The best path from one vertex to another (ncclTopoComputePaths): the lowest type, then the highest bottleneck
// bandwidth, then the fewest hops. `links` lists the traversed links as (from vertex, link index in
// from's `links`), so the graph search can subtract bandwidth along it.
struct TopoPath {
  PathType type = PathType::Dis;
  double bw = 0;
  std::vector<std::pair<int, int>> links;
  int hops() const { return static_cast<int>(links.size()); }
};

// Rules of ncclTopoComputePaths that users can change through the nccl block.
struct PathOptions {
  PathType p2p_level = PathType::Pxb;  // NCCL_P2P_LEVEL (NCCL_P2P_DISABLE=1 -> Loc)
  PathType gdr_level = PathType::P2c;  // NCCL_NET_GDR_LEVEL
  bool pxn_disable = false;            // NCCL_PXN_DISABLE
  bool pxn_c2c = true;                 // NCCL_PXN_C2C
};

struct NodeTopology {
  std::vector<TopoVertex> vertices;
  std::vector<int> gpus;  // vertex index per local rank, in rank order
  std::vector<int> nets;  // vertex index per NET device, in `dev` order
  // Per NET: its index among the NETs of the node it was restricted from (restrict_to_gpus), which is how the
  // network layer numbers a node's NICs. Empty: the NETs were never dropped, index = itself.
  std::vector<int> net_origin;
  int original_net(int net) const {
    return net < 0 || net_origin.empty() ? net : net_origin[static_cast<std::size_t>(net)];
  }
  std::vector<int> cpus;
  int nvswitch = -1;  // the single NVS vertex, -1 if none
  int sm = 0;         // minimum GPU SM on the node
  CpuArch arch = CpuArch::X86;
  CpuVendor vendor = CpuVendor::Intel;

  // Filled by compute_paths: paths[from][to] for from, to in all vertices (only GPU/NET/CPU/NVS
  // sources are computed; other rows stay empty).
  std::vector<std::vector<TopoPath>> paths;

  const TopoPath& gpu_to_gpu(int a, int b) const { return paths[gpus[a]][gpus[b]]; }
  const TopoPath& gpu_to_net(int g, int n) const { return paths[gpus[g]][nets[n]]; }
  const TopoPath& net_to_gpu(int n, int g) const { return paths[nets[n]][gpus[g]]; }

  // NICs local to a GPU (max bw, ties lowest type; ncclTopoGetLocalNet), as indices into `nets`.
  std::vector<int> local_nets(int gpu) const;
  // How a GPU spreads its channels over its local NICs (ncclTopoGetLocalNet): channel c uses
  // nets[(start + c % per_gpu) % nets.size()]. Worked out once per GPU by callers that ask for many channels.
  struct ChannelNets {
    std::vector<int> nets;  // local_nets(gpu)
    int start = 0;
    int per_gpu = 1;
    int at(int channel) const {
      return nets.empty() ? -1
                          : nets[static_cast<std::size_t>((start + channel % per_gpu) % static_cast<int>(nets.size()))];
    }
    // The distinct NICs in channel order (channels 0 .. per_gpu - 1, at most `max_channels`): after them the
    // channels use the same NICs again. Empty without NICs.
    std::vector<int> distinct(int max_channels) const {
      std::vector<int> out;
      for (int c = 0; !nets.empty() && c < std::min(per_gpu, max_channels); ++c) out.push_back(at(c));
      return out;
    }
  };
  ChannelNets channel_nets(int gpu) const;
  // NIC a GPU uses on channel c (ncclTopoGetLocalNet), index into `nets`.
  int net_for_channel(int gpu, int channel) const { return channel_nets(gpu).at(channel); }
  // The GPU local to a NET (ncclTopoGetLocalGpu): the first of the NET's closest GPUs
  // (channels c = 0, 1, ...) whose channel-c NIC is this NET; local rank, or -1.
  int local_gpu_of_net(int net) const;
  // Highest GPU->NET path bandwidth (multi-node) or GPU->GPU (single node): the search's maxBw;
  // and the highest NVLink/PCI bandwidth out of a GPU: the search's totalBw (ncclTopoCompute).
  double max_bw(bool multi_node) const;
  double total_bw() const;
};

// Parses an NCCL_TOPO_FILE XML document (xml.cc ncclTopoGetXmlFromFile). Throws ScenarioError naming `key` (e.g.
// "nccl.NCCL_TOPO_FILE") with the file name and what is wrong; never crashes on malformed input.
NodeTopology parse_nccl_topology_xml(const std::string& xml_text, const std::string& source_name,
                                     const std::string& key);
NodeTopology load_nccl_topology_file(const std::string& path, const std::string& key);

// The node a scenario's cluster block describes, in the shape NCCL would detect on such a machine
// (DGX/HGX-like: two CPU sockets, a PCIe switch per GPU with its NIC(s), NVSwitch or NVLink/PCIe
// scale-up). Documented in docs/collectives.md.
NodeTopology generate_node_topology(const ClusterSpec& cluster);
// The same node as an NCCL_TOPO_FILE document (generate_node_topology parses exactly this text), so a
// generated node can be dumped, inspected and edited by users.
std::string generate_node_topology_xml(const ClusterSpec& cluster);

// Keeps only the GPUs whose local ranks are listed (a communicator's ranks on this node, in the
// given order, renumbered 0..k-1); NICs, CPUs, switches stay (NCCL keeps every NIC the plugin reports).
// `keep_net`, when given (one entry per NET), drops the NETs it marks false: an NVLink domain spanning
// hosts (MNNVL) fuses only the topologies of the hosts that hold a rank, so other hosts' NICs are
// absent. The kept NETs remember their index in `node` (NodeTopology::net_origin).
NodeTopology restrict_to_gpus(const NodeTopology& node, const std::vector<int>& local_ranks,
                              const std::vector<bool>& keep_net = {});

// ncclTopoComputePaths with the P2P / PXN / GDR rules (paths.cc). Fills node.paths.
void compute_paths(NodeTopology& node, const PathOptions& options);

// NCCL's NVLink bandwidth per link for an SM version (topo.h) and PCIe bandwidth for a
// generation and width (topo.cc).
double nccl_nvlink_bw_per_link(int sm);
double nccl_pcie_bw(double gts, int width);

}  // namespace trainsim
