#pragma once
// The message of the exception a call throws, for tests that check what an error says.
#include <string>

#include "core/error.hpp"

namespace trainsim::test {

// What `f()` throws as an E (a user's trainsim::Error by default, or InternalError), or "(no error)" when it
// returns; any other exception escapes to the test.
template <class E = Error, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  return "(no error)";
}

}  // namespace trainsim::test
