// `trainsim memory SCENARIO [--json] [--allow-oom] [--set k=v ...]`: the memory model's per-stage
// table (docs/memory-model.md) without simulating: one row per pipeline stage with what one GPU of
// that stage holds at its peak, and whether it fits. Exits 1 when a stage does not fit, unless
// --allow-oom, so scripts can screen configurations before booking a cluster.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/memory.hpp"

namespace trainsim::cli {

namespace {

struct MemoryArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  bool json = false;
  bool allow_oom = false;
};

// What the model-state columns mean for this framework and ZeRO stage (docs/memory-model.md §2).
std::string sharding_summary(const ParallelSpec& p) {
  const int z = p.zero_stage;
  switch (p.framework) {
    case Framework::Megatron:
      return z == 0   ? "megatron, no sharding"
             : z == 1 ? "megatron, distributed optimizer (optimizer sharded over dp x cp)"
                      : fmt::format("megatron, zero_stage {}", z);
    case Framework::DeepSpeed:
      return z == 0 ? "deepspeed, no ZeRO"
                    : fmt::format("deepspeed ZeRO-{} ({} sharded over dp x cp)", z,
                                  z == 1   ? "optimizer"
                                  : z == 2 ? "optimizer, grads"
                                           : "optimizer, grads, weights");
    case Framework::FSDP: return z >= 3 ? "fsdp FULL_SHARD" : z == 2 ? "fsdp SHARD_GRAD_OP" : "fsdp NO_SHARD";
  }
  return "";
}

void write_text(std::ostream& out, const Scenario& s, const std::vector<StageMemory>& stages) {
  const ParallelSpec& p = s.parallelism;
  const double cap = s.cluster.gpu.memory_gib;
  out << fmt::format("trainsim memory: {}\n", s.name);
  out << fmt::format("  model {}   gpu {} ({:.2f} GiB)   {} GPUs\n", s.model.name, s.cluster.gpu.name, cap,
                     s.cluster.num_gpus);
  out << fmt::format("  sequence length {}   global batch size {}\n", s.model.seq_length, s.training.global_batch_size);
  out << fmt::format("  TP {}  PP {}{}  DP {}  CP {}  EP {}   micro-batch {} x {} per iteration\n", p.tensor,
                     p.pipeline, p.virtual_pipeline > 1 ? fmt::format(" (virtual {})", p.virtual_pipeline) : "", p.data,
                     p.context, p.expert, s.training.micro_batch_size, s.micro_batches_per_iteration());
  out << fmt::format("  {}; recompute {}; flash attention {}\n\n", sharding_summary(p), to_string(s.training.recompute),
                     s.training.flash_attention ? "on" : "off");
  out << "  stage  layers  recomputed  in flight  act/micro-batch   weights     grads  optimizer  activations     "
         "other     total  fits\n";
  for (const auto& st : stages)
    out << fmt::format(
        "  {:>5}  {:>6}  {:>10}  {:>9}  {:>15.2f}  {:>8.2f}  {:>8.2f}  {:>9.2f}  {:>11.2f}  {:>8.2f}  "
        "{:>8.2f}  {}\n",
        st.stage, st.layers, st.recomputed_layers, st.in_flight_micro_batches, st.activations_per_micro_batch_gib,
        st.weights_gib, st.grads_gib, st.optimizer_gib, st.activations_gib, st.other_gib, st.total_gib(),
        st.total_gib() <= cap ? "yes" : "NO");
  const StageMemory& w = worst_stage(s, stages);
  const double free = cap - w.total_gib();
  out << fmt::format(
      "\n  GiB per GPU. Worst: stage {}, {:.2f} of {:.2f} GiB: {}\n", w.stage, w.total_gib(), cap,
      free >= 0 ? fmt::format("fits, {:.2f} GiB free", free) : fmt::format("does NOT fit, {:.2f} GiB over", -free));
}

}  // namespace

Command add_memory_command(CLI::App& app) {
  auto a = std::make_shared<MemoryArgs>();
  auto* cmd = app.add_subcommand("memory", "per-GPU memory of every pipeline stage, without simulating");
  cmd->add_option("scenario", a->scenario, "scenario YAML file")->required();
  cmd->add_option("--set", a->overrides, "override a key: --set training.recompute=full (repeatable)");
  cmd->add_flag("--json", a->json, "print the table as JSON");
  cmd->add_flag("--allow-oom", a->allow_oom, "exit 0 even when a stage does not fit");
  return {cmd, [a]() {
            const Scenario s = load_scenario(a->scenario, a->overrides);
            const std::vector<StageMemory> stages = estimate_memory(s);
            worst_stage(s, stages);  // an error, before any output, when the model gave no stage
            if (a->json)
              std::cout << memory_json(s, stages).dump(2) << "\n";
            else
              write_text(std::cout, s, stages);
            std::cout.flush();  // the table before the error line
            if (!memory_fits(s, stages) && !a->allow_oom) {
              std::cerr << "error: " << memory_does_not_fit_message(s, stages) << "\n";
              return 1;
            }
            return 0;
          }};
}

}  // namespace trainsim::cli
