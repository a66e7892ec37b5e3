#pragma once
// The rank arithmetic of halving-doubling (Rabenseifner's algorithm as described by Thakur,
// Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 2005,
// §4), shared by the analytical estimate and the flow generator.
//
// n ranks, p = the largest power of two <= n, r = n - p. Non-powers of two first fold r ranks away
// (MPICH's pairing): among the first 2r ranks each even rank sends its data to rank + 1 and sits out;
// the odd ones among them and every rank >= 2r survive and are renumbered 0..p-1 ("survivor" index).
// Pairing neighbours keeps the fold on NVLink when nodes hold an even number of GPUs. At the end
// each survivor that absorbed a partner sends it the result.
//
// Reduce-scatter by recursive halving runs log2(p) steps; step k pairs survivor x with x XOR 2^k
// and each sends the half of its current region it does not keep (S/2, S/4, ...). MPICH starts at
// distance p/2; any dimension order is correct (the kept halves still partition the buffer), and
// trainsim starts at distance 1 so that the largest halves travel between GPUs of one node (ranks are
// numbered node by node). All-gather by recursive doubling mirrors it (distance p/2 first, S/p, ...,
// S/2 last). The buffer is treated as p blocks; after reduce-scatter survivor x owns block
// block_after(x, log2 p) (x with its bits reversed) - implementations permute, the bytes are the same.
#include <cstdint>
#include <utility>

namespace trainsim {

struct HalvingDoublingPlan {
  int n = 0, p = 1, extras = 0, steps = 0;  // extras = r = n - p, steps = log2(p)

  explicit HalvingDoublingPlan(int nranks) : n(nranks) {
    while (p * 2 <= n) {
      p *= 2;
      ++steps;
    }
    extras = n - p;
  }
  // Communicator rank of survivor x, and survivor index of a rank (-1 for a folded-away rank).
  int rank_of(int x) const { return x < extras ? 2 * x + 1 : x + extras; }
  int survivor_of(int rank) const {
    if (rank < 2 * extras) return rank % 2 == 1 ? rank / 2 : -1;
    return rank - extras;
  }
  // The survivor a folded-away (even) rank < 2r hands its data to, and vice versa.
  bool folds_away(int rank) const { return rank < 2 * extras && rank % 2 == 0; }
  bool absorbs_partner(int rank) const { return rank < 2 * extras && rank % 2 == 1; }

  int partner(int x, int step) const { return x ^ (1 << step); }
  // First block (of p) of survivor x's region after the first `done` halving steps; the region is
  // p >> done blocks long.
  int region_start(int x, int done) const {
    int start = 0;
    for (int i = 0; i < done; ++i) {
      if ((x >> i) & 1) start += p >> (i + 1);
    }
    return start;
  }
  // Blocks survivor x sends at halving step k: the half of its region it does not keep (bit k of x
  // says which half it keeps: 0 the lower). Returns [first, last).
  std::pair<int, int> halving_send_blocks(int x, int k) const {
    const int start = region_start(x, k), half = p >> (k + 1);
    return ((x >> k) & 1) ? std::pair{start, start + half} : std::pair{start + half, start + 2 * half};
  }
  // Blocks survivor x sends at doubling step k (run k = steps-1 down to 0): all it holds.
  std::pair<int, int> doubling_send_blocks(int x, int k) const {
    const int start = region_start(x, k + 1);
    return {start, start + (p >> (k + 1))};
  }
};

}  // namespace trainsim
