// ExecHandler: events handled by child processes over JSON lines (docs/handler-protocol.md).
#include "seqby/runtime/exec_handler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>

#include "seqby/core/check.h"
#include "seqby/core/json_flat.h"
#include "seqby/runtime/sigpipe_block.h"

extern char** environ;

namespace seqby::redis {
namespace {

constexpr std::size_t kLineBytesMax = 1u << 20;  // a reply line longer than this is bad output
constexpr std::size_t kShownBytesMax = 200;      // of a bad line, in the failure's reason

std::string shown(std::string_view text) {
  std::string out;
  append_json_string(out, text.substr(0, kShownBytesMax));
  if (text.size() > kShownBytesMax) out += "...";
  return out;
}

std::uint64_t steady_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

// One child process and its pipes. Used by one exchange at a time (the free list says which).
struct ExecHandler::Child {
  std::size_t number = 0;  // 1, 2, ...
  pid_t pid = -1;
  int in = -1;             // the child's stdin (we write)
  int out = -1;            // the child's stdout (we read)
  std::string buffered;    // read from `out`, not yet a whole line
  std::thread err_copier;  // copies the child's stderr to ours until it closes

  bool running() const { return pid > 0; }
  bool started = false;  // said hello (false after a fault until the next hello)
};

ExecHandler::ExecHandler(Runtime& runtime, ExecHandlerOptions options)
    : runtime_(runtime), options_(std::move(options)) {
  SEQBY_CHECK(options_.concurrency >= 1);
  SEQBY_CHECK(!options_.command.empty());
  for (std::size_t i = 0; i < options_.concurrency; ++i) {
    children_.push_back(std::make_unique<Child>());
    children_.back()->number = i + 1;
    free_.push_back(options_.concurrency - 1 - i);  // child 1 is taken first
  }
}

std::string ExecHandler::stop_child(Child& child) {
  std::string status = "still running";
  pid_t pid = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pid = child.pid;
    child.pid = -1;
  }
  if (pid > 0) {
    ::kill(-pid, SIGKILL);  // its whole process group: what it started dies with it
    int wstatus = 0;
    pid_t reaped = -1;
    do {
      reaped = ::waitpid(pid, &wstatus, 0);
    } while (reaped < 0 && errno == EINTR);
    if (reaped == pid) {
      if (WIFEXITED(wstatus)) {
        status = "exited with status " + std::to_string(WEXITSTATUS(wstatus));
      } else if (WIFSIGNALED(wstatus)) {
        status = "was killed by signal " + std::to_string(WTERMSIG(wstatus));
      }
    }
  }
  close_fd(child.in);
  close_fd(child.out);
  child.buffered.clear();
  if (child.err_copier.joinable()) child.err_copier.join();
  return status;
}

ExecHandler::~ExecHandler() {
  // Kill first: an exchange blocked on its child's output then sees its end and returns.
  std::unique_lock<std::mutex> lock(mutex_);
  closing_ = true;
  for (const std::unique_ptr<Child>& child : children_) {
    if (child->pid > 0) ::kill(-child->pid, SIGKILL);
  }
  exchanges_done_.wait(lock, [this] { return exchanges_ == 0; });
  lock.unlock();
  for (const std::unique_ptr<Child>& child : children_) stop_child(*child);
}

void ExecHandler::log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
    return;
  }
  std::fprintf(stderr, "component=exec %s\n", line.c_str());
  std::fflush(stderr);
}

ExecHandler::Stats ExecHandler::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string ExecHandler::request_line(std::uint64_t n, const Event& event, const std::string& owner,
                                      std::uint64_t generation) {
  std::string line = "{\"n\":" + std::to_string(n) + ",\"event\":{\"category\":";
  append_json_string(line, event.category);
  line += ",\"key\":";
  append_json_string(line, event.key);
  line += ",\"id\":";
  append_json_string(line, event.id);
  line += ",\"type\":";
  append_json_string(line, event.type);
  // The data as the publisher wrote it when it is a JSON object, on one line: in valid JSON a
  // raw CR or LF can only be whitespace between tokens (inside a string it is escaped), so each
  // becomes a space. As a string (data_text) when it is not a JSON object at all.
  Result<JsonObject> data = decode_json_object(event.data);
  if (data.ok()) {
    line += ",\"data\":";
    for (const char c : event.data) line += c == '\n' || c == '\r' ? ' ' : c;
  } else {
    line += ",\"data\":null,\"data_text\":";
    append_json_string(line, event.data);
  }
  line += ",\"delivery_count\":" + std::to_string(event.delivery_count) + "},\"lease\":{\"owner\":";
  append_json_string(line, owner);
  line += ",\"generation\":" + std::to_string(generation) + ",\"token\":";
  append_json_string(line, owner + ":" + std::to_string(generation));
  line += "}}";
  return line;
}

namespace {

// Reads one line from `fd` into `line` (without its newline), waiting at most until
// `deadline_ms` (0: no bound). Returns "" or what went wrong ("end of output", "no line within
// N ms", "a line over 1 MiB").
std::string read_line(int fd, std::string& buffered, std::string& line, std::uint64_t deadline_ms) {
  for (;;) {
    const std::size_t newline = buffered.find('\n');
    if (newline != std::string::npos) {
      line = buffered.substr(0, newline);
      buffered.erase(0, newline + 1);
      return "";
    }
    if (buffered.size() > kLineBytesMax) return "a line over 1 MiB";
    int timeout = -1;
    if (deadline_ms > 0) {
      const std::uint64_t now = steady_ms();
      if (now >= deadline_ms) return "no line within the time allowed";
      timeout = static_cast<int>(std::min<std::uint64_t>(deadline_ms - now, INT_MAX));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return std::string("poll: ") + std::strerror(errno);
    }
    if (ready == 0) continue;  // the deadline check above decides
    char chunk[65536];
    const ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return std::string("read: ") + std::strerror(errno);
    }
    if (got == 0) return "end of output";
    buffered.append(chunk, static_cast<std::size_t>(got));
  }
}

// Writes all of `text` to `fd`; "" or what went wrong.
std::string write_all(int fd, std::string_view text) {
  SigpipeBlock no_sigpipe;  // a child that exited: EPIPE, not the worker's death
  while (!text.empty()) {
    const ssize_t put = ::write(fd, text.data(), text.size());
    if (put < 0) {
      if (errno == EINTR) continue;
      return std::string("write: ") + std::strerror(errno);
    }
    text.remove_prefix(static_cast<std::size_t>(put));
  }
  return "";
}

}  // namespace

std::string ExecHandler::hello_fault(std::string_view line) {
  Result<JsonObject> parsed = decode_json_object(line);
  const JsonObject* fields = parsed.ok() ? &parsed.value() : nullptr;
  const auto version = fields != nullptr ? fields->find("protocol") : JsonObject::const_iterator{};
  if (fields == nullptr || version == fields->end() ||
      !std::holds_alternative<std::int64_t>(version->second)) {
    return "wrote a hello that is not {\"protocol\": N, ...}: " + shown(line);
  }
  if (std::get<std::int64_t>(version->second) != kExecProtocolVersion) {
    return "speaks protocol " + std::to_string(std::get<std::int64_t>(version->second)) +
           "; this worker speaks " + std::to_string(kExecProtocolVersion);
  }
  return "";
}

ExecHandler::ReplyRead ExecHandler::read_reply(std::string_view line, std::uint64_t n,
                                               std::size_t child_number) {
  Result<JsonObject> parsed = decode_json_object(line);
  if (!parsed.ok()) {
    return {
        "wrote a line that is not a JSON object (" + parsed.error().message + "): " + shown(line),
        {}};
  }
  const JsonObject& fields = parsed.value();
  const auto number = fields.find("n");
  const auto ok = fields.find("ok");
  if (number == fields.end() || !std::holds_alternative<std::int64_t>(number->second) ||
      std::get<std::int64_t>(number->second) != static_cast<std::int64_t>(n)) {
    return {"replied out of turn (expected \"n\": " + std::to_string(n) + "): " + shown(line), {}};
  }
  if (ok == fields.end() || !std::holds_alternative<bool>(ok->second)) {
    return {"wrote a reply without a boolean \"ok\": " + shown(line), {}};
  }
  if (std::get<bool>(ok->second)) return {"", HandlerResult::success()};
  const auto reason = fields.find("reason");
  std::string why = "exec handler child=" + std::to_string(child_number) + " failed the event";
  if (reason != fields.end() && std::holds_alternative<std::string>(reason->second)) {
    why += ": " + std::get<std::string>(reason->second);
  }
  return {"", HandlerResult::failed(why)};
}

ExecHandler::Outcome ExecHandler::exchange(Child& child, const std::string& line, std::uint64_t n,
                                           const std::string& event_id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_)
      return Outcome{HandlerResult::failed("exec handler: the worker is stopping"), true};
    ++exchanges_;
  }
  child.started = child.running();
  HandlerResult result = exchange_with(child, line, n, event_id);
  std::lock_guard<std::mutex> lock(mutex_);
  if (result.ok) {
    ++stats_.handled;
  } else if (child.started) {
    ++stats_.failed;
  }
  --exchanges_;
  exchanges_done_.notify_all();
  return Outcome{std::move(result), child.started};
}

HandlerResult ExecHandler::exchange_with(Child& child, const std::string& line, std::uint64_t n,
                                         const std::string& event_id) {
  const std::string who = "child=" + std::to_string(child.number);
  // Ends the child after a fault: `what` says what it did; the event fails with it.
  auto fault = [&](const std::string& what) {
    const pid_t pid = child.pid;
    const std::string status = stop_child(child);
    bool closing = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.faults;
      closing = closing_;
    }
    const std::string reason = "exec handler " + who + " pid=" + std::to_string(pid) + " " + what;
    log("event=handler_fault " + who + " pid=" + std::to_string(pid) + " event_id=" + event_id +
        " what=" + shown(what) + " then=" + shown(status) +
        (closing ? "; the worker stops" : "; it is started again"));
    return HandlerResult::failed(reason);
  };

  if (!child.running()) {
    int to_child[2] = {-1, -1};
    int from_child[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0 ||
        ::pipe2(err_pipe, O_CLOEXEC) != 0) {
      const std::string why = std::strerror(errno);
      for (int* p : {to_child, from_child, err_pipe}) {
        close_fd(p[0]);
        close_fd(p[1]);
      }
      return HandlerResult::failed("exec handler " + who + " could not be started: pipe: " + why);
    }
    // Everything the child needs, built before fork (only async-signal-safe calls after it).
    const std::string number_env = "SEQBY_HANDLER_CHILD=" + std::to_string(child.number);
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
    envp.push_back(const_cast<char*>(number_env.c_str()));
    envp.push_back(nullptr);
    const char* argv[] = {"/bin/sh", "-c", options_.command.c_str(), nullptr};
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      ::dup2(err_pipe[1], 2);
      ::execve("/bin/sh", const_cast<char* const*>(argv), envp.data());
      ::_exit(127);
    }
    close_fd(to_child[0]);
    close_fd(from_child[1]);
    close_fd(err_pipe[1]);
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      close_fd(to_child[1]);
      close_fd(from_child[0]);
      close_fd(err_pipe[0]);
      return HandlerResult::failed("exec handler " + who + " could not be started: fork: " + why);
    }
    ::setpgid(pid, pid);  // also from here: whichever runs first
    {
      std::lock_guard<std::mutex> lock(mutex_);
      child.pid = pid;
      if (closing_) ::kill(-pid, SIGKILL);  // the destructor's kill came before this pid
    }
    child.in = to_child[1];
    child.out = from_child[0];
    child.buffered.clear();
    const int err_fd = err_pipe[0];
    const std::string prefix = "component=exec child=" + std::to_string(child.number) +
                               " pid=" + std::to_string(pid) + " stderr: ";
    child.err_copier = std::thread([err_fd, prefix] {
      std::string pending;
      char chunk[4096];
      for (;;) {
        const ssize_t got = ::read(err_fd, chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        pending.append(chunk, static_cast<std::size_t>(got));
        std::size_t newline;
        while ((newline = pending.find('\n')) != std::string::npos) {
          std::string out = prefix + pending.substr(0, newline) + "\n";
          std::fwrite(out.data(), 1, out.size(), stderr);
          pending.erase(0, newline + 1);
        }
      }
      if (!pending.empty()) {
        std::string out = prefix + pending + "\n";
        std::fwrite(out.data(), 1, out.size(), stderr);
      }
      std::fflush(stderr);
      ::close(err_fd);
    });
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.starts;
    }
    log("event=handler_start " + who + " pid=" + std::to_string(pid) +
        " command=" + shown(options_.command));
    std::string hello;
    const std::string missing =
        read_line(child.out, child.buffered, hello, steady_ms() + options_.hello_timeout_ms);
    if (!missing.empty()) return fault("sent no hello line (" + missing + ")");
    const std::string bad_hello = hello_fault(hello);
    if (!bad_hello.empty()) return fault(bad_hello);
    child.started = true;
  }

  const std::string sent = write_all(child.in, line + "\n");
  if (!sent.empty()) return fault("could not be given the event (" + sent + ")");
  std::string reply;
  const std::string got = read_line(child.out, child.buffered, reply, 0);
  if (!got.empty()) return fault("gave no reply (" + got + ")");
  ReplyRead read = read_reply(reply, n, child.number);
  if (!read.fault.empty()) return fault(read.fault);
  return std::move(read.result);
}

Task<HandlerResult> ExecHandler::handle(const Event& event, HandlerContext& context) {
  while (free_.empty()) {
    Alarm alarm;
    waiting_.push_back(&alarm);
    const bool rung = co_await runtime_.wait_alarm(alarm, 60'000);
    if (!rung) std::erase(waiting_, &alarm);
  }
  const std::size_t index = free_.back();
  free_.pop_back();
  Child& child = *children_[index];
  // What the blocking exchange reads and writes: owned by it too, so a task torn down while
  // its exchange runs leaves it nothing dangling.
  struct Turn {
    std::uint64_t n = 0;
    std::string line;
    std::string event_id;
    Outcome outcome;
  };
  auto turn = std::make_shared<Turn>();
  turn->n = ++next_n_;
  turn->line = request_line(turn->n, event, context.owner_id(), context.generation());
  turn->event_id = event.id;
  // A child that does not start (no hello: a mistyped command, a crash on start, another
  // protocol) fails no event: the event waits, and the start is tried again after a backoff.
  for (std::uint32_t attempt = 1;; ++attempt) {
    std::function<void()> work = [this, &child, turn] {
      turn->outcome = exchange(child, turn->line, turn->n, turn->event_id);
    };
    Task<void> blocking = runtime_.run_blocking(std::move(work));
    co_await blocking;
    if (turn->outcome.started) break;
    const std::uint64_t backoff_ms =
        std::min<std::uint64_t>(kStartBackoffMaxMs, kStartBackoffMs << std::min(attempt - 1, 6u));
    log("event=handler_not_started child=" + std::to_string(child.number) +
        " event_id=" + event.id + " attempt=" + std::to_string(attempt) + " retry_in_ms=" +
        std::to_string(backoff_ms) + " (the event waits; its partition does not halt)");
    co_await runtime_.sleep_ms(backoff_ms);
  }
  const HandlerResult result = turn->outcome.result;
  free_.push_back(index);
  if (!waiting_.empty()) {
    Alarm* next = waiting_.front();
    waiting_.pop_front();
    next->ring();
  }
  co_return result;
}

}  // namespace seqby::redis
