// trainsim._trainsim: the C++ half of the Python module `trainsim` (python/trainsim/__init__.py is the other half,
// docs/python.md). Each function takes a scenario (a file's path, or YAML text and a label), `--set` strings and
// the CLI command's options, calls the public API as the CLI command does, and returns the object the command's
// --json prints, converted to Python objects. Checking and converting Python arguments (dicts, keyword forms)
// happens in __init__.py; what reaches here is already strings, numbers and booleans, and pybind11 raises TypeError
// for anything else.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/errors.hpp"
#include "trainsim/explore.hpp"
#include "trainsim/report.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/memory.hpp"
#include "trainsim/plan.hpp"
#include "trainsim/trainsim.hpp"

namespace py = pybind11;

namespace trainsim::python {

namespace {

// The exception classes, created once at import (the module object keeps them alive).
struct ExceptionTypes {
  PyObject* error = nullptr;           // trainsim.Error(Exception): any mistake in the input
  PyObject* scenario_error = nullptr;  // trainsim.ScenarioError(Error, ValueError): .key, .file, .detail
  PyObject* out_of_memory = nullptr;   // trainsim.OutOfMemoryError(Error)
  PyObject* deadlock = nullptr;        // trainsim.DeadlockError(Error)
  PyObject* internal = nullptr;        // trainsim.InternalError(RuntimeError): a bug in trainsim, .where
};
ExceptionTypes types;

// Thrown by the progress callback when Python has a pending exception (Ctrl-C's KeyboardInterrupt): unwinds the
// simulation, and the binding then raises what Python set. Not a std::exception, so nothing on the way catches it.
struct Interrupted {};

template <class Json>
py::object to_python(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(j.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(j.template get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(j.template get<double>());
    case nlohmann::json::value_t::string: return py::str(j.template get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : j) list.append(to_python(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, value] : j.items()) dict[py::str(key)] = to_python(value);
      return dict;
    }
    default: return py::none();  // binary and discarded values: never in trainsim's results
  }
}

ScenarioSource source_of(const std::string& label, const std::optional<std::string>& text) {
  return text ? ScenarioSource::from_text(*text, label) : ScenarioSource(label);
}

// An exception instance of `type` with `message` and the given attributes, raised in Python.
void raise_with(PyObject* type, const std::string& message, const py::dict& attributes = {}) {
  py::object e = py::reinterpret_borrow<py::object>(type)(message);
  for (const auto& [name, value] : attributes) py::setattr(e, name, value);
  PyErr_SetObject(type, e.ptr());
}

// C++ exceptions -> the module's Python exceptions. The most derived class first.
void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const ScenarioError& e) {
    py::dict a;
    a["key"] = e.key().empty() ? py::object(py::none()) : py::object(py::str(e.key()));
    a["file"] = e.file().empty() ? py::object(py::none()) : py::object(py::str(e.file()));
    a["detail"] = e.detail();
    raise_with(types.scenario_error, e.what(), a);
  } catch (const OutOfMemoryError& e) { raise_with(types.out_of_memory, e.what()); } catch (const DeadlockError& e) {
    raise_with(types.deadlock, e.what());
  } catch (const Error& e) { raise_with(types.error, e.what()); } catch (const InternalError& e) {
    py::dict a;
    a["where"] = e.where();
    raise_with(types.internal, internal_error_message(e), a);
  }
  // Anything else (std::bad_alloc -> MemoryError, pybind11's own) falls to pybind11's translators.
}

// For RunOptions::progress (called every so many events) and run_nccl_test's on_row (after each row), on this, the
// calling, thread, which holds no GIL while simulating: a pending Python signal (Ctrl-C) stops the simulation. At
// most every 100 ms of wall time, so that other Python threads barely wait for the GIL.
class InterruptCheck {
 public:
  void operator()() {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::milliseconds(100);
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw Interrupted{};
  }

 private:
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now();
};

// Runs `work` without the GIL; a KeyboardInterrupt (or any exception a signal handler raised) comes back as is.
template <class Work>
auto without_gil(Work&& work) {
  try {
    py::gil_scoped_release release;
    return work();
  } catch (const Interrupted&) { throw py::error_already_set(); }
}

py::object run(const std::string& label, const std::optional<std::string>& text,
               const std::vector<std::string>& overrides, bool per_rank, bool allow_oom, bool explain,
               const std::optional<std::string>& html) {
  const nlohmann::ordered_json j = without_gil([&] {
    const Scenario s = load_scenario(source_of(label, text), overrides);
    RunOptions o;
    o.per_rank = per_rank;
    o.allow_oom = allow_oom;
    o.explain = explain;
    InterruptCheck check;
    o.progress = [&check](const RunProgress&) { check(); };
    const RunOutput out = run_scenario(s, o);
    if (html) {  // `run --html`'s page; a path that cannot be written is an error naming the argument
      try {
        write_text_file(*html, run_html_page(s, out, false, label));
      } catch (const Error& e) { throw Error(std::string("html: ") + e.what()); }
    }
    return to_json(out.result);
  });
  return to_python(j);
}

py::object memory(const std::string& label, const std::optional<std::string>& text,
                  const std::vector<std::string>& overrides, bool allow_oom) {
  std::string does_not_fit;
  const nlohmann::ordered_json j = without_gil([&] {
    const Scenario s = load_scenario(source_of(label, text), overrides);
    const std::vector<StageMemory> stages = estimate_memory(s);
    if (!memory_fits(s, stages)) does_not_fit = memory_does_not_fit_message(s, stages);
    return memory_json(s, stages);
  });
  py::object result = to_python(j);
  if (!does_not_fit.empty() && !allow_oom) {  // as `trainsim memory` exits 1; the table rides on the exception
    py::dict a;
    a["result"] = result;
    raise_with(types.out_of_memory, does_not_fit, a);
    throw py::error_already_set();
  }
  return result;
}

// `trainsim plan --json`: `target` is "tokens", "iterations" or "days" (the Python layer checks exactly one is
// given), `amount` its value as written ("15T", "1e6", "54").
py::object plan(const std::string& label, const std::optional<std::string>& text,
                const std::vector<std::string>& overrides, const std::string& target, const std::string& amount,
                int trials, std::uint64_t seed) {
  const nlohmann::ordered_json j = without_gil([&] {
    const std::optional<double> count = explore::parse_token_count(amount);
    if (!count)
      throw Error(target + ": expected a positive number (tokens may carry a K, M, B or T suffix), got '" + amount +
                  "'");
    const Scenario s = load_scenario(source_of(label, text), overrides);
    PlanRequest r;
    r.target = target == "tokens"       ? PlanRequest::Target::Tokens
               : target == "iterations" ? PlanRequest::Target::Iterations
                                        : PlanRequest::Target::Days;
    r.amount = *count;
    r.trials = trials;
    r.seed = seed;
    return plan_json(plan_run(s, r));
  });
  return to_python(j);
}

std::int64_t size_argument(const std::string& flag, const std::string& text) {
  const auto bytes = parse_byte_size(text);
  if (!bytes)
    throw ScenarioError(
        "", flag, "'" + text + "' is not a size: bytes with an optional K, M or G (powers of 1024), e.g. 8, 64K, 8G");
  return *bytes;
}

py::object nccl_test(const std::string& label, const std::optional<std::string>& text,
                     const std::vector<std::string>& overrides, const std::optional<std::string>& op,
                     const std::string& minbytes, const std::string& maxbytes, double stepfactor,
                     const std::optional<std::string>& stepbytes, const std::string& datatype, const std::string& redop,
                     int root, std::optional<int> gpus, int agg_iters) {
  const nlohmann::json j = without_gil([&] {
    const Scenario s = load_scenario(source_of(label, text), overrides, ScenarioNeeds::ClusterOnly);
    NcclTestOptions o;
    if (op) {
      const auto parsed = parse_collective_op(*op);
      if (!parsed)
        throw ScenarioError(
            "", "op",
            "unknown collective '" + *op +
                "'; valid: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv");
      o.op = *parsed;
    } else if (s.collective) {
      o.op = s.collective->op;
    }
    o.min_bytes = size_argument("minbytes", minbytes);
    o.max_bytes = size_argument("maxbytes", maxbytes);
    o.factor = stepfactor;
    if (stepbytes) o.increment = size_argument("stepbytes", *stepbytes);
    o.dtype = datatype;
    o.redop = redop;
    o.root = root;
    o.agg_iters = agg_iters;
    o.gpus = gpus;
    InterruptCheck check;
    return to_json(run_nccl_test(s, o, [&check](const NcclTestTable&) { check(); }));
  });
  return to_python(j);
}

// sweep's and tune's argument errors come from the explore layer, which speaks of the CLI's flags (--vary, --zip,
// --space, --set); here they are keyword arguments, and the message says so. The errors about the scenario itself
// (ScenarioError and the simulation's) name keys, not flags, and pass unchanged.
template <class Work>
auto with_keyword_names(Work&& work) {
  try {
    return work();
  } catch (const ScenarioError&) { throw; } catch (const OutOfMemoryError&) {
    throw;
  } catch (const DeadlockError&) { throw; } catch (const Error& e) {
    static const std::regex flag(R"(--(vary|zip|space|set)\b)");
    throw Error(std::regex_replace(std::string(e.what()), flag, "$1"));
  }
}

py::object sweep(const std::string& label, const std::optional<std::string>& text,
                 const std::vector<std::string>& overrides, const std::vector<std::string>& vary,
                 const std::vector<std::string>& zip, std::size_t zip_position, int threads, bool allow_oom) {
  const nlohmann::ordered_json j = without_gil([&] {
    return with_keyword_names([&] {
      using namespace explore;
      if (!text && !std::ifstream(label))  // else every point would say so
        throw ScenarioError(label, "", "cannot read scenario file (no such file, or not readable)");
      const Sweep grid = make_sweep(vary, zip, zip_position);
      check_no_set_conflict(grid, overrides);
      scenario_detail::apply_overrides(YAML::Node(), overrides);  // --set syntax and keys, before any point
      PointOptions options;
      options.allow_oom = allow_oom;
      const std::vector<PointOutcome> outcomes =
          evaluate_all(source_of(label, text), grid.overrides(overrides), resolve_threads(threads), options);
      return sweep_rows_json(grid, make_sweep_table(grid, outcomes));
    });
  });
  return to_python(j);
}

py::object tune(const std::string& label, const std::optional<std::string>& text,
                const std::vector<std::string>& overrides, const std::vector<std::string>& space, std::size_t top,
                const std::string& objective, std::optional<double> gpu_hour_price,
                const std::optional<std::string>& tokens, int threads, bool allow_tp_beyond_scale_up) {
  const nlohmann::ordered_json j = without_gil([&] {
    return with_keyword_names([&] {
      explore::TuneRequest req;
      req.scenario = source_of(label, text);
      req.overrides = overrides;
      req.objective =
          explore::read_objective(objective, gpu_hour_price, tokens, {"objective", "gpu_hour_price", "tokens"});
      if (top < 1) throw Error("top: expected a positive number of configurations, got 0");
      req.top = top + 1;  // the listed ones and the next, which the last is explained against (as the CLI)
      req.threads = threads;
      for (const std::string& s : space) explore::add_space_values(req.space, s, "space");
      req.space.allow_tp_beyond_scale_up = allow_tp_beyond_scale_up;
      const explore::TuneOutcome outcome = explore::run_tune(req);
      if (outcome.ranked.empty()) throw Error(explore::tune_nothing_ranked_message(outcome));
      return explore::tune_json(outcome, req.objective, top);
    });
  });
  return to_python(j);
}

PyObject* new_exception(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("trainsim.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw py::error_already_set();
  m.attr(name) = py::reinterpret_borrow<py::object>(type);  // the module holds a reference too
  return type;
}

}  // namespace

}  // namespace trainsim::python

PYBIND11_MODULE(_trainsim, m) {
  using namespace trainsim::python;
  m.doc() = "trainsim's C++ core; use the package `trainsim`, which checks and converts the arguments";
  m.attr("__version__") = TRAINSIM_VERSION;
  types.error = new_exception(m, "Error", PyExc_Exception, "A mistake in trainsim's input (the CLI's exit status 1).");
  {
    const py::tuple bases = py::make_tuple(py::handle(types.error), py::handle(PyExc_ValueError));
    types.scenario_error = new_exception(m, "ScenarioError", bases.ptr(),
                                         "An invalid scenario, override or argument: .key is the key path, .file the "
                                         "file (or '--set KEY=VALUE', or None), .detail what was expected.");
  }
  types.out_of_memory = new_exception(m, "OutOfMemoryError", types.error,
                                      "The job does not fit in GPU memory (pass allow_oom=True to go on).");
  types.deadlock = new_exception(m, "DeadlockError", types.error, "The simulated workload cannot make progress.");
  types.internal = new_exception(m, "InternalError", PyExc_RuntimeError,
                                 "A broken invariant: a bug in trainsim, not in the input (.where is FILE:LINE).");
  py::register_exception_translator(translate);

  m.def("run", &run);
  m.def("memory", &memory);
  m.def("nccl_test", &nccl_test);
  m.def("sweep", &sweep);
  m.def("tune", &tune);
  m.def("plan", &plan);
}
