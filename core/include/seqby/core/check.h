// Assertions that stay on in every build (TigerBeetle style): a failed SEQBY_CHECK is a
// programming error, reported with its expression and location, then the process aborts.
// Operating errors are never checked this way; they are Results (result.h).
#pragma once

#include <cstdio>
#include <cstdlib>

#define SEQBY_CHECK(cond)                                                                    \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "seqby: check failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
