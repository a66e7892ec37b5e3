#pragma once
// The human-readable sweep report on stdout: one line per point (varied keys, iteration time,
// tokens/s/GPU, MFU, peak memory, status), then what each step of the first axis buys (a varied key,
// or every zipped key at once): the change in iteration time against its previous point, the other
// keys held fixed.
#include <ostream>
#include <string>
#include <vector>

#include "explore/sweep_spec.hpp"
#include "explore/sweep_table.hpp"

namespace trainsim::explore {

// Relative change of iteration time from point `from` to point `to` ((t_to - t_from) / t_from), or
// nothing when either did not simulate.
std::optional<double> iteration_time_change(const SweepTable& table, std::size_t from, std::size_t to);

// "k2=v, k3=w": the values of every key of every axis but the first at `point` ("" with one axis).
std::string other_keys_label(const Sweep& sweep, std::size_t point);

void write_sweep_text(std::ostream& out, const Sweep& sweep, const SweepTable& table);

}  // namespace trainsim::explore
