#include "explore/sweep_plot.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "explore/sweep_text.hpp"

extern char** environ;

namespace trainsim::explore {

namespace fs = std::filesystem;

namespace {

// A gnuplot single-quoted string: nothing is special inside except the quote, written twice.
std::string gnuplot_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n' || c == '\r') c = ' ';
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// A temporary directory removed with everything in it when the plot is done, whatever happens.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "trainsim-plot-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw Error("--plot: cannot create a temporary directory in " + fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text << std::flush;  // a write that fails (full disk) shows only at the flush
  if (!f) throw Error("--plot: cannot write " + path.string());
}

std::string read_text(const fs::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `gnuplot script` with its output and errors in `log`; returns the exit status.
int run_gnuplot(const std::string& gnuplot, const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::string arg0 = gnuplot, arg1 = script.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("--plot: cannot start " + gnuplot);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error("--plot: lost track of gnuplot");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

std::string plot_terminal(const std::string& output_path) {
  const std::string ext = lower_extension(output_path);
  if (ext == ".svg") return "svg";
  if (ext == ".png") return "pngcairo";
  throw Error("--plot '" + output_path + "': unknown image type '" + ext + "'; use a file name ending in .svg or .png");
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string dirs = path;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate.string();
    start = colon + 1;
  }
  return "";
}

void require_gnuplot() {
  if (find_on_path("gnuplot").empty())
    throw Error("--plot needs gnuplot, which is not on PATH (Debian/Ubuntu: apt-get install gnuplot-nox)");
}

PlotData make_plot_data(const Sweep& sweep, const SweepTable& table, const std::string& y_field) {
  const auto y_col = table.column(y_field);
  const auto numeric = table.numeric_columns();
  if (!y_col || std::find(numeric.begin(), numeric.end(), y_field) == numeric.end())
    throw Error("--y '" + y_field + "': not a numeric column of the sweep; numeric columns: " + join(numeric));

  PlotData data;
  // x is the first key of the first axis; the other keys of a zipped first axis move with it.
  const SweepKey& first = sweep.axes.front().first();
  data.x_key = first.key;
  for (std::size_t k = 1; k < sweep.axes.front().keys.size(); ++k)
    data.x_zipped_with.push_back(sweep.axes.front().keys[k].key);
  data.y_field = y_field;
  data.categorical = !first.numeric();
  if (data.categorical)
    for (const auto& v : first.values) data.categories.push_back(v.text);

  // Point p = i * stride + rest: `rest` picks the combination of the other keys, i the x value.
  const std::size_t stride = sweep.stride(0);
  for (std::size_t rest = 0; rest < stride; ++rest) {
    PlotSeries s;
    s.title = other_keys_label(sweep, rest);
    for (std::size_t i = 0; i < first.values.size(); ++i) {
      const std::size_t p = i * stride + rest;
      const auto y = table.ok[p] ? table.number(p, *y_col) : std::nullopt;
      if (!y) continue;
      s.points.emplace_back(data.categorical ? static_cast<double>(i) : *first.values[i].number, *y);
    }
    if (!s.points.empty()) data.series.push_back(std::move(s));
  }
  return data;
}

std::string gnuplot_script(const PlotData& data, const std::string& scenario_name, const std::string& output_path,
                           const std::vector<std::string>& data_files) {
  std::string s;
  // noenhanced: key paths are full of '_', which enhanced text mode would turn into subscripts.
  s += fmt::format("set terminal {} noenhanced size 900,600\n", plot_terminal(output_path));
  s += "set output " + gnuplot_string(output_path) + "\n";
  s += "set encoding utf8\n";
  s += "set title " + gnuplot_string(scenario_name + ": " + data.y_field + " vs " + data.x_key) + "\n";
  // The x label has the plot's whole width for the keys that move with x; the title would overflow.
  const std::string zipped = data.x_zipped_with.empty() ? "" : " (zipped with " + join(data.x_zipped_with) + ")";
  s += "set xlabel " + gnuplot_string(data.x_key + zipped) + "\n";
  s += "set ylabel " + gnuplot_string(data.y_field) + "\n";
  s += "set grid\nset key below\n";
  if (data.categorical) {
    std::string tics;
    for (std::size_t i = 0; i < data.categories.size(); ++i)
      tics += fmt::format("{}{} {}", i ? ", " : "", gnuplot_string(data.categories[i]), i);
    s += "set xtics (" + tics + ")\n";
    s += fmt::format("set xrange [-0.5:{}]\n", static_cast<double>(data.categories.size()) - 0.5);
  } else {
    s += "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n";
  }
  s += "plot ";
  for (std::size_t i = 0; i < data.series.size(); ++i) {
    const std::string& t = data.series[i].title;
    s += (i ? ", \\\n     " : "") + gnuplot_string(data_files.at(i)) + " using 1:2 with linespoints pointtype 7 " +
         (t.empty() ? "title " + gnuplot_string(data.y_field) : "title " + gnuplot_string(t));
  }
  return s + "\n";
}

void write_sweep_plot(const PlotData& data, const std::string& scenario_name, const std::string& output_path) {
  plot_terminal(output_path);
  const std::string gnuplot = find_on_path("gnuplot");
  if (gnuplot.empty()) require_gnuplot();
  if (data.series.empty()) throw Error("--plot: no point simulated, nothing to draw");

  const TempDir dir;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < data.series.size(); ++i) {
    std::string lines;
    for (const auto& [x, y] : data.series[i].points) lines += fmt::format("{} {}\n", x, y);
    files.push_back((dir.path() / fmt::format("series{}.dat", i)).string());
    write_text(files.back(), lines);
  }
  const fs::path script = dir.path() / "plot.gp", log = dir.path() / "gnuplot.log";
  write_text(script, gnuplot_script(data, scenario_name, output_path, files));
  const int status = run_gnuplot(gnuplot, script, log);
  if (status != 0 || !fs::exists(output_path))
    throw Error(fmt::format("--plot '{}': gnuplot failed (exit status {}): {}", output_path, status, read_text(log)));
}

}  // namespace trainsim::explore
