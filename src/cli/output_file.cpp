#include "cli/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "trainsim/errors.hpp"

namespace trainsim::cli {

namespace {

// Why the last write failed, as the system said it ("No space left on device", "Broken pipe").
std::string reason() { return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string(); }

}  // namespace

void write_output_file(const std::string& what, const std::string& path,
                       const std::function<void(std::ostream&)>& write) {
  errno = 0;
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(what + ": cannot write " + path + reason());
  write(f);
  // Most of a small file is still in the stream's buffer: only the flush shows it was not written.
  f.flush();
  if (!f) throw Error(what + ": error while writing " + path + reason());
  f.close();
  if (f.fail()) throw Error(what + ": error while closing " + path + reason());
}

std::string check_output_dir(const std::string& path, const char* flag) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    return std::string(flag) + " '" + path + "': the directory " + dir.string() + " does not exist";
  return "";
}

void check_stdout() {
  errno = 0;
  std::cout.flush();
  if (!std::cout) throw Error("cannot write to standard output" + reason());
}

}  // namespace trainsim::cli
