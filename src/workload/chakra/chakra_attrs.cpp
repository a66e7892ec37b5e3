#include "workload/chakra/chakra_attrs.hpp"

#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim::chakra {

using ChakraProtoMsg::AttributeProto;

namespace {

template <class Msg>
AttributeProto* added(Msg& m, const char* name) {
  AttributeProto* a = m.add_attr();
  a->set_name(name);
  return a;
}

template <class Msg>
const AttributeProto* find_in(const Msg& m, std::string_view name) {
  for (const AttributeProto& a : m.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

[[noreturn]] void wrong_type(const AttributeProto& a, const std::string& where, const char* expected) {
  throw Error(fmt::format("{}: attribute {}: expected {}, found another value type (oneof case {})", where, a.name(),
                          expected, static_cast<int>(a.value_case())));
}

}  // namespace

void add_int64(ChakraProtoMsg::Node& n, const char* name, std::int64_t v) { added(n, name)->set_int64_val(v); }
void add_int32(ChakraProtoMsg::Node& n, const char* name, std::int32_t v) { added(n, name)->set_int32_val(v); }
void add_uint64(ChakraProtoMsg::Node& n, const char* name, std::uint64_t v) { added(n, name)->set_uint64_val(v); }
void add_bool(ChakraProtoMsg::Node& n, const char* name, bool v) { added(n, name)->set_bool_val(v); }
void add_string(ChakraProtoMsg::Node& n, const char* name, std::string_view v) {
  added(n, name)->set_string_val(std::string(v));
}
void add_int64(ChakraProtoMsg::GlobalMetadata& m, const char* name, std::int64_t v) {
  added(m, name)->set_int64_val(v);
}

void add_uint64_list(ChakraProtoMsg::Node& n, const char* name, const std::vector<std::uint64_t>& v) {
  auto* list = added(n, name)->mutable_uint64_list();
  for (const std::uint64_t x : v) list->add_values(x);
}

const AttributeProto* find_attr(const ChakraProtoMsg::Node& n, std::string_view name) { return find_in(n, name); }
const AttributeProto* find_attr(const ChakraProtoMsg::GlobalMetadata& m, std::string_view name) {
  return find_in(m, name);
}

std::optional<std::int64_t> int_attr(const AttributeProto* a, const std::string& where) {
  if (!a) return std::nullopt;
  const auto unsigned_value = [&](std::uint64_t v) -> std::int64_t {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw Error(fmt::format("{}: attribute {}: {} is out of range", where, a->name(), v));
    return static_cast<std::int64_t>(v);
  };
  switch (a->value_case()) {
    case AttributeProto::kInt32Val: return a->int32_val();
    case AttributeProto::kInt64Val: return a->int64_val();
    case AttributeProto::kUint32Val: return a->uint32_val();
    case AttributeProto::kUint64Val: return unsigned_value(a->uint64_val());
    case AttributeProto::kSint32Val: return a->sint32_val();
    case AttributeProto::kSint64Val: return a->sint64_val();
    case AttributeProto::kFixed32Val: return a->fixed32_val();
    case AttributeProto::kFixed64Val: return unsigned_value(a->fixed64_val());
    case AttributeProto::kSfixed32Val: return a->sfixed32_val();
    case AttributeProto::kSfixed64Val: return a->sfixed64_val();
    case AttributeProto::kBoolVal: return a->bool_val() ? 1 : 0;
    default: wrong_type(*a, where, "an integer");
  }
}

std::optional<std::string> string_attr(const AttributeProto* a, const std::string& where) {
  if (!a) return std::nullopt;
  if (a->value_case() == AttributeProto::kStringVal) return a->string_val();
  wrong_type(*a, where, "a string");
}

std::vector<std::uint64_t> uint64_list_attr(const AttributeProto* a, const std::string& where) {
  if (!a) return {};
  if (a->value_case() != AttributeProto::kUint64List) wrong_type(*a, where, "a list of uint64");
  return {a->uint64_list().values().begin(), a->uint64_list().values().end()};
}

std::optional<bool> bool_attr(const AttributeProto* a, const std::string& where) {
  if (!a) return std::nullopt;
  if (a->value_case() == AttributeProto::kBoolVal) return a->bool_val();
  const auto v = int_attr(a, where);
  if (*v != 0 && *v != 1) throw Error(fmt::format("{}: attribute {}: expected a bool, found {}", where, a->name(), *v));
  return *v == 1;
}

}  // namespace trainsim::chakra
