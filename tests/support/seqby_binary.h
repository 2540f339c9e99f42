// The seqby command the build made, which the tests that run workers, chaos and the command line
// start as a child process (SEQBY_BINARY_DIR is each test's build directory, tests.cmake).
#pragma once

namespace seqby {

inline constexpr const char* kSeqby = SEQBY_BINARY_DIR "/seqby";

}  // namespace seqby
