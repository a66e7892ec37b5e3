#include "model/model_spec.hpp"

namespace trainsim {

std::int64_t padded_vocab_size(std::int64_t vocab_size, int tensor_parallel) {
  const std::int64_t multiple = 128 * static_cast<std::int64_t>(tensor_parallel);
  return (vocab_size + multiple - 1) / multiple * multiple;
}

}  // namespace trainsim
