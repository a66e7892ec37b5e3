#include "explore/mpi_split.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/parallel.hpp"

#ifdef TRAINSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace trainsim::explore {

namespace {

PointStatus status_from_string(const std::string& s) {
  for (PointStatus st : {PointStatus::Ok, PointStatus::Invalid, PointStatus::OutOfMemory, PointStatus::Failed})
    if (s == to_string(st)) return st;
  throw Error("MPI gather: unknown point status '" + s + "'");
}

}  // namespace

LaunchEnvironment detect_launcher(const GetEnv& getenv) {
  // OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE (and PMIX_RANK); Slurm's srun and MPICH's Hydra set
  // PMI_SIZE (PMI-1/2) or PMIX_RANK (PMIx).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    const char* value = getenv(name);
    if (value && *value) return {true, name};
  }
  return {};
}

LaunchEnvironment detect_launcher() {
  return detect_launcher([](const char* name) { return std::getenv(name); });
}

bool built_with_mpi() {
#ifdef TRAINSIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

void require_mpi_if_launched(const LaunchEnvironment& launch, bool have_mpi) {
  if (launch.under_launcher && !have_mpi)
    throw Error("started by an MPI launcher (" + launch.variable +
                " is set) but this trainsim was built without MPI; install libopenmpi-dev and rebuild, or run "
                "trainsim sweep without mpirun");
}

std::vector<std::size_t> rank_share(std::size_t points, int rank, int size) {
  std::vector<std::size_t> out;
  if (size <= 0 || rank < 0 || rank >= size) return out;
  for (std::size_t p = static_cast<std::size_t>(rank); p < points; p += static_cast<std::size_t>(size))
    out.push_back(p);
  return out;
}

int threads_per_rank(int ranks_on_this_node) {
  return std::max(1, resolve_thread_count(0) / std::max(1, ranks_on_this_node));
}

std::string serialise_outcomes(const std::vector<std::size_t>& indices, const std::vector<PointOutcome>& outcomes) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (std::size_t j = 0; j < indices.size() && j < outcomes.size(); ++j) {
    nlohmann::ordered_json o;
    o["index"] = indices[j];
    o["status"] = to_string(outcomes[j].status);
    o["reason"] = outcomes[j].reason;
    o["result"] = outcomes[j].result;
    all.push_back(std::move(o));
  }
  return all.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void deserialise_outcomes(const std::string& bytes, std::vector<PointOutcome>& all) {
  nlohmann::ordered_json parsed;
  try {
    parsed = nlohmann::ordered_json::parse(bytes);
  } catch (const nlohmann::ordered_json::exception& e) {
    throw Error(std::string("MPI gather: malformed outcomes from a rank: ") + e.what());
  }
  if (!parsed.is_array()) throw Error("MPI gather: malformed outcomes from a rank: not a list");
  for (auto& o : parsed) {
    if (!o.is_object() || !o.contains("index") || !o["index"].is_number_unsigned() || !o.contains("status") ||
        !o["status"].is_string() || !o.contains("reason") || !o["reason"].is_string())
      throw Error("MPI gather: malformed outcome from a rank");
    const auto index = o["index"].get<std::size_t>();
    if (index >= all.size()) throw Error("MPI gather: point index out of range");
    PointOutcome& out = all[index];
    out.status = status_from_string(o["status"].get<std::string>());
    out.reason = o["reason"].get<std::string>();
    out.result = std::move(o["result"]);
  }
}

#ifdef TRAINSIM_HAVE_MPI

MpiWorld::MpiWorld(const LaunchEnvironment& launch) {
  if (!launch.under_launcher) return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    // Only the main thread calls MPI; the worker threads only simulate.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    initialised_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (node != MPI_COMM_NULL) {
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
  }
}

MpiWorld::~MpiWorld() {
  if (!initialised_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string MpiWorld::broadcast_from_root(const std::string& text) const {
  if (size_ == 1) return text;
  int length = is_root() ? static_cast<int>(text.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string out = is_root() ? text : std::string(static_cast<std::size_t>(length), '\0');
  if (length > 0) MPI_Bcast(out.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

std::vector<PointOutcome> MpiWorld::gather(std::size_t points, const std::vector<std::size_t>& mine,
                                           std::vector<PointOutcome> outcomes) const {
  std::vector<PointOutcome> all;
  if (size_ == 1) {
    all.resize(points);
    for (std::size_t j = 0; j < mine.size(); ++j) all.at(mine[j]) = std::move(outcomes[j]);
    return all;
  }
  const std::string bytes = serialise_outcomes(mine, outcomes);
  // Every rank learns every length, so all of them see (and refuse) an oversized gather together.
  const long long my_length = static_cast<long long>(bytes.size());
  std::vector<long long> lengths(static_cast<std::size_t>(size_));
  MPI_Allgather(&my_length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
  long long total = 0;
  for (long long l : lengths) total += l;
  if (total > INT_MAX) throw Error("MPI gather: the sweep's results exceed 2 GiB; split the sweep");

  std::vector<int> counts(lengths.begin(), lengths.end()), displs(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::string received(is_root() ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, received.data(), counts.data(), displs.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!is_root()) return all;
  all.resize(points);
  for (std::size_t r = 0; r < counts.size(); ++r)
    deserialise_outcomes(received.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(counts[r])),
                         all);
  return all;
}

#else  // no MPI: always one rank of one

MpiWorld::MpiWorld(const LaunchEnvironment& launch) { require_mpi_if_launched(launch, false); }

MpiWorld::~MpiWorld() = default;

std::string MpiWorld::broadcast_from_root(const std::string& text) const { return text; }

std::vector<PointOutcome> MpiWorld::gather(std::size_t points, const std::vector<std::size_t>& mine,
                                           std::vector<PointOutcome> outcomes) const {
  std::vector<PointOutcome> all(points);
  for (std::size_t j = 0; j < mine.size(); ++j) all.at(mine[j]) = std::move(outcomes[j]);
  return all;
}

#endif

}  // namespace trainsim::explore
