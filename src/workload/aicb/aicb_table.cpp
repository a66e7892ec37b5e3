#include "workload/aicb/aicb_table.hpp"

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

constexpr int kFieldsPerLine = 12;  // name, depen, 3 x (time, comm, size), update time (Workload.cc)

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  if (s.empty()) return std::nullopt;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::int64_t non_negative(const FileLine& w, std::string_view field, std::string_view what) {
  const auto v = parse_int(field);
  if (!v || *v < 0) w.fail(fmt::format("{} '{}' is not a non-negative integer", what, field));
  return *v;
}

struct GroupSuffix {
  std::string_view suffix;
  AicbGroup group;
};
// Longest first is not needed: a name is split at its first '_' and the rest must equal one suffix exactly.
constexpr GroupSuffix kSuffixes[] = {{"EP", AicbGroup::EP},        {"DP_EP", AicbGroup::DpEp},  {"TP", AicbGroup::TP},
                                     {"DP", AicbGroup::DP},        {"CP", AicbGroup::CP},       {"ETP", AicbGroup::ETP},
                                     {"ETP_EP", AicbGroup::EtpEp}, {"WORLD", AicbGroup::World}, {"MP", AicbGroup::MP},
                                     {"EMB", AicbGroup::Emb}};

struct KindName {
  std::string_view name;
  CollKind kind;
};
constexpr KindName kKinds[] = {{"ALLREDUCE", CollKind::AllReduce},         {"ALLGATHER", CollKind::AllGather},
                               {"REDUCESCATTER", CollKind::ReduceScatter}, {"ALLTOALL", CollKind::AllToAll},
                               {"BROADCAST", CollKind::Broadcast},         {"REDUCE", CollKind::Reduce}};

std::string known_names() {
  return "NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL (AICB's), BROADCAST, REDUCE (trainsim's), each alone "
         "or with _EP, _DP_EP (AICB's) or _TP, _DP, _CP, _ETP, _ETP_EP, _WORLD, _MP, _EMB (trainsim's)";
}

AicbComm parse_comm(const FileLine& w, std::string_view name, std::string_view size, AicbGroup field_default,
                    std::string_view field) {
  AicbComm c;
  const std::int64_t bytes = non_negative(w, size, fmt::format("{} size", field));
  if (name == "NONE") return c;  // a size beside NONE is ignored (AICB writes one at times)
  const auto us = name.find('_');
  const std::string_view kind = name.substr(0, us);
  const KindName* k = nullptr;
  for (const auto& kn : kKinds)
    if (kn.name == kind) k = &kn;
  if (name.starts_with("ALLREDUCEALLTOALL"))
    w.fail(fmt::format("{} collective '{}': SimAI's combined all-reduce-all-to-all is not supported", field, name));
  if (!k) w.fail(fmt::format("unknown {} collective '{}' (known: {})", field, name, known_names()));
  c.none = false;
  c.kind = k->kind;
  c.bytes = bytes;
  c.group = field_default;
  if (us != std::string_view::npos) {
    const std::string_view suffix = name.substr(us + 1);
    const GroupSuffix* g = nullptr;
    for (const auto& gs : kSuffixes)
      if (gs.suffix == suffix) g = &gs;
    if (!g) w.fail(fmt::format("unknown {} collective '{}' (known: {})", field, name, known_names()));
    c.group = g->group;
  }
  return c;
}

AicbHeader parse_header(const FileLine& w, std::string_view line) {
  const auto tok = split_fields(line);
  if (tok.empty()) w.fail("empty header line (expected HYBRID_TRANSFORMER_FWD_IN_BCKWD and the parallel sizes)");
  AicbHeader h;
  h.policy = std::string(tok[0]);
  if (h.policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD" && h.policy != "HYBRID_TRANSFORMER")
    w.fail(
        fmt::format("parallelism policy '{}' is not supported (trainsim reads HYBRID_TRANSFORMER_FWD_IN_BCKWD and "
                    "HYBRID_TRANSFORMER, the training workloads AICB generates)",
                    tok[0]));
  std::set<std::string> seen;
  auto value = [&](std::size_t& i, std::string_view key) -> std::int64_t {
    if (i + 1 >= tok.size()) w.fail(fmt::format("header key '{}' has no value", key));
    ++i;
    const std::string_view v = tok[i];
    // pp_comm is written by Python as a float ("3145728.0"); a zero fraction is accepted there.
    std::string_view digits = v;
    if (key.starts_with("pp_comm"))
      if (const auto dot = v.find('.');
          dot != std::string_view::npos && v.substr(dot + 1).find_first_not_of('0') == std::string_view::npos)
        digits = v.substr(0, dot);
    const auto n = parse_int(digits);
    if (!n || *n < 0) w.fail(fmt::format("header key '{}': '{}' is not a non-negative integer", key, v));
    return *n;
  };
  auto positive = [&](std::size_t& i, std::string_view key) -> int {
    const std::int64_t n = value(i, key);
    if (n < 1 || n > 1'000'000'000) w.fail(fmt::format("header key '{}' must be a positive integer, not {}", key, n));
    return static_cast<int>(n);
  };
  for (std::size_t i = 1; i < tok.size(); ++i) {
    std::string key(tok[i]);
    if (key == "pp_comm") key = "pp_comm:";  // SimAI reads both spellings
    const std::string canonical = key == "expert_parallel_npu_group:" ? "ep:" : key;
    if (!seen.insert(canonical).second) w.fail(fmt::format("header key '{}' given twice", tok[i]));
    if (key == "model_parallel_NPU_group:") {
      h.tp = positive(i, key);
    } else if (key == "ep:" || key == "expert_parallel_npu_group:") {
      h.ep = positive(i, key);
    } else if (key == "pp:") {
      h.pp = positive(i, key);
    } else if (key == "vpp:") {
      h.vpp = positive(i, key);
    } else if (key == "ga:") {
      h.ga = positive(i, key);
    } else if (key == "all_gpus:") {
      h.all_gpus = positive(i, key);
    } else if (key == "pp_comm:") {
      h.pp_comm = value(i, key);
    } else if (key == "vpp_chunks:") {
      h.chunks = positive(i, key);
    } else if (key == "checkpoints:" || key == "checkpoint_initiates:") {
      const std::int64_t n = value(i, key);
      if (n != 0)
        w.fail(
            fmt::format("header key '{}' {}: forward-in-backward recomputation is not supported (trainsim's files "
                        "fold recomputation into the backward times)",
                        key, n));
    } else {
      w.fail(
          fmt::format("unknown header key '{}' (known: model_parallel_NPU_group: ep: pp: vpp: ga: all_gpus: "
                      "checkpoints: checkpoint_initiates: pp_comm: vpp_chunks:)",
                      tok[i]));
    }
  }
  if (!seen.count("model_parallel_NPU_group:")) w.fail("the header has no model_parallel_NPU_group: (the TP size)");
  if (h.pp > 1 && h.pp_comm == 0)
    w.fail(
        fmt::format("pp: {} needs pp_comm: the bytes of one pipeline transfer (AICB writes 2*mbs*seq*hidden)", h.pp));
  return h;
}

AicbLine parse_line(const FileLine& w, std::string_view text) {
  const auto f = split_fields(text);
  if (static_cast<int>(f.size()) != kFieldsPerLine)
    w.fail(
        fmt::format("a layer line has {} fields, not {} (name, depen, forward time, collective, size, input-gradient "
                    "time, collective, size, weight-gradient time, collective, size, update time)",
                    f.size(), kFieldsPerLine));
  AicbLine l;
  l.file_line = w.line;
  l.name = std::string(f[0]);
  const auto depen = parse_int(f[1]);
  if (!depen || *depen < -1 || *depen > 1'000'000'000)
    w.fail(fmt::format("depen '{}' is not -1 or a line index", f[1]));
  l.depen = static_cast<int>(*depen);
  l.fwd.time_ns = non_negative(w, f[2], "forward compute time");
  l.fwd.comm = parse_comm(w, f[3], f[4], AicbGroup::TP, "forward");
  l.ig.time_ns = non_negative(w, f[5], "input-gradient compute time");
  l.ig.comm = parse_comm(w, f[6], f[7], AicbGroup::TP, "input-gradient");
  l.wg.time_ns = non_negative(w, f[8], "weight-gradient compute time");
  l.wg.comm = parse_comm(w, f[9], f[10], AicbGroup::DP, "weight-gradient");
  l.update_time = non_negative(w, f[11], "update time");
  return l;
}

}  // namespace

AicbFile parse_aicb(std::string_view text, const std::string& path) {
  std::vector<std::string_view> lines;
  for (std::size_t i = 0; i <= text.size();) {
    std::size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view l = text.substr(i, j - i);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    i = j + 1;
  }
  // Trailing empty lines (a final newline) end the file.
  while (!lines.empty() && split_fields(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) throw Error(path + ":1: empty file (expected a header line, a line count and the layer lines)");
  AicbFile f;
  f.path = path;
  f.header = parse_header(FileLine{path, 1}, lines[0]);
  std::size_t i = 1;
  if (i >= lines.size()) FileLine{path, 1}.fail("the header is not followed by a line count");
  while (i < lines.size()) {
    const FileLine w{path, static_cast<int>(i + 1)};
    const auto tok = split_fields(lines[i]);
    if (tok.empty()) w.fail("empty line (expected a line count)");
    if (tok.size() != 1) {
      if (f.tables.empty()) w.fail("expected the number of layer lines on a line of its own");
      const AicbTable& last = f.tables.back();
      w.fail(fmt::format("more layer lines than the {} announced at line {} (or a table's count is missing)",
                         last.lines.size(), last.count_line));
    }
    const auto n = parse_int(tok[0]);
    if (!n || *n < 1 || *n > 100'000'000) w.fail(fmt::format("line count '{}' is not a positive integer", tok[0]));
    AicbTable t;
    t.count_line = w.line;
    ++i;
    for (std::int64_t k = 0; k < *n; ++k, ++i) {
      if (i >= lines.size())
        FileLine{path, static_cast<int>(i)}.fail(fmt::format(
            "the table of line {} announces {} layer lines but the file ends after {}", t.count_line, *n, k));
      const FileLine lw{path, static_cast<int>(i + 1)};
      if (split_fields(lines[i]).empty()) lw.fail("empty line inside a table");
      t.lines.push_back(parse_line(lw, lines[i]));
    }
    f.tables.push_back(std::move(t));
  }
  return f;
}

AicbFile read_aicb_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the workload file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_aicb(ss.str(), path);
}

std::string aicb_comm_name(const AicbComm& c, AicbGroup field_default) {
  if (c.none) return "NONE";
  std::string name;
  for (const auto& kn : kKinds)
    if (kn.kind == c.kind) name = std::string(kn.name);
  if (c.group == field_default) return name;
  for (const auto& gs : kSuffixes)
    if (gs.group == c.group) return name + "_" + std::string(gs.suffix);
  return name;
}

std::string format_aicb(const AicbFile& f) {
  const AicbHeader& h = f.header;
  std::string out = fmt::format(
      "{} model_parallel_NPU_group: {} ep: {} pp: {} vpp: {} ga: {} all_gpus: {} checkpoints: 0 "
      "checkpoint_initiates: 0 pp_comm: {}",
      h.policy, h.tp, h.ep, h.pp, h.vpp, h.ga, h.all_gpus.value_or(h.tp * h.pp), h.pp_comm);
  if (h.chunks > 1) out += fmt::format(" vpp_chunks: {}", h.chunks);
  out += '\n';
  for (const AicbTable& t : f.tables) {
    out += fmt::format("{}\n", t.lines.size());
    for (const AicbLine& l : t.lines) {
      auto part = [](const AicbPart& p, AicbGroup def) {
        return fmt::format("{}\t{}\t{}", p.time_ns, aicb_comm_name(p.comm, def), p.comm.none ? 0 : p.comm.bytes);
      };
      out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", l.name, l.depen, part(l.fwd, AicbGroup::TP),
                         part(l.ig, AicbGroup::TP), part(l.wg, AicbGroup::DP), l.update_time);
    }
  }
  return out;
}

std::optional<AicbUnitTag> aicb_unit_tag(std::string_view name) {
  const auto at = name.rfind("@mb");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = name.substr(at + 3);
  AicbUnitTag t;
  std::string_view mb = rest, chunk;
  if (const auto dot = rest.find(".c"); dot != std::string_view::npos) {
    mb = rest.substr(0, dot);
    chunk = rest.substr(dot + 2);
  }
  const auto m = parse_int(mb);
  if (!m || *m < 0 || *m > 1'000'000'000 || mb.front() == '-') return std::nullopt;
  t.micro_batch = static_cast<int>(*m);
  if (!chunk.empty()) {
    const auto c = parse_int(chunk);
    if (!c || *c < 0 || *c > 1'000'000 || chunk.front() == '-') return std::nullopt;
    t.chunk = static_cast<int>(*c);
  } else if (rest.find(".c") != std::string_view::npos) {
    return std::nullopt;
  }
  return t;
}

std::string aicb_tagged_name(std::string_view base, const AicbUnitTag& tag, bool with_chunk) {
  return with_chunk ? fmt::format("{}@mb{}.c{}", base, tag.micro_batch, tag.chunk)
                    : fmt::format("{}@mb{}", base, tag.micro_batch);
}

}  // namespace trainsim
