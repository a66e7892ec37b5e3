// write_text_file: the whole text replaces the file; a file that cannot be created is an Error naming it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/text_file.hpp"

namespace trainsim {
namespace {

TEST(TextFile, ReplacesTheFileWithTheText) {
  const std::string path = testing::TempDir() + "/text_file_test.txt";
  write_text_file(path, "a longer first version\n");
  write_text_file(path, "second\n");
  std::ifstream in(path, std::ios::binary);
  std::stringstream read;
  read << in.rdbuf();
  EXPECT_EQ(read.str(), "second\n");
}

TEST(TextFile, AFileThatCannotBeCreatedIsAnErrorNamingIt) {
  const std::string path = testing::TempDir() + "/no-such-directory/x.txt";
  try {
    write_text_file(path, "x");
    FAIL() << "no error";
  } catch (const Error& e) { EXPECT_EQ(std::string(e.what()), path + ": cannot create the file"); }
}

}  // namespace
}  // namespace trainsim
