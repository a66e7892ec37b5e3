#include "explore/sweep_csv_stream.hpp"

#include "core/error.hpp"

namespace trainsim::explore {

SweepCsvStream::SweepCsvStream(std::string path, const Sweep& sweep, std::size_t points)
    : path_(std::move(path)), sweep_(sweep), pending_(points), table_(empty_sweep_table(sweep)) {
  write(true, 0);
  if (!error_.empty()) throw Error(error_);
}

void SweepCsvStream::add(std::size_t point, const PointOutcome& outcome) {
  if (point >= pending_.size() || point < next_ || pending_[point]) {
    if (error_.empty()) error_ = "--csv: point " + std::to_string(point) + " reported twice or out of range";
    return;
  }
  pending_[point] = outcome;
  const std::size_t first_new_row = table_.rows.size();
  bool grew = false;
  while (next_ < pending_.size() && pending_[next_]) {
    grew = add_sweep_row(table_, sweep_, next_, *pending_[next_]) || grew;
    pending_[next_].reset();  // its row holds what is needed now
    ++next_;
  }
  if (table_.rows.size() > first_new_row) write(grew, first_new_row);
}

void SweepCsvStream::write(bool rewrite, std::size_t first_new_row) {
  if (!error_.empty()) return;
  try {
    if (rewrite) {
      // New columns: every earlier row gains empty cells, so the whole file is written again.
      file_.close();
      file_.open(path_, std::ios::out | std::ios::trunc);
      if (!file_) {
        error_ = "--csv: cannot write " + path_;
        return;
      }
      file_ << sweep_csv_header(table_);
      first_new_row = 0;
    }
    std::string text;
    for (std::size_t r = first_new_row; r < table_.rows.size(); ++r) text += sweep_csv_row(table_, r);
    file_ << text << std::flush;
    if (!file_) error_ = "--csv: error while writing " + path_;
  } catch (const std::exception& e) { error_ = std::string("--csv: ") + e.what(); }
}

void SweepCsvStream::finish() {
  if (error_.empty() && next_ != pending_.size())
    error_ = "--csv: only " + std::to_string(next_) + " of " + std::to_string(pending_.size()) + " points were written";
  if (!error_.empty()) throw Error(error_);
  file_.close();
  if (!file_) throw Error("--csv: error while writing " + path_);
}

}  // namespace trainsim::explore
