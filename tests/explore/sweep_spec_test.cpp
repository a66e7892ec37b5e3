// `--vary` parsing and the grid it spans: lists, ranges, GPU names, and every malformed input
// rejected with an error that names --vary and the offending text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/sweep_spec.hpp"

namespace trainsim::explore {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> texts(const SweepKey& a) {
  std::vector<std::string> out;
  for (const auto& v : a.values) out.push_back(v.text);
  return out;
}

// The error message of parsing `text`, or "" if it parsed.
std::string vary_error(const std::vector<std::string>& vary) {
  try {
    make_sweep(vary);
  } catch (const Error& e) { return e.what(); }
  return "";
}

TEST(SweepSpec, CommaListKeepsOrderAndParsesNumbers) {
  const SweepKey a = parse_vary("cluster.nic_gbps=400, 100,200");
  EXPECT_EQ(a.key, "cluster.nic_gbps");
  EXPECT_THAT(texts(a), ElementsAre("400", "100", "200"));
  ASSERT_TRUE(a.numeric());
  EXPECT_DOUBLE_EQ(*a.values[1].number, 100.0);
}

TEST(SweepSpec, GpuNamesAreCategories) {
  const SweepKey a = parse_vary("cluster.gpu=H100-SXM,H20,A100");
  EXPECT_THAT(texts(a), ElementsAre("H100-SXM", "H20", "A100"));
  EXPECT_FALSE(a.numeric());
  EXPECT_FALSE(a.values[0].number.has_value());
}

TEST(SweepSpec, QuotedNumberIsAString) {
  const SweepKey a = parse_vary("cluster.gpu=\"400\",H20");
  EXPECT_FALSE(a.values[0].number.has_value());
}

TEST(SweepSpec, IntegerRangeIsInclusiveAndStaysInteger) {
  EXPECT_THAT(texts(parse_vary("cluster.nic_gbps=100:400:100")), ElementsAre("100", "200", "300", "400"));
  // An end the step does not land on is not passed.
  EXPECT_THAT(texts(parse_vary("parallelism.tensor=1:8:3")), ElementsAre("1", "4", "7"));
  EXPECT_THAT(texts(parse_vary("parallelism.tensor=8:2:-2")), ElementsAre("8", "6", "4", "2"));
  EXPECT_THAT(texts(parse_vary("parallelism.tensor=4:4:1")), ElementsAre("4"));
}

TEST(SweepSpec, FloatRangeKeepsItsEndDespiteRounding) {
  // 0.1 + 2 * 0.1 is 0.30000000000000004 in binary; the end must still be there and print as 0.3.
  const SweepKey a = parse_vary("cluster.network.oversubscription=0.1:0.3:0.1");
  EXPECT_THAT(texts(a), ElementsAre("0.1", "0.2", "0.3"));
  EXPECT_THAT(texts(parse_vary("cluster.network.oversubscription=1:2:0.5")), ElementsAre("1", "1.5", "2"));
}

TEST(SweepSpec, RangesAndValuesMix) {
  EXPECT_THAT(texts(parse_vary("cluster.nic_gbps=100:200:100,400")), ElementsAre("100", "200", "400"));
}

TEST(SweepSpec, CommasInsideBracketsDoNotSplit) {
  EXPECT_THAT(texts(parse_vary("training.recompute_num_layers=[4,0],[2,2]")), ElementsAre("[4,0]", "[2,2]"));
}

TEST(SweepSpec, CartesianOrderIsRowMajorFirstKeySlowest) {
  const Sweep s = make_sweep({"parallelism.tensor=1,2", "cluster.nic_gbps=100,200,400"});
  ASSERT_EQ(s.size(), 6u);
  const auto o = s.overrides({"training.micro_batch_size=1"});
  ASSERT_EQ(o.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> expected = {{"1", "100"}, {"1", "200"}, {"1", "400"},
                                                                     {"2", "100"}, {"2", "200"}, {"2", "400"}};
  for (std::size_t p = 0; p < 6; ++p) {
    EXPECT_THAT(o[p], ElementsAre("training.micro_batch_size=1", "parallelism.tensor=" + expected[p].first,
                                  "cluster.nic_gbps=" + expected[p].second))
        << "point " << p;
    EXPECT_EQ(s.value(p, 0).text, expected[p].first);
    EXPECT_EQ(s.value(p, 1).text, expected[p].second);
  }
  EXPECT_EQ(s.stride(0), 3u);
  EXPECT_EQ(s.stride(1), 1u);
}

TEST(SweepSpec, ErrorsNameVaryAndTheText) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cluster.nic_gbps", "expected key="},            // no '='
      {"=100,200", "empty key"},                        // empty key
      {"cluster.nic_gbps=", "no values"},               // empty value list
      {"cluster.nic_gbps=100,,200", "empty value"},     // empty item
      {"cluster.nic_gbps=100:400:0", "step 0"},         // zero step
      {"cluster.nic_gbps=100:400:-100", "wrong sign"},  // wrong sign
      {"cluster.nic_gbps=400:100:100", "wrong sign"},   // wrong sign, other way
      {"cluster.network.oversubscription=1:0.5:0.5", "wrong sign"},
      {"cluster.nic_gbps=0.5:1.5:0", "step 0"},
      {"cluster.nic_gbps=a:b:c", "not numeric"},  // non-numeric range
      {"cluster.nic_gbps=100:x:100", "not numeric"},
      {"cluster.nic_gpbs=100,200", "did you mean cluster.nic_gbps"},  // unknown key
      {"cluster..nic_gbps=100", "empty component"},
      {"cluster.nic_gbps=100,100", "appears twice"},
      {"cluster.nic_gbps=[1,2", "unbalanced"},
      {"cluster.nic_gbps=0:10000000:1", "more than"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string msg = vary_error({text});
    EXPECT_THAT(msg, HasSubstr("--vary")) << text;
    EXPECT_THAT(msg, HasSubstr(text)) << text;
    EXPECT_THAT(msg, HasSubstr(expected)) << text;
  }
}

TEST(SweepSpec, SameKeyTwiceIsAnError) {
  const std::string msg = vary_error({"cluster.nic_gbps=100", "cluster.nic_gbps=200"});
  EXPECT_THAT(msg, HasSubstr("--vary"));
  EXPECT_THAT(msg, HasSubstr("varied twice"));
}

TEST(SweepSpec, NoVaryIsAnError) { EXPECT_THAT(vary_error({}), HasSubstr("--vary")); }

TEST(SweepSpec, ValueThatIsNotYamlIsAnError) { EXPECT_THAT(vary_error({"cluster.gpu=\"H100"}), HasSubstr("--vary")); }

TEST(SweepSpec, SetOfAVariedKeyIsAnError) {
  const Sweep s = make_sweep({"cluster.nic_gbps=100,200"});
  EXPECT_NO_THROW(check_no_set_conflict(s, {"parallelism.tensor=2"}));
  try {
    check_no_set_conflict(s, {"cluster.nic_gbps = 400"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--set"));
    EXPECT_THAT(e.what(), HasSubstr("--vary"));
  }
}

}  // namespace
}  // namespace trainsim::explore
