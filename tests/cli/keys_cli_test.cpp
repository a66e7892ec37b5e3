// `trainsim keys`: the scenario keys from the one table, greppable; docs/scenario-keys.md is its --markdown output.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

int line_count(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n' ? 1 : 0;
  return n;
}

TEST(KeysCli, DocsPageIsTheMarkdownOutput) {
  const Result r = run("keys --markdown");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, read_file(std::string(TRAINSIM_SOURCE_DIR) + "/docs/scenario-keys.md"))
      << "docs/scenario-keys.md is stale: run `make keys-docs` and commit it";
}

TEST(KeysCli, APatternListsTheMatchingKeysOnePerLine) {
  const Result r = run("keys nic_gbps");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(line_count(r.out), 2) << r.out;
  EXPECT_NE(r.out.find("cluster.nic_gbps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("default 400"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("algorithms.reduction_server.nic_gbps"), std::string::npos) << r.out;
  // The meaning is searched too, case-insensitively.
  const Result latency = run("keys LATENCY");
  EXPECT_NE(latency.out.find("cluster.network.switch_latency_ns"), std::string::npos) << latency.out;
}

TEST(KeysCli, JsonHasEveryKeyWithItsFields) {
  const Result text = run("keys"), json = run("keys --json");
  ASSERT_EQ(json.status, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(static_cast<int>(j.size()), line_count(text.out));
  bool found = false;
  for (const auto& k : j)
    if (k.at("path") == "cluster.scale_up.job_gpus_per_domain") {
      found = true;
      EXPECT_EQ(k.at("default"), "auto");
      EXPECT_EQ(k.at("unit"), "GPUs");
    }
  EXPECT_TRUE(found);
}

TEST(KeysCli, NoMatchAndBadFlagsAreErrors) {
  const Result none = run("keys no_such_thing_at_all");
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.out.find("no scenario key"), std::string::npos) << none.out;
  const Result both = run("keys nic --markdown");
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.out.find("--markdown"), std::string::npos) << both.out;
}

}  // namespace
