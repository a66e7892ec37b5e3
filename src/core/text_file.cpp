#include "core/text_file.hpp"

#include <fstream>

#include "core/error.hpp"

namespace trainsim {

void write_text_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot create the file");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(path + ": cannot write the file (disk full?)");
}

}  // namespace trainsim
