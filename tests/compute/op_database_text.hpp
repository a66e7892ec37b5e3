#pragma once
// Op database CSV text for the compute tests: the header line, a database read from rows under it, and what
// parsing a text says when it refuses it.
#include <string>

#include "compute/op_database.hpp"
#include "core/error.hpp"

namespace trainsim::test {

inline constexpr const char* kOpDatabaseHeader = "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us\n";

// The database that `rows` under the header make, read as if from `file` (messages name it).
inline OpDatabase op_database_of(const std::string& rows, const std::string& file = "db.csv") {
  return OpDatabase::parse(std::string(kOpDatabaseHeader) + rows, file);
}

// The message of the Error that parsing `text` as db.csv throws ("" when it does not throw).
inline std::string op_database_parse_error(const std::string& text) {
  try {
    OpDatabase::parse(text, "db.csv");
  } catch (const Error& e) { return e.what(); }
  return "";
}

}  // namespace trainsim::test
