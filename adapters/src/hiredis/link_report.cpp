// ConnectionReport and ReportingLink: the worker's log lines about its Redis connections.
#include "seqby/hiredis/link_report.h"

#include <array>

#include "seqby/broker/scripts.h"

namespace seqby::redis {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The embedded script whose text is `source`, or nullptr.
const char* embedded_name(std::string_view source) {
  for (const EmbeddedScript& script : embedded_scripts()) {
    if (source == script.source) return script.name;
  }
  return nullptr;
}

// Commands named with their subcommand, as ACL rules name them (XGROUP|CREATE).
bool has_subcommand(std::string_view verb) {
  static constexpr std::array<std::string_view, 6> kVerbs = {"XGROUP", "XINFO",  "SCRIPT",
                                                             "CLIENT", "CONFIG", "ACL"};
  for (const std::string_view known : kVerbs) {
    if (verb.size() != known.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < verb.size(); ++i) {
      const char c =
          verb[i] >= 'a' && verb[i] <= 'z' ? static_cast<char>(verb[i] - 'a' + 'A') : verb[i];
      same = same && c == known[i];
    }
    if (same) return true;
  }
  return false;
}

}  // namespace

std::string quoted_log_value(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// --- ConnectionReport --------------------------------------------------------------------------

ConnectionReport::ConnectionReport(Clock& clock, std::string link_name, std::string url,
                                   LogLine log)
    : clock_(clock), link_name_(std::move(link_name)), url_(std::move(url)), log_(std::move(log)) {}

void ConnectionReport::on_event(const HiredisLink::ConnectionEvent& event) {
  using Kind = HiredisLink::ConnectionEvent::Kind;
  const std::string head = " link=" + link_name_ + " redis=" + url_;
  const std::uint64_t now_ms = clock_.now_ms();
  switch (event.kind) {
    case Kind::connected:
      last_error_.clear();
      last_retry_ms_ = 0;
      log_("event=redis_connected" + head +
           " after_failed_attempts=" + std::to_string(event.failures_in_row));
      return;
    case Kind::lost:
      ++connections_lost_;
      log_("event=redis_connection_lost" + head +
           " reconnecting=true error=" + quoted_log_value(event.error));
      return;
    case Kind::connect_failed:
      break;
  }
  ++failed_attempts_;
  if (event.final) {
    const std::string line = "event=redis_refused" + head + " command=" + event.refused_command +
                             " retrying=false error=" + quoted_log_value(event.error);
    if (line == final_refusal_) return;  // said: the worker is stopping, its last tries add nothing
    if (final_refusal_.empty()) final_refusal_ = line;
    log_(line);
    return;
  }
  // A line per backoff step (each new backoff, the maximum's first included), on a new error,
  // and at the maximum once per kRepeatMs: what an operator needs, never a line per command.
  const bool worth_a_line = event.failures_in_row == 1 || event.retry_in_ms != last_retry_ms_ ||
                            event.error != last_error_ || now_ms - last_line_ms_ >= kRepeatMs;
  if (!worth_a_line) return;
  last_error_ = event.error;
  last_retry_ms_ = event.retry_in_ms;
  last_line_ms_ = now_ms;
  log_("event=redis_unreachable" + head + " attempt=" + std::to_string(event.failures_in_row) +
       " retry_in_ms=" + std::to_string(event.retry_in_ms) +
       " error=" + quoted_log_value(event.error));
}

// --- ReportingLink ---------------------------------------------------------------------------

ReportingLink::ReportingLink(RedisLink& inner, Clock& clock, std::string link_name, LogLine log)
    : inner_(inner), clock_(clock), link_name_(std::move(link_name)), log_(std::move(log)) {}

bool ReportingLink::expected_error(std::string_view reply_text) {
  static constexpr std::array<std::string_view, 7> kOutcomes = {
      "FENCED ", "NOGROUP ", "BUSYGROUP ", "NOSCRIPT ", "AGAIN ", "NOENTRY ", "NOTHEAD "};
  for (const std::string_view code : kOutcomes) {
    if (starts_with(reply_text, code) || reply_text == code.substr(0, code.size() - 1)) {
      return true;
    }
  }
  return false;
}

std::string ReportingLink::what_of(const Command& command) const {
  if (command.empty()) return "command=?";
  const std::string& verb = command.front();
  const bool eval = verb == "EVAL" || verb == "eval";
  const bool evalsha = verb == "EVALSHA" || verb == "evalsha";
  if ((eval || evalsha) && command.size() > 1) {
    if (evalsha) {
      auto it = script_by_sha_.find(command[1]);
      return "script=" + (it != script_by_sha_.end() ? it->second : "sha:" + command[1]);
    }
    const char* name = embedded_name(command[1]);
    return std::string("script=") + (name != nullptr ? name : "unnamed");
  }
  if (has_subcommand(verb) && command.size() > 1) return "command=" + verb + "|" + command[1];
  return "command=" + verb;
}

Task<Result<Reply>> ReportingLink::execute(Command command) {
  const std::string what = what_of(command);
  // SCRIPT LOAD of an embedded script: its reply's sha names the script's later EVALSHAs.
  const char* loading = nullptr;
  if (command.size() == 3 && what == "command=SCRIPT|LOAD") loading = embedded_name(command[2]);
  Result<Reply> reply = co_await inner_.execute(std::move(command));
  if (!reply.ok()) co_return reply;
  const Reply& answer = reply.value();
  if (loading != nullptr && answer.kind == Reply::Kind::bulk && script_by_sha_.size() < kKindsMax) {
    script_by_sha_[answer.str] = loading;
  }
  if (answer.is_error() && !expected_error(answer.str)) report(what, answer.str);
  co_return reply;
}

// Each error reply reported as execute reports it (a script named by its sha, as learned).
Task<std::vector<Result<Reply>>> ReportingLink::execute_many(std::vector<Command> commands) {
  std::vector<std::string> whats = whats_of(commands);
  std::vector<Result<Reply>> replies = co_await inner_.execute_many(std::move(commands));
  report_each(whats, replies);
  co_return replies;
}

Task<std::vector<Result<Reply>>> ReportingLink::execute_prepared(
    std::shared_ptr<const PreparedCommands> prepared) {
  std::vector<std::string> whats = whats_of(prepared->commands());
  std::vector<Result<Reply>> replies = co_await inner_.execute_prepared(std::move(prepared));
  report_each(whats, replies);
  co_return replies;
}

std::vector<std::string> ReportingLink::whats_of(const std::vector<Command>& commands) const {
  std::vector<std::string> whats;
  whats.reserve(commands.size());
  for (const Command& command : commands) whats.push_back(what_of(command));
  return whats;
}

void ReportingLink::report_each(const std::vector<std::string>& whats,
                                const std::vector<Result<Reply>>& replies) {
  for (std::size_t i = 0; i < replies.size() && i < whats.size(); ++i) {
    if (!replies[i].ok()) continue;
    const Reply& answer = replies[i].value();
    if (answer.is_error() && !expected_error(answer.str)) report(whats[i], answer.str);
  }
}

// A script is named by the sha an earlier SCRIPT LOAD through execute taught what_of.
Task<Result<ReplicatedReply>> ReportingLink::execute_replicated(Command command,
                                                                std::uint32_t replicas,
                                                                std::uint64_t timeout_ms) {
  const std::string what = what_of(command);
  Result<ReplicatedReply> reply =
      co_await inner_.execute_replicated(std::move(command), replicas, timeout_ms);
  if (!reply.ok()) co_return reply;
  const Reply& answer = reply.value().reply;
  if (answer.is_error() && !expected_error(answer.str)) report(what, answer.str);
  co_return reply;
}

void ReportingLink::report(const std::string& what, const std::string& error) {
  ++refusals_;
  const std::string code = error.substr(0, error.find(' '));
  std::string kind = what + " " + code;
  if (kinds_.size() >= kKindsMax && kinds_.find(kind) == kinds_.end()) kind = "*";
  Kind& seen = kinds_[kind];
  const std::uint64_t now_ms = clock_.now_ms();
  if (seen.logged && now_ms - seen.last_line_ms < kRepeatMs) {
    ++seen.unlogged;
    return;
  }
  std::string line = "event=redis_command_refused link=" + link_name_ + " " + what;
  if (seen.unlogged > 0) line += " repeats_since_last_line=" + std::to_string(seen.unlogged);
  line += " error=" + quoted_log_value(error);
  seen.logged = true;
  seen.last_line_ms = now_ms;
  seen.unlogged = 0;
  log_(line);
}

}  // namespace seqby::redis
