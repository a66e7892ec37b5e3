#pragma once
// Writing a whole text file at once, with the two failures a user can meet named: the file cannot be created
// (no such directory, no permission) or not all of it was written (a full disk).
#include <string>
#include <string_view>

namespace trainsim {

// Replaces `path` with `text`; throws Error naming the path otherwise.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace trainsim
