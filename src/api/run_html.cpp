// run_html_page: what `trainsim run --html` and the Python module's run(html=...) write, built once for both.
#include <vector>

#include "report/html_report.hpp"
#include "trainsim/trainsim.hpp"
#include "workload/memory_model.hpp"

namespace trainsim {

std::string run_html_page(const Scenario& s, const RunOutput& out, bool traced, const std::string& scenario_path) {
  // Every stage's memory (the result holds the worst one): the same model run_scenario used.
  std::vector<MemoryStageRow> stages;
  if (out.result.memory)
    for (const StageMemory& st : estimate_memory(s))
      stages.push_back({st.stage, st.weights_gib, st.grads_gib, st.optimizer_gib, st.activations_gib, st.other_gib});
  HtmlReportExtras extras;
  extras.memory_stages = stages;
  extras.links = out.links;
  extras.trace = out.trace;
  extras.stream_names = out.stream_names;
  extras.traced = traced;
  extras.scenario_path = scenario_path;
  return render_html_report(out.result, extras);
}

}  // namespace trainsim
