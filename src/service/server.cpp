#include "service/server.hpp"

#include <httplib.h>
#include <openssl/evp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "service/job_store.hpp"
#include "service/web_page.hpp"
#include "trainsim/catalogs.hpp"
#include "trainsim/errors.hpp"

namespace trainsim::service {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// The scenario the web page starts from: small enough to run in well under a second.
constexpr const char* kExampleScenario = R"(# Llama-3 8B on 8 H100 (one DGX node): TP 8.
model:
  preset: llama3-8b
training:
  global_batch_size: 64
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 8
  pipeline: 1
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";

std::string new_job_id() {
  static std::mutex m;
  static std::mt19937_64 random{std::random_device{}()};
  const std::lock_guard<std::mutex> lock(m);
  return fmt::format("{:016x}", random());
}

// Tokens compare in time independent of where they differ, so response times do not reveal a token's prefix.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw Error("files: SHA-256 failed");
  std::string out;
  for (unsigned int i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

void reply(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", "application/json");
}

void reply_error(httplib::Response& res, int status, const std::string& message, const std::string& key = "") {
  Json body{{"error", message}};
  body["key"] = key.empty() ? Json() : Json(key);
  reply(res, status, body);
}

Json job_summary(const JobRecord& j) {
  Json out{{"id", j.id},
           {"command", j.command},
           {"label", j.label},
           {"state", to_string(j.state)},
           {"progress", j.progress},
           {"created_ms", j.created_ms},
           {"started_ms", j.started_ms},
           {"finished_ms", j.finished_ms},
           {"attempts", j.attempts}};
  out["error"] = j.error.empty() ? Json() : Json(j.error);
  out["key"] = j.error_key.empty() ? Json() : Json(j.error_key);
  return out;
}

Json job_links(const JobRecord& j) {
  const std::string base = "/api/jobs/" + j.id;
  Json links{{"self", base}, {"scenario", base + "/scenario"}};
  if (j.state == JobState::Done) {
    links["result"] = base + "/result";
    if (!j.html.empty()) links["html"] = base + "/html";
    if (!j.trace.empty()) links["trace"] = base + "/trace";
  }
  return links;
}

// The numbers two results share, as rows {name, a, b, change}: top-level numbers, then those of `breakdown` (and its
// per-group split) for runs.
Json compare_rows(const Json& a, const Json& b) {
  Json rows = Json::array();
  for (const auto& [name, va] : a.items()) {
    if (!va.is_number() || !b.contains(name) || !b.at(name).is_number()) continue;
    const double x = va.get<double>(), y = b.at(name).get<double>();
    rows.push_back({{"name", name}, {"a", x}, {"b", y}, {"change", x != 0 ? Json(y / x - 1) : Json()}});
  }
  return rows;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<JobStore> store;
  std::vector<std::string> tokens;
  httplib::Server http;
  int port = 0;
  std::string host;

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> running;  // job id -> its stop flag

  std::atomic<std::int64_t> submitted{0}, rejected{0}, finished_done{0}, finished_failed{0}, cancelled{0}, purged{0};
  std::int64_t last_purge_ms = 0;  // under `mutex`
  std::atomic<std::int64_t> http_requests{0}, http_errors{0};

  explicit Impl(ServerOptions o) : options(std::move(o)) {
    // 0 workers: jobs queue and wait (the API alone; tests fill the queue so).
    if (options.workers < 0 || options.workers > 256)
      throw ScenarioError("", "--workers", "expected 1 to 256 workers, got " + std::to_string(options.workers));
    std::error_code ec;
    fs::create_directories(fs::path(options.data_dir) / "files", ec);
    if (ec) throw ScenarioError("", "--data", "cannot create " + options.data_dir + "/files: " + ec.message());
    if (!(options.keep_days >= 0) || options.keep_days > 36500)
      throw ScenarioError("", "--keep-days",
                          fmt::format("expected 0 (keep every job) to 36500 days, got {}", options.keep_days));
    store = std::make_unique<JobStore>((fs::path(options.data_dir) / "jobs.sqlite").string());
    store->requeue_running();
    purge_if_due();
    if (!options.token_file.empty()) {
      std::ifstream in(options.token_file);
      if (!in) throw ScenarioError("", "--token-file", "cannot read " + options.token_file);
      for (std::string line; std::getline(in, line);) {
        line.erase(0, line.find_first_not_of(" \t\r"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (!line.empty() && line[0] != '#') tokens.push_back(line);
      }
      if (tokens.empty()) throw ScenarioError("", "--token-file", options.token_file + " holds no token");
    }
    host = !options.bind.empty() ? options.bind : tokens.empty() ? "127.0.0.1" : "0.0.0.0";
    routes();
  }

  bool authorised(const httplib::Request& req) const {
    if (tokens.empty()) return true;
    const std::string header = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (header.rfind(prefix, 0) != 0) return false;
    const std::string given = header.substr(prefix.size());
    bool ok = false;
    for (const std::string& t : tokens) ok = same_secret(given, t) || ok;  // every token compared, always
    return ok;
  }

  std::string files_dir() const { return (fs::path(options.data_dir) / "files").string(); }

  // Messages name the scenario as it was submitted: the files directory it is read in stays the server's.
  std::string private_paths_removed(std::string message) const {
    const std::string prefix = files_dir() + "/";
    for (std::size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix, at))
      message.erase(at, prefix.size());
    return message;
  }

  int listen_fd = -1;

  void routes() {
    // The listening socket: SO_REUSEADDR only (cpp-httplib's default also sets SO_REUSEPORT, which would let a second
    // server take the same port unnoticed), and kept so that bind() can deepen its backlog.
    http.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd = sock;
    });
    http.set_payload_max_length(options.max_body_bytes);
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      ++http_requests;
      const bool open = req.path == "/" || req.path == "/api/health";
      if (open || authorised(req)) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer");
      reply_error(res, 401, "a bearer token is required: Authorization: Bearer <token> (the server's --token-file)");
      return httplib::Server::HandlerResponse::Handled;
    });
    http.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
      ++http_errors;
      if (!res.body.empty()) return;
      if (res.status == 413)
        reply_error(res, 413,
                    fmt::format("the request is larger than this server takes ({} bytes)", options.max_body_bytes));
      else if (res.status == 404)
        reply_error(res, 404, "no such resource");
      else
        reply_error(res, res.status, "HTTP " + std::to_string(res.status));
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) { what = e.what(); } catch (...) {
      }
      reply_error(res, 500, "internal error: " + what + " (please report)");
    });

    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(web_page()), "text/html; charset=utf-8");
    });
    http.Get("/api/health", [this](const httplib::Request&, httplib::Response& res) {
      reply(res, 200,
            {{"status", "ok"},
             {"version", TRAINSIM_VERSION_STRING},
             {"queued", store->count(JobState::Queued)},
             {"running", store->count(JobState::Running)},
             {"workers", options.workers}});
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) { metrics(res); });
    http.Get("/api/presets", [](const httplib::Request&, httplib::Response& res) {
      Json models = Json::array(), gpus = Json::array();
      for (const auto& p : ModelCatalog::builtin().presets())
        models.push_back({{"id", p.name}, {"description", p.description}});
      for (const auto& g : GpuCatalog::builtin().gpus())
        gpus.push_back({{"id", g.name}, {"memory_gib", g.memory_gib}, {"hbm_GBps", g.hbm_GBps}});
      reply(res, 200, {{"models", models}, {"gpus", gpus}, {"example", kExampleScenario}});
    });
    http.Post("/api/jobs", [this](const httplib::Request& req, httplib::Response& res) { submit(req, res); });
    http.Get("/api/jobs", [this](const httplib::Request& req, httplib::Response& res) { list(req, res); });
    http.Get(R"(/api/jobs/([0-9a-f]{16}))", [this](const httplib::Request& req, httplib::Response& res) {
      const auto job = store->get(req.matches[1]);
      if (!job) return reply_error(res, 404, "no job " + std::string(req.matches[1]));
      Json out = job_summary(*job);
      out["links"] = job_links(*job);
      reply(res, 200, out);
    });
    http.Get(R"(/api/jobs/([0-9a-f]{16})/(result|html|trace|scenario))",
             [this](const httplib::Request& req, httplib::Response& res) { artefact(req, res); });
    http.Delete(R"(/api/jobs/([0-9a-f]{16}))",
                [this](const httplib::Request& req, httplib::Response& res) { cancel(req.matches[1], res); });
    http.Get("/api/compare", [this](const httplib::Request& req, httplib::Response& res) { compare(req, res); });
    http.Post("/api/files", [this](const httplib::Request& req, httplib::Response& res) { upload(req, res); });
  }

  // 429: --max-queue jobs wait already.
  void queue_full(httplib::Response& res) {
    ++rejected;
    res.set_header("Retry-After", "10");
    reply_error(res, 429, fmt::format("the queue is full ({} jobs wait); try again later", options.max_queue));
  }

  void submit(const httplib::Request& req, httplib::Response& res) {
    JobRequest request;
    try {
      const std::string type = req.get_header_value("Content-Type");
      if (type.rfind("application/json", 0) == 0 || type.empty()) {
        Json body;
        try {
          body = Json::parse(req.body);
        } catch (const Json::parse_error& e) {
          return reply_error(res, 400, std::string("the body is not JSON: ") + e.what());
        }
        request = job_request_from_json(nlohmann::json(body));
      } else {
        // curl --data-binary @job.yaml -H 'Content-Type: application/yaml' '.../api/jobs?command=run&set=k=v'
        nlohmann::json body{{"command", req.get_param_value("command")}, {"scenario", req.body}};
        if (req.has_param("label")) body["label"] = req.get_param_value("label");
        std::vector<std::string> sets;
        for (std::size_t i = 0; i < req.get_param_value_count("set"); ++i)
          sets.push_back(req.get_param_value("set", i));
        body["overrides"] = sets;
        request = job_request_from_json(body);
      }
      request.label = (fs::path(files_dir()) / request.label).string();  // relative file names resolve in files/
      if (store->count(JobState::Queued) >= options.max_queue) return queue_full(res);
      check_job_request(request, options.limits);
    } catch (const ScenarioError& e) {
      ++rejected;
      return reply_error(res, 400, private_paths_removed(e.what()), e.key());
    } catch (const Error& e) {
      ++rejected;
      return reply_error(res, 400, private_paths_removed(e.what()));
    }
    JobRecord job;
    job.id = new_job_id();
    job.command = request.command;
    job.label = fs::path(request.label).filename().string();
    job.scenario = request.scenario;
    job.options_json = options_json_of(request);
    job.created_ms = store->now_ms();
    // On disk before the answer; the queue's bound is checked again in the insert's transaction, as concurrent
    // submissions may all have passed the check above.
    if (!store->insert(job, options.max_queue)) return queue_full(res);
    ++submitted;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      wake.notify_one();
    }
    Json out = job_summary(job);
    out["links"] = job_links(job);
    res.set_header("Location", "/api/jobs/" + job.id);
    reply(res, 202, out);
  }

  void list(const httplib::Request& req, httplib::Response& res) {
    JobStore::ListQuery q;
    if (req.has_param("state") && !req.get_param_value("state").empty()) {
      q.state = job_state_named(req.get_param_value("state"));
      if (!q.state) return reply_error(res, 400, "state: one of queued, running, done, failed, cancelled", "state");
    }
    q.text = req.get_param_value("q");
    try {
      if (req.has_param("limit")) q.limit = std::stoi(req.get_param_value("limit"));
      if (req.has_param("offset")) q.offset = std::stoi(req.get_param_value("offset"));
    } catch (const std::exception&) { return reply_error(res, 400, "limit and offset are integers", "limit"); }
    q.limit = std::clamp(q.limit, 1, 500);
    q.offset = std::max(0, q.offset);
    const JobStore::ListPage page = store->list(q);
    Json jobs = Json::array();
    for (const JobRecord& j : page.jobs) jobs.push_back(job_summary(j));
    reply(res, 200, {{"jobs", jobs}, {"total", page.total}, {"limit", q.limit}, {"offset", q.offset}});
  }

  void artefact(const httplib::Request& req, httplib::Response& res) {
    const auto job = store->get(req.matches[1]);
    if (!job) return reply_error(res, 404, "no job " + std::string(req.matches[1]));
    const std::string what = req.matches[2];
    if (what == "scenario") return res.set_content(job->scenario, "application/yaml");
    if (job->state != JobState::Done) {
      Json body{{"error", "job " + job->id + " is " + to_string(job->state) + ", not done"},
                {"state", to_string(job->state)}};
      return reply(res, 409, body);
    }
    if (what == "result") return res.set_content(job->result_json, "application/json");
    if (what == "trace") {
      if (job->trace.empty())
        return reply_error(res, 404, "job " + job->id + " has no trace: submit a run with options.trace: true");
      return res.set_content(job->trace, "application/json");
    }
    if (job->html.empty()) return reply_error(res, 404, "only a run has an HTML report");
    res.set_content(job->html, "text/html; charset=utf-8");
  }

  void cancel(const std::string& id, httplib::Response& res) {
    const auto job = store->get(id);
    if (!job) return reply_error(res, 404, "no job " + id);
    if (!store->cancel(id)) {
      Json body{{"error", "job " + id + " already " + to_string(job->state)}, {"state", to_string(job->state)}};
      return reply(res, 409, body);
    }
    ++cancelled;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (const auto it = running.find(id); it != running.end()) it->second->store(true);
    }
    reply(res, 200, {{"id", id}, {"state", "cancelled"}});
  }

  void compare(const httplib::Request& req, httplib::Response& res) {
    std::optional<JobRecord> side[2];
    const char* names[2] = {"a", "b"};
    for (int i = 0; i < 2; ++i) {
      const std::string id = req.get_param_value(names[i]);
      side[i] = store->get(id);
      if (!side[i]) return reply_error(res, 404, fmt::format("{}: no job '{}'", names[i], id), names[i]);
      if (side[i]->state != JobState::Done)
        return reply_error(res, 409, fmt::format("{}: job {} is {}, not done", names[i], id, to_string(side[i]->state)),
                           names[i]);
    }
    const Json a = Json::parse(side[0]->result_json), b = Json::parse(side[1]->result_json);
    Json out;
    for (int i = 0; i < 2; ++i)
      out[names[i]] = {{"id", side[i]->id}, {"label", side[i]->label}, {"command", side[i]->command}};
    out["fields"] = compare_rows(a, b);
    Json breakdown = Json::array();
    if (a.contains("breakdown") && b.contains("breakdown")) {
      breakdown = compare_rows(a.at("breakdown"), b.at("breakdown"));
      for (const char* part : {"exposed_comm_by_group", "other_by_cause"})
        if (a.at("breakdown").contains(part) && b.at("breakdown").contains(part))
          for (Json row : compare_rows(a.at("breakdown").at(part), b.at("breakdown").at(part))) {
            row["name"] = std::string(part) + "." + row["name"].get<std::string>();
            breakdown.push_back(row);
          }
    }
    out["breakdown"] = breakdown;
    reply(res, 200, out);
  }

  // Uploaded files (a Hugging Face config, an op database, an NCCL topology, a SimAI topology) are stored under
  // their SHA-256, so a scenario names them by content and two uploads of one file are one file.
  void upload(const httplib::Request& req, httplib::Response& res) {
    if (req.body.empty()) return reply_error(res, 400, "the body is the file to store", "body");
    std::string ext = fs::path(req.get_param_value("name")).extension().string();
    if (ext.size() > 10 || !std::all_of(ext.begin(), ext.end(),
                                        [](char c) { return c == '.' || std::isalnum(static_cast<unsigned char>(c)); }))
      ext.clear();
    const std::string name = sha256_hex(req.body) + ext;
    const fs::path path = fs::path(files_dir()) / name;
    if (!fs::exists(path)) {
      const fs::path tmp = path.string() + ".part";
      {
        std::ofstream out(tmp, std::ios::binary);
        out.write(req.body.data(), static_cast<std::streamsize>(req.body.size()));
        if (!out) return reply_error(res, 500, "cannot store the file");
      }
      fs::rename(tmp, path);
    }
    reply(res, 201, {{"name", name}, {"bytes", req.body.size()}});
  }

  void metrics(httplib::Response& res) {
    std::ostringstream m;
    const auto gauge = [&](const char* name, const char* help, double value) {
      m << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n" << name << ' ' << value << '\n';
    };
    const auto counter = [&](const char* name, const char* help, std::int64_t value) {
      m << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n" << name << ' ' << value << '\n';
    };
    gauge("trainsim_jobs_queued", "Jobs waiting for a worker.", static_cast<double>(store->count(JobState::Queued)));
    gauge("trainsim_jobs_running", "Jobs being simulated.", static_cast<double>(store->count(JobState::Running)));
    gauge("trainsim_workers", "Worker threads.", options.workers);
    counter("trainsim_jobs_submitted_total", "Jobs accepted since start.", submitted.load());
    counter("trainsim_jobs_rejected_total", "Submissions refused (400, 429) since start.", rejected.load());
    counter("trainsim_jobs_done_total", "Jobs finished with a result since start.", finished_done.load());
    counter("trainsim_jobs_failed_total", "Jobs finished with an error since start.", finished_failed.load());
    counter("trainsim_jobs_cancelled_total", "Jobs cancelled since start.", cancelled.load());
    counter("trainsim_jobs_purged_total", "Finished jobs deleted by --keep-days since start.", purged.load());
    counter("trainsim_http_requests_total", "HTTP requests since start.", http_requests.load());
    counter("trainsim_http_errors_total", "HTTP requests answered with an error status by the server itself.",
            http_errors.load());
    // Wall time of every finished job in the store, as a histogram.
    const std::vector<double> durations = store->finished_durations_s();
    static const double bounds[] = {0.1, 0.5, 1, 5, 10, 30, 60, 300, 600};
    m << "# HELP trainsim_job_duration_seconds Wall time of finished jobs.\n"
         "# TYPE trainsim_job_duration_seconds histogram\n";
    double sum = 0;
    for (double d : durations) sum += d;
    for (double b : bounds) {
      const auto n = std::count_if(durations.begin(), durations.end(), [&](double d) { return d <= b; });
      m << "trainsim_job_duration_seconds_bucket{le=\"" << b << "\"} " << n << '\n';
    }
    m << "trainsim_job_duration_seconds_bucket{le=\"+Inf\"} " << durations.size() << '\n'
      << "trainsim_job_duration_seconds_sum " << sum << '\n'
      << "trainsim_job_duration_seconds_count " << durations.size() << '\n';
    res.set_content(m.str(), "text/plain; version=0.0.4");
  }

  void work() {
    while (true) {
      std::optional<JobRecord> job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (stopping) return;
      }
      job = store->claim_next();
      if (!job) {
        purge_if_due();
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait_for(lock, std::chrono::milliseconds(500), [&] { return stopping; });
        continue;
      }
      auto stop = std::make_shared<std::atomic<bool>>(false);
      {
        const std::lock_guard<std::mutex> lock(mutex);
        running[job->id] = stop;
      }
      run_one(*job, *stop);
      const std::lock_guard<std::mutex> lock(mutex);
      running.erase(job->id);
    }
  }

  void run_one(const JobRecord& job, const std::atomic<bool>& stop) {
    auto last = std::chrono::steady_clock::now();
    const auto progress = [&](double fraction) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(250) && fraction < 1.0) return;
      last = now;
      store->set_progress(job.id, fraction);
    };
    try {
      JobRequest request = job_request_of(job);
      request.label = (fs::path(files_dir()) / request.label).string();
      const JobOutput out = run_job(request, options.limits, progress, stop);
      if (store->finish(job.id, out.result_json, out.html, out.trace)) ++finished_done;
    } catch (const JobStopped& s) {
      if (is_stopping()) return;  // shutting down: the job stays running in the store and is requeued at start
      if (!s.cancelled && store->fail(job.id, s.why, "")) ++finished_failed;
    } catch (const ScenarioError& e) {
      if (store->fail(job.id, private_paths_removed(e.what()), e.key())) ++finished_failed;
    } catch (const InternalError& e) {
      if (store->fail(job.id, internal_error_message(e), "")) ++finished_failed;
    } catch (const std::exception& e) {
      if (store->fail(job.id, private_paths_removed(e.what()), "")) ++finished_failed;
    }
  }

  // --keep-days: deletes the finished jobs older than that, at most once an hour (an idle worker asks).
  void purge_if_due() {
    if (options.keep_days <= 0) return;
    constexpr std::int64_t kHourMs = 3'600'000;
    const std::int64_t now = store->now_ms();
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (last_purge_ms != 0 && now - last_purge_ms < kHourMs) return;
      last_purge_ms = now;
    }
    purged += store->purge_finished_before(now - static_cast<std::int64_t>(options.keep_days * 86'400'000.0));
  }

  bool is_stopping() {
    const std::lock_guard<std::mutex> lock(mutex);
    return stopping;
  }

  void stop_all() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      for (auto& [id, flag] : running) flag->store(true);
      wake.notify_all();
    }
    http.stop();
    for (std::thread& t : workers)
      if (t.joinable()) t.join();
    workers.clear();
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() { stop(); }

int Server::bind() {
  Impl& s = *impl_;
  if (s.options.port == 0) {
    s.port = s.http.bind_to_any_port(s.host);
    if (s.port < 0) throw ScenarioError("", "--bind", "cannot listen on " + s.host);
  } else {
    if (s.options.port < 0 || s.options.port > 65535)
      throw ScenarioError("", "--port", "expected 0 to 65535, got " + std::to_string(s.options.port));
    if (!s.http.bind_to_port(s.host, s.options.port))
      throw ScenarioError("", "--port",
                          fmt::format("cannot listen on {}:{} (in use, or not allowed)", s.host, s.options.port));
    s.port = s.options.port;
  }
  // cpp-httplib listens with a backlog of 5: a burst of clients (200 submissions at once) overflows it, and the
  // connections the kernel drops come back only after a SYN retry or fail. listen() again sets the backlog.
  if (s.listen_fd >= 0) ::listen(s.listen_fd, SOMAXCONN);
  return s.port;
}

void Server::run() {
  Impl& s = *impl_;
  for (int i = 0; i < s.options.workers; ++i) s.workers.emplace_back([&s] { s.work(); });
  s.http.listen_after_bind();
}

void Server::stop() {
  if (impl_) impl_->stop_all();
}

std::string Server::startup_message() const {
  const Impl& s = *impl_;
  std::string m = fmt::format("trainsim serve: http://{}:{}/  (data {}, {} worker{})", s.host, s.port,
                              s.options.data_dir, s.options.workers, s.options.workers == 1 ? "" : "s");
  if (s.tokens.empty())
    m += "\n  no --token-file: anyone who can reach the port may submit jobs, so the server listens on " + s.host +
         (s.host == "127.0.0.1" ? " only" : "");
  else
    m += fmt::format("\n  {} token{} accepted (Authorization: Bearer ...)", s.tokens.size(),
                     s.tokens.size() == 1 ? "" : "s");
  return m;
}

}  // namespace trainsim::service
