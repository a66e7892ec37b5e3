#pragma once
// What a job of `trainsim serve` runs: one CLI command (run, memory, nccl-test, sweep, tune, plan) on the submitted
// scenario, through the public API, giving what the command's --json prints (and `run`'s HTML page). Requests are
// checked when they are submitted, so a bad scenario, override or option is a 400 with the CLI's message and key,
// and the server's limits (GPUs, sweep points, ops) hold before anything is queued.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/job.hpp"

namespace trainsim::service {

// The server's bounds on one job (docs/service.md); 0 = no bound.
struct JobLimits {
  int max_gpus = 131072;                     // cluster.num_gpus
  int max_sweep_points = 1000;               // points of a sweep
  std::int64_t max_ops = 50'000'000;         // simulation.max_ops: a run estimated above it is refused before it starts
  double max_wall_s = 600;                   // a run still simulating after this is stopped (failed)
  std::int64_t max_trace_bytes = 256 << 20;  // a run's trace above this fails the job (options.trace)
};

// A request as the API takes it: `options` holds the command's flags by their Python keyword names (docs/python.md),
// `overrides` the `--set` strings.
struct JobRequest {
  std::string command;
  std::string label = "scenario.yaml";
  std::string scenario;
  std::vector<std::string> overrides;
  nlohmann::json options = nlohmann::json::object();
};

// The commands a job may run, in the order the API lists them.
const std::vector<std::string>& job_commands();

// Parses a POST /api/jobs body (a JSON object: command, scenario, label, overrides, options). Throws
// ScenarioError naming the field ("command", "scenario", "overrides", "options.vary", ...) when it is malformed.
JobRequest job_request_from_json(const nlohmann::json& body);

// Loads the scenario with its overrides and checks the command's options and the server's limits without simulating
// (milliseconds). Throws ScenarioError / Error with the CLI's message.
void check_job_request(const JobRequest& request, const JobLimits& limits);

// The request as stored with a job (JobRecord::options_json) and back.
std::string options_json_of(const JobRequest& request);
JobRequest job_request_of(const JobRecord& job);

// Thrown when a job stops because it was cancelled (asked to stop) or ran past JobLimits::max_wall_s.
struct JobStopped {
  bool cancelled = false;
  std::string why;  // for the job's error when not cancelled
};

struct JobOutput {
  std::string result_json;  // the command's --json
  std::string html;         // `run`: the HTML report
  std::string trace;        // `run` with options.trace: the Chrome trace (run --trace)
};

// Runs the job. `progress(fraction)` is called as work advances; `stop` is polled there and, when true, the job
// ends with JobStopped (runs, nccl-tests and plans stop within a progress step; a sweep or tune stops between
// points). Throws what the command throws for a bad scenario (ScenarioError, OutOfMemoryError, Error).
JobOutput run_job(const JobRequest& request, const JobLimits& limits, const std::function<void(double)>& progress,
                  const std::atomic<bool>& stop);

}  // namespace trainsim::service
