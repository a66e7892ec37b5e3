// NCCL_TOPO_FILE reader (NCCL src/graph/xml.cc ncclTopoGetXmlFromFile, topo.cc ncclTopoGetSystemFromXml): turns
// the XML tree into NCCL's node graph the way topo.cc does — CPUs and their PCI trees first, then NVLinks, C2C
// links and Broadcom pcilinks in later passes, then the CPU-to-CPU SYS links, then the link order NCCL's path
// search depends on (bandwidth-descending at insertion, PCI "up" links moved last). Differences from NCCL: the
// DEV layer is folded into the GPU vertex (one rank per GPU), and malformed input is rejected with a message
// instead of being partly ignored.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <sstream>

#include "collective/nccl/nccl_constants.hpp"
#include "collective/nccl/nccl_node_topology.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

using nccl::kLocBw;

class XmlReader {
 public:
  XmlReader(std::string source, std::string key) : source_(std::move(source)), key_(std::move(key)) {}

  NodeTopology read(const std::string& text) {
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
    if (!parsed) {
      fail("not a valid XML document (" + std::string(parsed.description()) + " at byte " +
           std::to_string(parsed.offset) + ")");
    }
    const pugi::xml_node system = doc.child("system");
    if (!system) fail("no <system> root element");
    const pugi::xml_attribute version = system.attribute("version");
    if (!version) fail("<system> has no version attribute (NCCL needs version=\"1\")");
    if (parse_int(version.value(), "version of <system>") != 1) {
      fail("<system version=\"" + std::string(version.value()) + "\">: NCCL only reads version 1");
    }

    for (const pugi::xml_node cpu : system.children("cpu")) add_cpu(cpu);
    if (gpu_by_bus_.empty()) fail("no <gpu> with a rank attribute: the node has no GPUs");
    // Later passes, in topo.cc's order: NVLinks, C2C, PCI links; then CPU<->CPU.
    for (const pugi::xml_node cpu : system.children("cpu")) add_nvlinks_and_c2c(cpu, "");
    for (const pugi::xml_node cpu : system.children("cpu")) add_pcilinks(cpu, "");
    connect_cpus();
    for (int c : topo_.cpus) sort_pci_tree(c, -1);
    finish();
    return std::move(topo_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ScenarioError(source_, key_, what); }

  std::int64_t parse_int(const std::string& s, const std::string& what) const {
    if (s.empty()) fail(what + " is empty");
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 0);
    if (errno != 0 || end == s.c_str() || *end != '\0') fail(what + " is not an integer: '" + s + "'");
    return v;
  }
  double parse_double(const std::string& s, const std::string& what) const {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || end == s.c_str() || *end != '\0' || !(v == v)) fail(what + " is not a number: '" + s + "'");
    return v;
  }
  std::string required(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) fail("<" + std::string(n.name()) + "> has no " + attr + " attribute" + where(n));
    return a.value();
  }
  int required_int(const pugi::xml_node& n, const char* attr) const {
    const std::int64_t v = parse_int(required(n, attr), std::string("attribute ") + attr + " of <" + n.name() + ">");
    if (v < -(1LL << 31) || v > (1LL << 31) - 1) fail(std::string("attribute ") + attr + " is out of range");
    return static_cast<int>(v);
  }
  int optional_int(const pugi::xml_node& n, const char* attr, int fallback) const {
    if (!n.attribute(attr)) return fallback;
    return required_int(n, attr);
  }
  static std::string where(const pugi::xml_node& n) {
    const pugi::xml_node pci = n.name() == std::string("pci") ? n : n.parent();
    const char* bus = pci.attribute("busid").value();
    return *bus ? std::string(" (under busid ") + bus + ")" : std::string();
  }

  // "dddd:bb:dd.f" -> the hex digits as one number (busIdToInt64); anything else is rejected.
  std::int64_t parse_busid(const std::string& s) const {
    std::uint64_t v = 0;
    int digits = 0;
    for (char ch : s) {
      if (ch == ':' || ch == '.') continue;
      int d;
      if (ch >= '0' && ch <= '9')
        d = ch - '0';
      else if (ch >= 'a' && ch <= 'f')
        d = ch - 'a' + 10;
      else if (ch >= 'A' && ch <= 'F')
        d = ch - 'A' + 10;
      else
        fail("bad PCI busid '" + s + "' (expected hex digits like 0000:18:00.0)");
      if (++digits > 15) fail("bad PCI busid '" + s + "' (too many digits)");
      v = v * 16 + static_cast<std::uint64_t>(d);
    }
    if (digits == 0) fail("bad PCI busid '" + s + "' (no hex digits)");
    return static_cast<std::int64_t>(v);
  }

  int new_vertex(TopoKind kind, std::int64_t id, std::string name) {
    TopoVertex v;
    v.kind = kind;
    v.id = id;
    v.name = std::move(name);
    topo_.vertices.push_back(std::move(v));
    return static_cast<int>(topo_.vertices.size()) - 1;
  }

  // ncclTopoConnectNodes: parallel links to the same vertex and type add up; the list stays sorted by
  // bandwidth, a new or grown link moving ahead of strictly slower ones only.
  void connect(int from, int to, TopoLinkType type, double bw) {
    auto& links = topo_.vertices[static_cast<std::size_t>(from)].links;
    std::size_t i = 0;
    while (i < links.size() && !(links[i].to == to && links[i].type == type)) ++i;
    if (i == links.size()) links.push_back(TopoLink{to, type, 0.0});
    links[i].bw += bw;
    const TopoLink moving = links[i];
    while (i > 0 && links[i - 1].bw < moving.bw) {
      links[i] = links[i - 1];
      --i;
    }
    links[i] = moving;
  }

  void add_cpu(const pugi::xml_node& xcpu) {
    const int numa = required_int(xcpu, "numaid");
    const int c = new_vertex(TopoKind::Cpu, numa, "CPU " + std::to_string(numa));
    topo_.cpus.push_back(c);
    TopoVertex& cpu = topo_.vertices[static_cast<std::size_t>(c)];
    const std::string arch = required(xcpu, "arch");
    if (arch == "x86_64")
      cpu.arch = CpuArch::X86;
    else if (arch == "arm64")
      cpu.arch = CpuArch::Arm;
    else if (arch == "ppc64")
      cpu.arch = CpuArch::Power;
    else
      fail("<cpu numaid=\"" + std::to_string(numa) + "\">: unknown arch '" + arch + "' (x86_64, arm64 or ppc64)");
    cpu.vendor = CpuVendor::Other;
    cpu.inter_socket_bw = kLocBw;
    if (cpu.arch == CpuArch::Power) cpu.inter_socket_bw = 32.0;  // P9_BW
    if (cpu.arch == CpuArch::Arm) cpu.inter_socket_bw = 6.0;     // ARM_BW
    if (cpu.arch == CpuArch::X86) {
      const std::string vendor = required(xcpu, "vendor");
      // kvConvertToInt matches dictionary prefixes.
      if (vendor.rfind("GenuineIntel", 0) == 0) {
        cpu.vendor = CpuVendor::Intel;
        const int family = required_int(xcpu, "familyid");
        const int model = required_int(xcpu, "modelid");
        cpu.inter_socket_bw = (family == 6 && model >= 0xCF)   ? 40.0  // ERP
                              : (family == 6 && model >= 0x8F) ? 22.0  // SRP
                              : (family == 6 && model >= 0x55) ? 10.0  // SKL
                                                               : 6.0;  // BDW
      } else if (vendor.rfind("AuthenticAMD", 0) == 0) {
        cpu.vendor = CpuVendor::Amd;
        cpu.inter_socket_bw = 16.0;
      } else if (vendor.rfind("CentaurHauls", 0) == 0 || vendor.rfind("  Shanghai  ", 0) == 0) {
        cpu.vendor = CpuVendor::Zhaoxin;
        const bool yongfeng = optional_int(xcpu, "familyid", 0) == 7 && optional_int(xcpu, "modelid", 0) == 0x5B;
        cpu.inter_socket_bw = yongfeng ? 9.0 : 6.0;
      }
    }
    for (const pugi::xml_node child : xcpu.children()) {
      const std::string name = child.name();
      if (name == "pci") add_pci(child, c, numa);
      if (name == "nic") {
        // A NIC without PCI path hangs directly off the CPU with a LOC-bandwidth PCI link.
        const std::int64_t id = static_cast<std::int64_t>(static_cast<std::uint64_t>(numa) << 56);
        int nic = find_nic(id);
        if (nic < 0) {
          nic = new_vertex(TopoKind::Nic, id, "NIC");
          nic_ids_[id] = nic;
          connect(c, nic, TopoLinkType::Pci, kLocBw);
          connect(nic, c, TopoLinkType::Pci, kLocBw);
        }
        add_nic(child, nic);
      }
    }
  }

  int find_nic(std::int64_t id) const {
    const auto it = nic_ids_.find(id);
    return it == nic_ids_.end() ? -1 : it->second;
  }

  static double pcie_lane_value(const std::string& speed) {
    // kvDictPciGen (×100 Mb/s per lane), prefix match, default 60.
    static const std::pair<const char*, double> table[] = {
        {"2.5 GT/s", 15},        {"5 GT/s", 30},          {"8 GT/s", 60},         {"16 GT/s", 120},
        {"32 GT/s", 240},        {"2.5 GT/s PCIe", 15},   {"5.0 GT/s PCIe", 30},  {"8.0 GT/s PCIe", 60},
        {"16.0 GT/s PCIe", 120}, {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480}};
    for (const auto& [key, value] : table)
      if (speed.rfind(key, 0) == 0) return value;
    return 60;
  }

  void add_pci(const pugi::xml_node& xpci, int parent, int numa) {
    const std::string cls = required(xpci, "class");
    const std::int64_t bus = parse_busid(required(xpci, "busid"));
    int width = optional_int(xpci, "link_width", 0);
    if (width <= 0) width = 16;  // "speed not indicated in /sys"
    const double bw = width * pcie_lane_value(xpci.attribute("link_speed").value()) / 80.0;

    int ngpu = 0;
    for (const pugi::xml_node xgpu : xpci.children("gpu")) {
      if (++ngpu > 1)
        fail("several <gpu> under busid " + std::string(xpci.attribute("busid").value()) +
             " (several ranks per GPU) are not supported");
      add_gpu(xgpu, parent, bus, bw);
    }

    const pugi::xml_node xnic = xpci.child("nic");
    int created = -1;
    if (xnic) {
      const std::int64_t id =
          static_cast<std::int64_t>((static_cast<std::uint64_t>(numa) << 56) + static_cast<std::uint64_t>(bus));
      int nic = find_nic(id);
      if (nic < 0) {
        nic = created = new_vertex(TopoKind::Nic, id, std::string("NIC ") + xpci.attribute("busid").value());
        nic_ids_[id] = nic;
      }
      add_nic(xnic, nic);
    } else if (cls.rfind("0x0604", 0) == 0 || cls.rfind("0x080100", 0) == 0 || !known_class(cls)) {
      // PCI bridge / switch (and CX8 data-direct, and unknown classes, which NCCL treats as PCI).
      created = new_vertex(TopoKind::Pci, bus, std::string("PCI ") + xpci.attribute("busid").value());
      pci_by_bus_[bus] = created;
      for (const pugi::xml_node child : xpci.children("pci")) add_pci(child, created, numa);
    }
    if (created >= 0) {
      connect(created, parent, TopoLinkType::Pci, bw);
      connect(parent, created, TopoLinkType::Pci, bw);
    }
  }

  static bool known_class(const std::string& cls) {
    return cls.rfind("0x068000", 0) == 0 || cls.rfind("0x068001", 0) == 0 || cls.rfind("0x03", 0) == 0 ||
           cls.rfind("0x02", 0) == 0;
  }

  void add_gpu(const pugi::xml_node& xgpu, int parent, std::int64_t bus, double bw) {
    if (!xgpu.attribute("rank")) {
      fail("<gpu> without a rank attribute" + where(xgpu) + " (NCCL needs rank on every GPU)");
    }
    const int rank = required_int(xgpu, "rank");
    if (rank < 0) fail("<gpu rank=\"" + std::to_string(rank) + "\">: rank must be >= 0");
    if (ranks_seen_.count(rank)) fail("two GPUs have rank " + std::to_string(rank));
    if (gpu_by_bus_.count(bus)) fail("two GPUs share busid" + where(xgpu));
    const int g = new_vertex(TopoKind::Gpu, bus, "GPU " + std::to_string(rank));
    TopoVertex& gpu = topo_.vertices[static_cast<std::size_t>(g)];
    gpu.rank = rank;  // the XML rank for now; renumbered to the local rank in finish()
    gpu.sm = required_int(xgpu, "sm");
    if (gpu.sm <= 0) fail("<gpu rank=\"" + std::to_string(rank) + "\">: sm must be positive");
    gpu.dev = required_int(xgpu, "dev");
    gpu.gdr = required_int(xgpu, "gdr") != 0;
    ranks_seen_[rank] = g;
    gpu_by_bus_[bus] = g;
    connect(g, parent, TopoLinkType::Pci, bw);
    connect(parent, g, TopoLinkType::Pci, bw);
  }

  void add_nic(const pugi::xml_node& xnic, int nic) {
    for (const pugi::xml_node xnet : xnic.children("net")) {
      if (!xnet.attribute("dev")) continue;             // not reported by the plugin: not in the graph
      if (optional_int(xnet, "net", 1) == 0) continue;  // GIN/RMA-only device
      const int dev = required_int(xnet, "dev");
      if (dev < 0) fail("<net dev=\"" + std::to_string(dev) + "\">: dev must be >= 0");
      if (net_devs_.count(dev)) fail("two <net> have dev " + std::to_string(dev));
      const std::string name = xnet.attribute("name").value();
      const int n = new_vertex(TopoKind::Net, dev, name.empty() ? "NET " + std::to_string(dev) : name);
      net_devs_[dev] = n;
      TopoVertex& net = topo_.vertices[static_cast<std::size_t>(n)];
      net.dev = dev;
      const std::string guid = xnet.attribute("guid").value();
      if (!guid.empty()) {
        char* end = nullptr;
        net.guid = std::strtoull(guid.c_str(), &end, 16);
        if (end == guid.c_str()) fail("<net dev=\"" + std::to_string(dev) + "\">: guid is not hex: '" + guid + "'");
      } else {
        net.guid = (1ULL << 63) | static_cast<std::uint64_t>(dev);  // NCCL uses the (unique) net id
      }
      int mbps = optional_int(xnet, "speed", 0);
      if (mbps <= 0) mbps = 10000;  // some NICs report -1
      net.net_bw = mbps / 8000.0;
      if (xnet.attribute("latency")) {
        net.latency_us = parse_double(xnet.attribute("latency").value(), "latency of <net>");
      }
      net.port = optional_int(xnet, "port", 0);
      net.gdr = optional_int(xnet, "gdr", 0) != 0;
      net.rail = optional_int(xnet, "rail", -1);
      net.plane = optional_int(xnet, "plane", -1);
      connect(nic, n, TopoLinkType::Net, net.net_bw);
      connect(n, nic, TopoLinkType::Net, net.net_bw);
    }
  }

  // Walks up the PCI tree from a GPU to its CPU (findLocalCpu).
  int local_cpu_of(int v, int from) const {
    const TopoVertex& node = topo_.vertices[static_cast<std::size_t>(v)];
    if (node.kind == TopoKind::Cpu) return v;
    for (const TopoLink& l : node.links) {
      const TopoKind k = topo_.vertices[static_cast<std::size_t>(l.to)].kind;
      if (l.type == TopoLinkType::Pci && l.to != from && (k == TopoKind::Pci || k == TopoKind::Cpu)) {
        const int c = local_cpu_of(l.to, v);
        if (c >= 0) return c;
      }
    }
    return -1;
  }

  void add_nvlinks_and_c2c(const pugi::xml_node& node, const std::string& parent_bus) {
    // topo.cc does NVLinks for the whole tree, then C2C; links of different types never merge, so
    // one walk doing both in document order gives the same link lists except for equal-bandwidth
    // ties between an NVLink and a C2C link, which never occur in practice.
    const std::string name = node.name();
    if (name == "nvlink" || name == "c2c") {
      const pugi::xml_node xgpu = node.parent();
      if (std::string(xgpu.name()) != "gpu" || parent_bus.empty()) return;
      const auto it = gpu_by_bus_.find(parse_busid(parent_bus));
      if (it == gpu_by_bus_.end()) return;
      const int g = it->second;
      const int sm = topo_.vertices[static_cast<std::size_t>(g)].sm;
      if (name == "c2c") {
        const double bw = required_int(node, "bw") * static_cast<double>(required_int(node, "count")) / 1000.0;
        const int cpu = local_cpu_of(g, -1);
        if (cpu < 0) return;
        connect(g, cpu, TopoLinkType::C2c, bw);
        connect(cpu, g, TopoLinkType::C2c, bw);
        return;
      }
      const int count = required_int(node, "count");
      if (count < 0) fail("<nvlink count=\"" + std::to_string(count) + "\">: count must be >= 0" + where(xgpu));
      const std::string tclass = required(node, "tclass");
      const double bw = count * nccl_nvlink_bw_per_link(sm);
      if (tclass.rfind("0x03", 0) == 0) {
        const auto target = gpu_by_bus_.find(parse_busid(required(node, "target")));
        if (target != gpu_by_bus_.end()) connect(g, target->second, TopoLinkType::Nvl, bw);
        return;  // the peer's own <nvlink> adds the other direction
      }
      int remote = -1;
      if (tclass.rfind("0x068001", 0) == 0) {
        remote = local_cpu_of(g, -1);
      } else {
        if (topo_.nvswitch < 0) topo_.nvswitch = new_vertex(TopoKind::NvSwitch, 0, "NVS");
        remote = topo_.nvswitch;  // every NVSwitch collapses into one NVS vertex
      }
      if (remote >= 0) {
        connect(g, remote, TopoLinkType::Nvl, bw);
        connect(remote, g, TopoLinkType::Nvl, bw);
      }
      return;
    }
    const char* bus = node.attribute("busid").value();
    for (const pugi::xml_node child : node.children()) {
      if (child.type() == pugi::node_element) add_nvlinks_and_c2c(child, *bus ? bus : parent_bus);
    }
  }

  void add_pcilinks(const pugi::xml_node& node, const std::string& parent_bus) {
    if (std::string(node.name()) == "pcilink") {
      if (parent_bus.empty()) fail("<pcilink> outside a PCI switch");
      const auto from = pci_by_bus_.find(parse_busid(parent_bus));
      if (from == pci_by_bus_.end()) fail("<pcilink> outside a PCI switch");
      const auto to = pci_by_bus_.find(parse_busid(required(node, "target")));
      if (to != pci_by_bus_.end()) connect(from->second, to->second, TopoLinkType::Loc, kLocBw);
      return;
    }
    const char* bus = node.attribute("busid").value();
    for (const pugi::xml_node child : node.children()) {
      if (child.type() == pugi::node_element) add_pcilinks(child, *bus ? bus : parent_bus);
    }
  }

  void connect_cpus() {
    for (int a : topo_.cpus)
      for (int b : topo_.cpus)
        if (a != b) connect(a, b, TopoLinkType::Sys, topo_.vertices[static_cast<std::size_t>(a)].inter_socket_bw);
  }

  // ncclTopoSort: below each CPU, every vertex's link towards the CPU moves to the end of its list
  // (NVLinks, then PCI down, then PCI up), which fixes the BFS order of the path search.
  void sort_pci_tree(int v, int up) {
    auto& links = topo_.vertices[static_cast<std::size_t>(v)].links;
    if (up >= 0) {
      const auto it = std::find_if(links.begin(), links.end(), [&](const TopoLink& l) { return l.to == up; });
      if (it != links.end()) std::rotate(it, it + 1, links.end());
    }
    for (std::size_t i = 0; i < topo_.vertices[static_cast<std::size_t>(v)].links.size(); ++i) {
      const TopoLink l = topo_.vertices[static_cast<std::size_t>(v)].links[i];
      if (l.type == TopoLinkType::Pci && l.to != up) sort_pci_tree(l.to, v);
    }
  }

  void finish() {
    // Local ranks follow the XML rank order; GPU vertices keep document order (NCCL's GPU index).
    int local = 0;
    for (const auto& [rank, g] : ranks_seen_) {
      topo_.vertices[static_cast<std::size_t>(g)].rank = local++;
      topo_.gpus.push_back(g);
    }
    for (const auto& [dev, n] : net_devs_) topo_.nets.push_back(n);
    topo_.sm = 0;
    for (int g : topo_.gpus) {
      const int sm = topo_.vertices[static_cast<std::size_t>(g)].sm;
      topo_.sm = topo_.sm == 0 ? sm : std::min(topo_.sm, sm);
    }
    if (!topo_.cpus.empty()) {
      const TopoVertex& c0 = topo_.vertices[static_cast<std::size_t>(topo_.cpus.front())];
      topo_.arch = c0.arch;
      topo_.vendor = c0.vendor;
    }
  }

  std::string source_, key_;
  NodeTopology topo_;
  std::map<int, int> ranks_seen_;           // XML rank -> vertex
  std::map<std::int64_t, int> gpu_by_bus_;  // busid -> GPU vertex
  std::map<std::int64_t, int> pci_by_bus_;  // busid -> PCI vertex
  std::map<std::int64_t, int> nic_ids_;     // NIC id -> vertex
  std::map<int, int> net_devs_;             // net dev -> vertex
};

}  // namespace

NodeTopology parse_nccl_topology_xml(const std::string& xml_text, const std::string& source_name,
                                     const std::string& key) {
  return XmlReader(source_name, key).read(xml_text);
}

NodeTopology load_nccl_topology_file(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, key, "cannot open NCCL topology file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_nccl_topology_xml(text.str(), path, key);
}

}  // namespace trainsim
