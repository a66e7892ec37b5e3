#include "workload/grad_buckets.hpp"

namespace trainsim {

std::vector<GradBucket> make_buckets(const std::vector<ParamItem>& items, double bucket_elems) {
  std::vector<GradBucket> out;
  if (items.empty()) return out;
  GradBucket cur;
  cur.first_item = 0;
  for (int i = 0; i < static_cast<int>(items.size()); ++i) {
    cur.params += items[static_cast<std::size_t>(i)].params;
    cur.quantized += items[static_cast<std::size_t>(i)].quantized;
    cur.last_item = i;
    if (bucket_elems > 0 && cur.params >= bucket_elems && i + 1 < static_cast<int>(items.size())) {
      out.push_back(cur);
      cur = GradBucket{};
      cur.first_item = i + 1;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace trainsim
