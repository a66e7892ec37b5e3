#include "workload/interleaved_schedule.hpp"

#include <algorithm>
#include <deque>
#include <map>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/pipeline_schedule.hpp"

namespace trainsim {

namespace {

using Kind = InterleavedEvent::Kind;

// Re-executes forward_backward_pipelining_with_interleaving for one rank, recording what it issues.
class InterleavedRecorder {
 public:
  InterleavedRecorder(int p, int r, int m, int v)
      : p_(p),
        r_(r),
        m_(m),
        v_(v),
        total_(m * v),
        table_(interleaved_table(p, m, v)),
        grad_synced_(static_cast<std::size_t>(v), 0) {
    // get_pp_rank_microbatches: warm-up (p - r - 1) * 2 + (v - 1) * N, capped at m * v.
    warmup_ = std::min((p - r - 1) * 2 + (v - 1) * p, total_);
    remaining_ = total_ - warmup_;
  }

  std::vector<InterleavedEvent> run() {
    // Synchronize params for the first two model chunks (param_sync_func[0], [1]).
    param_sync(0);
    param_sync(1);
    // recv_forward of the first input: blocking (wait_on_reqs), nothing on the very first stage.
    if (r_ != 0) wait_all(communicate(kNone, 0, kNone, kNone));
    warmup();
    steady();
    cooldown();
    return std::move(out_);
  }

 private:
  static constexpr int kNone = -1;  // no tensor to move / no handle

  struct Handles {
    int send_next = kNone, recv_prev = kNone, send_prev = kNone, recv_next = kNone;
  };

  int chunk_of(int k, bool forward) const {
    const int c = table_[static_cast<std::size_t>(k % total_)].chunk;
    return forward ? c : v_ - 1 - c;
  }
  int micro_batch_of(int k) const { return table_[static_cast<std::size_t>(k)].micro_batch; }
  bool first_virtual_stage(int chunk) const { return r_ == 0 && chunk == 0; }
  bool last_virtual_stage(int chunk) const { return r_ == p_ - 1 && chunk == v_ - 1; }

  // recv_tensor_from_previous_stage: whether step k's p2p call receives and for which chunk. The
  // leading rank (first in forward, last in backward) runs p - 1 steps ahead of the ending rank, so
  // it receives what the ending rank produced p - 1 steps earlier, for the next chunk.
  std::pair<bool, int> recv_from_previous_stage(int k, bool forward) const {
    const bool leading = forward ? r_ == 0 : r_ == p_ - 1;
    if (!leading) return {true, chunk_of(k + 1, forward)};
    bool recv = true;
    int next = 0;
    if (k < p_ - 1) {
      recv = false;
      next = chunk_of(k + 1, forward);
    } else {
      next = chunk_of(k - (p_ - 1), forward);
    }
    if (next == (forward ? v_ - 1 : 0)) recv = false;
    return {recv, forward ? next + 1 : next - 1};
  }

  // _p2p_ops: even ranks post send_next, recv_prev, send_prev, recv_next; odd ranks recv_prev,
  // send_next, recv_next, send_prev (_p2p_ops), so neighbours' blocking calls pair up. Each argument is
  // the chunk on this rank the tensor belongs to, or kNone when there is nothing to move.
  Handles communicate(int send_next, int recv_prev, int send_prev, int recv_next) {
    Handles h;
    if (r_ % 2 == 0) {
      if (send_next != kNone) h.send_next = post(P2PDirection::SendNext, send_next);
      if (recv_prev != kNone) h.recv_prev = post(P2PDirection::RecvPrev, recv_prev);
      if (send_prev != kNone) h.send_prev = post(P2PDirection::SendPrev, send_prev);
      if (recv_next != kNone) h.recv_next = post(P2PDirection::RecvNext, recv_next);
    } else {
      if (recv_prev != kNone) h.recv_prev = post(P2PDirection::RecvPrev, recv_prev);
      if (send_next != kNone) h.send_next = post(P2PDirection::SendNext, send_next);
      if (recv_next != kNone) h.recv_next = post(P2PDirection::RecvNext, recv_next);
      if (send_prev != kNone) h.send_prev = post(P2PDirection::SendPrev, send_prev);
    }
    return h;
  }

  // Tensors of one chunk move in micro-batch order in both directions, so the n-th transfer of a
  // (direction, chunk) pair carries micro-batch n.
  int post(P2PDirection d, int chunk) {
    const int mb = transfers_[{static_cast<int>(d), chunk}]++;
    const bool next = d == P2PDirection::SendNext || d == P2PDirection::RecvNext;
    InterleavedEvent e;
    e.kind = Kind::Post;
    e.micro_batch = mb;
    e.chunk = chunk;
    e.direction = d;
    e.peer = next ? (r_ + 1) % p_ : (r_ + p_ - 1) % p_;
    e.handle = next_handle_++;
    out_.push_back(e);
    return e.handle;
  }

  void wait(int handle) {
    InterleavedEvent e;
    e.kind = Kind::Wait;
    e.handle = handle;
    out_.push_back(e);
  }
  // A blocking call (wait_on_reqs) waits every request it posted, in posting order.
  void wait_all(const Handles& h) {
    std::vector<int> posted;
    for (int x : {h.send_next, h.recv_prev, h.send_prev, h.recv_next})
      if (x != kNone) posted.push_back(x);
    std::sort(posted.begin(), posted.end());
    for (int x : posted) wait(x);
  }
  void compute(Kind kind, int mb, int chunk) {
    InterleavedEvent e;
    e.kind = kind;
    e.micro_batch = mb;
    e.chunk = chunk;
    out_.push_back(e);
  }
  void param_sync(int chunk) {
    if (chunk < v_) compute(Kind::ParamSync, -1, chunk);
  }
  void grad_sync(int chunk) {
    if (grad_synced_[static_cast<std::size_t>(chunk)]) return;
    grad_synced_[static_cast<std::size_t>(chunk)] = true;
    compute(Kind::GradSync, -1, chunk);
  }

  // forward_step_helper: with align_param_gather, chunk j >= 2 is all-gathered when step k + r is
  // the first micro-batch of chunk j - 1, so every rank launches it at the same wall-clock step.
  void forward(int k) {
    const int sync_k = k + r_;
    if (sync_k < total_ && micro_batch_of(sync_k) == 0) {
      const int j = chunk_of(sync_k, true) + 1;
      if (j > 1 && j < v_) param_sync(j);
    }
    compute(Kind::Forward, micro_batch_of(k), chunk_of(k, true));
  }

  // backward_step_helper: with align_grad_reduce, after backward step k the chunk whose last
  // micro-batch was backward step k - r starts its gradient reduction (all PP ranks in step).
  void backward(int k) {
    compute(Kind::Backward, micro_batch_of(k), chunk_of(k, false));
    const int sync_k = k - r_;
    if (sync_k >= 0 && micro_batch_of(sync_k) == m_ - 1) grad_sync(chunk_of(sync_k, false));
  }

  void warmup() {
    for (int k = 0; k < warmup_; ++k) {
      const int chunk = chunk_of(k, true);
      auto [recv, next_chunk] = recv_from_previous_stage(k, true);
      if (k == total_ - 1) recv = false;
      forward(k);
      const int out = last_virtual_stage(chunk) ? kNone : chunk;
      // Blocking send_forward_recv_forward (the overlap path only starts in the steady state).
      wait_all(communicate(out, recv ? next_chunk : kNone, kNone, kNone));
      if (k == warmup_ - 1 && remaining_ > 0) {
        // Prefetch the first gradient: async send_backward_recv_backward(None, recv_next).
        const Handles h = communicate(kNone, kNone, kNone, r_ == p_ - 1 ? kNone : v_ - 1);
        if (h.recv_next != kNone) recv_next_.push_back(h.recv_next);
      }
    }
  }

  void steady() {
    for (int k = 0; k < remaining_; ++k) {
      const int fk = warmup_ + k;
      const int fchunk = chunk_of(fk, true);
      // pp_pre_forward: wait the oldest outstanding activation receive.
      if (!first_virtual_stage(fchunk) && !recv_prev_.empty()) {
        wait(recv_prev_.front());
        recv_prev_.pop_front();
      }
      forward(fk);
      // pp_post_forward: async send_forward_recv_forward; the send is waited for at once because
      // deallocate_pipeline_outputs frees the output right after (deallocate_output_tensor).
      auto [recv, next_chunk] = recv_from_previous_stage(fk, true);
      if (k == remaining_ - 1) recv = false;
      const int out = last_virtual_stage(fchunk) ? kNone : fchunk;
      const Handles fh = communicate(out, recv ? next_chunk : kNone, kNone, kNone);
      if (fh.recv_prev != kNone) recv_prev_.push_back(fh.recv_prev);
      if (fh.send_next != kNone) wait(fh.send_next);

      // pp_pre_backward: wait the oldest outstanding gradient receive.
      const int bchunk = chunk_of(k, false);
      if (!last_virtual_stage(bchunk) && !recv_next_.empty()) {
        wait(recv_next_.front());
        recv_next_.pop_front();
      }
      backward(k);
      // pp_post_backward: async send_backward_recv_backward; the previous send is waited for after
      // posting this one.
      auto [brecv, next_bchunk] = recv_from_previous_stage(k, false);
      const int grad = first_virtual_stage(bchunk) ? kNone : bchunk;
      const Handles bh = communicate(kNone, kNone, grad, brecv ? next_bchunk : kNone);
      if (send_prev_ != kNone) wait(send_prev_);
      send_prev_ = bh.send_prev;
      if (bh.recv_next != kNone) recv_next_.push_back(bh.recv_next);
    }
  }

  void cooldown() {
    if (remaining_ == 0 && r_ != p_ - 1)  // all in warm-up: blocking recv_backward of the first gradient
      wait_all(communicate(kNone, kNone, kNone, v_ - 1));
    for (int k = remaining_; k < total_; ++k) {
      const int chunk = chunk_of(k, false);
      if (!last_virtual_stage(chunk) && k != 0 && !recv_next_.empty()) {
        wait(recv_next_.front());
        recv_next_.pop_front();
      }
      auto [recv, next_chunk] = recv_from_previous_stage(k, false);
      if (k == total_ - 1) recv = false;
      backward(k);
      wait_all(communicate(kNone, kNone, first_virtual_stage(chunk) ? kNone : chunk, recv ? next_chunk : kNone));
    }
    if (send_prev_ != kNone) wait(send_prev_);
    // Chunks whose reduction the aligned rule did not reach start now, in chunk order.
    for (int c = 0; c < v_; ++c) grad_sync(c);
    TRAINSIM_CHECK(recv_prev_.empty() && recv_next_.empty(),
                   "interleaved schedule: receives left outstanding at the end of the iteration");
  }

  int p_, r_, m_, v_, total_;
  int warmup_ = 0, remaining_ = 0;
  std::vector<PipelineStep> table_;
  std::vector<InterleavedEvent> out_;
  std::map<std::pair<int, int>, int> transfers_;  // (direction, chunk) -> transfers so far
  std::deque<int> recv_prev_, recv_next_;
  int send_prev_ = kNone;  // the last async gradient send, waited for after the next one is posted
  std::vector<char> grad_synced_;
  int next_handle_ = 0;
};

const char* direction_token(P2PDirection d) {
  switch (d) {
    case P2PDirection::SendNext: return ">n";
    case P2PDirection::RecvPrev: return "<p";
    case P2PDirection::SendPrev: return ">p";
    case P2PDirection::RecvNext: return "<n";
  }
  return "?";
}

std::string tensor_token(const InterleavedEvent& e) {
  return std::string(direction_token(e.direction)) + ":c" + std::to_string(e.chunk) + "m" +
         std::to_string(e.micro_batch);
}

}  // namespace

std::string interleaved_micro_batch_problem(int p, int m) {
  if (m < p)
    return "needs at least as many micro-batches per iteration as pipeline stages (" + std::to_string(m) + " < " +
           std::to_string(p) + ")";
  if (m % p != 0)
    return "needs the micro-batches per iteration to be a multiple of the pipeline size (" + std::to_string(m) +
           " is not a multiple of " + std::to_string(p) + ")";
  return {};
}

std::vector<InterleavedEvent> interleaved_program(int p, int r, int m, int v) {
  if (p < 2 || v < 2 || r < 0 || r >= p || m < 1) throw Error("invalid interleaved schedule parameters");
  if (const auto why = interleaved_micro_batch_problem(p, m); !why.empty()) throw Error("interleaved 1F1B " + why);
  return InterleavedRecorder(p, r, m, v).run();
}

std::string to_string(const InterleavedEvent& e, const std::vector<InterleavedEvent>& program) {
  const auto cm = [&] { return "c" + std::to_string(e.chunk) + "m" + std::to_string(e.micro_batch); };
  switch (e.kind) {
    case Kind::Forward: return "F:" + cm();
    case Kind::Backward: return "B:" + cm();
    case Kind::Post: return tensor_token(e);
    case Kind::Wait:
      for (const auto& x : program)
        if (x.kind == Kind::Post && x.handle == e.handle) return "w" + tensor_token(x);
      return "w?";
    case Kind::GradSync: return "G:c" + std::to_string(e.chunk);
    case Kind::ParamSync: return "P:c" + std::to_string(e.chunk);
  }
  return "?";
}

}  // namespace trainsim
