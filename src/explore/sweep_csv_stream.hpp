#pragma once
// A sweep's CSV file written while the sweep runs: each point's row goes out (flushed) as soon as it
// and every earlier point are done, so rows stay in point order whatever the threads do, and a
// sweep that is killed leaves the rows it finished. The finished file is byte-identical to
// write_sweep_csv of the whole table: when a point brings result columns the rows so far lack (the
// first simulated point, or a field only some points have), the file is rewritten from the start.
#include <cstddef>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "explore/point_eval.hpp"
#include "explore/sweep_spec.hpp"
#include "explore/sweep_table.hpp"

namespace trainsim::explore {

class SweepCsvStream {
 public:
  // Creates (truncates) `path` and writes the header of a table without rows. Throws Error when the
  // file cannot be written.
  SweepCsvStream(std::string path, const Sweep& sweep, std::size_t points);

  // Point `point` finished, in any order; callers serialise calls. Never throws (it runs on worker
  // threads): a write error is kept for finish().
  void add(std::size_t point, const PointOutcome& outcome);

  // Points written so far (the finished prefix).
  std::size_t written() const { return next_; }

  // Throws Error if a write failed, or if some point never arrived.
  void finish();

 private:
  void write(bool rewrite, std::size_t first_new_row);

  std::string path_;
  const Sweep& sweep_;
  std::vector<std::optional<PointOutcome>> pending_;  // finished but not yet written, by point
  std::size_t next_ = 0;                              // the next point to write
  SweepTable table_;                                  // the rows written, as make_sweep_table builds them
  std::ofstream file_;
  std::string error_;
};

}  // namespace trainsim::explore
