#pragma once
// The C++ classes protoc generates from et_def.proto (the Chakra schema) in the build tree. Their include
// directory is a system one, so the generated code's own warnings do not fail trainsim's -Werror build.
#include "et_def.pb.h"  // IWYU pragma: export
