// libFuzzer target for the op database reader (src/compute/op_database.hpp): any byte string is a
// possible CSV file. The reader may reject it, but only with trainsim::Error naming the line
// (design.md: "Bad input never crashes"); anything else escaping, or a sanitizer report, is a bug.
// A database that parses is also looked up, around every row's shape, so the interpolation and
// extrapolation arithmetic sees whatever numbers the fuzzer invents. Built with -DTRAINSIM_FUZZ=ON (clang).
//   ./op_database_fuzz -max_len=4096 corpus/   (seed the corpus with docs/op-database.md's example)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "compute/op_database.hpp"
#include "core/error.hpp"

namespace {

void exercise_lookups(const trainsim::OpDatabase& db) {
  for (const trainsim::OpRecord& r : db.records()) {
    trainsim::KernelDesc k;
    k.kind = r.kind;
    k.dtype = r.dtype;
    k.causal = r.causal;
    // The row itself (exact), and shapes below, between and above the measured ones.
    for (const std::int64_t scale : {1, 2, 3}) {
      if (r.m > std::numeric_limits<std::int64_t>::max() / scale) break;  // the query itself would overflow
      k.m = r.m * scale;
      k.n = r.n;
      k.k = r.k;
      k.batch = r.batch;
      k.bytes = r.bytes * static_cast<double>(scale) / 2.0;
      const auto t = db.time_s(r.gpu, k);
      // An answer, when there is one, is a finite non-negative time.
      if (t && !(std::isfinite(*t) && *t >= 0)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    exercise_lookups(trainsim::OpDatabase::parse(text, "fuzz.csv"));
  } catch (const trainsim::Error&) {
    // Rejected with a message: the expected outcome for most inputs.
  }
  return 0;
}
