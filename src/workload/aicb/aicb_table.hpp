#pragma once
// SimAI/AICB workload files as text: the header line, then one or more layer tables (a line count and that many
// layer lines). What each field means to SimAI and to trainsim: docs/workload-files.md. This file only reads and
// writes the text, strictly (every bad line is an Error "FILE:LINE: what"); aicb_import / aicb_export give it meaning.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective_kind.hpp"

namespace trainsim {

// The communicator a collective field names. AICB's names: the field's default (TP for the forward and
// input-gradient fields, DP for the weight-gradient field), `_EP` and `_DP_EP` (expert data parallel). trainsim's own
// suffixes (`_TP`, `_DP`, `_CP`, `_ETP`, `_ETP_EP`, `_WORLD`, `_MP`, `_EMB`) name the groups AICB has no word for.
enum class AicbGroup : std::uint8_t { TP, DP, EP, DpEp, CP, ETP, EtpEp, World, MP, Emb };

struct AicbComm {
  bool none = true;  // NONE: no collective (its size is ignored, as SimAI does)
  CollKind kind = CollKind::AllReduce;
  AicbGroup group = AicbGroup::TP;
  std::int64_t bytes = 0;
};

// One of a layer line's three parts: compute time (nanoseconds, SimAI's Tick), then the collective.
struct AicbPart {
  std::int64_t time_ns = 0;
  AicbComm comm;
};

struct AicbLine {
  std::string name;
  int depen = -1;  // AICB writes -1; trainsim: the line whose asynchronous collectives this line's forward waits for
  AicbPart fwd, ig, wg;
  std::int64_t update_time = 100;  // wg_update_time: read and written, not used
  int file_line = 0;               // 1-based line in the file (for errors)
};

struct AicbTable {
  int count_line = 0;  // the file line holding the count
  std::vector<AicbLine> lines;
};

struct AicbHeader {
  std::string policy = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
  int tp = 1;                   // model_parallel_NPU_group
  int ep = 1;                   // ep
  int pp = 1;                   // pp
  int vpp = 1;                  // vpp (AICB writes the number of layers; not used)
  int ga = 1;                   // ga: micro-batches per iteration
  std::optional<int> all_gpus;  // all_gpus
  std::int64_t pp_comm = 0;     // pp_comm: bytes of one pipeline transfer
  int chunks = 1;               // trainsim's `vpp_chunks:`: model chunks per pipeline stage (interleaved 1F1B)
};

struct AicbFile {
  std::string path;
  AicbHeader header;
  std::vector<AicbTable> tables;  // one shared by every pipeline stage, or one per stage
};

// Parses the text of `path` (named in errors). Throws Error "PATH:LINE: what" for the first bad line.
AicbFile parse_aicb(std::string_view text, const std::string& path);
AicbFile read_aicb_file(const std::string& path);

std::string format_aicb(const AicbFile& f);

// "ALLREDUCE", "ALLGATHER_EP", "REDUCESCATTER_DP_EP", ... for a collective in a field whose default group is
// `field_default`; "NONE" for none.
std::string aicb_comm_name(const AicbComm& c, AicbGroup field_default);

// A line name's unit tag: "layer3.qkv@mb12" or "...@mb12.c1" -> micro-batch 12, chunk 1. nullopt when untagged.
struct AicbUnitTag {
  int micro_batch = 0;
  int chunk = 0;
  bool operator==(const AicbUnitTag&) const = default;
};
std::optional<AicbUnitTag> aicb_unit_tag(std::string_view name);
std::string aicb_tagged_name(std::string_view base, const AicbUnitTag& tag, bool with_chunk);

}  // namespace trainsim
