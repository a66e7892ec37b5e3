#include "service/job.hpp"

#include "trainsim/errors.hpp"

namespace trainsim::service {

const char* to_string(JobState s) {
  switch (s) {
    case JobState::Queued: return "queued";
    case JobState::Running: return "running";
    case JobState::Done: return "done";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
  }
  TRAINSIM_UNREACHABLE("JobState " + std::to_string(static_cast<int>(s)));
}

std::optional<JobState> job_state_named(std::string_view name) {
  for (JobState s : {JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

bool is_finished(JobState s) { return s == JobState::Done || s == JobState::Failed || s == JobState::Cancelled; }

}  // namespace trainsim::service
