// Keys that are accepted must act: a value trainsim would read and then ignore is refused with the reason, and a
// file whose content would be dropped (a second YAML document) is an error naming the line.
#include <algorithm>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// One steady-state iteration is simulated; 1 (the spec's default) is accepted, anything else is refused.
TEST(AcceptedMeansUsed, IterationsOtherThanOneAreRefused) {
  EXPECT_EQ(parse_scenario(edit(kValidScenario, "training.iterations", "1"), "test.yaml").training.iterations, 1);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.iterations", "10"), "training.iterations",
                        "one steady-state iteration", "got 10", "remove the key or set 1");
}

// The spec's fp4 precision is Transformer Engine's NVFP4 recipe: accepted on NVIDIA Blackwell, refused elsewhere
// with the reason and what the GPU supports instead.
TEST(AcceptedMeansUsed, Fp4PrecisionNeedsNvidiaBlackwell) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.precision", "fp4"), "training.precision",
                        "H100-SXM does not support fp4", "NVIDIA Blackwell", "it supports bf16, fp16, fp8");
  const Scenario b200 =
      parse_scenario(edit(edit(kValidScenario, "training.precision", "fp4"), "cluster.gpu", "B200"), "test.yaml");
  EXPECT_EQ(b200.training.precision, Precision::FP4);
}

// simulation.threads sets the threads that build a run's communicators (0, the spec's default: all cores); a count
// past any machine's cores is a typo and refused. That the threads act, and change no result: api/prepare_threads_test.
TEST(AcceptedMeansUsed, SimulationThreadsAreACountOfThreads) {
  EXPECT_EQ(parse_scenario(edit(kValidScenario, "simulation.threads", "0"), "test.yaml").simulation.threads, 0);
  EXPECT_EQ(parse_scenario(edit(kValidScenario, "simulation.threads", "8"), "test.yaml").simulation.threads, 8);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "simulation.threads", "5000"), "simulation.threads", "at most 1024",
                        "got 5000");
}

// yaml-cpp's Load reads the first document only; the second one used to vanish. Its `---` is at line 4 here.
TEST(AcceptedMeansUsed, SecondYamlDocumentIsAnErrorNamingItsLine) {
  const std::string two = std::string(kValidScenario) + "---\n# the next case\ntraining: {global_batch_size: 128}\n";
  const auto e = test::parse_error(two);
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.file, "test.yaml");
  const int marker_line =
      1 + static_cast<int>(std::count(two.begin(), two.begin() + static_cast<std::ptrdiff_t>(two.find("---")), '\n'));
  EXPECT_NE(e.what.find("a second YAML document starts at line " + std::to_string(marker_line)), std::string::npos)
      << e.what;
  EXPECT_NE(e.what.find("test.yaml"), std::string::npos) << e.what;
}

TEST(AcceptedMeansUsed, LeadingMarkerAndEmptyTrailingDocumentAreFine) {
  EXPECT_NO_THROW(parse_scenario(std::string("---\n") + kValidScenario, "test.yaml"));  // one document, marked
  EXPECT_NO_THROW(parse_scenario(std::string(kValidScenario) + "---\n", "test.yaml"));  // nothing after the marker
  EXPECT_NO_THROW(parse_scenario(std::string(kValidScenario) + "...\n", "test.yaml"));  // document end marker
}

}  // namespace
}  // namespace trainsim
