// RedisScenarioDriver and WorkerProcess: real `seqby worker` processes, a publisher and the
// history of a real-Redis scenario run (its decision journal).
#include "seqby/scenarios/redis_driver.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/hiredis/worker.h"
#include "seqby/properties/markers.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/testing/record_handler.h"

namespace seqby::scenarios {
namespace {

constexpr std::uint64_t kPollMs = 10;
constexpr std::uint32_t kScanRoundsMax = 10000;
// Between a publish that may not have run and the look at whether it landed.
constexpr std::uint64_t kPublishRetryPauseMs = 50;

void sleep_ms(std::uint64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_dir() { return std::filesystem::temp_directory_path().string(); }

// `argv` with stdin from /dev/null, stdout and stderr to the given files ("" keeps the
// parent's). The child dies with the parent thread.
Result<redis::Subprocess> spawn(const std::vector<std::string>& args, const std::string& out_path,
                                const std::string& err_path) {
  redis::SpawnOptions options;
  options.in = redis::Redirect::null();
  if (!out_path.empty()) options.out = redis::Redirect::file(out_path);
  if (!err_path.empty()) options.err = redis::Redirect::file(err_path);
  return redis::Subprocess::spawn(args, options);
}

}  // namespace

// --- WorkerProcess ------------------------------------------------------------------------

std::vector<std::string> server_flags(const WorkerSettings& settings) {
  if (!settings.cluster) return {};
  return {"--cluster", "--key-layout", "cluster"};
}

WorkerProcess::WorkerProcess(const std::string& binary, const std::string& url,
                             const std::string& category, const std::string& history_stream,
                             const std::string& owner, const WorkerSettings& s,
                             const std::string& log_path)
    : owner_(owner), log_path_(log_path) {
  std::vector<std::string> args{binary, "worker", "--redis", url};
  if (s.pm_categories.empty()) {
    args.insert(args.end(), {"--category", category, "--sequential-by", s.sequential_by});
  } else {
    for (const std::string& c : s.pm_categories) args.insert(args.end(), {"--category", c});
    args.push_back("--process-manager");
  }
  args.insert(args.end(), {"--group", s.group, "--owner-id", owner});
  for (const EngineLimitField& limit : kEngineLimitFields) {
    if (limit.worker_flag)
      args.insert(args.end(), {limit.flag_name(), std::to_string(limit.get(s))});
  }
  if (s.journal_maxlen > 0) {
    args.insert(args.end(), {"--journal-maxlen", std::to_string(s.journal_maxlen)});
  } else if (!history_stream.empty()) {
    args.insert(args.end(), {"--history-stream", history_stream});
  }
  if (!s.unsafe_variant.empty()) args.insert(args.end(), {"--unsafe-variant", s.unsafe_variant});
  const std::vector<std::string> on_server = server_flags(s);
  args.insert(args.end(), on_server.begin(), on_server.end());
  if (s.wait_replicas > 0) {
    args.insert(args.end(), {"--wait-replicas", std::to_string(s.wait_replicas),
                             "--wait-timeout-ms", std::to_string(s.wait_timeout_ms)});
  }
  args.insert(args.end(), s.extra_flags.begin(), s.extra_flags.end());
  Result<redis::Subprocess> process = spawn(args, "", log_path_);
  if (process.ok()) process_ = std::move(process).value();
}

WorkerProcess::~WorkerProcess() {
  process_.kill();
  if (!log_path_.empty()) std::remove(log_path_.c_str());
}

int WorkerProcess::terminate(std::uint64_t wait_max_ms) {
  if (!running()) return -1;
  return process_.terminate(wait_max_ms);  // SIGTERM and SIGCONT: a stopped worker must act
}

bool WorkerProcess::exited(int* status) {
  if (!process_.running() || !process_.try_reap()) return false;
  *status = process_.wait(0);
  return true;
}

void WorkerProcess::kill_now() { process_.kill(); }

void WorkerProcess::stop_now() { process_.stop(); }

void WorkerProcess::continue_now() { process_.resume(); }

std::string WorkerProcess::log() const { return read_file(log_path_); }

CommandRun run_command(const std::string& binary, const std::vector<std::string>& args,
                       std::uint64_t wait_max_ms) {
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string stem =
      temp_dir() + "/seqby-run-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string out_path = stem + ".out";
  const std::string err_path = stem + ".err";
  CommandRun run;
  Result<redis::Subprocess> process = spawn(argv, out_path, err_path);
  if (!process.ok()) {
    run.err = process.error().message;
    return run;
  }
  run.exit_code = process.value().wait(wait_max_ms);
  run.signal = process.value().term_signal();
  run.out = read_file(out_path);
  run.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return run;
}

// --- RedisScenarioDriver ------------------------------------------------------------------

RedisScenarioDriver::RedisScenarioDriver(std::string redis_url, std::string seqby_binary,
                                         const std::string& label, WorkerSettings settings)
    : url_(std::move(redis_url)), binary_(std::move(seqby_binary)), settings_(std::move(settings)) {
  const auto nonce = std::chrono::system_clock::now().time_since_epoch().count() % 1000000000;
  category_ = "sc" + std::to_string(::getpid()) + "n" + std::to_string(nonce) + "_" + label;
  history_stream_ = std::string(redis::kDefaultHistoryStream) + ":" + category_;
  log_prefix_ = temp_dir() + "/seqby-" + category_ + "-";
  Result<redis::RedisConfig> config = redis::parse_redis_url(url_);
  if (config.ok()) {
    config_ = config.value();
    redis_ = std::make_unique<redis::BlockingRedis>(*config_);
    if (settings_.cluster) {
      cluster_runtime_ = std::make_unique<redis::RealRuntime>();
      cluster_link_ = std::make_unique<redis::HiredisClusterLink>(*cluster_runtime_, *config_);
    }
  }
}

RedisScenarioDriver::~RedisScenarioDriver() {
  for (auto& w : workers_) {
    if (w->running()) w->kill_now();
  }
  if (!redis_) return;
  std::vector<std::string> keys = category_keys();
  keys.push_back(history_stream_);
  if (settings_.cluster) {
    // The cluster layout's reap protocol keys live in the index's slot, outside C:*.
    keys.insert(keys.end(), {reaping_set_name(category_), publishing_hash_name(category_)});
  }
  if (process_manager()) {
    // Only this run's correlation values and owners: another run may share the group's name.
    const std::string unit_category = pm_lease_category(group());
    for (const std::string& key : published_keys_) {
      const PartitionRef unit{unit_category, key, key_layout()};
      keys.insert(keys.end(), {unit.lease(), unit.fence(), inprogress_key_name(unit, group()),
                               journal_stream_name(unit)});
    }
    for (const auto& w : workers_) {
      keys.push_back(redis::member_key_name(unit_category, group(), w->owner(), key_layout()));
      run({"SREM", members_set(), w->owner()});
    }
  }
  for (const std::string& key : keys) run({"DEL", key});
}

std::string RedisScenarioDriver::members_set() const {
  return redis::members_set_name(process_manager() ? pm_lease_category(group()) : category_,
                                 group(), key_layout());
}

PartitionRef RedisScenarioDriver::partition(const std::string& key,
                                            const std::string& category) const {
  return PartitionRef{category.empty() ? category_ : category, key, key_layout()};
}

Status RedisScenarioDriver::ready() {
  if (!config_) return Status(Error{Errc::invalid, "bad redis url '" + url_ + "'"});
  if (::access(binary_.c_str(), X_OK) != 0) {
    return Status(Error{Errc::invalid, "the seqby command '" + binary_ + "' is not executable"});
  }
  Result<redis::Reply> pong = execute({"PING"});
  if (!pong.ok()) {
    return Status(Error{Errc::closed, "redis at " + redis::redacted_url(*config_) +
                                          " does not answer: " + pong.error().message});
  }
  return Status::Ok();
}

Result<redis::Reply> RedisScenarioDriver::execute(const redis::Command& command) {
  if (cluster_link_) return cluster_runtime_->block_on(cluster_link_->execute(command));
  return redis_->execute(command);
}

redis::Reply RedisScenarioDriver::run(const redis::Command& command) {
  if (!redis_) return redis::Reply::nil();
  Result<redis::Reply> reply = execute(command);
  if (!reply.ok() || reply.value().is_error()) {
    ++transport_errors_;
    return redis::Reply::nil();
  }
  return reply.value();
}

WorkerProcess* RedisScenarioDriver::start_worker(const std::string& owner,
                                                 const std::string& worker_url) {
  if (process_manager() && !pm_header_written_) {
    properties::RunHeader header;
    header.process_managers = {group()};
    header.pm_categories[group()] = settings_.pm_categories;
    append_history(properties::run_header_record(header));
    pm_header_written_ = true;
  }
  auto w = std::make_unique<WorkerProcess>(binary_, worker_url.empty() ? url_ : worker_url,
                                           category_, history_stream_, owner, settings_,
                                           log_prefix_ + owner + ".log");
  if (!w->started()) return nullptr;
  workers_.push_back(std::move(w));
  return workers_.back().get();
}

WorkerProcess* RedisScenarioDriver::worker(const std::string& owner) {
  for (auto& w : workers_) {
    if (w->owner() == owner) return w.get();
  }
  return nullptr;
}

std::vector<WorkerProcess*> RedisScenarioDriver::running_workers() {
  std::vector<WorkerProcess*> out;
  for (auto& w : workers_) {
    if (w->running()) out.push_back(w.get());
  }
  return out;
}

void RedisScenarioDriver::crash(const std::string& owner) {
  WorkerProcess* w = worker(owner);
  if (w == nullptr) return;
  w->kill_now();
  HistoryRecord crash;
  crash.node = owner;
  crash.op = HistoryOp::fault;
  crash.detail = "crash sigkill";
  append_history(crash);
}

void RedisScenarioDriver::stall(const std::string& owner) {
  WorkerProcess* w = worker(owner);
  if (w == nullptr) return;
  w->stop_now();
  HistoryRecord stall;
  stall.node = owner;
  stall.op = HistoryOp::fault;
  stall.detail = "stall sigstop";
  append_history(stall);
}

void RedisScenarioDriver::resume(const std::string& owner) {
  if (WorkerProcess* w = worker(owner)) w->continue_now();
}

std::vector<std::string> RedisScenarioDriver::stop_all() {
  std::vector<std::string> bad;
  for (WorkerProcess* w : running_workers()) {
    const int status = w->terminate();
    if (status != 0) bad.push_back(w->owner() + " exited " + std::to_string(status));
  }
  return bad;
}

std::string RedisScenarioDriver::logs() const {
  std::string text;
  for (const auto& w : workers_) text += "--- " + w->owner() + " ---\n" + w->log();
  return text;
}

Result<std::vector<std::string>> RedisScenarioDriver::publish(
    const std::vector<PublishSpec>& events) {
  if (!config_) return Error{Errc::invalid, "bad redis url '" + url_ + "'"};
  redis::RealRuntime runtime;
  std::unique_ptr<redis::RedisLink> link;
  if (settings_.cluster) {
    link = std::make_unique<redis::HiredisClusterLink>(runtime, *config_);
  } else {
    link = std::make_unique<redis::HiredisLink>(runtime, *config_);
  }
  redis::RedisBrokerOptions broker_options;
  broker_options.key_layout = key_layout();
  broker_options.wait_replicas = settings_.wait_replicas;
  broker_options.wait_timeout_ms = settings_.wait_timeout_ms;
  // The publish script by EVALSHA, loaded once per call.
  redis::RedisBroker broker(*link, broker_options);
  std::vector<std::string> ids;
  for (const PublishSpec& e : events) {
    JsonObject data;
    data[settings_.sequential_by] = e.key;  // a process manager's: the correlation value
    data["seq"] = e.seq;
    if (e.delay_ms > 0) data["delay_ms"] = static_cast<std::int64_t>(e.delay_ms);
    if (e.poison) data["poison"] = true;
    if (e.fail_deliveries > 0)
      data["fail_deliveries"] = static_cast<std::int64_t>(e.fail_deliveries);
    const std::string json = encode_json_object(data);
    const PartitionRef partition = this->partition(e.key, e.category);
    const auto publish_once = [&]() -> Result<std::string> {
      return journal() ? runtime.block_on(redis::publish_journaled(
                             broker, partition, "charge", json, settings_.journal_maxlen,
                             "publisher", e.seq, e.poison ? "poison" : ""))
                       : runtime.block_on(redis::publish_recorded(*link, partition, "charge", json,
                                                                  history_stream_, "publisher",
                                                                  e.seq, e.poison ? "poison" : ""));
    };
    Result<std::string> id = publish_once();
    const auto retry_until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(settings_.publish_retry_ms);
    const auto may_send_again = [](const Error& e) {
      return e.code == Errc::timeout || e.code == Errc::closed ||
             (e.code == Errc::protocol && redis::not_run_yet(e.message));
    };
    while (!id.ok() && may_send_again(id.error()) &&
           std::chrono::steady_clock::now() < retry_until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kPublishRetryPauseMs));
      Result<std::optional<std::string>> found = landed(e);
      if (!found.ok()) continue;  // no answer yet: ask again
      if (found.value().has_value()) {
        id = *found.value();
        break;
      }
      id = publish_once();
    }
    if (!id.ok()) return id.error();
    ids.push_back(id.value());
    auto at = std::lower_bound(published_keys_.begin(), published_keys_.end(), e.key);
    if (at == published_keys_.end() || *at != e.key) published_keys_.insert(at, e.key);
  }
  return ids;
}

Result<std::optional<std::string>> RedisScenarioDriver::landed(const PublishSpec& event) {
  Result<redis::Reply> tail =
      execute({"XREVRANGE", partition(event.key, event.category).stream(), "+", "-", "COUNT", "1"});
  if (!tail.ok()) return tail.error();
  const redis::Reply& t = tail.value();
  if (t.is_error()) return Error{Errc::protocol, "XREVRANGE: " + t.str};
  if (t.kind != redis::Reply::Kind::array || t.elements.size() != 1 ||
      t.elements[0].elements.size() != 2) {
    return std::optional<std::string>();
  }
  const redis::Reply& fields = t.elements[0].elements[1];
  for (std::size_t f = 0; f + 1 < fields.elements.size(); f += 2) {
    if (fields.elements[f].str != "data") continue;
    Result<JsonObject> data = decode_json_object(fields.elements[f + 1].str);
    if (!data.ok()) continue;
    auto seq = data.value().find("seq");
    if (seq != data.value().end() && std::holds_alternative<std::int64_t>(seq->second) &&
        std::get<std::int64_t>(seq->second) == event.seq) {
      return std::optional<std::string>(t.elements[0].elements[0].str);
    }
  }
  return std::optional<std::string>();
}

bool RedisScenarioDriver::wait_until(const std::function<bool()>& done, std::uint64_t limit_ms) {
  const std::uint64_t bound_ms = limit_ms != 0 ? limit_ms : wait_max_ms_;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint32_t round = 0; round < 1000000; ++round) {
    if (done()) return true;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() >=
        static_cast<std::int64_t>(bound_ms)) {
      break;
    }
    sleep_ms(kPollMs);
  }
  return done();
}

std::int64_t RedisScenarioDriver::last_seq(const std::string& key, const std::string& category) {
  const redis::Reply r =
      run({"HGET", redis::sink_key_name(partition(key, category), group()), "last_seq"});
  return r.kind == redis::Reply::Kind::bulk ? std::stoll(r.str) : 0;
}

std::vector<std::string> RedisScenarioDriver::effects(const std::string& key,
                                                      const std::string& category) {
  const redis::Reply hash =
      run({"HGETALL", redis::effects_hash_name(partition(key, category), group())});
  std::vector<std::pair<std::int64_t, std::string>> by_seq;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    by_seq.emplace_back(std::stoll(hash.elements[i].str), hash.elements[i + 1].str);
  }
  std::sort(by_seq.begin(), by_seq.end());
  std::vector<std::string> out;
  for (auto& [seq, effect] : by_seq) out.push_back(effect);
  return out;
}

std::int64_t RedisScenarioDriver::dlq_length(const std::string& key, const std::string& category) {
  return run({"XLEN", partition(key, category).dlq()}).integer;
}

std::string RedisScenarioDriver::lease_key(const std::string& key) const {
  if (process_manager()) return PartitionRef{pm_lease_category(group()), key, key_layout()}.lease();
  return partition(key).lease();
}

std::string RedisScenarioDriver::lease_owner(const std::string& key) {
  const redis::Reply r = run({"GET", lease_key(key)});
  if (r.kind != redis::Reply::Kind::bulk) return "";
  return r.str.substr(0, r.str.rfind(':'));
}

std::optional<std::string> RedisScenarioDriver::inprogress_marker(const std::string& key) {
  const PartitionRef unit = process_manager()
                                ? PartitionRef{pm_lease_category(group()), key, key_layout()}
                                : partition(key);
  const redis::Reply r = run({"GET", inprogress_key_name(unit, group())});
  if (r.kind != redis::Reply::Kind::bulk) return std::nullopt;
  return r.str;
}

std::vector<std::unique_ptr<redis::BlockingRedis>> RedisScenarioDriver::scan_nodes() {
  std::vector<std::unique_ptr<redis::BlockingRedis>> nodes;
  if (!redis_) return nodes;
  if (!settings_.cluster) {
    nodes.push_back(std::make_unique<redis::BlockingRedis>(*config_));
    return nodes;
  }
  Result<std::vector<redis::RedisConfig>> masters = redis::cluster_masters(*redis_);
  if (!masters.ok()) {
    ++transport_errors_;
    return nodes;
  }
  for (const redis::RedisConfig& master : masters.value()) {
    nodes.push_back(std::make_unique<redis::BlockingRedis>(master));
  }
  return nodes;
}

std::vector<std::string> RedisScenarioDriver::category_keys() {
  std::vector<std::string> keys;
  for (const std::unique_ptr<redis::BlockingRedis>& node : scan_nodes()) {
    std::string cursor = "0";
    for (std::uint32_t round = 0; round < kScanRoundsMax; ++round) {
      Result<redis::Reply> r =
          node->execute({"SCAN", cursor, "MATCH", category_ + ":*", "COUNT", "1000"});
      if (!r.ok() || r.value().elements.size() != 2) {
        ++transport_errors_;
        break;
      }
      for (const auto& k : r.value().elements[1].elements) keys.push_back(k.str);
      cursor = r.value().elements[0].str;
      if (cursor == "0") break;
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

Result<std::vector<HistoryRecord>> RedisScenarioDriver::read_history() {
  if (!redis_) return Error{Errc::invalid, "bad redis url '" + url_ + "'"};
  if (journal()) {
    redis::JournalScope scope;
    scope.categories = {category_};
    scope.categories.insert(scope.categories.end(), settings_.pm_categories.begin(),
                            settings_.pm_categories.end());
    if (process_manager()) scope.process_managers = {group()};
    if (settings_.cluster) return redis::read_cluster_journal(*redis_, scope);
    return redis::read_journal(*redis_, scope);
  }
  Result<redis::Reply> reply = execute({"XRANGE", history_stream_, "-", "+"});
  if (!reply.ok()) return reply.error();
  return redis::history_from_xrange(reply.value());
}

void RedisScenarioDriver::append_history(const HistoryRecord& record) {
  if (journal()) {
    if (record.node == "operator" &&
        (record.op == HistoryOp::skip || record.op == HistoryOp::dlq)) {
      return;  // seqby admin journals its own actions
    }
    const std::string stream =
        record.key.empty()
            ? category_journal_name(category_)
            : redis::note_stream_for(record, process_manager() ? group() : "", key_layout());
    run(redis::journal_note_command(stream, settings_.journal_maxlen, record));
    return;
  }
  redis::Command command{"XADD", history_stream_, "*"};
  for (auto& [name, value] : redis::history_fields(record)) {
    command.push_back(name);
    command.push_back(value);
  }
  run(command);
}

}  // namespace seqby::scenarios
