#pragma once
// Node attributes: the names Chakra's tools and ASTRA-sim read (with the value types they read them as), the
// trainsim_* ones that make a trainsim -> Chakra -> trainsim round trip exact, and typed access to both.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/chakra/chakra_proto.hpp"

namespace trainsim::chakra {

// Read by ASTRA-sim's feeder (et_feeder_node.cpp), with the types it reads: comm_type int64 (a CollectiveCommType),
// comm_size int64, comm_src / comm_dst / comm_tag int32, pg_name string, is_cpu_op bool, num_ops int64,
// tensor_size uint64.
inline constexpr const char* kCommType = "comm_type";
inline constexpr const char* kCommSize = "comm_size";
inline constexpr const char* kCommSrc = "comm_src";
inline constexpr const char* kCommDst = "comm_dst";
inline constexpr const char* kCommTag = "comm_tag";
inline constexpr const char* kPgName = "pg_name";
inline constexpr const char* kIsCpuOp = "is_cpu_op";
inline constexpr const char* kNumOps = "num_ops";
inline constexpr const char* kTensorSize = "tensor_size";

// trainsim's own (other tools keep them as unknown attributes).
inline constexpr const char* kStream = "trainsim_stream";           // string: to_string(Stream)
inline constexpr const char* kPhase = "trainsim_phase";             // string: to_string(Phase)
inline constexpr const char* kLayer = "trainsim_layer";             // int64, -1 = none
inline constexpr const char* kMicroBatch = "trainsim_micro_batch";  // int64, -1 = none
inline constexpr const char* kLaunches = "trainsim_launches";       // int64: Op::launches
inline constexpr const char* kDurationPs = "trainsim_duration_ps";  // int64: the exact duration_micros
inline constexpr const char* kGroupKind = "trainsim_group";         // string: to_string(GroupKind) of pg_name
inline constexpr const char* kSms = "trainsim_sms";                 // int64: CollectiveDesc::sms when not -1
inline constexpr const char* kExchangeOf = "trainsim_exchange_of";  // uint64: the send half of this receive
inline constexpr const char* kHostWaits = "trainsim_host_waits";    // uint64 list: node ids the host waits for
// GlobalMetadata.
inline constexpr const char* kWorldSize = "trainsim_world_size";   // int64
inline constexpr const char* kRank = "trainsim_rank";              // int64: the global rank of this file
inline constexpr const char* kRepresents = "trainsim_represents";  // int64: RankProgram::represents

// Adds an attribute of the given value type.
void add_int64(ChakraProtoMsg::Node& n, const char* name, std::int64_t v);
void add_int32(ChakraProtoMsg::Node& n, const char* name, std::int32_t v);
void add_uint64(ChakraProtoMsg::Node& n, const char* name, std::uint64_t v);
void add_bool(ChakraProtoMsg::Node& n, const char* name, bool v);
void add_string(ChakraProtoMsg::Node& n, const char* name, std::string_view v);
void add_int64(ChakraProtoMsg::GlobalMetadata& m, const char* name, std::int64_t v);
void add_uint64_list(ChakraProtoMsg::Node& n, const char* name, const std::vector<std::uint64_t>& v);

// The attribute named `name`, or null.
const ChakraProtoMsg::AttributeProto* find_attr(const ChakraProtoMsg::Node& n, std::string_view name);
const ChakraProtoMsg::AttributeProto* find_attr(const ChakraProtoMsg::GlobalMetadata& m, std::string_view name);

// An integer attribute in whichever integer type a writer chose (int32/int64/uint32/uint64/sint/fixed, or a bool);
// nullopt when absent. Throws Error(where + ": attribute NAME: ...") when it holds something else or a uint64 above
// INT64_MAX.
std::optional<std::int64_t> int_attr(const ChakraProtoMsg::AttributeProto* a, const std::string& where);
// A string attribute; nullopt when absent, Error when it holds another type.
std::optional<std::string> string_attr(const ChakraProtoMsg::AttributeProto* a, const std::string& where);
// A list of unsigned integers (uint64_list); empty when absent, Error when it holds another type.
std::vector<std::uint64_t> uint64_list_attr(const ChakraProtoMsg::AttributeProto* a, const std::string& where);
// A bool attribute (or an integer 0/1); nullopt when absent.
std::optional<bool> bool_attr(const ChakraProtoMsg::AttributeProto* a, const std::string& where);

}  // namespace trainsim::chakra
