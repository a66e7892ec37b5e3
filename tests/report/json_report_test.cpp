// to_json: the field names of the scenario spec's "Result" (README.md, `trainsim run --json`), values that
// survive a dump and parse unchanged, and byte-identical dumps for identical results.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/reports.hpp"
#include "sample_result.hpp"

namespace trainsim {
namespace {

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  return keys;
}

// The top level carries exactly the spec's names plus scenario and critical_rank, nothing renamed.
TEST(JsonReport, TopLevelFieldsAreExactlyTheSpecNames) {
  const auto j = to_json(test::sample_result());
  const std::vector<std::string> expected = {
      "scenario",  "iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "hfu",
      "breakdown", "memory",           "comm",         "simulation",           "critical_rank"};
  EXPECT_EQ(keys_of(j), expected);
}

// The breakdown has the spec's five parts and the by-communicator detail of exposed communication.
TEST(JsonReport, BreakdownFieldsAndValues) {
  const auto b = to_json(test::sample_result())["breakdown"];
  EXPECT_EQ(keys_of(b), (std::vector<std::string>{"compute", "exposed_comm", "bubble", "optimizer", "other",
                                                  "exposed_comm_by_group", "other_by_cause"}));
  EXPECT_EQ(keys_of(b["other_by_cause"]), (std::vector<std::string>{"host_launch"}));
  EXPECT_EQ(keys_of(b["exposed_comm_by_group"]), (std::vector<std::string>{"tp", "cp", "dp", "pp", "ep", "other"}));
  EXPECT_DOUBLE_EQ(b["compute"].get<double>(), 9.0);
  EXPECT_DOUBLE_EQ(b["bubble"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(b["exposed_comm_by_group"]["tp"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(b["exposed_comm_by_group"]["dp"].get<double>(), 0.4);
}

// Memory: the spec's per-GPU GiB fields plus fits; null when the run did not model memory.
TEST(JsonReport, MemoryFieldsAndNullWhenAbsent) {
  RunResult r = test::sample_result();
  r.memory->fits = false;
  const auto m = to_json(r)["memory"];
  for (const char* key :
       {"weights", "grads", "optimizer", "activations", "peak", "fits", "other", "capacity", "worst_stage"}) {
    EXPECT_TRUE(m.contains(key)) << key;
  }
  EXPECT_EQ(m["fits"], false);
  EXPECT_DOUBLE_EQ(m["peak"].get<double>(), 70.25);

  r.memory.reset();
  EXPECT_TRUE(to_json(r)["memory"].is_null());
}

// Comm rows: one object per CommStat, in order, with the agreed names.
TEST(JsonReport, CommRows) {
  const auto comm = to_json(test::sample_result())["comm"];
  ASSERT_TRUE(comm.is_array());
  ASSERT_EQ(comm.size(), 2u);
  EXPECT_EQ(keys_of(comm[0]), (std::vector<std::string>{"kind", "group", "group_size", "count", "bytes", "time_s",
                                                        "exposed_s", "algorithm", "protocol", "max_call_s"}));
  EXPECT_EQ(comm[0]["kind"], "all_reduce");
  EXPECT_EQ(comm[0]["count"].get<std::int64_t>(), 9216);
  EXPECT_DOUBLE_EQ(comm[0]["bytes"].get<double>(), 3.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(comm[1]["protocol"], "LL128");

  RunResult r = test::sample_result();
  r.comm.clear();
  EXPECT_TRUE(to_json(r)["comm"].is_array());  // an empty table is [], not null
  EXPECT_TRUE(to_json(r)["comm"].empty());
}

TEST(JsonReport, SimulationFields) {
  const auto s = to_json(test::sample_result())["simulation"];
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"wall_s", "events", "flows", "network_model", "simulated_ranks",
                                                  "ops", "compute_model", "interference_s", "host_launch_us",
                                                  "host_launches", "inferred", "warnings"}));
  EXPECT_TRUE(s["inferred"].empty());
  EXPECT_TRUE(s["warnings"].is_array());  // [] rather than absent: a reader can rely on it
  EXPECT_TRUE(s["warnings"].empty());
  EXPECT_EQ(s["events"].get<std::int64_t>(), 1234567);
  EXPECT_EQ(s["network_model"], "analytical");
  EXPECT_EQ(s["compute_model"], "roofline model for H100-SXM");
  EXPECT_DOUBLE_EQ(s["interference_s"].get<double>(), 0.125);
}

// Settings validation chose are listed with the key, the value and why, in the order they were chosen.
TEST(JsonReport, InferredSettingsAreListed) {
  RunResult r = test::sample_result();
  r.inferred.push_back({"parallelism.expert_tensor", "1", "not given; the default does not fit"});
  r.inferred.push_back({"parallelism.pipeline_layout", "Et|tL", "recipe"});
  const auto j = to_json(r)["simulation"]["inferred"];
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["key"], "parallelism.expert_tensor");
  EXPECT_EQ(j[0]["value"], "1");
  EXPECT_EQ(j[0]["why"], "not given; the default does not fit");
  EXPECT_EQ(j[1]["key"], "parallelism.pipeline_layout");
}

// Warnings about the scenario are listed under simulation.warnings with the key and the message, in order.
TEST(JsonReport, WarningsAreListed) {
  RunResult r = test::sample_result();
  r.warnings.push_back({"parallelism.tensor", "tensor 16 is larger than the scale-up domain"});
  r.warnings.push_back({"cluster.gpu", "second"});
  const auto j = to_json(r)["simulation"]["warnings"];
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(keys_of(j[0]), (std::vector<std::string>{"key", "message"}));
  EXPECT_EQ(j[0]["key"], "parallelism.tensor");
  EXPECT_EQ(j[0]["message"], "tensor 16 is larger than the scale-up domain");
  EXPECT_EQ(j[1]["key"], "cluster.gpu");
}

// Dump and parse back: every number comes back bit for bit (nlohmann writes round-trip doubles).
TEST(JsonReport, ValuesRoundTripThroughText) {
  RunResult r = test::sample_result();
  r.iteration_time_s = 0.1 + 0.2;  // 0.30000000000000004: needs all 17 digits
  const auto parsed = nlohmann::json::parse(to_json(r).dump());
  EXPECT_EQ(parsed["iteration_time_s"].get<double>(), r.iteration_time_s);
  EXPECT_EQ(parsed["tokens_per_s"].get<double>(), r.tokens_per_s);
  EXPECT_EQ(parsed["mfu"].get<double>(), r.mfu);
  EXPECT_EQ(parsed["critical_rank"].get<int>(), 7);
  EXPECT_EQ(parsed["scenario"], "gpt3-175b-1024-h100");
}

// Determinism: two results built independently with the same content dump to the same bytes.
TEST(JsonReport, DumpsAreByteIdentical) {
  const std::string a = to_json(test::sample_result()).dump(2);
  const std::string b = to_json(test::sample_result()).dump(2);
  EXPECT_EQ(a, b);
  RunResult changed = test::sample_result();
  changed.comm[1].time_s = 0.5000001;
  EXPECT_NE(a, to_json(changed).dump(2));  // and the dump does depend on the content
}

}  // namespace
}  // namespace trainsim
