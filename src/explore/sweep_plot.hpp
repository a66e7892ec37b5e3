#pragma once
// `trainsim sweep --plot out.svg|out.png`: the sweep drawn by gnuplot. x is the first axis, labelled
// by its first key (a zipped axis's other keys move with it): a numeric axis when every value is a
// number, labelled categories such as GPU names otherwise. y is a numeric column of the CSV (`--y`,
// default iteration_time_s), one line per combination of the other axes. Points that did not
// simulate are left out of their line.
#include <string>
#include <utility>
#include <vector>

#include "explore/sweep_spec.hpp"
#include "explore/sweep_table.hpp"

namespace trainsim::explore {

// gnuplot terminal for the file's extension: "svg" for .svg, "pngcairo" for .png; an Error naming
// --plot for anything else.
std::string plot_terminal(const std::string& output_path);

// Absolute path of `program` found on PATH, or "" when there is none.
std::string find_on_path(const std::string& program);

// Throws an Error naming --plot when gnuplot is not on PATH.
void require_gnuplot();

struct PlotSeries {
  std::string title;                              // "k2=v, k3=w"; "" when only one key is varied
  std::vector<std::pair<double, double>> points;  // (x, y); x is the category index when categorical
};

struct PlotData {
  std::string x_key, y_field;
  std::vector<std::string> x_zipped_with;  // the other keys of a zipped first axis (named in the x label)
  bool categorical = false;
  std::vector<std::string> categories;  // the x key's values, when categorical
  std::vector<PlotSeries> series;       // series without any simulated point are left out
};

// Throws an Error naming --y when `y_field` is not a numeric column of the table.
PlotData make_plot_data(const Sweep& sweep, const SweepTable& table, const std::string& y_field);

// The gnuplot script drawing `data` into `output_path`; data_files[i] holds series i as "x y" lines.
std::string gnuplot_script(const PlotData& data, const std::string& scenario_name, const std::string& output_path,
                           const std::vector<std::string>& data_files);

// Writes the script and data files to a fresh temporary directory, runs gnuplot on them and removes
// the directory. Errors (no gnuplot, gnuplot failing) name --plot.
void write_sweep_plot(const PlotData& data, const std::string& scenario_name, const std::string& output_path);

}  // namespace trainsim::explore
