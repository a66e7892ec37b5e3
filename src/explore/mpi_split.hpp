#pragma once
// Spreading a sweep over the ranks of `mpirun -np N trainsim sweep ...`. Rank r evaluates the
// points whose index % N == r (neighbouring points often cost alike, so striding balances cheap and
// costly ones), with its own threads; rank 0 gathers every outcome and writes exactly what one
// process would. A plain run never touches MPI: MPI_Init is called only when the environment says a
// launcher started us. All MPI calls live in mpi_split.cpp behind TRAINSIM_HAVE_MPI, so trainsim
// builds without MPI and then refuses, clearly, to run under a launcher.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "explore/point_eval.hpp"

namespace trainsim::explore {

using GetEnv = std::function<const char*(const char*)>;

// How this process was started. `variable` names the environment variable that gave a launcher
// away (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), "" for a plain run.
struct LaunchEnvironment {
  bool under_launcher = false;
  std::string variable;
};
LaunchEnvironment detect_launcher(const GetEnv& getenv);
LaunchEnvironment detect_launcher();  // from this process's environment

// Whether this build can talk MPI (TRAINSIM_HAVE_MPI).
bool built_with_mpi();

// Throws an Error when launched by mpirun/srun into a build without MPI: each rank would otherwise
// run the whole sweep and they would all write the same output.
void require_mpi_if_launched(const LaunchEnvironment& launch, bool have_mpi);

// The points of rank `rank` out of `size`: index % size == rank, ascending.
std::vector<std::size_t> rank_share(std::size_t points, int rank, int size);

// Default worker threads of one rank: the machine's cores shared by the ranks on it, at least 1.
int threads_per_rank(int ranks_on_this_node);

// Outcomes as bytes for the gather (JSON: index, status, reason, result) and back. Numbers survive
// the trip exactly (shortest round-trip printing), so rank 0's CSV is byte-identical to one process's.
std::string serialise_outcomes(const std::vector<std::size_t>& indices, const std::vector<PointOutcome>& outcomes);
// Puts each serialised outcome in all[index]; throws Error on malformed input or an index out of range.
void deserialise_outcomes(const std::string& bytes, std::vector<PointOutcome>& all);

// The MPI world of one sweep, initialised on construction when launched (else one rank of one) and
// finalised on destruction, so every exit path, errors included, ends MPI properly.
class MpiWorld {
 public:
  explicit MpiWorld(const LaunchEnvironment& launch);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  int ranks_on_this_node() const { return local_size_; }

  // Rank 0's text on every rank (a check only rank 0 can make, such as "is gnuplot installed", so
  // that all ranks stop together instead of some waiting forever in the gather).
  std::string broadcast_from_root(const std::string& text) const;

  // Every rank passes the outcomes of its share (points[mine[j]] -> outcomes[j]); rank 0 gets all
  // `points` outcomes in point order, the other ranks an empty vector.
  std::vector<PointOutcome> gather(std::size_t points, const std::vector<std::size_t>& mine,
                                   std::vector<PointOutcome> outcomes) const;

 private:
  [[maybe_unused]] bool initialised_ = false;  // by us, so ours to finalise
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace trainsim::explore
