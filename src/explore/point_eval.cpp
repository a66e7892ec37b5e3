#include "explore/point_eval.hpp"

#include <exception>

#include "core/error.hpp"
#include "report/reports.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::explore {

void PointOptions::plan_runs(double tokens, std::optional<double> price) {
  plan = PlanRequest{PlanRequest::Target::Tokens, tokens, 0, 0};
  gpu_hour_price_usd = price;
}

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Invalid: return "invalid";
    case PointStatus::OutOfMemory: return "out_of_memory";
    case PointStatus::Failed: return "failed";
    case PointStatus::Bounded: return "bounded";
  }
  return "failed";
}

nlohmann::ordered_json run_plan_json(const PlanResult& plan) {
  constexpr double kSecondsPerDay = 86400;
  nlohmann::ordered_json j;
  j["tokens"] = plan.tokens;
  j["days"] = plan.wall_s / kSecondsPerDay;
  j["goodput"] = plan.goodput;
  j["failures"] = plan.failures;
  j["energy_mwh"] = plan.run_energy_mwh;
  j["cost_usd"] = plan.cost_usd ? nlohmann::ordered_json(*plan.cost_usd) : nlohmann::ordered_json();
  return j;
}

PointOutcome evaluate_point(const ScenarioSource& scenario, const std::vector<std::string>& overrides,
                            const PointOptions& options, double give_up_above_s, PreparedJobCache* reuse) {
  PointOutcome out;
  try {
    Scenario s = load_scenario(scenario, overrides);
    RunOptions ro;
    ro.allow_oom = options.allow_oom;
    ro.give_up_above_s = give_up_above_s;
    ro.reuse = reuse;
    ro.threads = 1;  // the points run on the evaluator's threads, one simulation each
    RunOutput run = run_scenario(s, ro);
    run.result.simulation.wall_s = 0;  // timing is the only non-deterministic field
    out.result = to_json(run.result);
    if (options.plan) {
      if (options.gpu_hour_price_usd) s.cost.usd_per_gpu_hour = options.gpu_hour_price_usd;
      out.result["run_plan"] = run_plan_json(plan_from_iteration(s, run.result, *options.plan));
    }
    if (options.objective) {
      const std::optional<double> v = objective_of(*options.objective, out.result, s.cluster.num_gpus);
      out.result["objective"] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
    }
    out.status = PointStatus::Ok;
  } catch (const ScenarioError& e) {
    out.status = PointStatus::Invalid;
    out.reason = e.what();
  } catch (const SlowerThanLimitError& e) {
    out.status = PointStatus::Bounded;
    out.reason = e.what();
    out.result = {{"compute_lower_bound_s", e.bound_s()}};
  } catch (const OutOfMemoryError& e) {
    out.status = PointStatus::OutOfMemory;
    out.reason = e.what();
  } catch (const InternalError& e) {  // a bug: the row says so (points run on worker threads)
    out.status = PointStatus::Failed;
    out.reason = internal_error_message(e);
  } catch (const std::exception& e) {
    out.status = PointStatus::Failed;
    out.reason = e.what();
  }
  return out;
}

}  // namespace trainsim::explore
