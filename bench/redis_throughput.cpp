// bench_redis_throughput: end-to-end events per second of the fenced engine against a plain
// shared-group XREADGROUP/XACK consumer, on one real redis-server, in one run (DESIGN.md section
// 9). Fenced: two Engine instances linked in-process, each on its own RealRuntime thread with its
// own HiredisLink, a null history sink and a trivial handler that commits its effect through the
// fenced sink (HandlerContext::commit) and does nothing else; and again with the handler returning
// its effect for the engine to commit with the step that acks and reads on
// (HandlerResult::commit_with_step: one fenced script per event). Plain: two consumers of one group
// over one stream, each on its own thread and raw hiredis connection, doing the same trivial work
// (one HSET per event, then XACK), in three shapes: COUNT 1, COUNT n with a round trip per
// command, COUNT n with the batch's commands pipelined. And a fourth that is no design, a
// ceiling: the pipelined consumer sending, per event, the five commands of the fenced step as
// plain commands (GET of the key's lease, HGET and HSET of its sink, HSET of the effect, XACK),
// neither atomic nor fenced: what those five operations cost the server with no script around
// them, so what any design that makes them per event could reach. All get the same pre-published
// events; the clock runs from start until every event is committed: for the engine, its last
// commit (for a handler that commits nothing, its last handler's return), a step before that
// event's ack; for a plain consumer, its last XACK's reply. The fenced engine runs
// twice, without and with the decision journal (every deciding script also appends its record),
// so the journal's cost per event is a ratio taken in the same run. And once more as the previous
// release (seqby::testing::previous_release_steps: three fenced scripts per event, polling, leases
// one at a time), the engine issue 14 set out to beat, so "steps batched" against it is a ratio
// taken in the same run too. And a handler whose effect goes to its own store (as an exec
// handler's does: it commits nothing to Redis, so each event costs the engine its step alone),
// steps batched, against its like for like, the pipelined consumer sending XACK alone. Prints a
// table and the medians over repetitions; asserts nothing.
//
//   scripts/with-redis build/bench_redis_throughput [--partitions N] [--events-per-partition N]
//       [--repetitions N] [--poll-interval-ms N] [--plain-count N] [--read-batch-max N]
//       [--fenced-only]
//   scripts/with-redis build/bench_redis_throughput --exec 'python3 bench/exec_ok_child.py'
//       [--exec-concurrency 8]     # only: a handler that does nothing, in-process vs exec child
#include <hiredis/hiredis.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/runtime/exec_handler.h"
#include "seqby/testing/previous_release.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_redis_throughput";
constexpr const char* kUsage =
    "usage: scripts/with-redis build/bench_redis_throughput [--partitions N] "
    "[--events-per-partition N]\n"
    "           [--repetitions N] [--poll-interval-ms N] [--plain-count N] [--read-batch-max N]\n"
    "           [--step-batch-max N] [--steps-batched N (2..32)] [--fenced-only]\n"
    "       scripts/with-redis build/bench_redis_throughput --exec COMMAND [--exec-concurrency "
    "8]\n";

struct Options {
  std::uint32_t partitions = 64;
  std::uint32_t events_per_partition = 200;
  std::uint32_t repetitions = 5;
  std::uint64_t poll_interval_ms = 1;
  std::uint32_t plain_count = 100;  // XREADGROUP COUNT of the plain consumer's batched variant
  // The engine's read_batch_max; each repetition also runs the engine at 1 (one-entry reads).
  std::uint32_t read_batch_max = EngineLimits{}.read_batch_max;
  // The engine's step_batch_max in every variant but "steps batched", which runs at
  // --steps-batched (the broker's most).
  std::uint32_t step_batch_max = EngineLimits{}.step_batch_max;
  std::uint32_t steps_batched = RedisBroker::kStepsPerCallMax;
  bool fenced_only = false;  // skip the plain consumers (for profiling the engine)
  // Non-empty: only what a process boundary costs: the engine with an in-process handler that
  // does nothing against `seqby worker --exec`'s ExecHandler running this command (neither
  // commits), `exec_concurrency` children per instance.
  std::string exec;
  std::uint32_t exec_concurrency = 8;
};

// What the instances' handler does.
enum class HandlerKind : std::uint8_t {
  commit,   // TrivialHandler: one fenced commit
  step,     // TrivialHandler returning its effect: the engine commits it with its next step
  nothing,  // in-process, returns success at once
  exec,     // ExecHandler over Options::exec
};

// Commits the event's seq (effect: its id) through the fenced sink; nothing else.
// With `with_step`, returns the effect instead (HandlerResult::commit_with_step); the engine's
// commit records are then counted by CommitCounter.
class TrivialHandler final : public Handler {
 public:
  TrivialHandler(std::atomic<std::uint64_t>* committed, bool with_step)
      : committed_(committed), with_step_(with_step) {}

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    const std::int64_t seq = seq_of(event.data);
    if (seq < 1) co_return HandlerResult::failed("event data has no seq");
    if (with_step_) co_return HandlerResult::commit_with_step(seq, event.id);
    Result<CommitReply> reply = co_await context.commit(seq, event.id);
    if (!reply.ok()) co_return HandlerResult::failed(reply.error().message);
    if (reply.value().outcome != CommitOutcome::accepted) {
      co_return HandlerResult::failed(commit_outcome_name(reply.value().outcome));
    }
    committed_->fetch_add(1, std::memory_order_relaxed);
    co_return HandlerResult::success();
  }

 private:
  std::atomic<std::uint64_t>* committed_;
  bool with_step_;
};

// Counts the engine's accepted commits (the history's commit records), for a handler that returns
// its effect: the commit is made after the handler returns.
class CommitCounter final : public HistorySink {
 public:
  explicit CommitCounter(std::atomic<std::uint64_t>* committed) : committed_(committed) {}
  void record(HistoryRecord record) override {
    if (record.op == HistoryOp::commit) committed_->fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t>* committed_;
};

// Counts the events `inner` handled ok (for `nothing`: returns success at once).
class CountingHandler final : public Handler {
 public:
  CountingHandler(Handler* inner, std::atomic<std::uint64_t>* handled)
      : inner_(inner), handled_(handled) {}

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    HandlerResult result;
    if (inner_ != nullptr) result = co_await inner_->handle(event, context);
    if (result.ok) handled_->fetch_add(1, std::memory_order_relaxed);
    co_return result;
  }

 private:
  Handler* inner_;
  std::atomic<std::uint64_t>* handled_;
};

// --- fenced: two engine instances ---------------------------------------------------------

struct Instance {
  EngineOptions options;
  HandlerKind handler = HandlerKind::commit;
  const Options* bench = nullptr;
  std::uint64_t journal_maxlen = 0;  // the decision journal's retention (0: off)
  bool previous_release = false;     // the previous release's steps, not this one's
  std::atomic<bool> stop{false};
  std::uint64_t commands_sent = 0;  // by the instance's links (both), from go to stop
  std::size_t held_at_stop = 0;
  std::atomic<std::uint64_t> cpu_us{0};  // the instance's loop thread, from go to all committed
};

Task<void> drive_engine(Engine& engine, RealRuntime& runtime, Instance& instance,
                        const std::atomic<bool>& all_committed) {
  const std::uint64_t cpu_start_us = thread_cpu_us();
  engine.start();
  while (!all_committed.load()) co_await runtime.sleep_ms(1);
  instance.cpu_us.store(thread_cpu_us() - cpu_start_us);
  while (!instance.stop.load()) co_await runtime.sleep_ms(5);
  instance.held_at_stop = engine.held().size();
  co_await engine.stop();
}

void run_instance(const RedisConfig& config, Instance* instance,
                  std::atomic<std::uint64_t>* committed, const std::atomic<bool>* go,
                  const std::atomic<bool>* all_committed, std::atomic<std::uint32_t>* ready) {
  RealRuntimeOptions runtime_options;
  runtime_options.worker_count = 1;  // the trivial handler never calls run_blocking
  // Each exec child's exchange holds a pool thread while its event runs.
  if (instance->handler == HandlerKind::exec) {
    runtime_options.worker_count += instance->bench->exec_concurrency;
  }
  RealRuntime runtime(runtime_options);
  RedisBrokerOptions broker_options;
  broker_options.journal_maxlen = instance->journal_maxlen;
  broker_options.journal_group = instance->options.group;
  InstanceBroker connections(runtime, config, broker_options);
  NullHistorySink null_history;
  CommitCounter commit_counter(committed);
  const bool with_step = instance->handler == HandlerKind::step;
  HistorySink& history = with_step ? static_cast<HistorySink&>(commit_counter) : null_history;
  TrivialHandler trivial(with_step ? nullptr : committed, with_step);
  std::unique_ptr<ExecHandler> exec;
  if (instance->handler == HandlerKind::exec) {
    ExecHandlerOptions exec_options;
    exec_options.command = instance->bench->exec;
    exec_options.concurrency = instance->bench->exec_concurrency;
    exec = std::make_unique<ExecHandler>(runtime, exec_options);
  }
  CountingHandler counting(exec.get(), committed);
  const bool trivial_kind =
      instance->handler == HandlerKind::commit || instance->handler == HandlerKind::step;
  Handler& handler =
      trivial_kind ? static_cast<Handler&>(trivial) : static_cast<Handler&>(counting);
  Engine engine(runtime, *connections.broker, history, handler, instance->options,
                instance->previous_release ? testing::previous_release_steps() : nullptr);
  Command ping{"PING"};
  (void)runtime.block_on(connections.link.execute(ping));  // connected before the clock starts
  ready->fetch_add(1);
  while (!go->load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const std::uint64_t commands_before = connections.commands_sent();
  runtime.block_on(drive_engine(engine, runtime, *instance, *all_committed));
  instance->commands_sent = connections.commands_sent() - commands_before;
}

struct RunFigures {
  std::uint64_t events = 0;
  std::uint64_t elapsed_us = 0;
  bool complete = false;
  std::uint64_t client_commands = 0;  // top-level commands the clients sent
  std::uint64_t server_cpu_us = 0;    // redis-server CPU (user + sys) during the run
  std::uint64_t client_cpu_us = 0;    // the client threads' CPU during the run
  CommandStats commands;              // what the server executed during the run
  std::string load;
  std::string note;
  double rate() const { return elapsed_us == 0 ? 0 : events * 1e6 / elapsed_us; }
};

// a's events per second over b's (0 when b made none).
double ratio_of(const RunFigures& a, const RunFigures& b) {
  return b.rate() > 0 ? a.rate() / b.rate() : 0.0;
}

RunFigures run_fenced(const RedisConfig& config, const Options& o, const std::string& prefix,
                      std::uint64_t journal_maxlen, HandlerKind handler = HandlerKind::commit,
                      bool previous_release = false) {
  const std::string category = prefix + "fenced";
  const std::string group = "bench";
  const std::uint64_t total = std::uint64_t{o.partitions} * o.events_per_partition;

  RealRuntime setup_runtime;
  HiredisLink setup_link(setup_runtime, config);
  RedisBroker setup_broker(setup_link);
  std::size_t errors = 0;
  std::size_t done = 0;
  for (std::uint32_t p = 0; p < o.partitions; ++p) {
    setup_runtime.spawn("publish",
                        publish_partition(setup_broker, PartitionRef{category, partition_key(p)},
                                          o.events_per_partition, &errors, &done));
  }
  setup_runtime.block_on(detail::wait_count(setup_runtime, &done, o.partitions));

  Instance instances[2];
  for (int i = 0; i < 2; ++i) {
    instances[i].journal_maxlen = journal_maxlen;
    instances[i].handler = handler;
    instances[i].previous_release = previous_release;
    instances[i].bench = &o;
    EngineOptions& e = instances[i].options;
    e.owner_id = prefix + (i == 0 ? "a" : "b");
    e.category = category;
    e.group = group;
    e.poll_interval_ms = o.poll_interval_ms;
    e.read_batch_max = o.read_batch_max;
    e.step_batch_max = o.step_batch_max;
    e.discovery_interval_ms = 100;
    // Both instances announced before they start, as in a running deployment: each takes its
    // fair share (P/2) in its first discovery cycle instead of one taking all, then shedding.
    Status announced = setup_runtime.block_on(
        setup_broker.announce_member(category, group, e.owner_id, e.lease_ttl_ms));
    if (!announced.ok()) ++errors;
  }

  BlockingRedis admin(config);
  std::atomic<std::uint64_t> committed{0};
  std::atomic<bool> go{false};
  std::atomic<bool> all_committed{false};
  std::atomic<std::uint32_t> ready{0};
  std::vector<std::thread> threads;
  for (auto& instance : instances) {
    threads.emplace_back(run_instance, std::cref(config), &instance, &committed, &go,
                         &all_committed, &ready);
  }
  while (ready.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  RunFigures out;
  out.load = load_average();
  const Window window = measure_window(admin, go, [&] { return committed.load() >= total; });
  out.elapsed_us = window.elapsed_us;
  out.server_cpu_us = window.server_cpu_us;
  out.commands = window.commands;
  out.events = committed.load();
  out.complete = out.events == total;
  all_committed.store(true);
  for (auto& instance : instances) instance.stop.store(true);
  for (auto& thread : threads) thread.join();
  for (const auto& instance : instances) {
    out.client_commands += instance.commands_sent;
    out.client_cpu_us += instance.cpu_us.load();
  }
  out.note = "held " + std::to_string(instances[0].held_at_stop) + "+" +
             std::to_string(instances[1].held_at_stop);
  if (errors > 0) out.note += ", setup errors " + std::to_string(errors);
  return out;
}

// --- plain: two consumers of one group over one stream ------------------------------------

// The plain consumer talks raw hiredis (no Reply conversion): the leanest client there is.
enum class PlainMode : std::uint8_t {
  single,           // XREADGROUP COUNT 1, then HSET and XACK: three round trips per event
  batch,            // XREADGROUP COUNT n, then HSET and XACK per event: two round trips per event
  batch_pipelined,  // XREADGROUP COUNT n, then every HSET and XACK of the batch pipelined
  // XREADGROUP COUNT n, then per event the fenced step's five operations as plain commands (GET
  // lease, HGET sink, HSET sink, HSET effects, XACK), the batch's pipelined: a ceiling, no design
  five_ops_pipelined,
  // XREADGROUP COUNT n, then per event XACK alone, the batch's pipelined: a consumer whose effect
  // goes elsewhere (its own store), like for like with the engine's handler that commits nothing
  // to Redis (HandlerKind::nothing)
  ack_only_pipelined,
};

struct ReplyFree {
  void operator()(redisReply* reply) const {
    if (reply != nullptr) freeReplyObject(reply);
  }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

struct ContextFree {
  void operator()(redisContext* context) const {
    if (context != nullptr) redisFree(context);
  }
};

void append_argv(redisContext* context, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  (void)redisAppendCommandArgv(context, static_cast<int>(args.size()), argv.data(), lengths.data());
}

ReplyPtr next_reply(redisContext* context) {
  void* reply = nullptr;
  if (redisGetReply(context, &reply) != REDIS_OK) return ReplyPtr();
  return ReplyPtr(static_cast<redisReply*>(reply));
}

ReplyPtr command_argv(redisContext* context, const std::vector<std::string>& args) {
  append_argv(context, args);
  return next_reply(context);
}

// The five-operation ceiling's per-key lease and sink (PlainMode::five_ops_pipelined).
std::string lease_key_of(const std::string& stream, const std::string& key) {
  return stream + ":lease:" + key;
}
std::string sink_key_of(const std::string& stream, const std::string& key) {
  return stream + ":sink:" + key;
}

struct PlainConsumer {
  std::string consumer;
  std::uint64_t commands = 0;
  std::uint64_t cpu_us = 0;
  bool failed = false;
};

void run_plain_consumer(const RedisConfig& config, const std::string& stream,
                        const std::string& group, const std::string& effects, PlainMode mode,
                        std::uint32_t count, PlainConsumer* self, std::atomic<std::uint64_t>* acked,
                        const std::atomic<bool>* go, std::atomic<std::uint32_t>* ready) {
  std::unique_ptr<redisContext, ContextFree> owned(
      redisConnect(config.host.c_str(), static_cast<int>(config.port)));
  redisContext* c = owned.get();
  if (c == nullptr || c->err != 0) {
    self->failed = true;
    ready->fetch_add(1);
    return;
  }
  if (!config.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!config.user.empty()) auth.push_back(config.user);
    auth.push_back(config.password);
    (void)command_argv(c, auth);
  }
  ready->fetch_add(1);
  while (!go->load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const std::uint64_t cpu_start_us = thread_cpu_us();
  const std::string count_text = std::to_string(mode == PlainMode::single ? 1 : count);
  const std::vector<std::string> read{
      "XREADGROUP", "GROUP", group, self->consumer, "COUNT", count_text, "STREAMS", stream, ">"};
  for (std::uint64_t round = 0; round < (1ull << 32); ++round) {
    ReplyPtr reply = command_argv(c, read);
    ++self->commands;
    if (!reply) {
      self->failed = true;
      break;
    }
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) break;  // nil: drained
    const redisReply* entries = reply->element[0]->element[1];
    if (entries->elements == 0) break;
    for (std::size_t e = 0; e < entries->elements; ++e) {
      const redisReply* entry = entries->element[e];
      const std::string id(entry->element[0]->str, entry->element[0]->len);
      const std::vector<std::string> xack{"XACK", stream, group, id};
      if (mode == PlainMode::ack_only_pipelined) {  // the effect goes elsewhere
        append_argv(c, xack);
        ++self->commands;
        continue;
      }
      std::string data;
      const redisReply* fields = entry->element[1];
      for (std::size_t i = 0; i + 1 < fields->elements; i += 2) {
        if (std::string_view(fields->element[i]->str, fields->element[i]->len) == "data") {
          data.assign(fields->element[i + 1]->str, fields->element[i + 1]->len);
        }
      }
      // The same trivial work as the fenced handler: decode the event, store one effect.
      const std::string field = key_of(data) + ":" + std::to_string(seq_of(data));
      const std::vector<std::string> hset{"HSET", effects, field, id};
      self->commands += 2;
      if (mode == PlainMode::five_ops_pipelined) {
        const std::string key = key_of(data);
        append_argv(c, {"GET", lease_key_of(stream, key)});
        append_argv(c, {"HGET", sink_key_of(stream, key), "last_seq"});
        append_argv(c, {"HSET", sink_key_of(stream, key), "last_seq", std::to_string(seq_of(data)),
                        "last_token", self->consumer});
        self->commands += 3;
      }
      if (mode == PlainMode::batch_pipelined || mode == PlainMode::five_ops_pipelined) {
        append_argv(c, hset);
        append_argv(c, xack);
        continue;
      }
      ReplyPtr stored = command_argv(c, hset);
      ReplyPtr done = command_argv(c, xack);
      if (!stored || !done) self->failed = true;
      acked->fetch_add(1, std::memory_order_relaxed);
    }
    if (mode == PlainMode::batch_pipelined || mode == PlainMode::five_ops_pipelined ||
        mode == PlainMode::ack_only_pipelined) {
      const std::size_t per_event = mode == PlainMode::five_ops_pipelined   ? 5
                                    : mode == PlainMode::ack_only_pipelined ? 1
                                                                            : 2;
      for (std::size_t r = 0; r < per_event * entries->elements; ++r) {
        if (!next_reply(c)) self->failed = true;
      }
      acked->fetch_add(entries->elements, std::memory_order_relaxed);
    }
  }
  self->cpu_us = thread_cpu_us() - cpu_start_us;
}

RunFigures run_plain(const RedisConfig& config, const Options& o, const std::string& prefix,
                     PlainMode mode) {
  const std::string stream = prefix + "plain" + std::to_string(static_cast<int>(mode));
  const std::string effects = stream + ":effects";
  const std::string group = "bench";
  const std::uint64_t total = std::uint64_t{o.partitions} * o.events_per_partition;

  // The same events, interleaved across keys as concurrent publishers would append them.
  std::vector<Command> setup{{"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"}};
  for (std::uint32_t seq = 1; seq <= o.events_per_partition; ++seq) {
    for (std::uint32_t p = 0; p < o.partitions; ++p) {
      setup.push_back(Command{"XADD", stream, "*", "type", "Ticked", "data",
                              event_data(partition_key(p), seq)});
    }
  }
  for (std::uint32_t p = 0; mode == PlainMode::five_ops_pipelined && p < o.partitions; ++p) {
    setup.push_back(Command{"SET", lease_key_of(stream, partition_key(p)), "c:1"});
  }
  RealRuntime setup_runtime;
  HiredisLink setup_link(setup_runtime, config);
  std::vector<Command> create(setup.begin(), setup.begin() + 1);
  std::size_t errors = run_pipelined(setup_runtime, setup_link, create, 1);
  std::vector<Command> adds(setup.begin() + 1, setup.end());
  errors += run_pipelined(setup_runtime, setup_link, adds, 64);

  BlockingRedis admin(config);
  std::atomic<std::uint64_t> acked{0};
  std::atomic<bool> go{false};
  std::atomic<std::uint32_t> ready{0};
  PlainConsumer consumers[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    consumers[i].consumer = prefix + (i == 0 ? "c1" : "c2");
    threads.emplace_back(run_plain_consumer, std::cref(config), std::cref(stream), std::cref(group),
                         std::cref(effects), mode, o.plain_count, &consumers[i], &acked, &go,
                         &ready);
  }
  while (ready.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  RunFigures out;
  out.load = load_average();
  const Window window = measure_window(admin, go, [&] { return acked.load() >= total; });
  out.elapsed_us = window.elapsed_us;
  out.server_cpu_us = window.server_cpu_us;
  out.commands = window.commands;
  out.events = acked.load();
  out.complete = out.events == total;
  for (auto& thread : threads) thread.join();
  for (const auto& consumer : consumers) {
    out.client_commands += consumer.commands;
    out.client_cpu_us += consumer.cpu_us;
    if (consumer.failed) out.note = "a consumer failed; ";
  }
  if (errors > 0) out.note += "setup errors " + std::to_string(errors);
  return out;
}

// --- report -------------------------------------------------------------------------------

constexpr const char* kCeilingName = "plain, 5 step ops piped";  // PlainMode::five_ops_pipelined
constexpr const char* kPreviousName = "previous release";        // testing::previous_release_steps
// A handler whose effect goes to its own store, as an exec handler's does, and its like for like.
constexpr const char* kElsewhereName = "no commit, steps batched";  // HandlerKind::nothing
constexpr const char* kAckOnlyName = "plain, XACK only piped";      // PlainMode::ack_only_pipelined

void print_row(std::uint32_t rep, const char* variant, const RunFigures& f) {
  const double per_event = f.events == 0 ? 0 : 1.0 / f.events;
  std::printf("%3u  %-24s %7llu %8.3f %9.0f %8.2f %8.2f %8.1f %8.1f %8.1f  %-15s %s%s\n", rep,
              variant, static_cast<unsigned long long>(f.events), f.elapsed_us / 1e6, f.rate(),
              f.client_commands * per_event, f.commands.calls * per_event,
              f.client_cpu_us * per_event, f.server_cpu_us * per_event, f.commands.usec * per_event,
              f.load.c_str(), f.note.c_str(), f.complete ? "" : " INCOMPLETE");
}

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--fenced-only") {
      o->fenced_only = true;
      continue;
    }
    if (flag == "--exec") {
      if (i + 1 >= argc || std::string(argv[i + 1]).empty()) {
        std::fprintf(stderr, "%s: --exec needs a command\n", kProgram);
        return false;
      }
      o->exec = argv[++i];
      continue;
    }
    std::uint64_t value = 0;
    if (i + 1 >= argc || !parse_u64(argv[i + 1], &value) || value == 0) {
      std::fprintf(stderr, "%s: %s needs a positive number\n", kProgram, flag.c_str());
      return false;
    }
    ++i;
    if (flag == "--partitions") {
      o->partitions = static_cast<std::uint32_t>(value);
    } else if (flag == "--events-per-partition") {
      o->events_per_partition = static_cast<std::uint32_t>(value);
    } else if (flag == "--repetitions") {
      o->repetitions = static_cast<std::uint32_t>(value);
    } else if (flag == "--poll-interval-ms") {
      o->poll_interval_ms = value;
    } else if (flag == "--plain-count") {
      o->plain_count = static_cast<std::uint32_t>(value);
    } else if (flag == "--read-batch-max" && value <= 100000) {
      o->read_batch_max = static_cast<std::uint32_t>(value);
    } else if (flag == "--step-batch-max" && value >= 1 && value <= 100000) {
      o->step_batch_max = static_cast<std::uint32_t>(value);
    } else if (flag == "--steps-batched" && value >= 2 && value <= RedisBroker::kStepsPerCallMax) {
      o->steps_batched = static_cast<std::uint32_t>(value);
    } else if (flag == "--exec-concurrency" && value <= 256) {
      o->exec_concurrency = static_cast<std::uint32_t>(value);
    } else {
      std::fprintf(stderr, "%s: unknown option %s\n", kProgram, flag.c_str());
      return false;
    }
  }
  return true;
}

int run(int argc, char** argv) {
  Options o;
  if (const std::optional<int> stop = read_command_line(argc, argv, kUsage, &o, parse_options)) {
    return *stop;
  }
  std::optional<RedisConfig> config = redis_config_from_env(kProgram);
  if (!config) return kExitNoServer;

  std::printf(
      "# %s: %u partitions x %u events = %llu events; 2 engine instances vs 2 plain "
      "consumers\n",
      kProgram, o.partitions, o.events_per_partition,
      static_cast<unsigned long long>(std::uint64_t{o.partitions} * o.events_per_partition));
  std::printf(
      "# engine: poll_interval_ms=%llu read_batch_max=%u (and 1: \"fenced, 1-entry reads\") "
      "discovery_interval_ms=100 lease_ttl_ms=3000 heartbeat_interval_ms=1000, null history, "
      "handler = one fenced commit (\"no commit\": returns at once)\n",
      static_cast<unsigned long long>(o.poll_interval_ms), o.read_batch_max);
  std::printf(
      "# plain (raw hiredis, one connection per consumer): XREADGROUP COUNT 1 | COUNT %u, "
      "then per event HSET + XACK, one round trip each | pipelined per batch; pipelined too: "
      "the fenced step's 5 operations (a ceiling), XACK alone (for a handler that commits "
      "nothing to Redis)\n",
      o.plain_count);
  print_malloc_line();
  std::printf(
      "# per event: cmds/ev commands the clients sent; calls/ev commands the server ran "
      "(inside scripts too); cli_us CPU of the two client threads; srv_us redis-server "
      "CPU (user+sys); exec_us of it, command execution (INFO commandstats)\n");
  std::printf("%3s  %-24s %7s %8s %9s %8s %8s %8s %8s %8s  %-15s %s\n", "rep", "variant", "events",
              "seconds", "events/s", "cmds/ev", "calls/ev", "cli_us", "srv_us", "exec_us",
              "load avg", "note");
  BlockingRedis admin(*config);
  const std::string run_prefix = "seqbybench" + std::to_string(::getpid()) + "r";
  const std::string batch_name = "plain COUNT " + std::to_string(o.plain_count);
  const std::string pipelined_name = batch_name + " piped";
  // Per variant (plain COUNT 1, plain batch, plain piped, fenced): rates, and fenced/plain ratios.
  std::vector<double> rates[4];
  std::vector<double> ratios[3];
  std::vector<double> journal_rates;         // fenced with the decision journal on
  std::vector<double> journal_ratios;        // with journal / without, per repetition
  std::vector<double> batch_ratios;          // read_batch_max / one-entry reads, per repetition
  std::vector<double> single_read_rates;     // the engine at read_batch_max 1
  std::vector<double> step_rates;            // the handler returning its effect (commit_with_step)
  std::vector<double> step_ratios;           // commit with the step / handler's own commit
  std::vector<double> step_piped_ratios;     // commit with the step / plain piped
  std::vector<double> batched_rates;         // commit with the step, steps batched
  std::vector<double> batched_ratios;        // steps batched / commit with the step
  std::vector<double> batched_piped_ratios;  // steps batched / plain piped
  std::vector<double> ceiling_rates;         // the five operations as plain commands, piped
  std::vector<double> ceiling_piped_ratios;  // the five operations / plain piped
  std::vector<double> batched_ceiling_ratios;     // steps batched / the five operations
  std::vector<double> previous_rates;             // the previous release's engine
  std::vector<double> batched_previous_ratios;    // steps batched / the previous release
  std::vector<double> elsewhere_rates;            // no commit, steps batched
  std::vector<double> elsewhere_ack_only_ratios;  // no commit, steps batched / XACK only piped
  if (!o.exec.empty()) {
    // What a process boundary costs: the same engine, a handler that does nothing, in-process
    // and through ExecHandler's children.
    std::vector<double> exec_ratios;
    for (std::uint32_t rep = 1; rep <= o.repetitions; ++rep) {
      const std::string prefix = run_prefix + std::to_string(rep);
      const RunFigures in_process = run_fenced(*config, o, prefix + "n", 0, HandlerKind::nothing);
      const RunFigures exec = run_fenced(*config, o, prefix + "x", 0, HandlerKind::exec);
      print_row(rep, "in-process, no commit", in_process);
      print_row(rep, "exec child, no commit", exec);
      const double ratio = ratio_of(exec, in_process);
      exec_ratios.push_back(ratio);
      std::printf("%3u  ratio exec/in-process: %.2fx (%u children per instance: %s)\n", rep, ratio,
                  o.exec_concurrency, o.exec.c_str());
      std::fflush(stdout);
      (void)unlink_matching(admin, prefix + "*");
    }
    std::sort(exec_ratios.begin(), exec_ratios.end());
    std::printf("\nmedian ratio exec/in-process over %u repetitions: %.2fx\n", o.repetitions,
                exec_ratios[exec_ratios.size() / 2]);
    return 0;
  }
  for (std::uint32_t rep = 1; rep <= o.repetitions; ++rep) {
    const std::string prefix = run_prefix + std::to_string(rep);
    const RunFigures fenced = run_fenced(*config, o, prefix, 0);
    const RunFigures journaled = run_fenced(*config, o, prefix + "j", kTestJournalMaxlen);
    Options one_entry = o;
    one_entry.read_batch_max = 1;
    const RunFigures single_reads = run_fenced(*config, one_entry, prefix + "s", 0);
    const RunFigures with_step = run_fenced(*config, o, prefix + "c", 0, HandlerKind::step);
    Options batched = o;
    batched.step_batch_max = o.steps_batched;
    const RunFigures steps_batched =
        run_fenced(*config, batched, prefix + "b", 0, HandlerKind::step);
    const RunFigures previous =
        run_fenced(*config, o, prefix + "p", 0, HandlerKind::commit, /*previous_release=*/true);
    const RunFigures elsewhere =
        run_fenced(*config, batched, prefix + "e", 0, HandlerKind::nothing);
    elsewhere_rates.push_back(elsewhere.rate());
    const double batched_previous = ratio_of(steps_batched, previous);
    previous_rates.push_back(previous.rate());
    batched_previous_ratios.push_back(batched_previous);
    const double batched_ratio = ratio_of(steps_batched, with_step);
    batched_ratios.push_back(batched_ratio);
    batched_rates.push_back(steps_batched.rate());
    const double step_ratio = ratio_of(with_step, fenced);
    step_ratios.push_back(step_ratio);
    step_rates.push_back(with_step.rate());
    const double journal_ratio = ratio_of(journaled, fenced);
    journal_ratios.push_back(journal_ratio);
    journal_rates.push_back(journaled.rate());
    const double batch_ratio = ratio_of(fenced, single_reads);
    batch_ratios.push_back(batch_ratio);
    single_read_rates.push_back(single_reads.rate());
    if (o.fenced_only) {
      print_row(rep, "fenced engine", fenced);
      print_row(rep, "fenced + journal", journaled);
      print_row(rep, "fenced, 1-entry reads", single_reads);
      print_row(rep, "fenced, commit with step", with_step);
      print_row(rep, "fenced, steps batched", steps_batched);
      print_row(rep, kPreviousName, previous);
      print_row(rep, kElsewhereName, elsewhere);
      std::printf("%3u  ratio with journal/without: %.2fx\n", rep, journal_ratio);
      std::printf("%3u  ratio batch reads/1-entry reads: %.2fx\n", rep, batch_ratio);
      std::printf("%3u  ratio commit with step/handler's own commit: %.2fx\n", rep, step_ratio);
      std::printf("%3u  ratio steps batched/commit with step: %.2fx\n", rep, batched_ratio);
      std::printf("%3u  ratio steps batched/%s: %.2fx\n", rep, kPreviousName, batched_previous);
      (void)unlink_matching(admin, prefix + "*");
      continue;
    }
    const RunFigures single = run_plain(*config, o, prefix, PlainMode::single);
    const RunFigures batch = run_plain(*config, o, prefix, PlainMode::batch);
    const RunFigures pipelined = run_plain(*config, o, prefix, PlainMode::batch_pipelined);
    const RunFigures ceiling = run_plain(*config, o, prefix, PlainMode::five_ops_pipelined);
    const RunFigures ack_only = run_plain(*config, o, prefix, PlainMode::ack_only_pipelined);
    print_row(rep, "plain COUNT 1", single);
    print_row(rep, batch_name.c_str(), batch);
    print_row(rep, pipelined_name.c_str(), pipelined);
    print_row(rep, kCeilingName, ceiling);
    print_row(rep, "fenced engine", fenced);
    print_row(rep, "fenced + journal", journaled);
    print_row(rep, "fenced, 1-entry reads", single_reads);
    print_row(rep, "fenced, commit with step", with_step);
    print_row(rep, "fenced, steps batched", steps_batched);
    print_row(rep, kPreviousName, previous);
    print_row(rep, kAckOnlyName, ack_only);
    print_row(rep, kElsewhereName, elsewhere);
    std::printf("%3u  ratio with journal/without: %.2fx\n", rep, journal_ratio);
    std::printf("%3u  ratio batch reads/1-entry reads: %.2fx\n", rep, batch_ratio);
    std::printf("%3u  ratio commit with step/handler's own commit: %.2fx\n", rep, step_ratio);
    const double step_piped = ratio_of(with_step, pipelined);
    step_piped_ratios.push_back(step_piped);
    std::printf("%3u  ratio commit with step/%s: %.2fx\n", rep, pipelined_name.c_str(), step_piped);
    std::printf("%3u  ratio steps batched/commit with step: %.2fx\n", rep, batched_ratio);
    const double batched_piped = ratio_of(steps_batched, pipelined);
    batched_piped_ratios.push_back(batched_piped);
    std::printf("%3u  ratio steps batched/%s: %.2fx\n", rep, pipelined_name.c_str(), batched_piped);
    std::printf("%3u  ratio steps batched/%s: %.2fx\n", rep, kPreviousName, batched_previous);
    const double elsewhere_ack_only = ratio_of(elsewhere, ack_only);
    elsewhere_ack_only_ratios.push_back(elsewhere_ack_only);
    std::printf("%3u  ratio %s/%s: %.2fx\n", rep, kElsewhereName, kAckOnlyName, elsewhere_ack_only);
    const double ceiling_piped = ratio_of(ceiling, pipelined);
    const double batched_ceiling = ratio_of(steps_batched, ceiling);
    ceiling_rates.push_back(ceiling.rate());
    ceiling_piped_ratios.push_back(ceiling_piped);
    batched_ceiling_ratios.push_back(batched_ceiling);
    std::printf("%3u  ratio %s/%s: %.2fx; steps batched/%s: %.2fx\n", rep, kCeilingName,
                pipelined_name.c_str(), ceiling_piped, kCeilingName, batched_ceiling);
    const auto ratio = [&](const RunFigures& plain) { return ratio_of(fenced, plain); };
    std::printf("%3u  ratio fenced/plain: %.2fx of COUNT 1, %.2fx of %s, %.2fx of %s\n", rep,
                ratio(single), ratio(batch), batch_name.c_str(), ratio(pipelined),
                pipelined_name.c_str());
    std::fflush(stdout);
    (void)unlink_matching(admin, prefix + "*");
    const RunFigures* runs[4] = {&single, &batch, &pipelined, &fenced};
    for (int v = 0; v < 4; ++v) rates[v].push_back(runs[v]->rate());
    for (int v = 0; v < 3; ++v) ratios[v].push_back(ratio(*runs[v]));
  }
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
  };
  if (o.fenced_only) {
    std::printf("\nmedian fenced + journal %.0f events/s, with journal/without %.2fx\n",
                median(journal_rates), median(journal_ratios));
    std::printf("median batch reads/1-entry reads %.2fx\n", median(batch_ratios));
    std::printf("median commit with step %.0f events/s, commit with step/handler's own %.2fx\n",
                median(step_rates), median(step_ratios));
    std::printf("median steps batched %.0f events/s, steps batched/commit with step %.2fx\n",
                median(batched_rates), median(batched_ratios));
    std::printf("median %s %.0f events/s, steps batched/it %.2fx\n", kPreviousName,
                median(previous_rates), median(batched_previous_ratios));
    std::printf("median %s %.0f events/s\n", kElsewhereName, median(elsewhere_rates));
    return 0;
  }
  std::printf(
      "\nmedian over %u repetitions (ratio: median of the per-repetition ratios; issue 14 "
      "targets: steps batched >= 0.5x of the pipelined consumer and >= 3x the previous "
      "release)\n",
      o.repetitions);
  const char* names[4] = {"plain COUNT 1", batch_name.c_str(), pipelined_name.c_str(),
                          "fenced engine"};
  for (int v = 0; v < 4; ++v) {
    std::printf("  %-24s %9.0f events/s", names[v], median(rates[v]));
    if (v < 3) std::printf("   fenced/plain %.2fx", median(ratios[v]));
    std::printf("\n");
  }
  std::printf("  %-24s %9.0f events/s   with journal/without %.2fx\n", "fenced + journal",
              median(journal_rates), median(journal_ratios));
  std::printf("  %-24s %9.0f events/s   batch reads/1-entry reads %.2fx\n", "fenced, 1-entry reads",
              median(single_read_rates), median(batch_ratios));
  std::printf("  %-24s %9.0f events/s   /handler's own commit %.2fx   /%s %.2fx\n",
              "fenced, commit with step", median(step_rates), median(step_ratios),
              pipelined_name.c_str(), median(step_piped_ratios));
  std::printf("  %-24s %9.0f events/s   /commit with step %.2fx   /%s %.2fx\n",
              "fenced, steps batched", median(batched_rates), median(batched_ratios),
              pipelined_name.c_str(), median(batched_piped_ratios));
  std::printf("  %-24s %9.0f events/s   /%s %.2fx   steps batched/it %.2fx\n", kCeilingName,
              median(ceiling_rates), pipelined_name.c_str(), median(ceiling_piped_ratios),
              median(batched_ceiling_ratios));
  std::printf("  %-24s %9.0f events/s   steps batched/it %.2fx\n", kPreviousName,
              median(previous_rates), median(batched_previous_ratios));
  std::printf("  %-24s %9.0f events/s   /%s %.2fx\n", kElsewhereName, median(elsewhere_rates),
              kAckOnlyName, median(elsewhere_ack_only_ratios));
  std::printf("  load average at the end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) { return seqby::redis::bench::run(argc, argv); }
