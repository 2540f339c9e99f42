#include "seqby/hiredis/hiredis_link.h"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <optional>

#include "hiredis_common.h"
#include "seqby/core/broker.h"
#include "seqby/core/check.h"

namespace seqby::redis {
namespace {

struct AsyncFree {
  void operator()(redisAsyncContext* ac) const { redisAsyncFree(ac); }
};
using AsyncContextPtr = std::unique_ptr<redisAsyncContext, AsyncFree>;

}  // namespace

class HiredisLink::Impl {
 public:
  // One execute() call. Resolved exactly once; `link` is valid while it is unresolved.
  struct Op {
    // The command: its own, or command `prepared_index` of `prepared` (execute_prepared), which
    // is sent in its kept wire form.
    Command own_command;
    std::shared_ptr<const PreparedCommands> prepared;
    std::size_t prepared_index = 0;
    const Command& command() const {
      return prepared ? prepared->commands()[prepared_index] : own_command;
    }
    Impl* link = nullptr;
    std::optional<Result<Reply>> result;
    std::coroutine_handle<> waiter;
    RealRuntime::TimerId deadline_timer = 0;
    bool sent = false;
    bool asking = false;           // sent right after an ASKING of its own (execute_asking)
    std::uint64_t sent_epoch = 0;  // the connection attempt it was sent on
    // Called once the result is set (a group WAIT's own op only).
    std::function<void(const std::shared_ptr<Op>&)> on_resolved;
  };
  using OpPtr = std::shared_ptr<Op>;

  // One durable command's share of a group WAIT (execute_replicated): the answer of the first
  // WAIT sent after the command, on the connection it was sent on.
  struct WaitShare {
    OpPtr command;
    std::optional<Result<Reply>> result;
    std::coroutine_handle<> waiter;
  };
  using SharePtr = std::shared_ptr<WaitShare>;
  struct ShareAwaiter {
    SharePtr share;
    bool await_ready() const noexcept { return share->result.has_value(); }
    void await_suspend(std::coroutine_handle<> h) noexcept { share->waiter = h; }
    Result<Reply> await_resume() { return std::move(*share->result); }
    ~ShareAwaiter() { share->waiter = {}; }
  };

  // The task waiting for `op` is gone (torn down): a command not yet sent is never sent.
  static void abandon(const OpPtr& op) {
    if (!op->result && !op->sent) {
      op->link->resolve(op, make_error(Errc::closed, "the waiting task was destroyed"));
    }
  }

  struct OpAwaiter {
    OpPtr op;
    bool await_ready() const noexcept { return op->result.has_value(); }
    void await_suspend(std::coroutine_handle<> h) noexcept { op->waiter = h; }
    Result<Reply> await_resume() { return std::move(*op->result); }
    ~OpAwaiter() {
      op->waiter = {};
      abandon(op);
    }
  };

  // The ops of one execute_many, each abandoned with its task as OpAwaiter's is.
  struct Started {
    std::vector<OpPtr> ops;
    ~Started() {
      for (const OpPtr& op : ops) abandon(op);
    }
  };

  // A handshake command (AUTH, SELECT, PING) of connection attempt `epoch`.
  struct HandshakeStep {
    std::uint64_t epoch;
    std::string name;
    bool last;
  };

  Impl(RealRuntime& runtime, RedisConfig config)
      : runtime_(runtime), config_(std::move(config)), url_(redacted_url(config_)) {}

  ~Impl() {
    SEQBY_CHECK(runtime_.on_loop());
    destroying_ = true;  // a group WAIT that ends now sends no next one
    runtime_.cancel_timer(connect_timer_);
    drop(make_error(Errc::closed, "the link to " + url_ + " was destroyed"));
    fail_waiting(make_error(Errc::closed, "the link to " + url_ + " was destroyed"));
    for (const SharePtr& share : next_group_.shares) {
      settle(share, make_error(Errc::closed, "the link to " + url_ + " was destroyed"));
    }
  }

  // The durable command `command` waits for a WAIT sent after it. WAIT holds its client on the
  // server until replicas acknowledge (the commands pipelined behind it wait too), and one WAIT
  // confirms every earlier write of its connection: so one WAIT is out at a time, and the
  // commands sent while it is out share the next one (a group commit), sent when it returns.
  SharePtr join_wait(const OpPtr& command, std::uint32_t replicas, std::uint64_t timeout_ms) {
    auto share = std::make_shared<WaitShare>();
    share->command = command;
    if (command->result && !command->sent) {
      share->result = make_error(Errc::closed, "its command was not sent");
      return share;
    }
    next_group_.replicas = std::max(next_group_.replicas, replicas);
    next_group_.timeout_ms = std::max(next_group_.timeout_ms, timeout_ms);
    next_group_.shares.push_back(share);
    if (!wait_out_) send_group_wait();
    return share;
  }

  OpPtr start(Command command, bool asking) {
    auto op = std::make_shared<Op>();
    op->own_command = std::move(command);
    return start(op, asking);
  }

  // Command `index` of `prepared`, sent in its wire form.
  OpPtr start(std::shared_ptr<const PreparedCommands> prepared, std::size_t index) {
    auto op = std::make_shared<Op>();
    op->prepared = std::move(prepared);
    op->prepared_index = index;
    return start(op, /*asking=*/false);
  }

  OpPtr start(const OpPtr& op, bool asking) {
    SEQBY_CHECK(runtime_.on_loop());
    op->link = this;
    op->asking = asking;
    if (op->command().empty()) {
      op->result = make_error(Errc::invalid, "empty command");
      return op;
    }
    if (outstanding_ >= config_.pending_commands_max) {
      op->result = make_error(Errc::closed, "too many commands waiting on " + url_ + " (" +
                                                std::to_string(outstanding_) + ")");
      return op;
    }
    ++outstanding_;
    op->deadline_timer =
        runtime_.add_timer(config_.command_timeout_ms, [this, op] { on_deadline(op); });
    if (state_ == State::ready) {
      send(op);
      return op;
    }
    if (state_ == State::idle) {
      const std::uint64_t now_ms = runtime_.clock().now_ms();
      if (now_ms < next_attempt_ms_) {
        resolve(op, make_error(Errc::closed, "not connected to " + url_ + " (next attempt in " +
                                                 std::to_string(next_attempt_ms_ - now_ms) +
                                                 " ms): " + last_error_));
        return op;
      }
      waiting_.push_back(op);
      connect();
      return op;
    }
    SEQBY_CHECK(waiting_.size() < config_.pending_commands_max);
    waiting_.push_back(op);
    return op;
  }

  void disconnect() { drop(make_error(Errc::closed, "disconnected from " + url_ + " on request")); }
  bool connected() const { return state_ == State::ready; }
  void set_connection_observer(ConnectionObserver observer) {
    SEQBY_CHECK(runtime_.on_loop());
    observer_ = std::move(observer);
  }
  const Stats& stats() const { return stats_; }
  const RedisConfig& config() const { return config_; }

 private:
  enum class State { idle, connecting, ready };

  void resolve(const OpPtr& op, Result<Reply> result) {
    if (op->result) return;
    op->result = std::move(result);
    runtime_.cancel_timer(op->deadline_timer);
    SEQBY_CHECK(outstanding_ > 0);
    --outstanding_;
    if (op->waiter) {
      runtime_.defer([op] {
        if (op->waiter) std::exchange(op->waiter, {}).resume();
      });
    }
    if (op->on_resolved) std::exchange(op->on_resolved, {})(op);
  }

  struct WaitGroup {
    std::uint32_t replicas = 0;
    std::uint64_t timeout_ms = 0;
    std::vector<SharePtr> shares;
  };

  void send_group_wait() {
    WaitGroup group = std::exchange(next_group_, WaitGroup{});
    if (group.shares.empty() || destroying_) return;
    wait_out_ = true;
    OpPtr wait =
        start(Command{"WAIT", std::to_string(group.replicas), std::to_string(group.timeout_ms)},
              /*asking=*/false);
    auto finish = [this, group = std::move(group)](const OpPtr& done) {
      wait_out_ = false;
      for (const SharePtr& share : group.shares) {
        const Op& command = *share->command;
        if (!done->result->ok()) {
          settle(share, done->result->error());
        } else if (!command.sent || !done->sent || command.sent_epoch != done->sent_epoch) {
          // The connection was replaced between them: this WAIT says nothing of the command.
          settle(share, make_error(Errc::closed, "the connection was lost between " +
                                                     hiredis::describe(command.command()) +
                                                     " and its WAIT"));
        } else {
          settle(share, *done->result);
        }
      }
      // Not from inside this resolution: it may come from a connection being torn down.
      runtime_.defer([this, alive = std::weak_ptr<int>(alive_)] {
        if (!alive.expired()) send_group_wait();
      });
    };
    if (wait->result) {
      finish(wait);  // failed at once (not connected, too many commands)
    } else {
      wait->on_resolved = std::move(finish);
    }
  }

  void settle(const SharePtr& share, Result<Reply> result) {
    share->result = std::move(result);
    if (share->waiter) {
      runtime_.defer([share] {
        if (share->waiter) std::exchange(share->waiter, {}).resume();
      });
    }
  }

  void fail_waiting(const Error& error) {
    std::deque<OpPtr> waiting;
    waiting.swap(waiting_);
    for (const OpPtr& op : waiting) resolve(op, error);
  }

  void on_deadline(const OpPtr& op) {
    op->deadline_timer = 0;
    if (op->result) return;
    const std::string limit = std::to_string(config_.command_timeout_ms) + " ms";
    if (!op->sent) {
      resolve(op, make_error(Errc::closed, "no connection to " + url_ + " within " + limit + " (" +
                                               hiredis::describe(op->command()) + " not sent)" +
                                               (last_error_.empty() ? "" : ": " + last_error_)));
      return;
    }
    ++stats_.timeouts;
    resolve(op, make_error(Errc::timeout, hiredis::describe(op->command()) + " on " + url_ +
                                              ": no reply within " + limit));
    // Later replies can no longer be trusted to pair up with their commands.
    drop(make_error(Errc::closed, "connection to " + url_ +
                                      " recycled after a command timed out; the command may or "
                                      "may not have run"));
  }

  // --- connection -----------------------------------------------------------------------------

  void connect() {
    SEQBY_CHECK(state_ == State::idle && !context_);
    ++epoch_;
    ++stats_.connect_attempts;
    state_ = State::connecting;
    refused_command_.clear();
    refusal_.clear();
    const std::string what = "connect to " + url_;
    errno = 0;
    redisAsyncContext* ac = redisAsyncConnect(config_.host.c_str(), config_.port);
    if (ac == nullptr) {
      connect_failed(make_error(Errc::closed, what + ": out of memory"));
      return;
    }
    if (ac->err != 0) {
      Error error = hiredis::error_from_hiredis(ac->err, ac->errstr, errno, what);
      redisAsyncFree(ac);
      connect_failed(error);
      return;
    }
    context_.reset(ac);
    watch_ = runtime_.watch_fd(ac->c.fd,
                               [this](bool readable, bool writable) { on_io(readable, writable); });
    ac->ev.data = this;
    ac->ev.addRead = [](void* self) { static_cast<Impl*>(self)->want(true, std::nullopt); };
    ac->ev.delRead = [](void* self) { static_cast<Impl*>(self)->want(false, std::nullopt); };
    ac->ev.addWrite = [](void* self) { static_cast<Impl*>(self)->want(std::nullopt, true); };
    ac->ev.delWrite = [](void* self) { static_cast<Impl*>(self)->want(std::nullopt, false); };
    ac->ev.cleanup = [](void* self) { static_cast<Impl*>(self)->on_cleanup(); };
    redisAsyncSetConnectCallback(ac, [](const redisAsyncContext*, int) {});

    std::vector<Command> steps = hiredis::handshake_commands(config_);
    steps.push_back({"PING"});  // also proves the server answers, not only its kernel
    for (std::size_t i = 0; i < steps.size(); ++i) {
      auto* step = new HandshakeStep{epoch_, steps[i].front(), i + 1 == steps.size()};
      hiredis::Argv argv(steps[i]);
      if (redisAsyncCommandArgv(ac, &Impl::on_handshake_reply, step, argv.argc(),
                                argv.pointers.data(), argv.lengths.data()) != REDIS_OK) {
        delete step;
        drop(make_error(Errc::closed, what + ": could not queue the handshake"));
        return;
      }
    }
    const std::uint64_t epoch = epoch_;
    connect_timer_ = runtime_.add_timer(config_.connect_timeout_ms, [this, epoch, what] {
      connect_timer_ = 0;
      if (epoch_ != epoch || state_ != State::connecting) return;
      drop(make_error(Errc::closed, what + ": no connection within " +
                                        std::to_string(config_.connect_timeout_ms) + " ms"));
    });
  }

  // Drops the current connection, if any, from outside hiredis callbacks: in-flight commands
  // and a handshake under way fail with `reason`.
  void drop(const Error& reason) {
    if (!context_) return;
    dropping_ = true;
    drop_reason_ = reason;
    context_.reset();  // redisAsyncFree: pending callbacks get NULL replies, then cleanup
    dropping_ = false;
  }

  void connect_failed(const Error& error) {
    state_ = State::idle;
    runtime_.cancel_timer(connect_timer_);
    connect_timer_ = 0;
    ++failures_in_row_;
    const int shift = static_cast<int>(std::min<std::uint64_t>(failures_in_row_ - 1, 30));
    const std::uint64_t backoff_ms =
        std::min(config_.reconnect_backoff_max_ms, config_.reconnect_backoff_min_ms << shift);
    next_attempt_ms_ = runtime_.clock().now_ms() + backoff_ms;
    last_error_ = error.message;
    ConnectionEvent event;
    event.kind = ConnectionEvent::Kind::connect_failed;
    event.error = error.message;
    event.refused_command = refused_command_;
    event.refusal = refusal_;
    event.final = !refused_command_.empty() && refusal_is_final(refused_command_, refusal_);
    event.failures_in_row = failures_in_row_;
    event.retry_in_ms = backoff_ms;
    event.backoff_at_max = backoff_ms >= config_.reconnect_backoff_max_ms;
    notify(std::move(event));
    fail_waiting(error);
  }

  // Hands `event` to the observer on the loop's next turn (not from inside hiredis), unless the
  // link is gone by then.
  void notify(ConnectionEvent event) {
    if (!observer_) return;
    std::weak_ptr<int> alive = alive_;
    runtime_.defer([this, alive, event = std::move(event)] {
      if (alive.expired() || !observer_) return;
      observer_(event);
    });
  }

  // --- hiredis event hooks (called from inside hiredis) -----------------------------------------

  void want(std::optional<bool> read, std::optional<bool> write) {
    if (read) read_wanted_ = *read;
    if (write) write_wanted_ = *write;
    if (watch_ != 0) runtime_.set_interest(watch_, read_wanted_, write_wanted_);
  }

  void on_io(bool readable, bool writable) {
    redisAsyncContext* ac = context_.get();
    if (ac == nullptr) return;
    if (readable) redisAsyncHandleRead(ac);
    if (writable && context_.get() == ac) redisAsyncHandleWrite(ac);
  }

  // hiredis is freeing the context: on an error, or because we dropped it.
  void on_cleanup() {
    redisAsyncContext* ac = context_.release();  // null when drop() is freeing it
    if (watch_ != 0) runtime_.unwatch(watch_);
    watch_ = 0;
    read_wanted_ = write_wanted_ = false;
    const bool was_ready = state_ == State::ready;
    const std::string what = (was_ready ? "connection to " : "connect to ") + url_;
    const Error reason = ac == nullptr ? drop_reason_ : context_error(ac, what);
    state_ = State::idle;
    if (was_ready) {
      last_error_ = reason.message;  // the next command reconnects at once
      ConnectionEvent event;
      event.kind = ConnectionEvent::Kind::lost;
      event.error = reason.message;
      notify(std::move(event));
    } else {
      connect_failed(pending_handshake_error_ ? *pending_handshake_error_ : reason);
    }
    pending_handshake_error_.reset();
  }

  Error context_error(const redisAsyncContext* ac, const std::string& what) const {
    if (dropping_) return drop_reason_;
    return hiredis::error_from_hiredis(ac->err, ac->errstr, errno, what);
  }

  static void on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
    std::unique_ptr<OpPtr> box(static_cast<OpPtr*>(privdata));
    const OpPtr op = std::move(*box);
    auto* self = static_cast<Impl*>(ac->ev.data);
    SEQBY_CHECK(self->in_flight_ > 0);
    --self->in_flight_;
    if (op->result) return;  // timed out already
    if (reply == nullptr) {
      self->resolve(
          op, self->context_error(ac, hiredis::describe(op->command()) + " on " + self->url_));
      return;
    }
    self->resolve(op, hiredis::convert_reply(static_cast<const redisReply*>(reply)));
  }

  static void on_handshake_reply(redisAsyncContext* ac, void* reply, void* privdata) {
    std::unique_ptr<HandshakeStep> step(static_cast<HandshakeStep*>(privdata));
    auto* self = static_cast<Impl*>(ac->ev.data);
    if (reply == nullptr || self->epoch_ != step->epoch) return;  // cleanup reports the failure
    Result<Reply> converted = hiredis::convert_reply(static_cast<const redisReply*>(reply));
    std::optional<Error> error;
    if (!converted.ok()) {
      error = converted.error();
    } else if (converted.value().is_error()) {
      error = make_error(Errc::closed, "connect to " + self->url_ + ": " + step->name +
                                           " refused: " + converted.value().str);
    }
    if (error) {
      if (self->pending_handshake_error_) return;  // the first refusal is the one to report
      self->pending_handshake_error_ = *error;
      if (converted.ok()) {
        self->refused_command_ = step->name;
        self->refusal_ = converted.value().str;
      }
      // Not from inside a hiredis callback: drop on the loop's next turn.
      const std::uint64_t epoch = step->epoch;
      std::weak_ptr<int> alive = self->alive_;
      self->runtime_.defer([self, epoch, alive, error] {
        if (alive.expired() || self->epoch_ != epoch || self->state_ != State::connecting) return;
        self->drop(*error);
      });
      return;
    }
    if (step->last && !self->pending_handshake_error_) self->on_ready();
  }

  void on_ready() {
    runtime_.cancel_timer(connect_timer_);
    connect_timer_ = 0;
    state_ = State::ready;
    if (failures_in_row_ > 0) {
      ConnectionEvent event;
      event.kind = ConnectionEvent::Kind::connected;
      event.failures_in_row = failures_in_row_;
      notify(std::move(event));
    }
    failures_in_row_ = 0;
    next_attempt_ms_ = 0;
    ++stats_.connects;
    std::deque<OpPtr> waiting;
    waiting.swap(waiting_);
    for (const OpPtr& op : waiting) {
      if (!op->result) send(op);
    }
  }

  void send(const OpPtr& op) {
    SEQBY_CHECK(state_ == State::ready && context_);
    // ASKING holds for the connection's next command only: queued in the same turn, nothing
    // can come between them. Its reply (+OK) is discarded by hiredis (no callback).
    if (op->asking && redisAsyncCommand(context_.get(), nullptr, nullptr, "ASKING") != REDIS_OK) {
      resolve(op, make_error(Errc::closed, "ASKING before " + hiredis::describe(op->command()) +
                                               " on " + url_ +
                                               ": the connection is going down (not sent)"));
      return;
    }
    auto box = std::make_unique<OpPtr>(op);
    int queued = REDIS_ERR;
    if (op->prepared) {
      const std::string& wire = op->prepared->wire(op->prepared_index);
      queued = redisAsyncFormattedCommand(context_.get(), &Impl::on_reply, box.get(), wire.data(),
                                          wire.size());
    } else {
      hiredis::Argv argv(op->own_command);
      queued = redisAsyncCommandArgv(context_.get(), &Impl::on_reply, box.get(), argv.argc(),
                                     argv.pointers.data(), argv.lengths.data());
    }
    if (queued != REDIS_OK) {
      resolve(op, make_error(Errc::closed, hiredis::describe(op->command()) + " on " + url_ +
                                               ": the connection is going down (not sent)"));
      return;
    }
    box.release();  // on_reply owns it now; hiredis calls it exactly once
    op->sent = true;
    op->sent_epoch = epoch_;
    ++in_flight_;
    ++stats_.commands_sent;
    stats_.in_flight_max = std::max<std::uint64_t>(stats_.in_flight_max, in_flight_);
  }

  RealRuntime& runtime_;
  const RedisConfig config_;
  const std::string url_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // for deferred work: is `this` alive

  AsyncContextPtr context_;
  State state_ = State::idle;
  RealRuntime::WatchId watch_ = 0;
  bool read_wanted_ = false;
  bool write_wanted_ = false;
  RealRuntime::TimerId connect_timer_ = 0;
  std::uint64_t epoch_ = 0;  // connection attempts so far
  std::optional<Error> pending_handshake_error_;
  std::string refused_command_;  // the handshake command the server refused this attempt, if any
  std::string refusal_;          // and its error reply
  ConnectionObserver observer_;
  bool dropping_ = false;
  Error drop_reason_{Errc::closed, ""};

  std::uint64_t failures_in_row_ = 0;
  std::uint64_t next_attempt_ms_ = 0;
  std::string last_error_;

  std::deque<OpPtr> waiting_;    // waiting for the handshake to complete
  std::size_t outstanding_ = 0;  // unresolved commands (waiting or in flight)
  std::size_t in_flight_ = 0;    // sent commands whose callback has not run
  Stats stats_;
  bool wait_out_ = false;  // a group WAIT is sent and unanswered
  WaitGroup next_group_;   // the durable commands sent since, for the next WAIT
  bool destroying_ = false;
};

HiredisLink::HiredisLink(RealRuntime& runtime, RedisConfig config)
    : impl_(std::make_unique<Impl>(runtime, std::move(config))) {}

HiredisLink::~HiredisLink() = default;

Task<Result<Reply>> HiredisLink::execute(Command command) {
  Impl::OpAwaiter awaiter{impl_->start(std::move(command), /*asking=*/false)};
  // After the resumption only the awaiter is touched: the link may be gone by then.
  co_return co_await awaiter;
}

Task<Result<Reply>> HiredisLink::execute_asking(Command command) {
  Impl::OpAwaiter awaiter{impl_->start(std::move(command), /*asking=*/true)};
  co_return co_await awaiter;
}

Task<std::vector<Result<Reply>>> HiredisLink::execute_many(std::vector<Command> commands) {
  std::vector<Result<Reply>> out =
      co_await execute_prepared(std::make_shared<const PreparedCommands>(std::move(commands)));
  co_return out;
}

Task<std::vector<Result<Reply>>> HiredisLink::execute_prepared(
    std::shared_ptr<const PreparedCommands> prepared) {
  Impl::Started started;
  started.ops.reserve(prepared->commands().size());
  for (std::size_t i = 0; i < prepared->commands().size(); ++i) {
    started.ops.push_back(impl_->start(prepared, i));
  }
  std::vector<Result<Reply>> out;
  out.reserve(started.ops.size());
  // After a resumption only the ops are touched: the link may be gone by then.
  for (const Impl::OpPtr& op : started.ops) {
    Impl::OpAwaiter awaiter{op};
    Result<Reply> reply = co_await awaiter;
    out.push_back(std::move(reply));
  }
  co_return out;
}

Task<Result<ReplicatedReply>> HiredisLink::execute_replicated(Command command,
                                                              std::uint32_t replicas,
                                                              std::uint64_t timeout_ms) {
  Result<ReplicatedReply> out =
      co_await execute_replicated(std::move(command), replicas, timeout_ms, /*asking=*/false);
  co_return out;
}

Task<Result<ReplicatedReply>> HiredisLink::execute_replicated(Command command,
                                                              std::uint32_t replicas,
                                                              std::uint64_t timeout_ms,
                                                              bool asking) {
  // The command now, then the first WAIT sent after it (Impl::join_wait): the WAIT's answer
  // counts only when both went on one connection.
  Impl::OpAwaiter first{impl_->start(std::move(command), asking)};
  Impl::ShareAwaiter wait{impl_->join_wait(first.op, replicas, timeout_ms)};
  Result<Reply> reply = co_await first;
  Result<Reply> waited = co_await wait;
  if (!reply.ok()) co_return reply.error();
  ReplicatedReply out{std::move(reply).value(), -1, ""};
  if (!waited.ok()) {
    out.wait_error = waited.error().message;
  } else if (waited.value().kind == Reply::Kind::integer) {
    out.replicas = waited.value().integer;
  } else {
    out.wait_error = "WAIT answered " + to_string(waited.value());
  }
  co_return out;
}

void HiredisLink::disconnect() { impl_->disconnect(); }
void HiredisLink::set_connection_observer(ConnectionObserver observer) {
  impl_->set_connection_observer(std::move(observer));
}
bool HiredisLink::connected() const { return impl_->connected(); }
HiredisLink::Stats HiredisLink::stats() const { return impl_->stats(); }
const RedisConfig& HiredisLink::config() const { return impl_->config(); }

RedisConfig HiredisWakeLinks::wake_config(RedisConfig config) {
  config.command_timeout_ms += kWakeBlockMsMax;
  return config;
}

HiredisWakeLinks::HiredisWakeLinks(RealRuntime& runtime, RedisConfig config)
    : runtime_(runtime), config_(wake_config(std::move(config))) {}

std::function<RedisLink*(std::size_t)> HiredisWakeLinks::source() {
  return [this](std::size_t channel) -> RedisLink* {
    while (links_.size() <= channel) {
      links_.push_back(std::make_unique<HiredisLink>(runtime_, config_));
    }
    return links_[channel].get();
  };
}

std::uint64_t HiredisWakeLinks::commands_sent() const {
  std::uint64_t sent = 0;
  for (const std::unique_ptr<HiredisLink>& link : links_) sent += link->stats().commands_sent;
  return sent;
}

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool refusal_is_final(std::string_view command, std::string_view refusal) {
  if (starts_with(refusal, "NOAUTH") || starts_with(refusal, "WRONGPASS") ||
      starts_with(refusal, "NOPERM")) {
    return true;
  }
  // "ERR invalid password", "ERR Client sent AUTH, but no password is set", "ERR AUTH <password>
  // called without any password configured ...": an ERR that is not about the password (the
  // server's "max number of clients reached" may come as the first reply, AUTH's) is no verdict.
  if (command == "AUTH" && starts_with(refusal, "ERR") &&
      refusal.find("password") != std::string_view::npos) {
    return true;
  }
  if (command == "SELECT" && starts_with(refusal, "ERR") &&
      refusal.find("DB index") != std::string_view::npos) {
    return true;
  }
  // A cluster link's slot map, from a server that is no cluster node.
  return command == "CLUSTER|SLOTS" &&
         starts_with(refusal, "ERR This instance has cluster support disabled");
}

}  // namespace seqby::redis
