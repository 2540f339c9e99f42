// What `seqby worker` tells an operator about its Redis connections, as key=value log lines:
// ConnectionReport turns a HiredisLink's connection events into lines (what it cannot reach and
// why, that it retries and after which backoff, a refusal that retrying cannot fix), a line per
// backoff step while the backoff grows and then at most one a minute; ReportingLink forwards
// every command to a link and reports each error reply that is no outcome of seqby's protocol
// (an ACL's NOPERM inside a script, WRONGTYPE, OOM, READONLY, ...), naming the script or the
// command, at most one line a minute per (script or command, error code). Neither changes what
// a command returns, nor retries anything.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "seqby/broker/redis_link.h"
#include "seqby/core/clock.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis {

using LogLine = std::function<void(const std::string& line)>;

// `text` inside a double-quoted log value: backslash, quote and control characters escaped.
std::string quoted_log_value(std::string_view text);

class ConnectionReport {
 public:
  // At the backoff's maximum, a link still failing the same way logs once per this period.
  static constexpr std::uint64_t kRepeatMs = 60'000;

  // `link_name` says which connection it is ("commands", "wake"); `url` is redacted_url().
  // REQUIRES: `clock` outlives the report.
  ConnectionReport(Clock& clock, std::string link_name, std::string url, LogLine log);

  // Logs the line `event` deserves, if any (see the file comment).
  void on_event(const HiredisLink::ConnectionEvent& event);
  // The line of the first final refusal (refusal_is_final), "" while there was none.
  const std::string& final_refusal() const { return final_refusal_; }
  // Connect attempts that failed, and connections lost, so far (for metrics).
  std::uint64_t failed_attempts() const { return failed_attempts_; }
  std::uint64_t connections_lost() const { return connections_lost_; }

 private:
  Clock& clock_;
  const std::string link_name_;
  const std::string url_;
  LogLine log_;
  std::string final_refusal_;
  std::string last_error_;           // of the last connect_failed line logged ("" after a connect)
  std::uint64_t last_retry_ms_ = 0;  // of that line
  std::uint64_t last_line_ms_ = 0;
  std::uint64_t failed_attempts_ = 0;
  std::uint64_t connections_lost_ = 0;
};

// REQUIRES for both: on one thread (the worker's loop).
class ReportingLink final : public RedisLink {
 public:
  static constexpr std::uint64_t kRepeatMs = 60'000;
  // (script or command, error code) pairs remembered for throttling; beyond, they share one.
  static constexpr std::size_t kKindsMax = 256;

  // REQUIRES: `inner` and `clock` outlive the link.
  ReportingLink(RedisLink& inner, Clock& clock, std::string link_name, LogLine log);

  Task<Result<Reply>> execute(Command command) override;
  // The inner link's execute_many (pipelined when it pipelines), each error reply reported.
  Task<std::vector<Result<Reply>>> execute_many(std::vector<Command> commands) override;
  // The same of `prepared` (its wire form kept when the inner link keeps it).
  Task<std::vector<Result<Reply>>> execute_prepared(
      std::shared_ptr<const PreparedCommands> prepared) override;
  Task<Result<ReplicatedReply>> execute_replicated(Command command, std::uint32_t replicas,
                                                   std::uint64_t timeout_ms) override;

  // Error replies reported so far, those a line stood for included (for metrics).
  std::uint64_t refusals() const { return refusals_; }

  // True when an error reply with this code (its first word) is an outcome the engine expects
  // and handles (FENCED, NOGROUP, BUSYGROUP, NOSCRIPT, AGAIN, NOENTRY, NOTHEAD), not a refusal.
  static bool expected_error(std::string_view reply_text);

 private:
  // "script=NAME" for a script call (NAME learned from SCRIPT LOAD or the embedded sources),
  // else "command=VERB".
  std::string what_of(const Command& command) const;
  std::vector<std::string> whats_of(const std::vector<Command>& commands) const;
  void report(const std::string& what, const std::string& error);
  // Reports each error reply of `replies` as the command `whats` names at its index.
  void report_each(const std::vector<std::string>& whats,
                   const std::vector<Result<Reply>>& replies);

  struct Kind {
    bool logged = false;
    std::uint64_t last_line_ms = 0;
    std::uint64_t unlogged = 0;  // reports since the last line
  };

  RedisLink& inner_;
  Clock& clock_;
  const std::string link_name_;
  LogLine log_;
  std::map<std::string, std::string> script_by_sha_;
  std::map<std::string, Kind> kinds_;
  std::uint64_t refusals_ = 0;
};

}  // namespace seqby::redis
