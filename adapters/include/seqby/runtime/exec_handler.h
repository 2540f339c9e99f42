// ExecHandler: a Handler that runs each event in a long-lived child process of any language,
// over its stdin and stdout in JSON lines (the protocol: docs/handler-protocol.md). It starts
// `concurrency` children (`/bin/sh -c COMMAND`, each in a process group of its own), gives each
// one event at a time, and so runs up to `concurrency` events of different partitions at once;
// the engine already keeps one event at a time per partition (and per process-manager unit).
//
// A child's failure is its event's failure, never the worker's: a child that exits, writes a
// line that is not valid JSON or not a reply to the event it was given fails its event with a
// reason saying what it wrote, is logged, and is started again for the next event (the engine
// retries the event, then halts the partition, as for any failure). A child that does not start
// (no hello within hello_timeout_ms, a bad hello, another protocol version) fails no event: it
// is logged and started again after a backoff (0.5 s doubling to 30 s) while the event waits, so
// a mistyped command halts no partition. A child that hangs holds only its own event's partition:
// the ADR gives a handler no timeout. Its stderr is copied to the worker's stderr line by line,
// prefixed with the child's number and pid. The children are SIGKILLed (their process groups)
// when the handler is destroyed.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "seqby/core/handler.h"
#include "seqby/core/runtime.h"

namespace seqby::redis {

// The protocol version this worker speaks (the hello's "protocol").
inline constexpr std::int64_t kExecProtocolVersion = 1;

struct ExecHandlerOptions {
  std::string command;                      // run as /bin/sh -c COMMAND
  std::size_t concurrency = 1;              // children, and events at once
  std::uint64_t hello_timeout_ms = 10'000;  // from start to the child's hello line
  // Where the handler's own lines go (a child's start, exit, bad output); stderr when empty.
  std::function<void(const std::string&)> log;
};

class ExecHandler final : public Handler {
 public:
  struct Stats {
    std::uint64_t handled = 0;  // events the children answered ok
    std::uint64_t failed = 0;   // events that failed (a child's failed reply or its fault)
    std::uint64_t starts = 0;   // children started, restarts included
    std::uint64_t faults = 0;   // children that exited, wrote bad output or no hello
  };

  // REQUIRES: `runtime` outlives the handler and runs handle()'s blocking exchanges on threads
  // of their own (RealRuntime: at least `concurrency` pool threads); options.concurrency >= 1;
  // options.command not empty. The children start with their first events.
  ExecHandler(Runtime& runtime, ExecHandlerOptions options);
  ~ExecHandler() override;
  ExecHandler(const ExecHandler&) = delete;
  ExecHandler& operator=(const ExecHandler&) = delete;

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override;

  // Thread-safe.
  Stats stats() const;

  // The request line for `event` under the lease (owner, generation) as event number `n`
  // (docs/handler-protocol.md "event"), without its newline.
  static std::string request_line(std::uint64_t n, const Event& event, const std::string& owner,
                                  std::uint64_t generation);

  // What a child's hello line says (docs/handler-protocol.md "hello"): "" when it is a JSON
  // object whose "protocol" is kExecProtocolVersion, else the fault it is, as logged.
  static std::string hello_fault(std::string_view line);

  // What a child's reply line to event number `n` says: a fault (not a JSON object, out of
  // turn, no boolean "ok"), as logged, or the event's result (ok, or failed with its reason).
  struct ReplyRead {
    std::string fault;     // "" when the line is a reply to event `n`
    HandlerResult result;  // when `fault` is ""
  };
  static ReplyRead read_reply(std::string_view line, std::uint64_t n, std::size_t child_number);

 private:
  struct Child;
  struct Outcome {
    HandlerResult result;
    bool started = true;  // false: the child did not start (no valid hello); result says why
  };
  // The first retry of a child that did not start, doubling up to the max.
  static constexpr std::uint64_t kStartBackoffMs = 500;
  static constexpr std::uint64_t kStartBackoffMaxMs = 30'000;

  // Gives the event to child `child` (starting it first when it does not run) and waits for its
  // reply: runs on a blocking thread, one per child at a time; counts it in the stats.
  Outcome exchange(Child& child, const std::string& line, std::uint64_t n,
                   const std::string& event_id);
  HandlerResult exchange_with(Child& child, const std::string& line, std::uint64_t n,
                              const std::string& event_id);
  // Kills the child's process group, reaps it, closes its pipes; what its wait status says.
  std::string stop_child(Child& child);
  void log(const std::string& line) const;

  Runtime& runtime_;
  ExecHandlerOptions options_;
  std::vector<std::unique_ptr<Child>> children_;
  std::vector<std::size_t> free_;  // children without an event (loop thread only)
  std::deque<Alarm*> waiting_;     // handle() calls waiting for a free child, first come first
  std::uint64_t next_n_ = 0;
  // Guards the children's pids, closing_, exchanges_ and stats_ (blocking threads and loop).
  mutable std::mutex mutex_;
  std::condition_variable exchanges_done_;
  bool closing_ = false;         // the destructor runs: no exchange starts
  std::uint32_t exchanges_ = 0;  // exchanges running on blocking threads
  Stats stats_;
};

}  // namespace seqby::redis
