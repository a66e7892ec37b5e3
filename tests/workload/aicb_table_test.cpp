// The AICB/SimAI layer-table text: what parses, and every malformed input named by FILE:LINE.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "workload/aicb/aicb_table.hpp"

namespace trainsim {
namespace {

const char* kHeader =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 2 ga: 1 all_gpus: 8 "
    "checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n";

std::string error_of(const std::string& text) {
  try {
    parse_aicb(text, "w.txt");
  } catch (const Error& e) { return e.what(); }
  return "(no error)";
}

TEST(AicbTable, ParsesAicbsFieldsAndDefaultGroups) {
  const AicbFile f =
      parse_aicb(std::string(kHeader) +
                     "2\n"
                     "attention_column\t-1\t1000\tALLGATHER\t4096\t900\tREDUCESCATTER\t4096\t800\tNONE\t0\t100\n"
                     "mlp_moelayer -1 5 ALLTOALL_EP 64 6 ALLTOALL_EP 64 7 ALLREDUCE_DP_EP 128 100\n",
                 "w.txt");
  EXPECT_EQ(f.header.tp, 2);
  EXPECT_EQ(f.header.all_gpus.value_or(0), 8);
  ASSERT_EQ(f.tables.size(), 1u);
  ASSERT_EQ(f.tables[0].lines.size(), 2u);
  const AicbLine& a = f.tables[0].lines[0];
  EXPECT_EQ(a.fwd.time_ns, 1000);
  EXPECT_EQ(a.fwd.comm.kind, CollKind::AllGather);
  EXPECT_EQ(a.fwd.comm.group, AicbGroup::TP);  // forward default: TP
  EXPECT_EQ(a.ig.comm.kind, CollKind::ReduceScatter);
  EXPECT_TRUE(a.wg.comm.none);
  const AicbLine& m = f.tables[0].lines[1];
  EXPECT_EQ(m.fwd.comm.group, AicbGroup::EP);
  EXPECT_EQ(m.wg.comm.group, AicbGroup::DpEp);
  EXPECT_EQ(m.wg.comm.bytes, 128);
  EXPECT_EQ(m.file_line, 4);
}

TEST(AicbTable, WeightGradientDefaultIsDataParallel) {
  const AicbFile f =
      parse_aicb(std::string(kHeader) + "1\ngrad -1 1 NONE 0 1 NONE 0 1 REDUCESCATTER 64 100\n", "w.txt");
  EXPECT_EQ(f.tables[0].lines[0].wg.comm.group, AicbGroup::DP);
}

TEST(AicbTable, FormatsWhatItParses) {
  const std::string text =
      std::string(kHeader) + "1\nx\t-1\t3\tALLREDUCE\t16\t4\tALLTOALL_EP\t8\t5\tALLGATHER_DP_EP\t32\t100\n";
  const AicbFile f = parse_aicb(text, "w.txt");
  const AicbFile again = parse_aicb(format_aicb(f), "w2.txt");
  EXPECT_EQ(format_aicb(again), format_aicb(f));
  EXPECT_EQ(again.tables[0].lines[0].ig.comm.group, AicbGroup::EP);
}

TEST(AicbTable, PythonFloatPpCommIsAccepted) {
  const AicbFile f = parse_aicb(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 pp: 2 ga: 1 all_gpus: 8 pp_comm 3145728.0\n"
      "1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n",
      "w.txt");
  EXPECT_EQ(f.header.pp_comm, 3145728);
}

TEST(AicbTable, CollectiveNamesAreExactNotPrefixes) {
  // SimAI matches "ALLREDUCE" as a prefix; trainsim wants the name exactly.
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nx -1 1 ALLREDUCEX 4 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:3: unknown forward collective 'ALLREDUCEX' (known: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, "
            "ALLTOALL (AICB's), BROADCAST, REDUCE (trainsim's), each alone or with _EP, _DP_EP (AICB's) or _TP, _DP, "
            "_CP, _ETP, _ETP_EP, _WORLD, _MP, _EMB (trainsim's))");
  EXPECT_NE(error_of(std::string(kHeader) + "1\nx -1 1 ALLGATHER_EPX 4 1 NONE 0 1 NONE 0 100\n")
                .find("w.txt:3: unknown forward collective 'ALLGATHER_EPX'"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kHeader) + "1\nx -1 1 NONE 0 1 allreduce 4 1 NONE 0 100\n")
                .find("w.txt:3: unknown input-gradient collective 'allreduce'"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kHeader) + "1\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCEALLTOALL 4 100\n")
                .find("w.txt:3: weight-gradient collective 'ALLREDUCEALLTOALL': SimAI's combined"),
            std::string::npos);
}

TEST(AicbTable, LineCountIsChecked) {
  EXPECT_EQ(
      error_of(std::string(kHeader) + "3\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
      "w.txt:4: the table of line 2 announces 3 layer lines but the file ends after 2");
  EXPECT_EQ(
      error_of(std::string(kHeader) + "1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
      "w.txt:4: more layer lines than the 1 announced at line 2 (or a table's count is missing)");
  EXPECT_EQ(error_of(std::string(kHeader) + "zero\n"), "w.txt:2: line count 'zero' is not a positive integer");
  EXPECT_EQ(error_of(std::string(kHeader)), "w.txt:1: the header is not followed by a line count");
}

TEST(AicbTable, EveryBadFieldNamesItsLine) {
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0\n"),
            "w.txt:3: a layer line has 11 fields, not 12 (name, depen, forward time, collective, size, input-gradient "
            "time, collective, size, weight-gradient time, collective, size, update time)");
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nx -1 -5 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:3: forward compute time '-5' is not a non-negative integer");
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nx -1 1.5 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:3: forward compute time '1.5' is not a non-negative integer");
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nx -1 1 ALLREDUCE 1e6 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:3: forward size '1e6' is not a non-negative integer");
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nx -2 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:3: depen '-2' is not -1 or a line index");
  EXPECT_EQ(error_of(std::string(kHeader) +
                     "2\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:4: empty line inside a table");
}

TEST(AicbTable, HeaderErrors) {
  EXPECT_EQ(error_of(""), "w.txt:1: empty file (expected a header line, a line count and the layer lines)");
  EXPECT_NE(error_of("DATA\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n").find("w.txt:1: parallelism policy 'DATA'"),
            std::string::npos);
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER ep: 1\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:1: the header has no model_parallel_NPU_group: (the TP size)");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 0\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:1: header key 'model_parallel_NPU_group:' must be a positive integer, not 0");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 2\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:1: pp: 2 needs pp_comm: the bytes of one pipeline transfer (AICB writes 2*mbs*seq*hidden)");
  EXPECT_NE(error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 tp: 2\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n")
                .find("w.txt:1: unknown header key 'tp:'"),
            std::string::npos);
  EXPECT_EQ(
      error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 1 ga: 2\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
      "w.txt:1: header key 'ga:' given twice");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER model_parallel_NPU_group:\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"),
            "w.txt:1: header key 'model_parallel_NPU_group:' has no value");
  EXPECT_NE(
      error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 checkpoints: 1 3\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 "
               "100\n")
          .find("w.txt:1: header key 'checkpoints:' 1: forward-in-backward recomputation is not supported"),
      std::string::npos);
}

TEST(AicbTable, UnitTags) {
  EXPECT_EQ(aicb_unit_tag("layer3.qkv@mb12"), (AicbUnitTag{12, 0}));
  EXPECT_EQ(aicb_unit_tag("layer3.qkv@mb12.c1"), (AicbUnitTag{12, 1}));
  EXPECT_FALSE(aicb_unit_tag("attention_column"));
  EXPECT_FALSE(aicb_unit_tag("x@mb"));
  EXPECT_FALSE(aicb_unit_tag("x@mb-1"));
  EXPECT_FALSE(aicb_unit_tag("x@mb1.c"));
  EXPECT_EQ(aicb_tagged_name("a", {3, 2}, true), "a@mb3.c2");
}

}  // namespace
}  // namespace trainsim
