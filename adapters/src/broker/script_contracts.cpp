#include "seqby/broker/script_contracts.h"

#include <charconv>
#include <iterator>
#include <span>

namespace seqby::redis {

Command eval_command(std::string_view verb, std::string_view body, const ScriptCall& call) {
  Command command;
  command.reserve(3 + call.keys.size() + call.args.size());
  command.emplace_back(verb);
  command.emplace_back(body);
  command.push_back(std::to_string(call.keys.size()));
  command.insert(command.end(), call.keys.begin(), call.keys.end());
  command.insert(command.end(), call.args.begin(), call.args.end());
  return command;
}

std::optional<ScriptCallView> script_call_of(const Command& command) {
  if (command.size() < 3) return std::nullopt;
  const std::string& verb = command[0];
  if (verb != "EVAL" && verb != "eval" && verb != "EVALSHA" && verb != "evalsha") {
    return std::nullopt;
  }
  const std::string& count = command[2];
  std::size_t key_count = 0;
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), key_count);
  if (ec != std::errc() || end != count.data() + count.size() || key_count > command.size() - 3) {
    return std::nullopt;
  }
  const std::span<const std::string> rest = std::span<const std::string>(command).subspan(3);
  return ScriptCallView{rest.first(key_count), rest.subspan(key_count)};
}

bool runs_script(const Command& command, std::string_view sha, std::string_view source) {
  if (command.size() < 3) return false;
  const std::string& verb = command[0];
  if (verb == "EVALSHA" || verb == "evalsha") return command[1] == sha;
  if (verb == "EVAL" || verb == "eval") return command[1] == source;
  return false;
}

namespace script {
namespace detail {
namespace {

template <typename T>
bool parse_integer(const std::string& text, T* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

void put(std::vector<std::string>* out, const std::string& value) { out->push_back(value); }
void put(std::vector<std::string>* out, std::int64_t value) {
  out->push_back(std::to_string(value));
}
void put(std::vector<std::string>* out, std::uint64_t value) {
  out->push_back(std::to_string(value));
}
void put(std::vector<std::string>* out, ReadFrom value) {
  out->push_back(value == ReadFrom::pending ? "0" : ">");
}
void put(std::vector<std::string>* out, const std::vector<std::string>& values) {
  out->insert(out->end(), values.begin(), values.end());
}
void put(std::vector<std::string>* out, std::string&& value) { out->push_back(std::move(value)); }
void put(std::vector<std::string>* out, std::vector<std::string>&& values) {
  out->insert(out->end(), std::make_move_iterator(values.begin()),
              std::make_move_iterator(values.end()));
}

bool take(std::span<const std::string> in, std::size_t* at, std::string* value) {
  if (*at >= in.size()) return false;
  *value = in[(*at)++];
  return true;
}
bool take(std::span<const std::string> in, std::size_t* at, std::int64_t* value) {
  return *at < in.size() && parse_integer(in[(*at)++], value);
}
bool take(std::span<const std::string> in, std::size_t* at, std::uint64_t* value) {
  return *at < in.size() && parse_integer(in[(*at)++], value);
}
bool take(std::span<const std::string> in, std::size_t* at, ReadFrom* value) {
  if (*at >= in.size()) return false;
  const std::string& text = in[(*at)++];
  if (text == "0") {
    *value = ReadFrom::pending;
  } else if (text == ">") {
    *value = ReadFrom::new_entries;
  } else {
    return false;
  }
  return true;
}
bool take(std::span<const std::string> in, std::size_t* at, std::vector<std::string>* values) {
  values->assign(in.begin() + static_cast<std::ptrdiff_t>(*at), in.end());
  *at = in.size();
  return true;
}

void put_journal(ScriptCall* call, const JournalTail& tail) {
  call->keys.push_back(tail.stream);
  call->args.reserve(call->args.size() + kJournalTailArgs);
  put(&call->args, tail.maxlen);
  put(&call->args, tail.node);
  put(&call->args, tail.category);
  put(&call->args, tail.key);
  put(&call->args, tail.group);
  put(&call->args, tail.generation);
  put(&call->args, tail.seq);
  put(&call->args, tail.detail);
}

bool take_journal(const ScriptCallView& tail, JournalTail* out) {
  std::size_t at = 0;
  if (tail.keys.size() != 1 || tail.args.size() != kJournalTailArgs) return false;
  out->stream = tail.keys[0];
  return take(tail.args, &at, &out->maxlen) && take(tail.args, &at, &out->node) &&
         take(tail.args, &at, &out->category) && take(tail.args, &at, &out->key) &&
         take(tail.args, &at, &out->group) && take(tail.args, &at, &out->generation) &&
         take(tail.args, &at, &out->seq) && take(tail.args, &at, &out->detail);
}

}  // namespace detail

namespace {

// Maps an operator script's refusal to its Errc (see AdminSkip): NOENTRY is an unknown id (bad
// input), NOTHEAD a refused action. The message drops the reply's code word.
Error admin_refusal(const Reply& reply) {
  const std::size_t space = reply.str.find(' ');
  const std::string text = space == std::string::npos ? reply.str : reply.str.substr(space + 1);
  if (reply.is_error_with("NOENTRY")) return make_error(Errc::not_found, text);
  if (reply.is_error_with("NOTHEAD")) return make_error(Errc::refused, text);
  if (reply.is_error_with("NOGROUP")) return make_error(Errc::no_group, reply.str);
  return make_error(Errc::protocol, reply.str);
}

}  // namespace

Result<Publish::Out> Publish::decode_reply(const Reply& reply) {
  return decode<std::string>(reply, name);
}

Result<AnnounceMember::Out> AnnounceMember::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

Result<LiveMembers::Out> LiveMembers::decode_reply(const Reply& reply) {
  return decode<std::vector<std::string>>(reply, name);
}

Result<Acquire::Out> Acquire::decode_reply(const Reply& reply) {
  Result<Out> generation = decode<Out>(reply, name);
  if (generation.ok() && generation.value() == std::uint64_t{0}) {
    return shape_error(name, reply, "nil or integer >= 1");
  }
  return generation;
}

Result<Renew::Out> Renew::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

Result<Release::Out> Release::decode_reply(const Reply& reply) { return decode<bool>(reply, name); }

Result<CheckLease::Out> CheckLease::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

Result<Reclaim::Out> Reclaim::decode_reply(const Reply& reply) {
  Result<std::tuple<std::uint64_t, std::string>> read =
      decode<std::tuple<std::uint64_t, std::string>>(reply, name);
  if (!read.ok()) return read.error();
  auto& [claimed, cursor] = read.value();
  return Out{claimed, std::move(cursor)};
}

Result<DropStaleConsumers::Out> DropStaleConsumers::decode_reply(const Reply& reply) {
  return decode<std::uint64_t>(reply, name);
}

Result<FencedRead::Out> FencedRead::decode_reply(const Reply& reply) {
  using Row = std::tuple<std::string, std::string, std::string, std::uint64_t>;
  Result<std::optional<Row>> read = decode<std::optional<Row>>(reply, name);
  if (!read.ok()) return read.error();
  if (!read.value().has_value()) return Out();
  auto& [id, type, data, delivery_count] = *read.value();
  return Out(StreamEntry{std::move(id), std::move(type), std::move(data), delivery_count});
}

Result<FencedAck::Out> FencedAck::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

namespace {

// fenced_next's reply, the array `e`: the whole reply, or what follows the commit's three values
// in fenced_commit_next's (read in place, not copied). `reply` is what a shape error shows.
Result<NextReply> decode_next(std::string_view name, std::span<const Reply> e, const Reply& reply) {
  constexpr std::string_view shape =
      "[integer, string], [integer, \"\", string] or [integer, \"\", then string, string, string, "
      "integer per entry]";
  if (e.size() < 2 || (e.size() > 3 && e.size() % 4 != 2)) return shape_error(name, reply, shape);
  NextReply out;
  std::int64_t acked = 0;
  bool read = ReplyShape<std::int64_t>::read(e[0], &acked) && acked >= -1 && acked <= 1 &&
              ReplyShape<std::string>::read(e[1], &out.last_id);
  out.acked = acked == 1;
  out.ack_asked = acked >= 0;
  if (read && e.size() == 3) {
    std::string held_id;
    read = out.last_id.empty() && ReplyShape<std::string>::read(e[2], &held_id) && !held_id.empty();
    out.held_checked = true;
  }
  for (std::size_t at = 2; read && e.size() > 3 && at < e.size(); at += 4) {
    StreamEntry entry;
    read = out.last_id.empty() && ReplyShape<std::string>::read(e[at], &entry.id) &&
           ReplyShape<std::string>::read(e[at + 1], &entry.type) &&
           ReplyShape<std::string>::read(e[at + 2], &entry.data) &&
           ReplyShape<std::uint64_t>::read(e[at + 3], &entry.delivery_count);
    if (!out.entry.has_value()) {
      out.entry = std::move(entry);
    } else {
      out.held.push_back(std::move(entry));
    }
  }
  if (!read) return shape_error(name, reply, shape);
  return out;
}

// A step answered by its ack's count alone (lib/next_step.lua enter_held, lib/commit_next.lua
// steady_step), `name`'s reply: the reply it stands for.
Result<NextReply> decode_steady(std::string_view name, const Reply& count, const StepAsked& asked) {
  if (!asked.ack_and_held || count.integer < 0 || count.integer > 1) {
    return shape_error(name, count,
                       "a step's reply, or 0 or 1 for a step that asked an ack and a held entry");
  }
  NextReply out;
  out.ack_asked = true;
  out.acked = count.integer == 1;
  out.held_checked = true;
  if (asked.with_commit) out.commit = CommitReply{CommitOutcome::accepted, asked.seq, asked.token};
  return out;
}

}  // namespace

StepAsked FencedNext::asked(const Args& args) {
  return StepAsked{false, !args.ack_id.empty() && !args.held_id.empty(), 0, ""};
}

Result<FencedNext::Out> FencedNext::decode_reply(const Reply& reply, const StepAsked& asked) {
  if (reply.kind == Reply::Kind::integer) return decode_steady(name, reply, asked);
  return decode_reply(reply);
}

Result<FencedNext::Out> FencedNext::decode_reply(const Reply& reply) {
  if (reply.is_error()) return error_from_reply(reply);
  if (reply.kind != Reply::Kind::array) {
    return decode_next(name, std::span<const Reply>(), reply);  // the shape error
  }
  return decode_next(name, reply.elements, reply);
}

namespace {

// A script's answer of one '1' or '0' per item, in order, as one string (renew_many, reindex).
Result<std::vector<bool>> decode_flags(std::string_view name, const Reply& reply) {
  Result<std::string> flags = decode<std::string>(reply, name);
  if (!flags.ok()) return flags.error();
  std::vector<bool> out;
  out.reserve(flags.value().size());
  for (const char flag : flags.value()) {
    if (flag != '0' && flag != '1') return shape_error(name, reply, "string of '0' and '1'");
    out.push_back(flag == '1');
  }
  return out;
}

}  // namespace

Result<RenewMany::Out> RenewMany::decode_reply(const Reply& reply) {
  return decode_flags(name, reply);
}

Result<Reindex::Out> Reindex::decode_reply(const Reply& reply) { return decode_flags(name, reply); }

Result<AcquireMany::Out> AcquireMany::decode_reply(const Reply& reply) {
  Result<std::vector<AnyReply>> tried = decode<std::vector<AnyReply>>(reply, name);
  if (!tried.ok()) return tried.error();
  Out out;
  out.reserve(tried.value().size());
  for (const AnyReply& one : tried.value()) {
    const Reply& value = one.reply;
    if (value.kind == Reply::Kind::integer && value.integer >= 0) {
      out.push_back(Tried{static_cast<std::uint64_t>(value.integer), ""});
    } else if (value.kind == Reply::Kind::bulk && !value.str.empty()) {
      out.push_back(Tried{0, value.str});
    } else {
      return shape_error(name, reply, "array of integer >= 0 or reason");
    }
  }
  return out;
}

Result<RingWake::Out> RingWake::decode_reply(const Reply& reply) {
  return decode<std::string>(reply, name);
}

Result<FencedCommit::Out> FencedCommit::decode_reply(const Reply& reply) {
  if (reply.is_error_with("FENCED")) return CommitReply{CommitOutcome::fenced, 0, ""};
  Result<std::tuple<std::string, std::int64_t, std::string>> read =
      decode<std::tuple<std::string, std::int64_t, std::string>>(reply, name);
  if (!read.ok()) return read.error();
  auto& [outcome, last_seq, committed_by] = read.value();
  CommitReply out;
  if (outcome == "accepted") {
    out.outcome = CommitOutcome::accepted;
  } else if (outcome == "duplicate") {
    out.outcome = CommitOutcome::duplicate;
  } else if (outcome == "out_of_order") {
    out.outcome = CommitOutcome::out_of_order;
  } else {
    return shape_error(name, reply, "[accepted|duplicate|out_of_order, integer, string]");
  }
  out.last_seq = last_seq;
  out.committed_by = std::move(committed_by);
  return out;
}

StepAsked FencedCommitNext::asked(const Args& args) {
  return StepAsked{true, !args.ack_id.empty() && !args.held_id.empty(), args.seq, args.token};
}

Result<FencedCommitNext::Out> FencedCommitNext::decode_reply(const Reply& reply,
                                                             const StepAsked& asked) {
  if (reply.kind == Reply::Kind::integer) return decode_steady(name, reply, asked);
  return decode_reply(reply);
}

Result<FencedCommitNext::Out> FencedCommitNext::decode_reply(const Reply& reply) {
  if (reply.is_error()) return error_from_reply(reply);
  if (reply.kind != Reply::Kind::array || reply.elements.size() < 3) {
    return shape_error(name, reply, "[commit outcome, integer, string] then fenced_next's reply");
  }
  Reply commit_part;
  commit_part.kind = Reply::Kind::array;
  commit_part.elements.assign(reply.elements.begin(), reply.elements.begin() + 3);
  Result<CommitReply> committed = FencedCommit::decode_reply(commit_part);
  if (!committed.ok()) return committed.error();
  const bool out_of_order = committed.value().outcome == CommitOutcome::out_of_order;
  const bool step_failed = reply.elements.size() == 4 && reply.elements[3].is_error();
  if (out_of_order != (reply.elements.size() == 3) || (out_of_order && step_failed)) {
    return shape_error(name, reply,
                       "[out_of_order, integer, string] or [accepted|duplicate, integer, string, "
                       "then fenced_next's reply or its error]");
  }
  NextReply out;
  if (step_failed) {
    out.step_failed = error_from_reply(reply.elements[3]);
  } else if (!out_of_order) {
    Result<NextReply> next =
        decode_next(name, std::span<const Reply>(reply.elements).subspan(3), reply);
    if (!next.ok()) return next.error();
    out = std::move(next).value();
  }
  out.commit = std::move(committed).value();
  return out;
}

StepAsked FencedSteps::add(Args* args, FencedCommitNext::Args step, bool with_commit) {
  const bool journaled = step.journal.on();
  StepAsked asked = FencedCommitNext::asked(step);
  if (!with_commit) asked = StepAsked{false, asked.ack_and_held, 0, ""};
  ScriptCall call = encode<FencedCommitNext>(std::move(step));
  SEQBY_CHECK(call.keys.size() == keys_per_step(journaled) &&
              call.args.size() == args_per_step(journaled));
  // Every step of a script journals, or none does.
  SEQBY_CHECK(args->keys.empty() || (args->steps.size() != 2 * args->keys.size()) == journaled);
  if (!with_commit) {
    call.args[6].clear();  // seq: no commit
    call.args[7].clear();
  }
  std::move(call.keys.begin(), call.keys.end(), std::back_inserter(args->keys));
  std::move(call.args.begin(), call.args.end(), std::back_inserter(args->steps));
  return asked;
}

std::optional<std::vector<FencedSteps::Step>> FencedSteps::steps_of(const ScriptCallView& call) {
  const bool journaled = call.args.size() != 2 * call.keys.size();
  const std::size_t keys = keys_per_step(journaled);
  const std::size_t argv = args_per_step(journaled);
  const std::size_t n = call.keys.size() / keys;
  if (n == 0 || call.keys.size() != n * keys || call.args.size() != n * argv) return std::nullopt;
  std::vector<Step> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::span<const std::string> k = call.keys.subspan(i * keys, keys);
    const std::span<const std::string> a = call.args.subspan(i * argv, argv);
    Step& step = out[i];
    step.with_commit = !a[6].empty();
    if (step.with_commit) {
      std::optional<FencedCommitNext::Args> one =
          decode_args<FencedCommitNext>(ScriptCallView{k, a});
      if (!one.has_value()) return std::nullopt;
      step.commit_next = std::move(*one);
      continue;
    }
    // fenced_next's own KEYS and ARGV, then the journal tail.
    std::vector<std::string> next_keys(k.begin(), k.begin() + 2);
    std::vector<std::string> next_args(a.begin(), a.begin() + 6);
    if (journaled) {
      next_keys.push_back(k[4]);
      next_args.insert(next_args.end(), a.begin() + kArgsPerStep, a.end());
    }
    std::optional<FencedNext::Args> one =
        decode_args<FencedNext>(ScriptCallView{next_keys, next_args});
    if (!one.has_value()) return std::nullopt;
    step.next = std::move(*one);
  }
  return out;
}

FencedSteps::Asked FencedSteps::asked(const Step& step) {
  return step.with_commit ? FencedCommitNext::asked(step.commit_next)
                          : FencedNext::asked(step.next);
}

FencedSteps::Out FencedSteps::decode_reply(const Result<Reply>& reply,
                                           const std::vector<Asked>& asked) {
  Out out;
  out.reserve(asked.size());
  std::optional<Error> whole;
  if (!reply.ok()) {
    whole = reply.error();
  } else if (reply.value().is_error()) {
    whole = error_from_reply(reply.value());
  } else if (reply.value().kind != Reply::Kind::array ||
             reply.value().elements.size() != asked.size()) {
    whole = shape_error(name, reply.value(),
                        "one reply per step (" + std::to_string(asked.size()) + ")");
  }
  for (std::size_t i = 0; i < asked.size(); ++i) {
    if (whole.has_value()) {
      out.emplace_back(*whole);
      continue;
    }
    const Reply& one = reply.value().elements[i];
    out.push_back(asked[i].with_commit ? FencedCommitNext::decode_reply(one, asked[i])
                                       : FencedNext::decode_reply(one, asked[i]));
  }
  return out;
}

Result<RecordHalt::Out> RecordHalt::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

Result<Reap::Out> Reap::decode_reply(const Reply& reply) { return decode<bool>(reply, name); }

Result<AdminSkip::Out> AdminSkip::decode_reply(const Reply& reply) {
  if (reply.is_error()) return admin_refusal(reply);
  return decode<bool>(reply, name);
}

Result<AdminDlq::Out> AdminDlq::decode_reply(const Reply& reply) {
  if (reply.is_error()) return admin_refusal(reply);
  Result<std::tuple<std::string, bool>> read = decode<std::tuple<std::string, bool>>(reply, name);
  if (!read.ok()) return read.error();
  auto& [dlq_id, halted] = read.value();
  return Out{std::move(dlq_id), halted};
}

Result<AdminDlqReplay::Out> AdminDlqReplay::decode_reply(const Reply& reply) {
  if (reply.is_error()) return admin_refusal(reply);
  return decode<std::string>(reply, name);
}

Result<HandlerEnter::Out> HandlerEnter::decode_reply(const Reply& reply) {
  return decode<std::optional<std::string>>(reply, name);
}

Result<HandlerExit::Out> HandlerExit::decode_reply(const Reply& reply) {
  return decode<bool>(reply, name);
}

Result<PublishIntent::Out> PublishIntent::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

Result<PublishAppend::Out> PublishAppend::decode_reply(const Reply& reply) {
  return decode<std::string>(reply, name);
}

Result<PublishDone::Out> PublishDone::decode_reply(const Reply& reply) {
  return decode<std::int64_t>(reply, name);
}

Result<ReapBegin::Out> ReapBegin::decode_reply(const Reply& reply) {
  return decode<bool>(reply, name);
}

Result<ReapStream::Out> ReapStream::decode_reply(const Reply& reply) {
  return decode<bool>(reply, name);
}

Result<ReapEnd::Out> ReapEnd::decode_reply(const Reply& reply) { return decode<bool>(reply, name); }

std::span<const std::string_view> contract_names() {
  static constexpr std::string_view kNames[] = {AdminDlq::name,
                                                AdminDlqReplay::name,
                                                AdminSkip::name,
                                                Acquire::name,
                                                AcquireMany::name,
                                                AnnounceMember::name,
                                                CheckLease::name,
                                                DropStaleConsumers::name,
                                                FencedAck::name,
                                                FencedCommit::name,
                                                FencedCommitNext::name,
                                                FencedSteps::name,
                                                FencedNext::name,
                                                FencedRead::name,
                                                HandlerEnter::name,
                                                HandlerExit::name,
                                                LiveMembers::name,
                                                Publish::name,
                                                Reap::name,
                                                Reclaim::name,
                                                Reindex::name,
                                                RecordHalt::name,
                                                Release::name,
                                                Renew::name,
                                                RenewMany::name,
                                                RingWake::name,
                                                PublishIntent::name,
                                                PublishAppend::name,
                                                PublishDone::name,
                                                ReapBegin::name,
                                                ReapStream::name,
                                                ReapEnd::name,
                                                FencedAck::unfenced_name,
                                                FencedCommit::unfenced_name,
                                                FencedCommitNext::unfenced_name,
                                                FencedNext::unfenced_name,
                                                FencedRead::unfenced_name};
  return kNames;
}

}  // namespace script
}  // namespace seqby::redis
