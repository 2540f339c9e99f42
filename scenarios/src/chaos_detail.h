// The parts of a chaos run that its files share (scenarios/src/chaos_*.cpp): the private
// redis-server, the lanes a run publishes to, and the judges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "seqby/core/result.h"
#include "seqby/properties/checker.h"
#include "seqby/runtime/subprocess.h"
#include "seqby/scenarios/chaos.h"
#include "seqby/scenarios/redis_driver.h"

namespace seqby::scenarios::chaos_detail {

// A redis-server chaos starts for itself: a free loopback port, a fresh temporary directory,
// AOF with appendfsync always (so a SIGKILL loses no acknowledged write and a restart reloads
// everything but the script cache). Stopped by its pid, never by name; the directory is
// removed when the object goes. It dies with the thread that started it: use one thread.
class PrivateRedis {
 public:
  PrivateRedis() = default;
  ~PrivateRedis();
  PrivateRedis(const PrivateRedis&) = delete;
  PrivateRedis& operator=(const PrivateRedis&) = delete;

  Status start();
  void kill();       // SIGKILL and reap (a crash)
  Status restart();  // on the same port and directory; waits until PING answers
  bool running() const { return process_.running(); }
  const std::string& url() const { return url_; }

 private:
  Status spawn_and_wait();

  std::string dir_;
  std::uint16_t port_ = 0;
  std::string url_;
  redis::Subprocess process_;
};

// One stream a run publishes to and judges: category and key, the entry ids published (index
// seq-1) and the seq it must reach (the one before its poison event or before a publish a
// failover lost, or all).
struct ChaosLane {
  std::string category;
  std::string key;
  std::vector<std::string> ids;
  std::int64_t poison_seq = 0;         // 0: none
  std::int64_t lost_from = 0;          // the first seq whose entry a failover lost; 0: none
  std::set<std::int64_t> unconfirmed;  // seqs that landed but whose publish reply was lost
  std::int64_t target() const {
    std::int64_t target = static_cast<std::int64_t>(ids.size());
    if (poison_seq > 0) target = std::min(target, poison_seq - 1);
    if (lost_from > 0) target = std::min(target, lost_from - 1);
    return target;
  }
};

// The second opinion: each lane's effect sink holds exactly seqs 1..last, effect i is the entry
// published as seq i, last reached target() and no commit passed a poison event. Adds the
// properties it judged and its violations to `result`.
void judge_sinks(RedisScenarioDriver& driver, const std::vector<ChaosLane>& lanes,
                 ChaosRunResult* result);
// The checker on the collected history (parallel skipped for fewer than two workers or lanes,
// and `not_judged` too). Violations fail the run only when the history is exact; otherwise they
// are advisory. A no_loss finding about the events behind a publish a failover lost (a lane's
// lost_from) is explained, not a violation (ChaosRunResult::explained_findings).
void judge_history(const ChaosParams& params, const std::vector<ChaosLane>& lanes,
                   const std::vector<properties::Property>& not_judged, ChaosRunResult* result);

}  // namespace seqby::scenarios::chaos_detail
