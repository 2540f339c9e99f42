// The World's decision-order machinery (see world_internal.h): stamping links and server, the
// sink that sorts records to where the server decided them, and the server's view of commits.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "seqby/broker/script_contracts.h"
#include "seqby/broker/scripts.h"
#include "seqby/sim/sha1.h"
#include "seqby/testing/variant.h"
#include "world_internal.h"

namespace seqby::sim {
namespace {

// Reads the context of the awaiting Task without suspending it (see task.h: not an aggregate).
struct ContextProbe {
  ContextProbe() {}
  void* context = nullptr;
  bool await_ready() const noexcept { return false; }
  template <typename P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    context = detail::context_of(h);
    return false;
  }
  void* await_resume() const noexcept { return context; }
};

// Records made right after a broker reply: sorted to where the server ran that command.
bool is_decision(HistoryOp op) {
  switch (op) {
    case HistoryOp::publish:
    case HistoryOp::acquire:
    case HistoryOp::renew:
    case HistoryOp::release:
    case HistoryOp::reap:
    case HistoryOp::read:
    case HistoryOp::read_fenced:
    case HistoryOp::ack:
    case HistoryOp::ack_fenced:
    case HistoryOp::commit:
    case HistoryOp::commit_fenced:
    case HistoryOp::commit_rejected:
    case HistoryOp::reclaim:
      return true;
    default:
      return false;
  }
}

// A script's source. REQUIRES: the script exists.
std::string_view source_of(std::string_view name) {
  const char* source = redis::script_source(name);
  SEQBY_CHECK(source != nullptr);
  return source;
}

// An accepted fenced_commit (or unfenced_commit: the same contract), as the server decided it.
bool parse_commit(const redis::Command& c, const redis::Reply& reply, KeyLayout layout,
                  ServerDecision* out) {
  using S = redis::script::FencedCommit;
  const Result<S::Out> committed = S::decode_reply(reply);
  if (!committed.ok() || committed.value().outcome != CommitOutcome::accepted) return false;
  std::optional<S::Args> args = redis::script::decode_args<S>(c);
  if (!args.has_value()) return false;
  std::optional<PartitionGroup> sink = parse_sink_key_name(args->sink, layout);
  if (!sink.has_value()) return false;
  out->op = HistoryOp::commit;
  out->category = std::move(sink->partition.category);
  out->key = std::move(sink->partition.key);
  out->group = std::move(sink->group);
  out->token = std::move(args->token);
  out->seq = args->seq;
  out->event_id = std::move(args->effect);  // the test handler's effect is the event id
  return true;
}

// A fenced_ack (or unfenced_ack) the server answered with a count.
bool parse_ack(const redis::Command& c, const redis::Reply& reply, KeyLayout layout,
               ServerDecision* out) {
  using S = redis::script::FencedAck;
  if (!S::decode_reply(reply).ok()) return false;
  std::optional<S::Args> args = redis::script::decode_args<S>(c);
  if (!args.has_value()) return false;
  std::optional<PartitionRef> partition = split_partition_stream(args->stream, layout);
  if (!partition.has_value()) return false;
  out->op = HistoryOp::ack;
  out->category = std::move(partition->category);
  out->key = std::move(partition->key);
  out->token = std::move(args->token);
  out->group = std::move(args->group);
  out->event_id = std::move(args->entry_id);
  return true;
}

// The ack of a fenced_next step the server answered: it acknowledged its ack_id.
bool next_ack_of(redis::script::FencedNext::Args& args, const NextReply& next, KeyLayout layout,
                 ServerDecision* out) {
  if (!next.ack_asked || args.ack_id.empty()) return false;
  std::optional<PartitionRef> partition = split_partition_stream(args.stream, layout);
  if (!partition.has_value()) return false;
  out->op = HistoryOp::ack;
  out->category = std::move(partition->category);
  out->key = std::move(partition->key);
  out->token = std::move(args.token);
  out->group = std::move(args.group);
  out->event_id = std::move(args.ack_id);
  return true;
}

// The ack of a fenced_next (or unfenced_next) the server answered: it acknowledged its ack_id.
bool parse_next_ack(const redis::Command& c, const redis::Reply& reply, KeyLayout layout,
                    ServerDecision* out) {
  using S = redis::script::FencedNext;
  std::optional<S::Args> args = redis::script::decode_args<S>(c);
  if (!args.has_value()) return false;
  const Result<S::Out> next = S::decode_reply(reply, S::asked(*args));
  return next.ok() && next_ack_of(*args, next.value(), layout, out);
}

// A fenced_commit_next step the server answered: its accepted commit, then the ack of the entry
// it committed for (none when out of order); `out` gets 0, 1 or 2.
void commit_next_of(redis::script::FencedCommitNext::Args& args, const NextReply& stepped,
                    KeyLayout layout, std::vector<ServerDecision>* out) {
  if (!stepped.commit.has_value()) return;
  std::optional<PartitionGroup> sink = parse_sink_key_name(args.sink, layout);
  std::optional<PartitionRef> partition = split_partition_stream(args.stream, layout);
  if (!sink.has_value() || !partition.has_value()) return;
  if (stepped.commit->outcome == CommitOutcome::accepted) {
    ServerDecision& commit = out->emplace_back();
    commit.op = HistoryOp::commit;
    commit.category = sink->partition.category;
    commit.key = sink->partition.key;
    commit.group = sink->group;
    commit.token = args.token;
    commit.seq = args.seq;
    commit.event_id = args.effect;  // the test handler's effect is the event id
  }
  if (stepped.ack_asked && !args.ack_id.empty()) {
    ServerDecision& ack = out->emplace_back();
    ack.op = HistoryOp::ack;
    ack.category = std::move(partition->category);
    ack.key = std::move(partition->key);
    ack.token = std::move(args.token);
    ack.group = std::move(args.group);
    ack.event_id = std::move(args.ack_id);
  }
}

// A fenced_commit_next (or unfenced_commit_next) the server answered.
void parse_commit_next(const redis::Command& c, const redis::Reply& reply, KeyLayout layout,
                       std::vector<ServerDecision>* out) {
  using S = redis::script::FencedCommitNext;
  std::optional<S::Args> args = redis::script::decode_args<S>(c);
  if (!args.has_value()) return;
  const Result<S::Out> stepped = S::decode_reply(reply, S::asked(*args));
  if (stepped.ok()) commit_next_of(*args, stepped.value(), layout, out);
}

// A fenced_steps the server answered: each step's decisions, as its own script's, in step order.
void parse_steps(const redis::Command& c, const redis::Reply& reply, KeyLayout layout,
                 std::vector<ServerDecision>* out) {
  using S = redis::script::FencedSteps;
  std::optional<redis::ScriptCallView> call = redis::script_call_of(c);
  if (!call.has_value()) return;
  std::optional<std::vector<S::Step>> steps = S::steps_of(*call);
  if (!steps.has_value()) return;
  std::vector<S::Asked> asked;
  asked.reserve(steps->size());
  for (const S::Step& step : *steps) asked.push_back(S::asked(step));
  const S::Out replies = S::decode_reply(reply, asked);
  for (std::size_t i = 0; i < steps->size(); ++i) {
    if (!replies[i].ok()) continue;
    S::Step& step = (*steps)[i];
    if (step.with_commit) {
      commit_next_of(step.commit_next, replies[i].value(), layout, out);
    } else if (ServerDecision ack; next_ack_of(step.next, replies[i].value(), layout, &ack)) {
      out->push_back(std::move(ack));
    }
  }
}

// The scripts whose decisions the server records, by what each decides. The no_fence variant's
// scripts (`unfenced_name`) take the same KEYS/ARGV and reply alike, without the lease check.
enum class Watched : std::uint8_t { none, commit, ack, next, commit_next, steps };

struct WatchedScript {
  std::string sha;
  std::string_view source;
  Watched kind;
};

// Every watched script, its SHA-1 taken once per process (the sources are embedded).
const std::vector<WatchedScript>& watched_scripts() {
  static const std::vector<WatchedScript> scripts = [] {
    std::vector<WatchedScript> all;
    const auto add = [&all](std::string_view name, Watched kind) {
      const std::string_view source = source_of(name);
      all.push_back(WatchedScript{sha1_hex_memo(source), source, kind});
    };
    using namespace redis::script;
    add(FencedSteps::name, Watched::steps);
    add(FencedCommitNext::name, Watched::commit_next);
    add(FencedNext::name, Watched::next);
    add(FencedCommit::name, Watched::commit);
    add(FencedAck::name, Watched::ack);
    add(FencedCommitNext::unfenced_name, Watched::commit_next);
    add(FencedNext::unfenced_name, Watched::next);
    add(FencedCommit::unfenced_name, Watched::commit);
    add(FencedAck::unfenced_name, Watched::ack);
    return all;
  }();
  return scripts;
}

// Which watched script `command` runs (by EVALSHA of its SHA or EVAL of its source), if any:
// the verb is read once and each SHA compared once, where a test per script read both for each.
Watched watched_of(const redis::Command& command) {
  if (command.size() < 3) return Watched::none;
  const std::string& verb = command[0];
  const bool by_sha = verb == "EVALSHA" || verb == "evalsha";
  if (!by_sha && verb != "EVAL" && verb != "eval") return Watched::none;
  for (const WatchedScript& s : watched_scripts()) {
    if (command[1] == (by_sha ? std::string_view(s.sha) : s.source)) return s.kind;
  }
  return Watched::none;
}

}  // namespace

// --- server ---------------------------------------------------------------------------------

World::StampServer::StampServer(World& world, SimRedis& redis, std::string node)
    : world_(world), redis_(redis), node_(std::move(node)) {}

redis::Reply World::StampServer::execute(const redis::Command& sent) {
  const std::uint64_t stamp = world_.sink_->next_stamp();
  stamps_.push_back(stamp);
  const bool asking = cluster_node_ >= 0 && sent.size() > 1 && sent[0] == "ASKING";
  const redis::Command after_asking =
      asking ? redis::Command(sent.begin() + 1, sent.end()) : redis::Command();
  const redis::Command& command = asking ? after_asking : sent;
  redis::Reply reply =
      cluster_node_ >= 0
          ? redis_.execute_on_node(static_cast<std::uint32_t>(cluster_node_), command, asking)
          : redis_.execute(command);
  ServerDecision decision;
  bool decided = false;
  const Watched watched = watched_of(command);
  if (watched == Watched::commit) {
    decided = parse_commit(command, reply, world_.options_.key_layout, &decision);
    if (decided) {
      std::int64_t& last = world_.accepted_seq_[{decision.group, decision.category, decision.key}];
      last = std::max(last, decision.seq);
    }
  } else if (watched == Watched::ack) {
    decided = parse_ack(command, reply, world_.options_.key_layout, &decision);
  } else if (watched == Watched::next) {
    decided = parse_next_ack(command, reply, world_.options_.key_layout, &decision);
  } else if (watched == Watched::steps || watched == Watched::commit_next) {
    std::vector<ServerDecision> decisions;
    if (watched == Watched::steps) {
      parse_steps(command, reply, world_.options_.key_layout, &decisions);
    } else {
      parse_commit_next(command, reply, world_.options_.key_layout, &decisions);
    }
    for (ServerDecision& d : decisions) {
      if (d.op == HistoryOp::commit) {
        std::int64_t& last = world_.accepted_seq_[{d.group, d.category, d.key}];
        last = std::max(last, d.seq);
      }
      d.stamp = stamp;
      d.time_ms = world_.scheduler_.now_ms();
      world_.sink_->add_server_commit(std::move(d));
    }
  }
  if (decided) {
    decision.stamp = stamp;
    decision.time_ms = world_.scheduler_.now_ms();
    world_.sink_->add_server_commit(std::move(decision));
  }
  return reply;
}

// --- links ----------------------------------------------------------------------------------

Task<Result<redis::Reply>> World::InnerStampLink::execute(redis::Command command) {
  void* context = co_await ContextProbe();
  const std::uint64_t key = TaskStamps::command_key(command);
  const std::uint64_t k = sent_++;
  Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
  if (reply.ok()) stamps_.put(context, key, server_.stamp_at(k));
  co_return reply;
}

std::uint64_t World::TaskStamps::command_key(const redis::Command& command) {
  // Each element's length and its first and last eight bytes: this runs twice for every
  // simulated command (a byte-wise hash of the sha and the first key cost the campaign about 1%
  // of its instructions). Two commands of one task in flight at once differ there (the
  // heartbeat's announce and renewals: two scripts); only compared within this process.
  constexpr std::size_t kElements = 4;
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const std::size_t first = !command.empty() && command[0] == "ASKING" ? 1 : 0;
  std::uint64_t key = 0;
  const auto mix = [&key](std::uint64_t word) {
    key = (key ^ word) * kMul;
    key ^= key >> 29;
  };
  for (std::size_t i = first; i < command.size() && i < first + kElements; ++i) {
    const std::string& element = command[i];
    mix(element.size());
    std::uint64_t head = 0;
    std::uint64_t tail = 0;
    if (element.size() >= 8) {
      std::memcpy(&head, element.data(), 8);
      std::memcpy(&tail, element.data() + element.size() - 8, 8);
    } else {
      std::memcpy(&head, element.data(), element.size());
    }
    mix(head);
    mix(tail);
  }
  return key;
}

void World::TaskStamps::put(void* context, std::uint64_t command, std::uint64_t stamp) {
  std::size_t of_task = 0;
  Stamp* oldest = nullptr;
  for (Stamp& s : stamps_) {
    if (s.context != context) continue;
    if (s.command == command) {
      s.stamp = stamp;
      s.put_seq = puts_++;
      return;
    }
    ++of_task;
    if (oldest == nullptr || s.put_seq < oldest->put_seq) oldest = &s;
  }
  if (of_task >= kUntakenPerTaskMax) {
    *oldest = Stamp{context, command, stamp, puts_++};
    return;
  }
  stamps_.push_back(Stamp{context, command, stamp, puts_++});
}

std::uint64_t World::TaskStamps::take(void* context, std::uint64_t command) {
  auto it = std::find_if(stamps_.begin(), stamps_.end(), [context, command](const Stamp& s) {
    return s.context == context && s.command == command;
  });
  if (it == stamps_.end()) return 0;
  const std::uint64_t stamp = it->stamp;
  *it = stamps_.back();
  stamps_.pop_back();
  return stamp;
}

Task<Result<redis::Reply>> World::NodeLink::execute(redis::Command command) {
  Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
  co_return reply;
}

Task<Result<redis::Reply>> World::NodeLink::execute_asking(redis::Command command) {
  command.insert(command.begin(), "ASKING");
  Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
  co_return reply;
}

Task<Result<redis::Reply>> World::OuterStampLink::execute(redis::Command command) {
  void* context = co_await ContextProbe();
  const bool cluster = world_.options_.key_layout == KeyLayout::cluster;
  std::vector<std::string> tags = cluster ? Sink::hash_tags(command) : std::vector<std::string>{};
  const std::uint64_t key = TaskStamps::command_key(command);
  Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
  const std::uint64_t stamp = stamps_.take(context, key);
  Sink& sink = *world_.sink_;
  *decision_stamp_ = reply.ok() && stamp > 0 ? 2 * stamp - 1 : 2 * sink.command_count();
  if (cluster) sink.note_tagged_command(context, std::move(tags), *decision_stamp_);
  co_return reply;
}

World::Incarnation::Incarnation(World& world, SimRuntime& runtime, StampServer& server,
                                const std::string& node, Rng rng, bool with_faults,
                                const std::string& group) {
  // The publisher's connection is exempt: it stands for an outbox relay that publishes exactly
  // once, so the server faults delay it and never cut it off.
  const GateConnection connection{&world.gate_, world.gate_.connect(runtime.name(), !with_faults)};
  link = std::make_unique<SimRedisLink>(runtime, server, rng.derive("latency"), world.case_.link,
                                        connection);
  inner = std::make_unique<InnerStampLink>(*link, server, stamps);
  redis::RedisLink* next = inner.get();
  if (with_faults) {
    faulty = std::make_unique<FaultyLink>(
        *inner, runtime, rng.derive("faults"),
        link_fault_rates(world.case_.swarm, world.case_.link.timeout_ms), world.observer_.get(),
        node);
    next = faulty.get();
  }
  const bool nodes = world.options_.cluster_shards > 0;
  if (nodes) {
    // The first connection the ClusterLink makes (to the seed) is the chain above; each further
    // node gets a chain of its own, with its own endpoint, latency and fault streams.
    cluster = std::make_unique<redis::ClusterLink>(
        runtime, SimRedis::node_host(0), SimRedis::node_port(0),
        [this, &world, &runtime, &server, rng, node, with_faults, next, seed = connection.id](
            const std::string& host,
            std::uint16_t port) -> std::unique_ptr<redis::ClusterNodeLink> {
          const std::optional<std::uint32_t> at = SimRedis::node_of_address(host, port);
          if (!at.has_value()) return nullptr;
          if (!seed_connected) {
            seed_connected = true;
            server.set_cluster_node(*at);
            world.gate_.set_node(seed, *at);
            return std::make_unique<NodeLink>(*next);
          }
          const std::string suffix = "/n" + std::to_string(*at);
          StampServer& endpoint = *world.servers_.emplace_back(
              std::make_unique<StampServer>(world, world.redis_, server.node()));
          endpoint.set_cluster_node(*at);
          NodeChain chain;
          const GateConnection to_node{&world.gate_,
                                       world.gate_.connect(runtime.name() + suffix, !with_faults)};
          world.gate_.set_node(to_node.id, *at);
          chain.link = std::make_unique<SimRedisLink>(
              runtime, endpoint, rng.derive("latency" + suffix), world.case_.link, to_node);
          chain.inner = std::make_unique<InnerStampLink>(*chain.link, endpoint, stamps);
          redis::RedisLink* top = chain.inner.get();
          if (with_faults) {
            chain.faulty = std::make_unique<FaultyLink>(
                *chain.inner, runtime, rng.derive("faults" + suffix),
                link_fault_rates(world.case_.swarm, world.case_.link.timeout_ms),
                world.observer_.get(), node);
            chain.faulty->set_enabled(world.link_faults_on_);
            top = chain.faulty.get();
          }
          more_nodes.push_back(std::move(chain));
          return std::make_unique<NodeLink>(*top);
        });
    next = cluster.get();
  }
  outer = std::make_unique<OuterStampLink>(world, *next, stamps, node);
  redis::RedisBrokerOptions options = testing::redis_broker_options_for(world.case_.variant);
  options.journal_maxlen = world.options_.journal_maxlen;
  options.journal_group = group;
  options.key_layout = world.options_.key_layout;
  if (nodes) options.failovers_seen = [this] { return cluster->stats().failovers_seen; };
  // On a cluster a broker has no wake links: the engine polls (docs/ARCHITECTURE.md "The
  // cluster link").
  if (!with_faults || nodes) {
    broker = std::make_unique<redis::RedisBroker>(*outer, options);
    return;
  }
  add_wake_channel(world, runtime, rng, node);
  broker = std::make_unique<redis::RedisBroker>(
      *outer, options, [this, &world, &runtime, rng, node](std::size_t channel) {
        while (wake.size() <= channel) add_wake_channel(world, runtime, rng, node);
        return static_cast<redis::RedisLink*>(wake[channel].faulty.get());
      });
}

void World::Incarnation::add_wake_channel(World& world, SimRuntime& runtime, const Rng& rng,
                                          const std::string& node) {
  // Channel 0 keeps the names it had as the one wake link ("i0/wake", "wake-latency", ...).
  const std::size_t channel = wake.size();
  const std::string suffix = channel == 0 ? "" : "#" + std::to_string(channel);
  const GateConnection connection{&world.gate_,
                                  world.gate_.connect(runtime.name() + "/wake" + suffix, false)};
  WakeChannel added;
  added.link = std::make_unique<SimRedisLink>(runtime, world.gate_.server(),
                                              rng.derive("wake-latency" + suffix), world.case_.link,
                                              connection);
  added.faulty =
      std::make_unique<FaultyLink>(*added.link, runtime, rng.derive("wake-faults" + suffix),
                                   link_fault_rates(world.case_.swarm, world.case_.link.timeout_ms),
                                   world.observer_.get(), node);
  added.faulty->set_enabled(world.link_faults_on_);
  wake.push_back(std::move(added));
}

// --- faults ---------------------------------------------------------------------------------

void World::StampObserver::on_fault(FaultKind kind, std::string_view node,
                                    std::string_view detail) {
  SEQBY_CHECK(recorder_ != nullptr);
  auto it = names_.find(node);
  recorder_->on_fault(kind, it == names_.end() ? node : std::string_view(it->second), detail);
}

// --- sink -----------------------------------------------------------------------------------

void World::Sink::record(HistoryRecord record) {
  if (record.op == HistoryOp::halt || record.op == HistoryOp::dlq) {
    world_.halted_.insert({record.group, record.category, record.key});
  }
  std::uint64_t sort_key = 2 * stamp_count_;
  if (is_decision(record.op)) {
    auto it = decision_stamp_.find(record.node);
    if (it != decision_stamp_.end() && it->second != kNoDecision) sort_key = it->second;
  }
  if (is_decision(record.op) && !record.key.empty() &&
      world_.options_.key_layout == KeyLayout::cluster) {
    const std::vector<TaggedCommand>& recent = recent_tagged_[resumed_context_];
    for (auto it = recent.rbegin(); it != recent.rend(); ++it) {
      if (std::find(it->tags.begin(), it->tags.end(), record.key) != it->tags.end()) {
        sort_key = it->sort_key;
        break;
      }
    }
  }
  pending_.emplace_back(sort_key, std::move(record));  // one move, not two
}

std::vector<std::string> World::Sink::hash_tags(const redis::Command& command) {
  // A script's keys are KEYS[1..numkeys]; any other command's key is its first argument.
  std::size_t first = 1;
  std::size_t count = command.size() > 1 ? 1 : 0;
  if (command.size() >= 3 && (command[0] == "EVALSHA" || command[0] == "EVAL")) {
    first = 3;
    std::from_chars(command[2].data(), command[2].data() + command[2].size(), count);
  }
  std::vector<std::string> tags;
  for (std::size_t i = first; i < first + count && i < command.size(); ++i) {
    const std::string& name = command[i];
    const std::size_t open = name.find('{');
    const std::size_t close = open == std::string::npos ? open : name.find('}', open + 1);
    if (close != std::string::npos && close > open + 1) {
      tags.push_back(name.substr(open + 1, close - open - 1));
    }
  }
  return tags;
}

void World::Sink::note_tagged_command(void* context, std::vector<std::string> tags,
                                      std::uint64_t sort_key) {
  resumed_context_ = context;
  if (tags.empty()) return;
  std::vector<TaggedCommand>& recent = recent_tagged_[context];
  if (recent.size() == kRecentTagged) recent.erase(recent.begin());
  recent.push_back(TaggedCommand{std::move(tags), sort_key});
}

// The run header and liveness marker of properties/markers.h (sim does not link properties).
void World::Sink::record_header() {
  const SimCase& c = world_.case_;
  HistoryRecord r;
  r.op = HistoryOp::fault;
  r.detail = "run";
  if (is_process_manager(c)) {
    // "pm=G:C1+C2": the checker judges every stream of the PM's categories (no_loss).
    r.detail += " pm=" + c.group + ":";
    for (std::size_t i = 0; i < c.pm_categories.size(); ++i) {
      r.detail += (i == 0 ? "" : "+") + c.pm_categories[i];
    }
  }
  if (!c.beside_group.empty()) r.detail += " pm=" + c.beside_group + ":" + c.category;
  if (c.instance_count < 2 || c.keys.size() < 2) r.detail += " skip=parallel";
  r.detail += " seed=" + std::to_string(c.seed) + " scenario=" + c.scenario +
              " variant=" + std::string(testing::variant_name(c.variant)) +
              " instances=" + std::to_string(c.instance_count);
  record(std::move(r));
}

void World::Sink::record_liveness_marker() {
  HistoryRecord r;
  r.time_ms = world_.scheduler_.now_ms();
  r.op = HistoryOp::fault;
  r.detail = "liveness_phase_start";
  record(std::move(r));
}

std::vector<HistoryRecord> World::Sink::take() {
  // Accepted commits and acks go where the server decided them (the first time, for an ack sent
  // again after a lost reply); those no instance heard of are added, marked as such.
  // A decision's identity is (op, token, stream, event); the stream is category and key: a
  // process manager's streams of one key may hold entries with equal ids. The first decision of
  // each identity stands; a decision that a lossy failover undid and that is made again after it
  // starts an epoch of its own, whose first decision stands too (an instance's record belongs to
  // the latest epoch begun by its command's reply). Identities are found by hash (views into
  // server_commits_, which stays put until the end of take()); only the decisions no instance
  // heard of are sorted, by (identity, epoch), the order they are added in.
  struct Identity {
    HistoryOp op;
    std::string_view token;
    std::string_view key;
    std::string_view category;
    std::string_view event_id;
    bool operator==(const Identity&) const = default;
    auto tied() const { return std::tie(op, token, key, category, event_id); }
  };
  struct IdentityHash {
    std::size_t operator()(const Identity& id) const {
      const std::hash<std::string_view> text;
      std::size_t h = static_cast<std::size_t>(id.op);
      for (const std::string_view part : {id.token, id.key, id.category, id.event_id}) {
        h = (h ^ text(part)) * 0x100000001b3ULL;
      }
      return h;
    }
  };
  // Each epoch's first decision, chained per identity in epoch order.
  struct Begun {
    std::size_t index;                                           // into server_commits_
    std::size_t epoch;                                           // 0, 1, ... within its identity
    std::size_t next = std::numeric_limits<std::size_t>::max();  // the identity's next epoch
  };
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  const auto identity_of = [](const ServerDecision& c) {
    return Identity{c.op, c.token, c.key, c.category, c.event_id};
  };
  std::vector<Begun> begun;
  begun.reserve(server_commits_.size());
  // identity -> {its epoch 0 in begun, its latest epoch in begun}
  std::unordered_map<Identity, std::pair<std::size_t, std::size_t>, IdentityHash> identities;
  identities.reserve(server_commits_.size());
  // server_commits_ stands in stamp order.
  for (std::size_t i = 0; i < server_commits_.size(); ++i) {
    const ServerDecision& c = server_commits_[i];
    auto [it, fresh] = identities.try_emplace(identity_of(c), begun.size(), begun.size());
    if (fresh) {
      begun.push_back(Begun{i, 0});
      continue;
    }
    Begun& latest = begun[it->second.second];
    if (!lossy_failovers_.empty() &&  // else every decision is of epoch 0
        undone_before(c.key, 2 * server_commits_[latest.index].stamp - 1, 2 * c.stamp - 1)) {
      latest.next = begun.size();
      it->second.second = begun.size();
      begun.push_back(Begun{i, latest.epoch + 1});
    }
  }
  std::vector<bool> heard(server_commits_.size(), false);
  std::string token;
  for (Pending& p : pending_) {
    if (p.record.op != HistoryOp::commit && p.record.op != HistoryOp::ack) continue;
    token.assign(p.record.node);
    token += ':';
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof(digits), p.record.generation).ptr;
    token.append(digits, static_cast<std::size_t>(end - digits));
    const auto found = identities.find(
        Identity{p.record.op, token, p.record.key, p.record.category, p.record.event_id});
    if (found == identities.end()) continue;
    // The latest epoch begun at or before the reply the record is about.
    std::size_t at = found->second.first;
    while (begun[at].next != kNone &&
           2 * server_commits_[begun[begun[at].next].index].stamp - 1 <= p.sort_key) {
      at = begun[at].next;
    }
    const std::size_t i = begun[at].index;
    if (heard[i]) continue;
    heard[i] = true;
    p.sort_key = 2 * server_commits_[i].stamp - 1;
  }
  std::vector<const Begun*> unheard;
  for (const Begun& b : begun) {
    if (!heard[b.index]) unheard.push_back(&b);
  }
  std::sort(unheard.begin(), unheard.end(), [&](const Begun* a, const Begun* b) {
    return std::tuple_cat(identity_of(server_commits_[a->index]).tied(), std::tie(a->epoch)) <
           std::tuple_cat(identity_of(server_commits_[b->index]).tied(), std::tie(b->epoch));
  });
  for (const Begun* b : unheard) {
    const ServerDecision& c = server_commits_[b->index];
    HistoryRecord r;
    r.time_ms = c.time_ms;
    const auto colon = c.token.rfind(':');
    r.node = c.token.substr(0, colon);
    r.generation = colon == std::string::npos ? 0 : std::stoull(c.token.substr(colon + 1));
    r.op = c.op;
    r.category = c.category;
    r.key = c.key;
    r.group = c.group;
    r.event_id = c.event_id;
    if (c.op == HistoryOp::commit) r.seq = c.seq;
    r.detail =
        "decided by the server; the reply never reached the instance (recorded by the world)";
    pending_.push_back(Pending{2 * c.stamp - 1, std::move(r)});
  }
  // Sort positions, not records (records are large): ties keep their arrival order.
  std::vector<std::uint32_t> order(pending_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) {
    return pending_[a].sort_key < pending_[b].sort_key;
  });
  std::vector<HistoryRecord> out;
  out.reserve(pending_.size());
  for (std::uint32_t i : order) {
    pending_[i].record.index = out.size();
    out.push_back(std::move(pending_[i].record));
  }
  pending_.clear();
  server_commits_.clear();
  return out;
}

bool World::Sink::undone_before(std::string_view key, std::uint64_t decided,
                                std::uint64_t again) const {
  for (const LossyFailover& f : lossy_failovers_) {
    if (f.begin_key < decided && decided < f.end_key && f.end_key < again &&
        std::binary_search(f.keys.begin(), f.keys.end(), key)) {
      return true;
    }
  }
  return false;
}

std::vector<HistoryRecord> World::take_history() { return sink_->take(); }

}  // namespace seqby::sim
