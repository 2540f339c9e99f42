// The Python exec handler of examples/python (issue 15 item 2) against a real redis-server: two
// `seqby worker --exec 'python3 ledger.py'` processes share one SQLite ledger. One is SIGKILLed
// inside an event, after its child's commit and before its reply: the next owner's re-run of that
// event is absorbed by the database. The other is SIGSTOPped inside an event, before its child's
// write, past its lease: a third worker takes over with a newer generation and applies the event
// and its partition's rest; then the stopped worker is continued and its child's write arrives
// stale and is refused inside the database's transaction. The final ledger equals applying every
// published event once, in stream order, per key. The pauses are the handler's test hooks (a
// marker file, then wait for a go file), so every fault lands where it should without a timing
// guess; every wait is bounded and polls the database or a file; every process is stopped by pid.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "redis_server.h"
#include "seqby/runtime/subprocess.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "wait_and_read.h"

namespace seqby::apps {
namespace {

using redis::Redirect;
using redis::SpawnOptions;
using redis::Subprocess;
using seqby::testing::read_file;
using seqby::testing::RedisServer;

constexpr const char* kLedger = SEQBY_SOURCE_DIR "/examples/python/ledger.py";
constexpr std::uint64_t kWaitMaxMs = 30'000;

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string trimmed(const std::string& text) {
  const std::size_t end = text.find_last_not_of(" \r\n\t");
  return end == std::string::npos ? "" : text.substr(0, end + 1);
}

// The first executable python3 on PATH, or "" (Debian's package python3 provides one).
std::string python3_on_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/python3";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool wait_for(const std::function<bool()>& done, std::uint64_t max_ms = kWaitMaxMs) {
  return seqby::testing::wait_for(done, max_ms, 100);
}

// The value of `"name": N` in a marker file's JSON line (a number).
std::int64_t marker_number(const std::string& text, const std::string& name) {
  const std::string tag = "\"" + name + "\": ";
  const std::size_t at = text.find(tag);
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + tag.size()));
}

// The line of `log` holding `needle`, or "".
std::string line_with(const std::string& log, const std::string& needle) {
  const std::size_t at = log.find(needle);
  if (at == std::string::npos) return "";
  const std::size_t begin = log.rfind('\n', at);
  const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
  return log.substr(from, log.find('\n', at) - from);
}

// The first line of `text` that starts with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

// A process alive and not a zombie (a reaped or zombie child counts as gone).
bool process_alive(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const std::size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// --- the ledger as `ledger.py --show` prints it ----------------------------------------------

// "word a=1 b=x" -> {"": words without '=', name: value}.
struct ShownLine {
  std::vector<std::string> words;
  std::map<std::string, std::string> fields;
  std::int64_t number(const std::string& name) const {
    const auto it = fields.find(name);
    return it == fields.end() ? -1 : std::stoll(it->second);
  }
};

ShownLine parse_shown(const std::string& line) {
  ShownLine shown;
  std::stringstream s(line);
  for (std::string word; s >> word;) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos) {
      shown.words.push_back(word);
    } else {
      shown.fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
  }
  return shown;
}

struct Ledger {
  std::map<std::string, ShownLine> accounts;  // by "category:key"
  std::vector<ShownLine> applied, refused, absorbed;
  std::string text;
  std::string error;  // the show command failed

  // The rows of `rows` for the event `id` of `account`.
  static std::vector<ShownLine> rows_for(const std::vector<ShownLine>& rows,
                                         const std::string& account, const std::string& id) {
    std::vector<ShownLine> out;
    for (const ShownLine& row : rows) {
      if (row.words.size() >= 3 && row.words[1] == account && row.words[2] == id) {
        out.push_back(row);
      }
    }
    return out;
  }
  std::string position(const std::string& account) const {
    const auto it = accounts.find(account);
    return it == accounts.end() ? "" : it->second.fields.at("position");
  }
  std::int64_t generation(const std::string& account) const {
    const auto it = accounts.find(account);
    return it == accounts.end() ? -1 : it->second.number("generation");
  }
};

// --- the published events and what applying them once, in order, gives ----------------------

struct Published {
  std::string id;
  std::string type;  // deposit, withdraw, interest
  std::int64_t amount = 0;
};

std::int64_t applied_to(std::int64_t balance, const Published& event) {
  if (event.type == "deposit") return balance + event.amount;
  if (event.type == "withdraw") return balance - event.amount;
  return balance + balance * event.amount / 100;  // interest, as ledger.py (balances stay >= 0)
}

class LedgerScenario {
 public:
  LedgerScenario(std::string redis_url, std::string python, std::string dir)
      : url_(std::move(redis_url)),
        python_(std::move(python)),
        dir_(std::move(dir)),
        db_(dir_ + "/ledger.sqlite"),
        category_("pyledger" + std::to_string(::getpid())) {}

  const std::string& category() const { return category_; }
  const std::string& dir() const { return dir_; }
  std::string account(const std::string& key) const { return category_ + ":" + key; }

  // Publishes one event; "" and a test failure when the command failed.
  std::string publish(const std::string& key, const std::string& type, std::int64_t amount) {
    const std::string field = type == "interest" ? "percent" : "amount";
    const std::string data =
        "{\"client_id\":\"" + key + "\",\"" + field + "\":" + std::to_string(amount) + "}";
    const scenarios::CommandRun run =
        scenarios::run_command(kSeqby, {"publish", "--redis", url_, "--category", category_,
                                        "--key", key, "--type", type, "--data", data});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const std::string id = trimmed(run.out);
    published_[key].push_back(Published{id, type, amount});
    return id;
  }
  const std::map<std::string, std::vector<Published>>& published() const { return published_; }

  // Starts `seqby worker --exec 'python3 ledger.py ...'` as `owner`, with `hooks` appended to the
  // handler's arguments. Short leases: a lapse takes 2 s.
  Subprocess& start_worker(const std::string& owner, const std::string& hooks) {
    const std::string exec = "exec '" + python_ + "' '" + kLedger + "' --db '" + db_ +
                             "' --pause-dir '" + dir_ + "'" + hooks;
    SpawnOptions o;
    o.in = Redirect::null();
    o.out = Redirect::null();
    o.err = Redirect::file(log_path(owner));
    Result<Subprocess> worker = Subprocess::spawn({kSeqby,
                                                   "worker",
                                                   "--redis",
                                                   url_,
                                                   "--category",
                                                   category_,
                                                   "--group",
                                                   "ledger",
                                                   "--sequential-by",
                                                   "client_id",
                                                   "--owner-id",
                                                   owner,
                                                   "--exec",
                                                   exec,
                                                   "--exec-concurrency",
                                                   "2",
                                                   "--lease-ttl-ms",
                                                   "2000",
                                                   "--heartbeat-interval-ms",
                                                   "400",
                                                   "--discovery-interval-ms",
                                                   "200"},
                                                  o);
    EXPECT_TRUE(worker.ok()) << worker.error().message;
    workers_[owner] = std::make_unique<Subprocess>(std::move(worker.value()));
    return *workers_[owner];
  }
  Subprocess& worker(const std::string& owner) { return *workers_.at(owner); }
  std::string log_path(const std::string& owner) const { return dir_ + "/" + owner + ".log"; }
  std::string log(const std::string& owner) const { return read_file(log_path(owner)); }
  std::string logs() const {
    std::string all;
    for (const auto& [owner, process] : workers_) all += "--- " + owner + "\n" + log(owner);
    return all;
  }

  Ledger ledger() const {
    Ledger ledger;
    const scenarios::CommandRun run =
        scenarios::run_command(python_, {kLedger, "--db", db_, "--show"});
    if (run.exit_code != 0) {
      ledger.error = "ledger.py --show exited " + std::to_string(run.exit_code) + ": " + run.err;
      return ledger;
    }
    ledger.text = run.out;
    std::stringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
      ShownLine shown = parse_shown(line);
      if (shown.words.size() < 2) continue;
      const std::string kind = shown.words[0];
      if (kind == "account") ledger.accounts[shown.words[1]] = shown;
      if (kind == "applied") ledger.applied.push_back(shown);
      if (kind == "refused") ledger.refused.push_back(shown);
      if (kind == "absorbed") ledger.absorbed.push_back(shown);
    }
    return ledger;
  }

  // Remembers a handler child's pid (from a marker) so that it is never left running.
  void own_child(pid_t pid) { children_.push_back(pid); }
  ~LedgerScenario() {
    for (auto& [owner, process] : workers_) process->kill();
    for (const pid_t pid : children_) {
      const std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
      if (process_alive(pid) && cmdline.find("ledger.py") != std::string::npos) {
        ::kill(pid, SIGKILL);
      }
    }
  }
  LedgerScenario(const LedgerScenario&) = delete;
  LedgerScenario& operator=(const LedgerScenario&) = delete;

 private:
  std::string url_;
  std::string python_;
  std::string dir_;
  std::string db_;
  std::string category_;
  std::map<std::string, std::vector<Published>> published_;
  std::map<std::string, std::unique_ptr<Subprocess>> workers_;
  std::vector<pid_t> children_;
};

struct Dir {
  Dir() {
    char dir_template[] = "/tmp/seqby-python-ledger-XXXXXX";
    path = ::mkdtemp(dir_template);
  }
  ~Dir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

void say(const std::string& line) { std::cout << "[ledger scenario] " << line << std::endl; }

// Six events of every kind for `key`, amounts varied by `salt`: their order changes the balance.
std::vector<std::string> publish_six(LedgerScenario& s, const std::string& key, int salt) {
  return {s.publish(key, "deposit", 100 + salt), s.publish(key, "interest", 10),
          s.publish(key, "deposit", 50),         s.publish(key, "withdraw", 30 + salt),
          s.publish(key, "interest", 5 + salt),  s.publish(key, "deposit", 7)};
}

TEST(PythonLedger, KilledAndStalledOwnersLeaveEveryEventAppliedOnceInOrderAndTheStaleWriteRefused) {
  const std::string python = python3_on_path();
  ASSERT_FALSE(python.empty()) << "python3 is not on PATH (Debian: apt-get install python3)";
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  Dir dir;
  LedgerScenario s(server.url(), python, dir.path);
  say("category " + s.category() + ", ledger " + dir.path + "/ledger.sqlite, python " + python);

  // 1. ka and kc have events; w1 alone handles them, and its child stops after committing ka's
  //    third event, before its reply. w1 is SIGKILLed there: inside the event.
  const std::vector<std::string> ka = publish_six(s, "ka", 0);
  const std::vector<std::string> kc = publish_six(s, "kc", 2);
  s.start_worker("w1", " --pause-after-commit " + ka[2]);
  const std::string committed = dir.path + "/" + ka[2] + ".committed";
  ASSERT_TRUE(wait_for([&] { return file_exists(committed); }))
      << "w1's child never committed ka's third event\n"
      << s.logs();
  const std::string w1_marker = read_file(committed);
  const pid_t w1_child = static_cast<pid_t>(marker_number(w1_marker, "pid"));
  const std::int64_t w1_generation = marker_number(w1_marker, "generation");
  s.own_child(w1_child);
  say("w1's child (pid " + std::to_string(w1_child) + ") committed " + s.account("ka") + " " +
      ka[2] + " under generation " + std::to_string(w1_generation) +
      " and has not replied: SIGKILL w1");
  s.worker("w1").kill();
  ASSERT_TRUE(wait_for([&] { return !process_alive(w1_child); }, 10'000))
      << "w1's child outlived w1 (its process group should die with the worker)";

  // 2. kb gets events; w2 takes over ka after w1's lease lapses (the re-run of ka's third event
  //    must be absorbed), and its child stops inside kb's third event, before the write.
  const std::vector<std::string> kb = publish_six(s, "kb", 1);
  s.start_worker("w2", " --pause-before-write " + kb[2]);
  const std::string paused = dir.path + "/" + kb[2] + ".paused";
  Ledger ledger;
  ASSERT_TRUE(wait_for([&] {
    ledger = s.ledger();
    return file_exists(paused) && ledger.position(s.account("ka")) == ka.back() &&
           ledger.position(s.account("kc")) == kc.back() &&
           !Ledger::rows_for(ledger.absorbed, s.account("ka"), ka[2]).empty();
  })) << "w2 did not finish ka (absorbing the re-run of "
      << ka[2] << ") and kc and stop inside " << kb[2] << "\n"
      << ledger.error << ledger.text << s.logs();
  const std::string w2_marker = read_file(paused);
  const pid_t w2_child = static_cast<pid_t>(marker_number(w2_marker, "pid"));
  const std::int64_t w2_generation = marker_number(w2_marker, "generation");
  s.own_child(w2_child);
  say("w2 re-ran " + ka[2] + ": " + line_with(s.log("w2"), "absorbed re-run of event " + ka[2]));
  say("w2's child (pid " + std::to_string(w2_child) + ") is inside " + s.account("kb") + " " +
      kb[2] + " under generation " + std::to_string(w2_generation) +
      ", before its write: SIGSTOP w2 past its lease");
  ASSERT_TRUE(RedisServer::stop_process(s.worker("w2").pid()));

  // 3. w1b (w1 started again) takes every partition over once w2's leases lapse, with a newer
  //    generation, and applies kb's third event and the rest of kb.
  s.start_worker("w1b", "");
  ASSERT_TRUE(wait_for([&] {
    ledger = s.ledger();
    return ledger.position(s.account("kb")) == kb.back() &&
           ledger.generation(s.account("kb")) > w2_generation;
  })) << "w1b did not take kb over from the stopped w2\n"
      << ledger.error << ledger.text << s.logs();
  const std::int64_t kb_generation = ledger.generation(s.account("kb"));
  const scenarios::CommandRun partitions = scenarios::run_command(
      kSeqby, {"admin", "--redis", server.url(), "partitions", s.category()});
  EXPECT_EQ(partitions.exit_code, 0) << partitions.err;
  const std::string kb_row = line_starting(partitions.out, "kb ");
  EXPECT_NE(kb_row.find(" w1b:"), std::string::npos) << partitions.out;  // not the stopped w2
  say("seqby admin partitions: " + trimmed(kb_row));
  say("w1b applied " + s.account("kb") + " through " + kb.back() + " under generation " +
      std::to_string(kb_generation) + "; SIGCONT w2 and let its child write");

  // 4. w2 goes on: its child's write carries generation w2_generation < kb_generation and is
  //    refused inside the database's transaction.
  ASSERT_TRUE(RedisServer::continue_process(s.worker("w2").pid()));
  std::ofstream(dir.path + "/" + kb[2] + ".go") << "go\n";
  const std::string refused_log = "REFUSED write of event " + kb[2];
  ASSERT_TRUE(wait_for([&] {
    ledger = s.ledger();
    return !Ledger::rows_for(ledger.refused, s.account("kb"), kb[2]).empty() &&
           s.log("w2").find(refused_log) != std::string::npos;
  })) << "the stale write of "
      << kb[2] << " was not refused\n"
      << ledger.error << ledger.text << s.logs();
  say("w2's log: " + line_with(s.log("w2"), refused_log));

  // 5. One more event per key, handled by whichever worker owns it now.
  const std::vector<std::string> last{s.publish("ka", "interest", 20),
                                      s.publish("kb", "interest", 20),
                                      s.publish("kc", "interest", 20)};
  ASSERT_TRUE(wait_for([&] {
    ledger = s.ledger();
    return ledger.position(s.account("ka")) == last[0] &&
           ledger.position(s.account("kb")) == last[1] &&
           ledger.position(s.account("kc")) == last[2];
  })) << "the last events were not all applied\n"
      << ledger.error << ledger.text << s.logs();
  for (const std::string owner : {"w2", "w1b"}) {
    EXPECT_EQ(s.worker(owner).terminate(20'000), 0) << owner << "\n" << s.log(owner);
  }

  // The final ledger, read after every worker stopped.
  ledger = s.ledger();
  ASSERT_TRUE(ledger.error.empty()) << ledger.error;
  // The refused write: kb's third event from w2's stale lease; nothing of it was applied.
  const std::vector<ShownLine> refused = Ledger::rows_for(ledger.refused, s.account("kb"), kb[2]);
  ASSERT_FALSE(refused.empty()) << ledger.text;
  EXPECT_EQ(refused.front().number("generation"), w2_generation) << ledger.text;
  EXPECT_GT(refused.front().number("stored_generation"), w2_generation) << ledger.text;
  for (const ShownLine& row : ledger.refused) {
    EXPECT_LT(row.number("generation"), row.number("stored_generation")) << ledger.text;
  }
  // The absorbed re-run: ka's third event, delivered again to the next owner.
  const std::vector<ShownLine> absorbed = Ledger::rows_for(ledger.absorbed, s.account("ka"), ka[2]);
  ASSERT_FALSE(absorbed.empty()) << ledger.text;
  EXPECT_GE(absorbed.front().number("delivery"), 2) << ledger.text;
  EXPECT_GT(absorbed.front().number("generation"), w1_generation) << ledger.text;

  // Every published event applied once, in stream order, per key: the applied log matches the
  // published events one for one, and each balance is the fold of them in that order.
  for (const auto& [key, events] : s.published()) {
    const std::string account = s.account(key);
    std::vector<ShownLine> rows;
    for (const ShownLine& row : ledger.applied) {
      if (row.words[1] == account) rows.push_back(row);
    }
    ASSERT_EQ(rows.size(), events.size()) << account << "\n" << ledger.text;
    std::int64_t balance = 0;
    std::int64_t generation = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      balance = applied_to(balance, events[i]);
      EXPECT_EQ(rows[i].words[2], events[i].id) << account << " row " << i << "\n" << ledger.text;
      EXPECT_EQ(rows[i].words[3], events[i].type) << account << " row " << i;
      EXPECT_EQ(rows[i].number("balance"), balance) << account << " row " << i;
      EXPECT_GE(rows[i].number("generation"), generation) << account << " row " << i;
      generation = rows[i].number("generation");
    }
    const ShownLine& state = ledger.accounts.at(account);
    EXPECT_EQ(state.number("balance"), balance) << ledger.text;
    EXPECT_EQ(state.number("events"), static_cast<std::int64_t>(events.size())) << ledger.text;
    EXPECT_EQ(ledger.position(account), events.back().id) << ledger.text;
    say("final state check: " + account + " balance " + std::to_string(state.number("balance")) +
        " after " + std::to_string(rows.size()) + " applied rows = " + std::to_string(balance) +
        " from applying its " + std::to_string(events.size()) +
        " published events once, in stream order");
  }
  // ka's third event was applied by w1 (before the kill), kb's by w1b (not by the stale w2).
  const std::vector<ShownLine> ka3 = Ledger::rows_for(ledger.applied, s.account("ka"), ka[2]);
  const std::vector<ShownLine> kb3 = Ledger::rows_for(ledger.applied, s.account("kb"), kb[2]);
  ASSERT_EQ(ka3.size(), 1u);
  ASSERT_EQ(kb3.size(), 1u);
  EXPECT_EQ(ka3.front().number("generation"), w1_generation);
  EXPECT_EQ(kb3.front().number("generation"), kb_generation);
  std::stringstream table(ledger.text);
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("refused", 0) == 0 || line.rfind("absorbed", 0) == 0) say("ledger: " + line);
  }
}

}  // namespace
}  // namespace seqby::apps
