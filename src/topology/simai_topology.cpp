#include "topology/simai_topology.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

// Bounds that keep every count and product inside int and every rate and delay meaningful; a fuzzed header cannot
// make the reader allocate more than a few tens of MB.
constexpr int kMaxNodes = 1'000'000;
constexpr std::int64_t kMaxRateBps = 1'000'000'000'000'000;  // 1 Pb/s: beyond any cable or trunk
constexpr std::int64_t kMaxDelayPs = 1'000'000'000'000;      // 1 s

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// A non-negative decimal integer up to `max` ("016" is fine, "+1", "1.0" and "-3" are not).
int count(const FileLine& w, std::string_view field, const char* what, int max) {
  long long v = -1;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || field[0] == '-' || ec != std::errc() || end != field.data() + field.size())
    w.fail(fmt::format("{} '{}' is not a non-negative integer", what, field));
  if (v > max) w.fail(fmt::format("{} {} is above {}", what, v, max));
  return static_cast<int>(v);
}

// The whole of `digits` as a number, or nullopt.
std::optional<double> number(std::string_view digits) {
  double v = 0;
  if (digits.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

struct Unit {
  std::string_view name;
  double scale;
};

// ns-3's DataRate::DoParse (src/network/utils/data-rate.cc in SimAI's ns-3): a number of digits and dots, then one
// of these units in bit/s; a bare number is bit/s.
constexpr Unit kRateUnits[] = {{"bps", 1},
                               {"b/s", 1},
                               {"Bps", 8},
                               {"B/s", 8},
                               {"kbps", 1e3},
                               {"kb/s", 1e3},
                               {"Kbps", 1e3},
                               {"Kb/s", 1e3},
                               {"kBps", 8e3},
                               {"kB/s", 8e3},
                               {"KBps", 8e3},
                               {"KB/s", 8e3},
                               {"Kib/s", 1024},
                               {"KiB/s", 8192},
                               {"Mbps", 1e6},
                               {"Mb/s", 1e6},
                               {"MBps", 8e6},
                               {"MB/s", 8e6},
                               {"Mib/s", 1048576},
                               {"MiB/s", 8388608},
                               {"Gbps", 1e9},
                               {"Gb/s", 1e9},
                               {"GBps", 8e9},
                               {"GB/s", 8e9},
                               {"Gib/s", 1073741824.0},
                               {"GiB/s", 8589934592.0}};

// ns-3's Time(const std::string&) (src/core/model/time.cc): a number, then a unit; a bare number is seconds. Its
// min, h, d and y are left out: no cable is that long.
constexpr Unit kTimeUnits[] = {{"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}, {"fs", 1e-3}};

std::string unit_names(std::span<const Unit> units) {
  std::string out;
  for (const Unit& u : units) out += (out.empty() ? "" : ", ") + std::string(u.name);
  return out;
}

// A field as ns-3 writes a quantity: its number (the characters in `number_chars`) and its unit's scale, 0 for a
// unit not in `units`; a bare number scales by `bare`.
struct Quantity {
  std::string_view digits, unit;
  double scale = 0;
};
Quantity split_quantity(std::string_view field, const char* number_chars, std::span<const Unit> units, double bare) {
  const std::size_t n = field.find_first_not_of(number_chars);
  Quantity q{field.substr(0, n), n == std::string_view::npos ? "" : field.substr(n), 0};
  q.scale = q.unit.empty() ? bare : 0;
  for (const Unit& u : units)
    if (u.name == q.unit) q.scale = u.scale;
  return q;
}

std::int64_t rate_bps(const FileLine& w, std::string_view field) {
  const auto [digits, unit, scale] = split_quantity(field, "0123456789.", kRateUnits, 1);
  if (scale == 0)
    w.fail(fmt::format("rate '{}': unknown unit '{}' (ns-3 reads {})", field, unit, unit_names(kRateUnits)));
  const auto v = number(digits);
  if (!v) w.fail(fmt::format("rate '{}' does not start with a number", field));
  const double bps = std::round(*v * scale);
  if (bps < 1) w.fail(fmt::format("rate '{}' is below 1 bit/s", field));
  if (bps > static_cast<double>(kMaxRateBps)) w.fail(fmt::format("rate '{}' is above 1 Pb/s", field));
  return static_cast<std::int64_t>(bps);
}

std::int64_t delay_ps(const FileLine& w, std::string_view field) {
  const auto [digits, unit, scale] = split_quantity(field, "+-0123456789.eE", kTimeUnits, 1e12);
  if (scale == 0)
    w.fail(fmt::format("delay '{}': unknown unit '{}' (ns-3 units: {})", field, unit, unit_names(kTimeUnits)));
  const auto v = number(digits.starts_with('+') ? digits.substr(1) : digits);
  if (!v) w.fail(fmt::format("delay '{}' does not start with a number", field));
  if (*v < 0) w.fail(fmt::format("delay '{}' is negative", field));
  const double ps = std::round(*v * scale);
  if (ps > static_cast<double>(kMaxDelayPs)) w.fail(fmt::format("delay '{}' is above 1 s", field));
  return static_cast<std::int64_t>(ps);
}

double error_rate(const FileLine& w, std::string_view field) {
  const auto v = number(field);
  if (!v || *v < 0 || *v > 1) w.fail(fmt::format("error rate '{}' is not a number in [0, 1]", field));
  return *v;
}

void parse_header(const FileLine& w, std::string_view line, SimaiTopology& t, int& nvswitches, int& switches,
                  int& links) {
  const auto f = split_fields(line);
  if (f.size() != 6)
    w.fail(
        fmt::format("the header has {} fields; SimAI's is six: nodes, GPUs per server, NVSwitches, switches, "
                    "links, GPU type (e.g. '34 8 2 16 96 H100')",
                    f.size()));
  t.node_count = count(w, f[0], "node count", kMaxNodes);
  t.gpus_per_server = count(w, f[1], "GPUs per server", kMaxNodes);
  nvswitches = count(w, f[2], "NVSwitch count", kMaxNodes);
  switches = count(w, f[3], "switch count", kMaxNodes);
  links = count(w, f[4], "link count", std::numeric_limits<int>::max());
  t.gpu_type = std::string(f[5]);
  if (t.gpus_per_server < 1) w.fail("GPUs per server is 0; a server holds at least one GPU");
  if (nvswitches + switches >= t.node_count)
    w.fail(fmt::format("{} nodes leave no GPU beside {} NVSwitches and {} switches (the GPUs are the other nodes)",
                       t.node_count, nvswitches, switches));
}

void parse_switch_ids(const FileLine& w, std::string_view line, int nvswitches, int switches, SimaiTopology& t) {
  const auto f = split_fields(line);
  if (static_cast<int>(f.size()) != nvswitches + switches)
    w.fail(fmt::format("{} switch ids; the header (line 1) counts {} NVSwitches and {} switches", f.size(), nvswitches,
                       switches));
  const int gpus = t.node_count - nvswitches - switches;
  std::vector<char> seen(static_cast<std::size_t>(t.node_count), 0);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const int id = count(w, f[i], "switch id", kMaxNodes);
    if (id >= t.node_count) w.fail(fmt::format("switch id {} is not a node (0..{})", id, t.node_count - 1));
    if (seen[static_cast<std::size_t>(id)]) w.fail(fmt::format("switch id {} is listed twice", id));
    seen[static_cast<std::size_t>(id)] = 1;
    // SimAI runs nodes 0..gpus-1 as ranks and takes gpus.. gpus+NVSwitches-1 as the NVSwitches
    // (AstraSimNetwork.cc, main: gpu_num, node2nvswitch, NVswitchs).
    if (id < gpus)
      w.fail(
          fmt::format("switch id {} is below {} (nodes - NVSwitches - switches): SimAI runs nodes 0..{} as its "
                      "GPUs (ranks)",
                      id, gpus, gpus - 1));
    const bool nvswitch = static_cast<int>(i) < nvswitches;
    if (nvswitch && id >= gpus + nvswitches)
      w.fail(
          fmt::format("NVSwitch id {} (the first {} ids are the NVSwitches) is not in {}..{}: SimAI numbers the "
                      "NVSwitches right after the GPUs",
                      id, nvswitches, gpus, gpus + nvswitches - 1));
    (nvswitch ? t.nvswitch_ids : t.switch_ids).push_back(id);
  }
}

SimaiLink parse_link(const FileLine& w, std::string_view line, int nodes) {
  const auto f = split_fields(line);
  if (f.size() != 5)
    w.fail(
        fmt::format("a link line has five fields: source, destination, rate, delay, error rate (e.g. '0 16 "
                    "400Gbps 0.0005ms 0'); this one has {}",
                    f.size()));
  SimaiLink l;
  l.file_line = w.line;
  l.src = count(w, f[0], "source node", kMaxNodes);
  l.dst = count(w, f[1], "destination node", kMaxNodes);
  for (int id : {l.src, l.dst})
    if (id >= nodes)
      w.fail(fmt::format("node {} does not exist; the header (line 1) has {} (0..{})", id, nodes, nodes - 1));
  if (l.src == l.dst) w.fail(fmt::format("a link from node {} to itself", l.src));
  l.rate_bps = rate_bps(w, f[2]);
  l.delay_ps = delay_ps(w, f[3]);
  l.error_rate = error_rate(w, f[4]);
  return l;
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

}  // namespace

SimaiTopology parse_simai_topology(std::string_view text, const std::string& path) {
  const std::vector<std::string_view> lines = split_lines(text);
  SimaiTopology t;
  t.path = path;
  if (lines.empty() || blank(lines[0]))
    FileLine{path, 1}.fail(
        "empty: a SimAI topology starts with its header line (nodes, GPUs per server, NVSwitches, "
        "switches, links, GPU type)");
  int nvswitches = 0, switches = 0, links = 0;
  parse_header(FileLine{path, 1}, lines[0], t, nvswitches, switches, links);
  if (lines.size() < 2) FileLine{path, 2}.fail("the file ends before the line of switch ids");
  parse_switch_ids(FileLine{path, 2}, lines[1], nvswitches, switches, t);

  // One cable per unordered pair: a second line for the same pair is a mistake, not a second cable (trainsim
  // writes parallel cables as one link of their summed rate, and SimAI's routing keys neighbours by node).
  std::unordered_map<std::uint64_t, int> cable_line;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const FileLine w{path, static_cast<int>(i + 1)};
    if (static_cast<int>(t.links.size()) == links)
      w.fail(fmt::format("the header (line 1) counts {} links; this is one more", links));
    SimaiLink l = parse_link(w, lines[i], t.node_count);
    const auto lo = static_cast<std::uint64_t>(std::min(l.src, l.dst)),
               hi = static_cast<std::uint64_t>(std::max(l.src, l.dst));
    const auto [it, fresh] = cable_line.emplace(lo << 32 | hi, w.line);
    if (!fresh)
      w.fail(
          fmt::format("nodes {} and {} are already linked on line {}; give parallel cables as one link of their "
                      "summed rate",
                      l.src, l.dst, it->second));
    t.links.push_back(l);
  }
  if (static_cast<int>(t.links.size()) < links)
    FileLine{path, static_cast<int>(lines.size())}.fail(
        fmt::format("the header (line 1) counts {} links but the file ends after {}", links, t.links.size()));
  return t;
}

SimaiTopology read_simai_topology_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the SimAI topology file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_simai_topology(ss.str(), path);
}

namespace {

// "400Gbps", "25Mbps", "7bps": the largest decimal unit that divides the rate.
std::string format_rate(std::int64_t bps) {
  for (const auto& [unit, scale] : {std::pair{"Gbps", 1'000'000'000LL}, {"Mbps", 1'000'000LL}, {"Kbps", 1'000LL}})
    if (bps % scale == 0) return fmt::format("{}{}", bps / scale, unit);
  return fmt::format("{}bps", bps);
}

// "500ns", "1us", "0ns": the largest unit that divides the delay.
std::string format_delay(std::int64_t ps) {
  if (ps == 0) return "0ns";
  for (const auto& [unit, scale] :
       {std::pair{"s", 1'000'000'000'000LL}, {"ms", 1'000'000'000LL}, {"us", 1'000'000LL}, {"ns", 1'000LL}})
    if (ps % scale == 0) return fmt::format("{}{}", ps / scale, unit);
  return fmt::format("{}ps", ps);
}

}  // namespace

std::string format_simai_topology(const SimaiTopology& t) {
  std::string out = fmt::format("{} {} {} {} {} {}\n", t.node_count, t.gpus_per_server, t.nvswitch_ids.size(),
                                t.switch_ids.size(), t.links.size(), t.gpu_type);
  std::string ids;
  for (int id : t.nvswitch_ids) ids += fmt::format("{} ", id);
  for (int id : t.switch_ids) ids += fmt::format("{} ", id);
  if (!ids.empty()) ids.pop_back();
  out += ids + "\n";
  for (const SimaiLink& l : t.links)
    out +=
        fmt::format("{} {} {} {} {}\n", l.src, l.dst, format_rate(l.rate_bps), format_delay(l.delay_ps), l.error_rate);
  return out;
}

}  // namespace trainsim
