#pragma once
// A binary min-heap of ids with changeable keys (the positions of ids are tracked, so a key can be
// raised, lowered or erased in O(log n)). Ties are broken by the smaller id, so the order of equal
// keys never depends on insertion history: a requirement for bit-for-bit deterministic runs.
// Used for the flows' completion times and for the links' fair shares in the max-min solver;
// its storage is reused between operations, so steady-state use does not allocate.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainsim {

template <class Key>
class IndexedMinHeap {
 public:
  // Ids must lie in [0, id_capacity()); growing keeps the ids already present.
  void reserve_ids(std::size_t n) {
    if (n > position_.size()) position_.resize(n, kAbsent);
  }
  std::size_t id_capacity() const { return position_.size(); }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  bool contains(std::int32_t id) const { return position_[static_cast<std::size_t>(id)] != kAbsent; }
  std::int32_t top_id() const { return heap_.front().id; }
  const Key& top_key() const { return heap_.front().key; }
  const Key& key_of(std::int32_t id) const { return heap_[position_[static_cast<std::size_t>(id)]].key; }

  // Inserts `id` or changes its key.
  void set(std::int32_t id, Key key) {
    const std::size_t p = position_[static_cast<std::size_t>(id)];
    if (p == kAbsent) {
      heap_.push_back({key, id});
      sift_up(heap_.size() - 1);
      return;
    }
    const Entry moved{key, id};
    if (before(moved, heap_[p])) {
      heap_[p] = moved;
      sift_up(p);
    } else {
      heap_[p] = moved;
      sift_down(p);
    }
  }

  void erase(std::int32_t id) {
    const std::size_t p = position_[static_cast<std::size_t>(id)];
    if (p == kAbsent) return;
    position_[static_cast<std::size_t>(id)] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (p == heap_.size()) return;
    heap_[p] = last;
    position_[static_cast<std::size_t>(last.id)] = p;
    if (p > 0 && before(last, heap_[(p - 1) / 2])) {
      sift_up(p);
    } else {
      sift_down(p);
    }
  }

  void pop() { erase(top_id()); }

  void clear() {
    for (const Entry& e : heap_) position_[static_cast<std::size_t>(e.id)] = kAbsent;
    heap_.clear();
  }

 private:
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);
  struct Entry {
    Key key;
    std::int32_t id;
  };
  static bool before(const Entry& a, const Entry& b) {
    if (a.key < b.key) return true;
    if (b.key < a.key) return false;
    return a.id < b.id;
  }

  void sift_up(std::size_t i) {
    const Entry moving = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(moving, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, moving);
  }

  void sift_down(std::size_t i) {
    const Entry moving = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], moving)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, moving);
  }

  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    position_[static_cast<std::size_t>(e.id)] = i;
  }

  std::vector<Entry> heap_;
  std::vector<std::size_t> position_;  // by id: index in heap_, or kAbsent
};

}  // namespace trainsim
