#include "workload/chakra/chakra_stream.hpp"

#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim::chakra {

namespace {

void append_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// A protobuf varint of at most 10 bytes; nullopt when the bytes end inside it or it is longer.
std::optional<std::uint64_t> read_varint(std::string_view bytes, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
    const auto b = static_cast<std::uint8_t>(bytes[at++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return std::nullopt;
}

}  // namespace

TraceFileWriter::TraceFileWriter(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata)
    : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
  if (!out_) throw Error(fmt::format("{}: cannot open for writing", path_));
  write_message(metadata);
}

void TraceFileWriter::write(const ChakraProtoMsg::Node& node) { write_message(node); }

void TraceFileWriter::write_message(const google::protobuf::MessageLite& m) {
  buffer_.clear();
  append_varint(buffer_, m.ByteSizeLong());
  if (!m.AppendToString(&buffer_)) throw Error(fmt::format("{}: a message could not be encoded", path_));
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  if (!out_) throw Error(fmt::format("{}: write failed (disk full?)", path_));
}

void TraceFileWriter::close() {
  out_.close();
  if (!out_) throw Error(fmt::format("{}: write failed (disk full?)", path_));
}

TraceFileReader::TraceFileReader(std::string bytes, std::string label)
    : bytes_(std::move(bytes)), label_(std::move(label)) {
  const auto m = next_message("the global metadata");
  if (!m) throw Error(fmt::format("{}: empty file: a Chakra trace starts with its GlobalMetadata message", label_));
  if (!metadata_.ParseFromArray(m->data(), static_cast<int>(m->size())))
    throw Error(fmt::format("{}: the first message is not a Chakra GlobalMetadata", label_));
}

std::optional<std::string_view> TraceFileReader::next_message(const char* what) {
  if (at_ >= bytes_.size()) return std::nullopt;
  const std::string_view all(bytes_);
  const std::size_t start = at_;
  const auto len = read_varint(all, at_);
  if (!len)
    throw Error(fmt::format("{}: {}: the length prefix at byte {} is cut off or malformed", label_, what, start));
  if (*len > all.size() - at_)
    throw Error(fmt::format("{}: {}: the message at byte {} claims {} bytes, only {} are left (truncated file?)",
                            label_, what, start, *len, all.size() - at_));
  // protobuf's parsers take an int length: a message over 2 GiB is refused rather than cut.
  if (*len > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error(fmt::format("{}: {}: a message of {} bytes is larger than protobuf reads", label_, what, *len));
  const std::string_view m = all.substr(at_, static_cast<std::size_t>(*len));
  at_ += static_cast<std::size_t>(*len);
  return m;
}

std::optional<ChakraProtoMsg::Node> TraceFileReader::next() {
  const std::string what = fmt::format("node {}", nodes_);
  const auto m = next_message(what.c_str());
  if (!m) return std::nullopt;
  ChakraProtoMsg::Node node;
  if (!node.ParseFromArray(m->data(), static_cast<int>(m->size())))
    throw Error(fmt::format("{}: {}: not a Chakra Node message", label_, what));
  ++nodes_;
  return node;
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open for reading", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(fmt::format("{}: read failed", path));
  return bytes;
}

}  // namespace trainsim::chakra
