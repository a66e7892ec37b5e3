#pragma once
// A command's outputs: the files it writes and standard output. Each is flushed and its stream
// checked, so a full disk or a closed pipe ends the command with an error naming the path, not with
// a truncated file and exit status 0.
#include <functional>
#include <ostream>
#include <string>

namespace trainsim::cli {

// Creates (or truncates) `path`, lets `write` fill it, flushes and closes it. Throws Error
// "<what>: cannot write <path>: <reason>"; `what` names where the path came from ("--csv",
// "output.trace").
void write_output_file(const std::string& what, const std::string& path,
                       const std::function<void(std::ostream&)>& write);

// Before a long computation: "" when the directory `path` would be written in exists, else the problem, naming
// `flag` ("--csv 'out/x.csv': the directory out does not exist"). The write itself still checks everything.
std::string check_output_dir(const std::string& path, const char* flag);

// Flushes standard output; throws Error when anything written to it was lost.
void check_stdout();

}  // namespace trainsim::cli
