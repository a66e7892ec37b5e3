#pragma once
// Result structures -> text, JSON, Chrome trace. Deterministic: same input, same bytes.
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/result.hpp"

namespace trainsim {

// Human summary: iteration time, tokens/s, TFLOPS/GPU, MFU/HFU, breakdown, per-collective table.
void write_text_report(std::ostream& out, const RunResult& r);

// One JSON object with the spec's field names (iteration_time_s, tokens_per_s, ..., simulation).
nlohmann::ordered_json to_json(const RunResult& r);

// Chrome trace event format (opens in Perfetto / chrome://tracing); `stream_names[tid]` names threads.
// `counters` become counter tracks ("ph":"C") of one process named "network", after the ranks' spans.
void write_chrome_trace(std::ostream& out, const std::vector<TraceSpan>& spans,
                        const std::vector<std::string>& stream_names, const std::vector<TraceCounter>& counters = {});

// The per-collective table as CSV: a header row, then one row per CommStat, in the given order.
void write_comm_csv(std::ostream& out, const RunResult& r);

// Flow-level runs: one row per directed link (name, kind, capacity, bytes, busy time, peak flows,
// utilisation over the iteration), in link order.
void write_links_csv(std::ostream& out, const std::vector<LinkUsageRow>& links);
// `run --queues-csv`: link,kind,time_us,queue_kb, one row per sample, each port's samples in time order.
void write_queues_csv(std::ostream& out, const std::vector<QueueSampleRow>& samples);
// `run --pauses-csv`: link,kind,start_us,end_us,cause, one row per pause of a fabric port.
void write_pauses_csv(std::ostream& out, const std::vector<PauseRow>& pauses);
// `run --rates-csv`: flow,link,time_us,rate_gbps, in time order.
void write_rates_csv(std::ostream& out, const std::vector<RateRow>& rates);

}  // namespace trainsim
