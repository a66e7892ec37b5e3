// `trainsim serve` under load (issue 20): 200 submissions at once from 200 client threads over loopback, each a small
// `memory` job, on a server with 2 workers. Every job must be accepted once, get its own id, and finish; the figures
// are the submission latency (p50, p99), the submissions per second, and the time until all 200 are done.
#include <benchmark/benchmark.h>

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "trainsim/service.hpp"

namespace {

using namespace trainsim::service;
namespace fs = std::filesystem;

const char* kJob =
    R"({"command": "memory", "scenario": "model: {preset: gpt3-1.3b}\ntraining: {global_batch_size: 32, micro_batch_size: 2, precision: bf16}\nparallelism: {tensor: 2, pipeline: 1}\ncluster: {gpu: H100-SXM, num_gpus: 8, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}\n"})";

void BM_Serve200ConcurrentSubmissions(benchmark::State& state) {
  constexpr int kClients = 200;
  for (auto _ : state) {
    const fs::path dir = fs::temp_directory_path() / "trainsim_serve_load";
    fs::remove_all(dir);
    ServerOptions o;
    o.data_dir = dir.string();
    o.port = 0;
    o.workers = 2;
    Server server(o);
    const int port = server.bind();
    std::thread serving([&] { server.run(); });

    std::vector<double> latency_ms(kClients, -1);
    std::vector<std::string> ids(kClients);
    std::vector<std::string> failures(kClients);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i)
      clients.emplace_back([&, i] {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(60, 0);
        const auto t0 = std::chrono::steady_clock::now();
        const auto res = c.Post("/api/jobs", kJob, "application/json");
        latency_ms[static_cast<std::size_t>(i)] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (res && res->status == 202)
          ids[static_cast<std::size_t>(i)] = nlohmann::json::parse(res->body)["id"];
        else
          failures[static_cast<std::size_t>(i)] =
              res ? "HTTP " + std::to_string(res->status) : "client error " + httplib::to_string(res.error());
      });
    for (std::thread& t : clients) t.join();
    const double submit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    for (const std::string& f : failures)
      if (!f.empty()) {
        state.SkipWithError(("a submission failed: " + f).c_str());
        break;
      }
    httplib::Client c("127.0.0.1", port);
    const auto accepted = std::count_if(ids.begin(), ids.end(), [](const std::string& id) { return !id.empty(); });
    int done = 0;
    while (done < accepted) {
      const auto res = c.Get("/api/jobs?state=done&limit=1");
      done = res ? nlohmann::json::parse(res->body)["total"].get<int>() : 0;
      if (done < accepted) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double all_done_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto total = nlohmann::json::parse(c.Get("/api/jobs?limit=1")->body)["total"].get<int>();
    server.stop();
    serving.join();

    const std::set<std::string> distinct(ids.begin(), ids.end());
    const bool all_accepted = std::none_of(ids.begin(), ids.end(), [](const std::string& id) { return id.empty(); });
    if (!all_accepted || distinct.size() != kClients || total != kClients)
      state.SkipWithError("a submission was lost or duplicated");
    std::sort(latency_ms.begin(), latency_ms.end());
    state.counters["p50_ms"] = latency_ms[kClients / 2];
    state.counters["p99_ms"] = latency_ms[kClients * 99 / 100];
    state.counters["submissions_per_s"] = kClients / submit_s;
    state.counters["all_done_s"] = all_done_s;
    fs::remove_all(dir);
  }
}
BENCHMARK(BM_Serve200ConcurrentSubmissions)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
