// bench_redis_durability: what the durability option costs (RedisBrokerOptions::wait_replicas,
// `--wait-replicas`, docs/ARCHITECTURE.md "What a failover keeps"). The server of
// SEQBY_TEST_REDIS_URL is the master; the program starts one replica of it (redis-server
// --replicaof, on a free loopback port, stopped by pid at the end) and waits until its link is up.
// Then, alternating without and with WAIT for 1 replica in every repetition:
//   publish, one at a time    one publisher awaiting each publish (latency per publish)
//   publish, 64 in flight     64 partitions published concurrently over one link
//   commit, one at a time     fenced_commit seq 1..N under one lease (latency per commit)
// Prints events per second and the with/without ratio taken within each repetition. Never
// asserts a figure.
//
//   scripts/with-redis build/bench_redis_durability [--repetitions 3] [--events 2000]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/runtime/subprocess.h"

namespace seqby::redis::bench {
namespace {

constexpr int kExitUsage = 2;
constexpr const char* kUsage =
    "usage: scripts/with-redis build/bench_redis_durability [--repetitions 3] [--events 2000]\n";
constexpr int kExitNoReplica = 3;
constexpr std::uint32_t kInFlight = 64;

struct Options {
  std::uint64_t repetitions = 3;
  std::uint64_t events = 2000;
};

// A loopback port nothing listens on now (bound, read, closed).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

// Waits (bounded) until the master counts a replica whose offset is its own.
bool wait_for_replica(BlockingRedis& master, BlockingRedis& replica, std::uint64_t limit_ms) {
  const std::uint64_t until = steady_now_ms() + limit_ms;
  while (steady_now_ms() < until) {
    Result<Reply> info = replica.execute({"INFO", "replication"});
    if (info.ok() && info_field(info.value().str, "master_link_status") == "up") {
      Result<Reply> waited = master.execute({"WAIT", "1", "100"});
      if (waited.ok() && waited.value() == Reply::of_int(1)) return true;
    }
    ::usleep(50 * 1000);
  }
  return false;
}

struct Row {
  double without = 0;
  double with = 0;
};

class Run {
 public:
  Run(RealRuntime& runtime, std::uint64_t events, std::string prefix)
      : runtime_(runtime), events_(events), prefix_(std::move(prefix)) {}

  // Events per second of `events_` publishes awaited one at a time.
  double publish_serial(RedisBroker& broker, const std::string& tag) {
    const PartitionRef partition{prefix_ + tag, "k"};
    const std::uint64_t began = steady_now_us();
    for (std::uint64_t i = 0; i < events_; ++i) {
      Result<std::string> id = runtime_.block_on(broker.publish(partition, "created", "{}"));
      if (!id.ok()) return failed("publish", id.error());
    }
    return rate(began);
  }

  // Events per second of `events_` publishes over kInFlight partitions at once.
  double publish_concurrent(RedisBroker& broker, const std::string& tag) {
    std::size_t done = 0;
    std::size_t errors = 0;
    const std::uint64_t each = std::max<std::uint64_t>(events_ / kInFlight, 1);
    const std::uint64_t began = steady_now_us();
    for (std::uint32_t p = 0; p < kInFlight; ++p) {
      runtime_.spawn("publisher",
                     publish_partition(broker, PartitionRef{prefix_ + tag, partition_key(p)},
                                       static_cast<std::uint32_t>(each), &errors, &done));
    }
    runtime_.block_on(detail::wait_count(runtime_, &done, kInFlight));
    if (errors > 0) return failed("publish", make_error(Errc::timeout, "concurrent publishes"));
    return static_cast<double>(each * kInFlight) * 1e6 /
           static_cast<double>(steady_now_us() - began);
  }

  // Commits per second of seq 1..events_ under one lease, each awaited.
  double commit_serial(RedisBroker& broker, const std::string& tag) {
    const PartitionRef partition{prefix_ + tag, "k"};
    Result<std::optional<Lease>> lease =
        runtime_.block_on(broker.acquire(partition, "", "bench", 600000));
    if (!lease.ok()) return failed("acquire", lease.error());
    if (!lease.value().has_value()) return failed("acquire", make_error(Errc::refused, "held"));
    const std::uint64_t began = steady_now_us();
    for (std::uint64_t seq = 1; seq <= events_; ++seq) {
      Result<CommitReply> commit = runtime_.block_on(
          broker.fenced_commit(*lease.value(), "g", static_cast<std::int64_t>(seq), "effect"));
      if (!commit.ok()) return failed("commit", commit.error());
    }
    return rate(began);
  }

 private:
  double rate(std::uint64_t began_us) const {
    return static_cast<double>(events_) * 1e6 / static_cast<double>(steady_now_us() - began_us);
  }
  static double failed(const char* what, const Error& error) {
    std::fprintf(stderr, "bench_redis_durability: %s failed: %s\n", what, error.message.c_str());
    return 0;
  }

  RealRuntime& runtime_;
  std::uint64_t events_;
  std::string prefix_;
};

int run_bench(const Options& options, const RedisConfig& master_config) {
  const std::uint16_t port = free_port();
  const char* program = std::getenv("SEQBY_REDIS_SERVER");
  if (program == nullptr || program[0] == '\0') program = "redis-server";
  const std::vector<std::string> args = {program,
                                         "--bind",
                                         "127.0.0.1",
                                         "--port",
                                         std::to_string(port),
                                         "--replicaof",
                                         master_config.host,
                                         std::to_string(master_config.port),
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no"};
  SpawnOptions spawn;
  spawn.in = Redirect::null();
  spawn.out = Redirect::null();
  spawn.err = Redirect::null();
  spawn.search_path = true;
  Result<Subprocess> replica_process = Subprocess::spawn(args, spawn);
  if (port == 0 || !replica_process.ok()) {
    std::fprintf(stderr, "bench_redis_durability: could not start a replica: %s\n",
                 replica_process.ok() ? "no free port" : replica_process.error().message.c_str());
    return kExitNoReplica;
  }
  BlockingRedis master(master_config);
  RedisConfig replica_config = master_config;
  replica_config.port = port;
  BlockingRedis replica(replica_config);
  // The master's first sync waits repl-diskless-sync-delay (5 s by default) for more replicas.
  if (!wait_for_replica(master, replica, 30000)) {
    std::fprintf(stderr, "bench_redis_durability: the replica on port %u did not sync in 30 s\n",
                 static_cast<unsigned>(port));
    return kExitNoReplica;
  }
  std::printf(
      "bench_redis_durability: master %s:%u, 1 replica on 127.0.0.1:%u, %llu events a "
      "row, %u in flight for the concurrent row; load %s\n",
      master_config.host.c_str(), static_cast<unsigned>(master_config.port),
      static_cast<unsigned>(port), static_cast<unsigned long long>(options.events), kInFlight,
      load_average().c_str());

  RealRuntime runtime;
  HiredisLink link(runtime, master_config);
  RedisBrokerOptions plain_options;
  RedisBrokerOptions durable_options;
  durable_options.wait_replicas = 1;
  durable_options.wait_timeout_ms = 1000;
  RedisBroker plain(link, plain_options);
  RedisBroker durable(link, durable_options);

  const char* names[] = {"publish, one at a time", "publish, 64 in flight",
                         "commit, one at a time"};
  std::vector<std::vector<Row>> rows(3);
  for (std::uint64_t rep = 1; rep <= options.repetitions; ++rep) {
    Run run(runtime, options.events, "durability" + std::to_string(rep));
    Row publish{run.publish_serial(plain, "p0"), run.publish_serial(durable, "p1")};
    Row concurrent{run.publish_concurrent(plain, "c0"), run.publish_concurrent(durable, "c1")};
    Row commit{run.commit_serial(plain, "s0"), run.commit_serial(durable, "s1")};
    rows[0].push_back(publish);
    rows[1].push_back(concurrent);
    rows[2].push_back(commit);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& row = rows[i].back();
      std::printf("%3llu  %-24s without %9.0f/s  with WAIT 1 %9.0f/s  with/without %.2fx\n",
                  static_cast<unsigned long long>(rep), names[i], row.without, row.with,
                  row.without > 0 ? row.with / row.without : 0.0);
    }
    unlink_matching(master, "durability" + std::to_string(rep) + "*");
  }
  std::printf("\nmedians (ratio: the median of the per-repetition ratios; load %s)\n",
              load_average().c_str());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> without;
    std::vector<double> with;
    std::vector<double> ratios;
    for (const Row& row : rows[i]) {
      without.push_back(row.without);
      with.push_back(row.with);
      ratios.push_back(row.without > 0 ? row.with / row.without : 0.0);
    }
    std::sort(without.begin(), without.end());
    std::sort(with.begin(), with.end());
    std::sort(ratios.begin(), ratios.end());
    std::printf("  %-24s without %9.0f/s  with WAIT 1 %9.0f/s  with/without %.2fx\n", names[i],
                without[without.size() / 2], with[with.size() / 2], ratios[ratios.size() / 2]);
  }
  replica_process.value().kill();
  return 0;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) {
  using namespace seqby::redis::bench;
  Options options;
  if (usage_asked(argc, argv, kUsage)) return 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    std::uint64_t* target = flag == "--repetitions" ? &options.repetitions
                            : flag == "--events"    ? &options.events
                                                    : nullptr;
    if (target == nullptr || i + 1 >= argc || !parse_u64(argv[i + 1], target) || *target == 0) {
      std::fprintf(stderr, "bench_redis_durability: bad argument '%s'\n%s", argv[i], kUsage);
      return kExitUsage;
    }
    ++i;
  }
  std::optional<seqby::redis::RedisConfig> config = redis_config_from_env("bench_redis_durability");
  if (!config.has_value()) return kExitNoServer;
  return run_bench(options, *config);
}
