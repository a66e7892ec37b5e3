#pragma once
// The Chakra trace file format: a stream of protobuf messages, each preceded by its length as a varint; the first
// message is a GlobalMetadata, every later one a Node (Chakra's protolib encodeMessage / decodeMessage).
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "workload/chakra/chakra_proto.hpp"

namespace trainsim::chakra {

// Writes one trace file. Throws Error naming the file when it cannot be opened or written.
class TraceFileWriter {
 public:
  TraceFileWriter(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata);
  void write(const ChakraProtoMsg::Node& node);
  void close();  // flushes; throws when the disk refused the bytes

 private:
  void write_message(const google::protobuf::MessageLite& m);
  std::string path_;
  std::ofstream out_;
  std::string buffer_;
};

// Reads one trace file held in memory. Throws Error "FILE: what" (a truncated length, a message that does not
// parse) and "FILE: node N: what" from node() for the N-th node (0-based) when it is malformed.
class TraceFileReader {
 public:
  // `bytes`: the file's whole content; `label`: the path, for errors.
  TraceFileReader(std::string bytes, std::string label);
  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }
  // The next node, or nullopt at the end of the file.
  std::optional<ChakraProtoMsg::Node> next();
  std::int64_t nodes_read() const { return nodes_; }
  const std::string& label() const { return label_; }

 private:
  // The next message's bytes, or nullopt at a clean end of the file.
  std::optional<std::string_view> next_message(const char* what);
  std::string bytes_;
  std::string label_;
  std::size_t at_ = 0;
  std::int64_t nodes_ = 0;
  ChakraProtoMsg::GlobalMetadata metadata_;
};

// Reads a whole file; throws Error naming it when it cannot be read.
std::string read_file_bytes(const std::string& path);

}  // namespace trainsim::chakra
