// Uses the installed seqby::core (Result, Task) and seqby::redis (Reply) the way an engine would,
// and prints one line the install test compares: proof that headers, libraries and the package
// config fit together outside the source tree.
#include <cstdio>
#include <string>

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"
#include "seqby/core/task.h"

namespace {

seqby::Task<seqby::Result<int>> parse_partition_count(seqby::redis::Reply reply) {
  if (reply.kind != seqby::redis::Reply::Kind::integer) {
    co_return seqby::make_error(seqby::Errc::protocol, "not an integer: " + to_string(reply));
  }
  co_return static_cast<int>(reply.integer);
}

// Runs a Task that never suspends to completion (no Runtime is needed for that).
seqby::Result<int> run_to_end(seqby::Task<seqby::Result<int>> task) {
  auto handle = task.release();
  handle.resume();
  SEQBY_CHECK(handle.done());
  seqby::Result<int> result = std::move(*handle.promise().value);
  handle.destroy();
  return result;
}

}  // namespace

int main() {
  auto good = run_to_end(parse_partition_count(seqby::redis::Reply::of_int(3)));
  auto bad = run_to_end(parse_partition_count(seqby::redis::Reply::bulk("x")));
  if (!good.ok() || bad.ok()) return 1;
  std::printf("consumer: partitions=%d error=%s (%s)\n", good.value(), seqby::errc_name(bad.code()),
              bad.error().message.c_str());
  return 0;
}
