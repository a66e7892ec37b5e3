// Every published-measurement scenario in ../shared/validation/cases must load: they are the
// contract's largest body of real inputs (training jobs and collective benchmarks).
#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

// A training case: tensor x pipeline x context x data must be the world (what validation.cpp resolves data from).
void expect_training_job_on_its_world(const Scenario& s, const std::filesystem::path& file) {
  EXPECT_TRUE(s.has_training_job) << file;
  EXPECT_EQ(
      static_cast<long>(s.parallelism.tensor) * s.parallelism.pipeline * s.parallelism.context * s.parallelism.data,
      s.cluster.num_gpus)
      << file;
}

TEST(ValidationCases, EveryCaseParses) {
  const std::filesystem::path dir =
      std::filesystem::path(TRAINSIM_SOURCE_DIR) / ".." / "shared" / "validation" / "cases";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no validation cases at " << dir;
  int training = 0, collective = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    try {
      const Scenario s = load_scenario(entry.path().string());
      (s.has_training_job ? training : collective)++;
      if (s.has_training_job) {
        expect_training_job_on_its_world(s, entry.path());
      } else {
        EXPECT_TRUE(s.collective.has_value()) << entry.path();
      }
    } catch (const Error& e) { ADD_FAILURE() << e.what(); }
  }
  // The README counts 182 training runs and 8 collective benchmarks; at least some of each must be there.
  EXPECT_GT(training, 0);
  EXPECT_GT(collective, 0);
}

// cases-next/ holds the cases that needed today's recipe keys (pipeline_layout, recompute_modules, mtp_layers,
// MoE parallel folding) and GB200: they must load too, and all of them are training jobs.
TEST(ValidationCases, EveryNextCaseParses) {
  const std::filesystem::path dir =
      std::filesystem::path(TRAINSIM_SOURCE_DIR) / ".." / "shared" / "validation" / "cases-next";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no validation cases at " << dir;
  int training = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    try {
      expect_training_job_on_its_world(load_scenario(entry.path().string()), entry.path());
      ++training;
    } catch (const Error& e) { ADD_FAILURE() << e.what(); }
  }
  EXPECT_GT(training, 0);
}

// validation/cases is the project's own set (validation/README.md): public measurements written by hand, each
// citing its source. It ships with the repository, so it is never skipped; every case is a training job whose
// world size factors exactly, and says where its numbers come from.
TEST(ValidationCases, EveryOwnCaseParsesAndCitesItsSource) {
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "validation" / "cases";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int training = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    try {
      expect_training_job_on_its_world(load_scenario(entry.path().string()), entry.path());
      const YAML::Node reference = YAML::LoadFile(entry.path().string())["reference"];
      ASSERT_TRUE(reference && reference.IsMap()) << entry.path() << ": no reference block";
      EXPECT_NE(reference["source"].as<std::string>("").find("http"), std::string::npos)
          << entry.path() << ": reference.source must carry the source's address";
      EXPECT_FALSE(reference["notes"].as<std::string>("").empty()) << entry.path() << ": reference.notes";
      ++training;
    } catch (const Error& e) { ADD_FAILURE() << e.what(); }
  }
  // validation/README.md counts 39 cases; fewer means a file went missing.
  EXPECT_GE(training, 39);
}

TEST(ValidationCases, EveryExampleParses) {
  // The shipped examples/ are what users copy first; they must load as written.
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "examples";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no examples at " << dir;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    try {
      load_scenario(entry.path().string());
    } catch (const Error& e) { ADD_FAILURE() << e.what(); }
  }
}

}  // namespace
}  // namespace trainsim
