// The small formatters every report shares.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "report/format_utils.hpp"

namespace trainsim::report_format {
namespace {

TEST(FormatUtils, GroupDigits) {
  EXPECT_EQ(group_digits(0.0), "0");
  EXPECT_EQ(group_digits(999.4), "999");
  EXPECT_EQ(group_digits(1000.0), "1,000");
  EXPECT_EQ(group_digits(1234567.8), "1,234,568");
  EXPECT_EQ(group_digits(-1234.0), "-1,234");
  EXPECT_EQ(group_digits(-0.2), "0");
  EXPECT_EQ(group_digits(std::int64_t{123456789012345}), "123,456,789,012,345");
  EXPECT_EQ(group_digits(std::numeric_limits<std::int64_t>::min()), "-9,223,372,036,854,775,808");
}

// Binary units: 1 KiB = 1024 B, 1 MiB = 2^20 B, 1 GiB = 2^30 B.
TEST(FormatUtils, HumanBytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1024), "1.00 KiB");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(3.0 * 1024 * 1024), "3.00 MiB");
  EXPECT_EQ(human_bytes(1.25 * 1024 * 1024 * 1024), "1.25 GiB");
  EXPECT_EQ(human_bytes(2.0 * 1024 * 1024 * 1024 * 1024), "2.00 TiB");
}

TEST(FormatUtils, HumanDuration) {
  EXPECT_EQ(human_duration(0), "0 s");
  EXPECT_EQ(human_duration(812e-9), "812 ns");
  EXPECT_EQ(human_duration(15.24e-6), "15.2 us");
  EXPECT_EQ(human_duration(3.4e-3), "3.40 ms");
  EXPECT_EQ(human_duration(1.25), "1.25 s");
  EXPECT_EQ(human_duration(125.0), "125 s");
}

TEST(FormatUtils, Percentages) {
  EXPECT_EQ(percent(0.40445), "40.4 %");
  EXPECT_EQ(share_of(9, 12.5), "72.0");
  EXPECT_EQ(share_of(1, 0), "-");
  EXPECT_EQ(signed_percent(0.047), "+4.7%");
  EXPECT_EQ(signed_percent(-0.1), "-10.0%");
  EXPECT_EQ(signed_percent(std::numeric_limits<double>::infinity()), "n/a");
}

TEST(FormatUtils, CompactNumber) {
  EXPECT_EQ(compact_number(12345.6), "12346");
  EXPECT_EQ(compact_number(148), "148.0");
  EXPECT_EQ(compact_number(13.9), "13.900");
  EXPECT_EQ(compact_number(0.45), "0.4500");
}

TEST(FormatUtils, Escaping) {
  EXPECT_EQ(json_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
  EXPECT_EQ(markdown_cell("a|b\nc"), "a\\|b c");
}

}  // namespace
}  // namespace trainsim::report_format
