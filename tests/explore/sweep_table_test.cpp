// The sweep table behind the CSV and the plot: flattened result fields, a column set that depends
// only on the outcomes, RFC 4180 quoting, and rows for points that did not simulate.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "explore/point_eval.hpp"
#include "explore/sweep_table.hpp"
#include "explore/sweep_text.hpp"
#include "point_outcomes.hpp"

namespace trainsim::explore {
namespace {

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::ordered_json;

using test::not_run_outcome;
using test::ok_outcome;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

TEST(SweepTable, FlattenKeepsScalarsWithDottedNamesAndDropsArraysAndWallTime) {
  const json r = json::parse(R"({"iteration_time_s": 1.5, "breakdown": {"compute": 1.0, "by": {"tp": 0.5}},
      "comm": [{"kind": "all_reduce"}], "simulation": {"wall_s": 0.0, "events": 7, "network_model": "flow"},
      "memory": {"fits": true}})");
  std::vector<std::string> names;
  for (const auto& [name, value] : flatten_scalars(r)) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("iteration_time_s", "breakdown.compute", "breakdown.by.tp", "simulation.events",
                                 "simulation.network_model", "memory.fits"));
}

TEST(SweepTable, ColumnsAreKeysStatusReasonThenUnionOfFieldsInPointOrder) {
  const Sweep sweep = make_sweep({"parallelism.tensor=1,2,4"});
  const std::vector<PointOutcome> outcomes = {not_run_outcome(PointStatus::Invalid, "bad"),
                                              ok_outcome(json::parse(R"({"a": 1, "b": {"c": 2.5}})")),
                                              ok_outcome(json::parse(R"({"a": 3, "d": "x"})"))};
  const SweepTable t = make_sweep_table(sweep, outcomes);
  EXPECT_THAT(t.columns, ElementsAre("parallelism.tensor", "status", "reason", "a", "b.c", "d"));
  std::stringstream csv;
  write_sweep_csv(csv, t);
  EXPECT_THAT(lines(csv.str()), ElementsAre("parallelism.tensor,status,reason,a,b.c,d", "1,invalid,bad,,,",
                                            "2,ok,,1,2.5,", "4,ok,,3,,x"));
  EXPECT_THAT(t.numeric_columns(), ElementsAre("parallelism.tensor", "a", "b.c"));
}

TEST(SweepTable, CsvQuotesReasonsAndPrintsNumbersRoundTrip) {
  EXPECT_EQ(csv_cell(json("plain")), "plain");
  EXPECT_EQ(csv_cell(json("a, b")), "\"a, b\"");
  EXPECT_EQ(csv_cell(json("say \"hi\"")), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell(json("two\nlines")), "\"two\nlines\"");
  EXPECT_EQ(csv_cell(json()), "");
  EXPECT_EQ(csv_cell(json(true)), "true");
  EXPECT_EQ(csv_cell(json(3)), "3");
  // Shortest text that reads back to the same double, not a fixed precision.
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(csv_cell(json(third))), third);
  EXPECT_EQ(csv_cell(json(0.1)), "0.1");
}

// A real invalid point: the tensor-parallel size does not divide the attention heads.
TEST(SweepTable, InvalidPointIsARowWithStatusAndReason) {
  const auto path = std::filesystem::temp_directory_path() / "trainsim_sweep_table_tiny.yaml";
  std::ofstream(path) << "model: {num_layers: 2, hidden_size: 512, num_attention_heads: 8, ffn_hidden_size: 2048,\n"
                         "        vocab_size: 1024, seq_length: 512}\n"
                         "training: {global_batch_size: 48, micro_batch_size: 1, precision: bf16}\n"
                         "parallelism: {tensor: 2, pipeline: 1}\n"
                         "cluster: {gpu: H100-SXM, num_gpus: 12, gpus_per_node: 4, nics_per_node: 4, nic_gbps: 400}\n";
  const Sweep sweep = make_sweep({"parallelism.tensor=2,3"});
  const auto overrides = sweep.overrides();
  const std::vector<PointOutcome> outcomes = {evaluate_point(path.string(), overrides[0]),
                                              evaluate_point(path.string(), overrides[1])};
  std::filesystem::remove(path);
  ASSERT_EQ(outcomes[0].status, PointStatus::Ok) << outcomes[0].reason;
  const SweepTable t = make_sweep_table(sweep, outcomes);
  const std::size_t status = *t.column("status"), reason = *t.column("reason"), iter = *t.column("iteration_time_s");
  EXPECT_EQ(t.rows[1][0], "3");
  EXPECT_EQ(t.rows[1][status], "invalid");
  EXPECT_THAT(t.rows[1][reason].get<std::string>(), HasSubstr("parallelism.tensor"));
  EXPECT_TRUE(t.rows[1][iter].is_null());
  EXPECT_FALSE(t.ok[1]);
  EXPECT_TRUE(t.number(0, iter).has_value());
  EXPECT_FALSE(t.column("simulation.wall_s").has_value());
  EXPECT_FALSE(t.column("comm").has_value());

  std::stringstream text;
  write_sweep_text(text, sweep, t);
  EXPECT_THAT(text.str(), HasSubstr("invalid: "));
  EXPECT_THAT(text.str(), HasSubstr("2 -> 3"));
  EXPECT_THAT(text.str(), HasSubstr("n/a"));  // no marginal gain towards a point that did not simulate
}

TEST(SweepText, MarginalGainComparesEachStepOfTheFirstKeyWithTheOthersFixed) {
  // Points (first key slowest): (100,a)=2.0 (100,b)=4.0 (200,a)=1.5 (200,b)=5.0
  const Sweep sweep = make_sweep({"cluster.nic_gbps=100,200", "cluster.gpu=A,B"});
  const std::vector<PointOutcome> outcomes = {
      ok_outcome(json::parse(R"({"iteration_time_s": 2.0})")), ok_outcome(json::parse(R"({"iteration_time_s": 4.0})")),
      ok_outcome(json::parse(R"({"iteration_time_s": 1.5})")), ok_outcome(json::parse(R"({"iteration_time_s": 5.0})"))};
  const SweepTable t = make_sweep_table(sweep, outcomes);
  EXPECT_DOUBLE_EQ(*iteration_time_change(t, 0, 2), -0.25);
  EXPECT_DOUBLE_EQ(*iteration_time_change(t, 1, 3), 0.25);
  EXPECT_EQ(other_keys_label(sweep, 3), "cluster.gpu=B");
  std::stringstream text;
  write_sweep_text(text, sweep, t);
  EXPECT_THAT(text.str(), ContainsRegex("cluster.gpu=A +100 -> 200 +-25.0%"));
  EXPECT_THAT(text.str(), ContainsRegex("cluster.gpu=B +100 -> 200 +[+]25.0%"));
}

}  // namespace
}  // namespace trainsim::explore
