#pragma once
// Field-by-field comparison of two graph-search results, for the tests that check one search against another.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_graph_search.hpp"

namespace trainsim::testing {

inline void expect_same_graph(const SearchGraph& a, const SearchGraph& b) {
  EXPECT_EQ(a.pattern, b.pattern);
  EXPECT_EQ(a.nchannels, b.nchannels);
  EXPECT_DOUBLE_EQ(a.bw_intra, b.bw_intra);
  EXPECT_DOUBLE_EQ(a.bw_inter, b.bw_inter);
  EXPECT_EQ(a.type_intra, b.type_intra);
  EXPECT_EQ(a.type_inter, b.type_inter);
  EXPECT_EQ(a.intra, b.intra);
  EXPECT_EQ(a.net_in, b.net_in);
  EXPECT_EQ(a.net_out, b.net_out);
}

}  // namespace trainsim::testing
