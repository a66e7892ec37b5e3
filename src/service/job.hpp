#pragma once
// A job of `trainsim serve` (docs/service.md): one command (run, memory, nccl-test, sweep, tune, plan) on one
// scenario, as submitted, with its state and what it produced. The job store keeps it in SQLite; the workers run it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainsim::service {

// queued -> running -> done | failed; queued or running -> cancelled. A server restart puts running jobs back to
// queued (their work is redone; a job's result depends only on what was submitted).
enum class JobState : std::uint8_t { Queued, Running, Done, Failed, Cancelled };
const char* to_string(JobState s);
std::optional<JobState> job_state_named(std::string_view name);  // "queued", ...; nullopt for anything else
bool is_finished(JobState s);                                    // done, failed or cancelled

struct JobRecord {
  std::string id;            // 16 lowercase hex digits, random
  std::string command;       // run | memory | nccl-test | sweep | tune | plan
  std::string label;         // the scenario's name as submitted (a file name), shown in lists and errors
  std::string scenario;      // the scenario text as submitted (YAML, or JSON which is YAML)
  std::string options_json;  // the request's "overrides" and "options" as one JSON object's text
  JobState state = JobState::Queued;
  double progress = 0;                                           // 0..1, what the worker last reported
  std::int64_t created_ms = 0, started_ms = 0, finished_ms = 0;  // Unix epoch milliseconds; 0 = not yet
  int attempts = 0;                                              // times a worker started it
  std::string result_json;                                       // done: what the command's --json prints
  std::string html;                                              // done, `run` only: the HTML report (run --html)
  std::string trace;      // done, a `run` with options.trace: the Chrome trace (run --trace), else empty
  std::string error;      // failed: the message the CLI prints after "error: "
  std::string error_key;  // failed on a scenario key: the key (as ScenarioError::key), else empty
};

}  // namespace trainsim::service
