// "Did you mean ...?" suggestions: names are compared the way people misspell them (case,
// separators, look-alike characters, a name cut short), and nothing is suggested for a word that
// resembles no candidate.
#include <gtest/gtest.h>

#include "core/strings.hpp"

namespace trainsim {
namespace {

// The GPU catalog's ids, in its order (data/gpus.yaml).
const std::vector<std::string> kGpus = {"V100-SXM", "A100-SXM-40GB", "A100-SXM-80GB", "H100-SXM", "H800-SXM",
                                        "H20",      "H200",          "B200",          "MI250X",   "MI300X",
                                        "GB200",    "GB300",         "B300",          "MI325X",   "MI355X"};

TEST(ClosestMatch, LookAlikeCharactersAreTheSameLetter) {
  // Capital O for zero: plain edit distance says H20 (3 edits) or H200 (3) before H100-SXM (5).
  EXPECT_EQ(closest_match("H1OO", kGpus), "H100-SXM");
  EXPECT_EQ(closest_match("MI3OOX", kGpus), "MI300X");
}

TEST(ClosestMatch, AWordCutShortSuggestsTheNameItStarts) {
  // Plain edit distance: H200 and H20 are 1 edit from "H100", H100-SXM 4.
  EXPECT_EQ(closest_match("H100", kGpus), "H100-SXM");
  EXPECT_EQ(closest_match("h800", kGpus), "H800-SXM");
  EXPECT_EQ(closest_match("V100", kGpus), "V100-SXM");
}

TEST(ClosestMatch, CaseAndSeparatorsDoNotCount) {
  EXPECT_EQ(closest_match("h100_sxm", kGpus), "H100-SXM");
  EXPECT_EQ(closest_match("a100 sxm 80gb", kGpus), "A100-SXM-80GB");
  EXPECT_EQ(closest_match("llama3_70b", {"llama3-8b", "llama3-70b", "llama3-405b"}), "llama3-70b");
}

TEST(ClosestMatch, ExactNamesAndTyposStillWin) {
  EXPECT_EQ(closest_match("H20", kGpus), "H20");
  EXPECT_EQ(closest_match("H2OO", kGpus), "H200");
  EXPECT_EQ(closest_match("paralelism", {"model", "training", "parallelism", "cluster"}), "parallelism");
  EXPECT_EQ(closest_match("tensor_parallel", {"tensor", "pipeline", "data", "context"}), "tensor");
  EXPECT_EQ(closest_match("gemmm", {"gemm", "flash_attn_fwd", "flash_attn_bwd"}), "gemm");
  EXPECT_EQ(closest_match("bf17", {"fp32", "tf32", "bf16", "fp16", "fp8"}), "bf16");
}

TEST(ClosestMatch, NothingForAWordLikeNoCandidate) {
  const std::vector<std::string> commands = {"run",    "validate", "presets", "nccl-test", "topo",
                                             "memory", "ops",      "sweep",   "tune"};
  EXPECT_EQ(closest_match("frobnicate", commands), "");
  // A short word is not "the start" of a long unrelated name.
  EXPECT_EQ(closest_match("xyzw", {"A100-SXM-80GB"}), "");
  EXPECT_EQ(closest_match("anything", {}), "");
  EXPECT_EQ(closest_match("rnu", commands), "run");
}

TEST(EditDistance, IsCaseInsensitiveLevenshtein) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("H100", "h100"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

}  // namespace
}  // namespace trainsim
