// The registry of collective algorithms (collective/algorithm_registry.hpp): every entry is complete (a scenario
// name, a description and what it implements for `trainsim presets`, an estimate, and flows unless NCCL gives
// them), names and ids are unique and round-trip, unknown names are rejected, and the dispatch follows each
// entry's capabilities.
#include "collective/algorithm_registry.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "collective/algorithms/custom_algorithms.hpp"
#include "core/error.hpp"
#include "custom_test_support.hpp"

namespace trainsim {
namespace {

constexpr CollKind kAllKinds[] = {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter,
                                  CollKind::Broadcast, CollKind::Reduce,    CollKind::AllToAll,
                                  CollKind::SendRecv};

TEST(AlgorithmRegistry, EveryEntryHasANameADescriptionAndItsFunctions) {
  ASSERT_FALSE(collective_algorithms().empty());
  std::set<std::string> names;
  std::set<CollectiveAlgorithm> ids;
  for (const CollectiveAlgorithmInfo& a : collective_algorithms()) {
    ASSERT_NE(a.name, nullptr);
    const std::string name = a.name;
    EXPECT_FALSE(name.empty());
    // As a scenario writes it: lower case and underscores.
    for (const char c : name) EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || c == '_') << name;
    EXPECT_TRUE(names.insert(name).second) << "two entries named " << name;
    EXPECT_TRUE(ids.insert(a.id).second) << name;
    ASSERT_NE(a.description, nullptr);
    EXPECT_FALSE(std::string(a.description).empty()) << name;
    ASSERT_NE(a.collectives, nullptr);
    EXPECT_FALSE(std::string(a.collectives).empty()) << name;
    EXPECT_NE(a.supports, nullptr) << name;
    EXPECT_NE(a.estimate, nullptr) << name;
    // NCCL's own choice gets its flows from the NCCL flow generator; every other algorithm brings its own.
    EXPECT_EQ(a.flows == nullptr, a.id == CollectiveAlgorithm::Nccl) << name;
    EXPECT_EQ(&collective_algorithm(a.id), &a) << name;
    EXPECT_STREQ(to_string(a.id), a.name);
    EXPECT_EQ(parse_collective_algorithm(name), a.id) << name;
  }
  // NCCL's own choice is first (the default) and runs everything.
  EXPECT_EQ(collective_algorithms().front().id, CollectiveAlgorithm::Nccl);
  for (const CollKind k : kAllKinds) EXPECT_TRUE(collective_algorithms().front().supports(k)) << to_string(k);
}

TEST(AlgorithmRegistry, UnknownNamesAreRejected) {
  for (const char* name : {"ring", "butterfly", "", "nccl2", "halving doubling"})
    EXPECT_FALSE(parse_collective_algorithm(name).has_value()) << name;
}

// An algorithm asked for a collective it does not implement is refused with a message naming it and what it
// implements; for the collectives it implements, a healthy multi-node group raises no objection.
TEST(AlgorithmRegistry, DispatchFollowsEachEntrysCapabilities) {
  const auto comm = testing::custom_comm(2, 8);
  CustomAlgoContext ctx;
  ctx.nranks = 16;
  ctx.nnodes = 2;
  ctx.ppn = 8;
  for (const CollectiveAlgorithmInfo& a : collective_algorithms()) {
    for (const CollKind k : kAllKinds) {
      const std::string reason = custom_algorithm_unsupported_reason(a.id, k, 16, 2, 8);
      if (a.supports(k)) {
        EXPECT_EQ(reason, "") << a.name << " " << to_string(k);
        continue;
      }
      EXPECT_NE(reason.find(a.name), std::string::npos) << reason;
      EXPECT_NE(reason.find(a.collectives), std::string::npos) << reason;
      EXPECT_THROW(estimate_custom(a.id, k, 1 << 20, ctx), Error) << a.name << " " << to_string(k);
      EXPECT_THROW(custom_flows(a.id, k, 1 << 20, comm, {}), Error) << a.name << " " << to_string(k);
    }
  }
}

}  // namespace
}  // namespace trainsim
