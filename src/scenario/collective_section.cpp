// The `collective:` block of a collective benchmark case (validation README, "Extensions").
#include <cctype>
#include <climits>

#include "scenario/sections.hpp"

namespace trainsim {

std::optional<std::int64_t> parse_byte_size(const std::string& text) {
  std::size_t i = 0;
  std::int64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const int digit = text[i] - '0';
    if (value > (INT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string suffix = text.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // nccl-tests prints sizes in bytes and takes -b/-e with K/M/G meaning powers of 1024.
  int shift = 0;
  if (suffix.empty() || suffix == "B")
    shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    shift = 40;
  else
    return std::nullopt;
  if (value > (INT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::optional<CollectiveOp> parse_collective_op(const std::string& name) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                  CollectiveOp::Broadcast, CollectiveOp::Reduce, CollectiveOp::AllToAll, CollectiveOp::SendRecv})
    if (name == to_string(op)) return op;
  return std::nullopt;
}

namespace scenario_detail {

namespace {

std::optional<std::int64_t> read_size(const Section& point) {
  if (!point.has("size")) return std::nullopt;  // null: the source does not state it
  const YAML::Node node = point.get("size");
  const std::string expected = "a size in bytes, optionally with K, M or G (powers of 1024), e.g. 8, 64K, 1M, 8G";
  if (!node.IsScalar()) point.fail("size", "expected " + expected + ", got " + describe_node(node));
  const auto bytes = parse_byte_size(node.Scalar());
  if (!bytes || *bytes == 0) point.fail("size", "expected " + expected + ", got " + describe_node(node));
  return bytes;
}

CollectivePoint read_point(const Section& point) {
  CollectivePoint p;
  p.size = read_size(point);
  p.busbw_GBps = point.require_number("busbw_GBps", Bound::Positive);
  point.read("algbw_GBps", p.algbw_GBps, Bound::Positive);
  point.read("nccl_algo", p.nccl_algo);
  return p;
}

}  // namespace

std::optional<CollectiveSpec> read_collective(const Section& collective) {
  if (!collective.present()) return std::nullopt;
  CollectiveSpec c;
  if (!collective.has("op")) collective.missing("op");
  c.op = *collective.choice<CollectiveOp>("op", {{"all_reduce", CollectiveOp::AllReduce},
                                                 {"all_gather", CollectiveOp::AllGather},
                                                 {"reduce_scatter", CollectiveOp::ReduceScatter},
                                                 {"broadcast", CollectiveOp::Broadcast},
                                                 {"reduce", CollectiveOp::Reduce},
                                                 {"alltoall", CollectiveOp::AllToAll},
                                                 {"sendrecv", CollectiveOp::SendRecv}});
  collective.read("tool", c.tool);
  collective.read("library", c.library);
  if (collective.has("points")) {
    const YAML::Node points = collective.get("points");
    if (!points.IsSequence())
      collective.fail("points", "expected a list of {size, busbw_GBps}, got " + describe_node(points));
    for (std::size_t i = 0; i < points.size(); ++i)
      c.points.push_back(read_point(
          Section(points[i], collective.path_of("points") + "[" + std::to_string(i) + "]", collective.file())));
  }
  return c;
}

}  // namespace scenario_detail
}  // namespace trainsim
