// Three contracts of the fenced scripts, written once and run through RedisBroker on SimRedis
// (sim/tests/sim/same_owner_fence.cpp) and on a real redis-server
// (adapters/tests/redis/same_owner_fence_real.cpp), so the simulator's Lua and the server's agree:
//
// 1. The same owner id at two generations (issue 18): owner `a` holds a partition as a:N, loses
//    it (acquired again over its own lease, released, or expired) and takes it again as a:N+1,
//    as a replacement process started with the same --owner-id does. Every fenced step under the
//    old a:N is then refused and changes nothing: the entry it had in flight stays pending, the
//    effect sink, the halt record, the index and the new lease (value and TTL) are untouched,
//    and the new generation goes on as if the old one never spoke. The consumer name a:N and
//    a:N+1 share the owner id: nothing but the generation tells them apart, which is the point.
// 2. A reap while another group has an entry in flight: group g1's owner has acked every entry
//    of a partition, group g2 (with a lease of its own) has been delivered the last entry but
//    not acked it. The reap refuses and leaves the stream, its groups, index entry and lease.
//
// 3. The commit carried by the step (fenced_commit_next): commit_carried_by_the_step below.
//
// What it does not cover: handler_enter / handler_exit (the record test handler's in-progress
// marker), which are not fenced and compare owner ids only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/check.h"
#include "seqby/core/task.h"

namespace seqby::testing {

// Where a contract runs: a broker over a server, raw commands on that server, and time.
class ContractServer {
 public:
  virtual ~ContractServer() = default;
  virtual redis::RedisBroker& broker() = 0;
  // One command on the server, beside the broker (for the state snapshots).
  virtual redis::Reply run(const redis::Command& command) = 0;
  // Runs `task` to its end.
  virtual void drive(Task<void> task) = 0;
  // Lets at least `ms` of server time pass.
  virtual void pass_ms(std::uint64_t ms) = 0;
};

// The value of `task`, run on `server`.
template <typename T>
T call(ContractServer& server, Task<T> task) {
  std::optional<T> out;
  auto body = [](Task<T> inner, std::optional<T>* result) -> Task<void> {
    T value = co_await std::move(inner);
    result->emplace(std::move(value));
  };
  server.drive(body(std::move(task), &out));
  SEQBY_CHECK(out.has_value());
  return std::move(*out);
}

namespace contract {

inline constexpr const char* kGroup = "billing";
inline constexpr const char* kOtherGroup = "fulfil";  // a second group of the category
inline constexpr std::uint64_t kLeaseTtlMs = 60'000;

// The value of `name` in a flat [field, value, ...] reply, rendered (nil when absent).
inline std::string field_of(const redis::Reply& flat, const std::string& name) {
  for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
    if (flat.elements[i].str == name) return redis::to_string(flat.elements[i + 1]);
  }
  return redis::to_string(redis::Reply::nil());
}

// Everything about `p` a fenced script may write, for `groups`, without anything that moves with
// time alone (idle times, TTLs): two equal snapshots mean nothing was changed.
inline std::string partition_state(ContractServer& s, const PartitionRef& p,
                                   const std::string& lease_key,
                                   const std::vector<std::string>& groups) {
  std::string out;
  auto line = [&out](const std::string& name, const redis::Reply& reply) {
    out += name + " " + redis::to_string(reply) + "\n";
  };
  line("lease", s.run({"GET", lease_key}));
  line("fence", s.run({"GET", p.fence()}));
  line("stream", s.run({"XRANGE", p.stream(), "-", "+"}));
  line("indexed", s.run({"SISMEMBER", p.index(), p.key}));
  for (const std::string& group : groups) {
    const redis::Reply infos = s.run({"XINFO", "GROUPS", p.stream()});
    for (const redis::Reply& info : infos.elements) {
      if (field_of(info, "name") != redis::to_string(redis::Reply::bulk(group))) continue;
      out += "group " + group + " pending=" + field_of(info, "pending") +
             " last-delivered-id=" + field_of(info, "last-delivered-id") + "\n";
    }
    line("pending " + group, s.run({"XPENDING", p.stream(), group}));
    const redis::Reply consumers = s.run({"XINFO", "CONSUMERS", p.stream(), group});
    for (const redis::Reply& consumer : consumers.elements) {
      out += "consumer " + group + " " + field_of(consumer, "name") +
             " pending=" + field_of(consumer, "pending") + "\n";
    }
    line("sink " + group, s.run({"HGETALL", redis::sink_key_name(p, group)}));
    line("effects " + group, s.run({"HGETALL", redis::effects_hash_name(p, group)}));
    line("halt " + group, s.run({"HGETALL", redis::halt_key_name(p, group)}));
  }
  return out;
}

inline std::string publish(ContractServer& s, const PartitionRef& p, int n) {
  Result<std::string> id =
      call(s, s.broker().publish(p, "created", "{\"n\":" + std::to_string(n) + "}"));
  SEQBY_CHECK(id.ok());
  return id.value();
}

inline Lease acquire(ContractServer& s, const PartitionRef& p, const std::string& scope,
                     const std::string& owner, std::uint64_t ttl_ms = kLeaseTtlMs) {
  Result<std::optional<Lease>> got = call(s, s.broker().acquire(p, scope, owner, ttl_ms));
  SEQBY_CHECK(got.ok() && got.value().has_value());
  return *got.value();
}

// The next entry for `lease` in `group` (nullopt: none, or the read failed: then a failure).
inline std::optional<StreamEntry> read(ContractServer& s, const Lease& lease,
                                       const std::string& group, ReadFrom from) {
  Result<std::optional<StreamEntry>> entry = call(s, s.broker().fenced_read(lease, group, from));
  EXPECT_TRUE(entry.ok()) << entry.error().message;
  return entry.ok() ? entry.value() : std::nullopt;
}

// How owner a comes to hold its partition again at a newer generation.
enum class Superseded : std::uint8_t {
  acquired_again,         // a:N+1 acquired over a:N (a replacement with the same owner id)
  released_and_acquired,  // a:N released, then a:N+1 acquired
  expired_and_acquired,   // a:N's TTL ran out, then a:N+1 acquired
};

inline const char* superseded_name(Superseded how) {
  switch (how) {
    case Superseded::acquired_again:
      return "acquired_again";
    case Superseded::released_and_acquired:
      return "released_and_acquired";
    case Superseded::expired_and_acquired:
      return "expired_and_acquired";
  }
  return "?";
}

// Every fenced step under `stale`, each refused: FENCED (or its refusal value) and nothing
// changed. `in_flight` is the entry the old generation was handling; `next_seq` the sink's next.
inline void expect_every_step_refused(ContractServer& s, const Lease& stale,
                                      const std::string& in_flight, std::int64_t next_seq) {
  redis::RedisBroker& b = s.broker();
  const std::string g = kGroup;
  EXPECT_EQ(call(s, b.check_lease(stale)).code(), Errc::fenced) << "check_lease";
  EXPECT_EQ(call(s, b.fenced_read(stale, g, ReadFrom::new_entries)).code(), Errc::fenced)
      << "fenced_read new entries";
  EXPECT_EQ(call(s, b.fenced_read(stale, g, ReadFrom::pending)).code(), Errc::fenced)
      << "fenced_read pending";
  EXPECT_EQ(call(s, b.fenced_next(stale, g, ReadFrom::new_entries, "")).code(), Errc::fenced)
      << "fenced_next without an ack";
  EXPECT_EQ(call(s, b.fenced_next(stale, g, ReadFrom::new_entries, in_flight)).code(), Errc::fenced)
      << "fenced_next with the in-flight entry's ack riding on it";
  EXPECT_EQ(call(s, b.fenced_next(stale, g, ReadFrom::pending, in_flight)).code(), Errc::fenced)
      << "fenced_next from pending with an ack";
  EXPECT_EQ(call(s, b.fenced_ack(stale, g, in_flight)).code(), Errc::fenced) << "fenced_ack";
  for (std::int64_t seq : {next_seq, next_seq - 1, next_seq + 1}) {
    if (seq < 1) continue;
    Result<CommitReply> commit = call(s, b.fenced_commit(stale, g, seq, "stale-" + in_flight));
    ASSERT_TRUE(commit.ok()) << commit.error().message;
    EXPECT_EQ(commit.value().outcome, CommitOutcome::fenced) << "fenced_commit seq " << seq;
    const EffectCommit effect{seq, "stale-" + in_flight};
    NextAsk ask;
    ask.commit = &effect;
    EXPECT_EQ(call(s, b.fenced_next(stale, g, ReadFrom::new_entries, in_flight, ask)).code(),
              Errc::fenced)
        << "fenced_next carrying the commit of seq " << seq << " (fenced_commit_next)";
  }
  EXPECT_EQ(call(s, b.reclaim(stale, g)).code(), Errc::fenced) << "reclaim";
  EXPECT_EQ(call(s, b.drop_stale_consumers(stale, g)).code(), Errc::fenced)
      << "drop_stale_consumers";
  EXPECT_EQ(call(s, b.record_halt(stale, g, in_flight, "stale generation", 1)).code(), Errc::fenced)
      << "record_halt";
  EXPECT_EQ(call(s, b.renew(stale, 10 * kLeaseTtlMs)).code(), Errc::fenced) << "renew";
  const std::vector<Status> renewed = call(s, b.renew_many({stale}, 10 * kLeaseTtlMs));
  ASSERT_EQ(renewed.size(), 1u);
  ASSERT_FALSE(renewed[0].ok()) << "renew_many renewed a stale generation";
  EXPECT_EQ(renewed[0].code(), Errc::fenced) << "renew_many";
  Result<bool> released = call(s, b.release(stale));
  ASSERT_TRUE(released.ok()) << released.error().message;
  EXPECT_FALSE(released.value()) << "release deleted the newer generation's lease";
  EXPECT_EQ(call(s, b.reap(stale, 0)).code(), Errc::fenced) << "reap";
}

// The new lease's TTL was not extended by a refused renew (PTTL within its own TTL).
inline void expect_ttl_not_extended(ContractServer& s, const Lease& lease) {
  const redis::Reply pttl = s.run({"PTTL", lease.key()});
  EXPECT_GT(pttl.integer, 0) << "the newer generation's lease is gone";
  EXPECT_LE(pttl.integer, static_cast<std::int64_t>(kLeaseTtlMs))
      << "a refused renew extended the newer generation's lease";
}

// Contract 1, for one way of being superseded. `scope`: "" (C:K:__lease__) or a group name.
inline void same_owner_stale_generation_is_refused(ContractServer& s, const PartitionRef& p,
                                                   const std::string& scope, Superseded how) {
  SCOPED_TRACE(std::string("superseded: ") + superseded_name(how) + ", scope \"" + scope + "\"");
  redis::RedisBroker& b = s.broker();
  ASSERT_TRUE(call(s, b.ensure_group(p, kGroup)).ok());
  const std::string e1 = publish(s, p, 1);
  const std::string e2 = publish(s, p, 2);
  const std::string e3 = publish(s, p, 3);

  // a:N handles e1 to its end and is inside e2 when it loses the lease.
  const std::uint64_t old_ttl_ms = how == Superseded::expired_and_acquired ? 200 : kLeaseTtlMs;
  const Lease old = acquire(s, p, scope, "a", old_ttl_ms);
  const std::optional<StreamEntry> first = read(s, old, kGroup, ReadFrom::new_entries);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->id, e1);
  ASSERT_EQ(call(s, b.fenced_commit(old, kGroup, 1, e1)).value().outcome, CommitOutcome::accepted);
  Result<NextReply> next = call(s, b.fenced_next(old, kGroup, ReadFrom::new_entries, e1));
  ASSERT_TRUE(next.ok()) << next.error().message;
  ASSERT_TRUE(next.value().acked);
  ASSERT_TRUE(next.value().entry.has_value());
  ASSERT_EQ(next.value().entry->id, e2);

  switch (how) {
    case Superseded::acquired_again:
      break;
    case Superseded::released_and_acquired:
      ASSERT_TRUE(call(s, b.release(old)).value());
      break;
    case Superseded::expired_and_acquired:
      s.pass_ms(2 * old_ttl_ms + 100);
      ASSERT_EQ(s.run({"EXISTS", old.key()}).integer, 0) << "the old lease did not expire";
      break;
  }
  const Lease fresh = acquire(s, p, scope, "a");
  EXPECT_EQ(fresh.owner_id, old.owner_id);
  EXPECT_EQ(fresh.key(), old.key());
  EXPECT_GT(fresh.generation, old.generation);
  EXPECT_NE(fresh.token(), old.token());
  const std::vector<std::string> groups = {kGroup};

  // Before the new generation has done anything: e2 is pending under a:N.
  const std::string before = partition_state(s, p, fresh.key(), groups);
  expect_every_step_refused(s, old, e2, 2);
  EXPECT_EQ(partition_state(s, p, fresh.key(), groups), before);
  EXPECT_EQ(s.run({"GET", fresh.key()}).str, fresh.token());
  expect_ttl_not_extended(s, fresh);

  // The new generation reclaims e2 (now pending under a:N+1, the same owner id): the old one's
  // ack of it, with or without a read riding on it, must still change nothing.
  Result<std::uint64_t> reclaimed = call(s, b.reclaim(fresh, kGroup));
  ASSERT_TRUE(reclaimed.ok()) << reclaimed.error().message;
  EXPECT_EQ(reclaimed.value(), 1u);
  const std::string reclaimed_state = partition_state(s, p, fresh.key(), groups);
  expect_every_step_refused(s, old, e2, 2);
  EXPECT_EQ(partition_state(s, p, fresh.key(), groups), reclaimed_state);
  expect_ttl_not_extended(s, fresh);

  // The new generation goes on as if the old one never spoke: e2 again, committed as seq 2,
  // then e3, renewed; a renew_many of both generations renews only the new one.
  const std::optional<StreamEntry> again = read(s, fresh, kGroup, ReadFrom::pending);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->id, e2);
  const Result<CommitReply> committed = call(s, b.fenced_commit(fresh, kGroup, 2, e2));
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(committed.value().outcome, CommitOutcome::accepted);
  EXPECT_EQ(committed.value().committed_by, fresh.token());
  next = call(s, b.fenced_next(fresh, kGroup, ReadFrom::new_entries, e2));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_TRUE(next.value().acked);
  ASSERT_TRUE(next.value().entry.has_value());
  EXPECT_EQ(next.value().entry->id, e3);
  const std::vector<Status> both = call(s, b.renew_many({old, fresh}, kLeaseTtlMs));
  ASSERT_EQ(both.size(), 2u);
  ASSERT_FALSE(both[0].ok()) << "the old generation was renewed";
  EXPECT_EQ(both[0].code(), Errc::fenced);
  EXPECT_TRUE(both[1].ok()) << both[1].error().message;
  EXPECT_EQ(s.run({"HGET", redis::effects_hash_name(p, kGroup), "2"}).str, e2);
  EXPECT_TRUE(call(s, b.release(fresh)).value());
}

// Contract 1 for the reap: a partition that is cold (everything delivered and acked, idle) is
// not reaped under the old generation, and is under the new one.
inline void same_owner_stale_generation_cannot_reap(ContractServer& s, const PartitionRef& p) {
  redis::RedisBroker& b = s.broker();
  ASSERT_TRUE(call(s, b.subscribe(p.category, kGroup)).ok());
  ASSERT_TRUE(call(s, b.ensure_group(p, kGroup)).ok());
  const std::string e1 = publish(s, p, 1);
  const Lease old = acquire(s, p, "", "a");
  ASSERT_TRUE(read(s, old, kGroup, ReadFrom::new_entries).has_value());
  ASSERT_TRUE(call(s, b.fenced_ack(old, kGroup, e1)).ok());
  const Lease fresh = acquire(s, p, "", "a");
  ASSERT_GT(fresh.generation, old.generation);
  s.pass_ms(20);
  const std::string before = partition_state(s, p, fresh.key(), {kGroup});
  EXPECT_EQ(call(s, b.reap(old, 1)).code(), Errc::fenced);
  EXPECT_EQ(partition_state(s, p, fresh.key(), {kGroup}), before);
  const Result<bool> reaped = call(s, b.reap(fresh, 1));
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_TRUE(reaped.value()) << "the newer generation could not reap its cold partition";
  EXPECT_EQ(s.run({"EXISTS", p.stream()}).integer, 0);
}

// Contract 3, the commit carried by the step (fenced_commit_next, HandlerResult::commit_with_step):
// the effect of the entry handled, its ack and the read of the next are one step under one lease
// check. Accepted: committed, acknowledged and the next delivered. Sent again after a lost reply:
// a duplicate by this very token, acknowledged again (harmless), nothing committed twice. Out of
// order: nothing committed, acknowledged or read. A held entry's check rides on it as well.
inline void commit_carried_by_the_step(ContractServer& s, const PartitionRef& p) {
  redis::RedisBroker& b = s.broker();
  ASSERT_TRUE(call(s, b.ensure_group(p, kGroup)).ok());
  const std::string e1 = publish(s, p, 1);
  const std::string e2 = publish(s, p, 2);
  const std::string e3 = publish(s, p, 3);
  const Lease lease = acquire(s, p, "", "a");
  const std::optional<StreamEntry> first = read(s, lease, kGroup, ReadFrom::new_entries);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->id, e1);
  const std::string effects = redis::effects_hash_name(p, kGroup);
  auto step = [&](const std::string& ack_id, std::int64_t seq, const std::string& effect,
                  std::uint32_t count, const std::string& held_id) {
    const EffectCommit commit{seq, effect};
    NextAsk ask;
    ask.count = count;
    ask.held_id = held_id;
    ask.commit = &commit;
    return call(s, b.fenced_next(lease, kGroup, ReadFrom::new_entries, ack_id, ask));
  };
  auto pending_count = [&] { return s.run({"XPENDING", p.stream(), kGroup}).elements[0].integer; };

  // Out of order (seq 2 before 1): nothing committed, acknowledged or read.
  const std::string before = partition_state(s, p, lease.key(), {kGroup});
  Result<NextReply> gap = step(e1, 2, "gap-" + e1, 1, "");
  ASSERT_TRUE(gap.ok()) << gap.error().message;
  ASSERT_TRUE(gap.value().commit.has_value());
  EXPECT_EQ(gap.value().commit->outcome, CommitOutcome::out_of_order);
  EXPECT_EQ(gap.value().commit->last_seq, 0);
  EXPECT_FALSE(gap.value().ack_asked);
  EXPECT_FALSE(gap.value().entry.has_value());
  EXPECT_EQ(partition_state(s, p, lease.key(), {kGroup}), before);

  // Accepted: e1's effect committed, e1 acknowledged, e2 and e3 delivered (e3 held).
  Result<NextReply> stepped = step(e1, 1, e1, 2, "");
  ASSERT_TRUE(stepped.ok()) << stepped.error().message;
  ASSERT_TRUE(stepped.value().commit.has_value());
  EXPECT_EQ(stepped.value().commit->outcome, CommitOutcome::accepted);
  EXPECT_EQ(stepped.value().commit->last_seq, 1);
  EXPECT_EQ(stepped.value().commit->committed_by, lease.token());
  EXPECT_TRUE(stepped.value().acked);
  ASSERT_TRUE(stepped.value().entry.has_value());
  EXPECT_EQ(stepped.value().entry->id, e2);
  ASSERT_EQ(stepped.value().held.size(), 1u);
  EXPECT_EQ(stepped.value().held[0].id, e3);
  EXPECT_EQ(s.run({"HGET", effects, "1"}).str, e1);
  EXPECT_EQ(pending_count(), 2);  // e2 and e3 delivered, e1 acknowledged

  // The same step sent again (its reply lost): a duplicate of our own seq, e1 acked again (0),
  // and it reads on: nothing new, so it waits after e3.
  Result<NextReply> again = step(e1, 1, e1, 1, "");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again.value().commit->outcome, CommitOutcome::duplicate);
  EXPECT_EQ(again.value().commit->last_seq, 1);
  EXPECT_EQ(again.value().commit->committed_by, lease.token());
  EXPECT_TRUE(again.value().ack_asked);
  EXPECT_FALSE(again.value().acked);
  EXPECT_FALSE(again.value().entry.has_value());
  EXPECT_EQ(again.value().last_id, e3);
  EXPECT_EQ(s.run({"HLEN", effects}).integer, 1);

  // e2 handled: its commit rides on the held check of e3.
  Result<NextReply> held = step(e2, 2, e2, 1, e3);
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_EQ(held.value().commit->outcome, CommitOutcome::accepted);
  EXPECT_TRUE(held.value().acked);
  EXPECT_TRUE(held.value().held_checked);
  EXPECT_EQ(s.run({"HGET", effects, "2"}).str, e2);
  EXPECT_EQ(pending_count(), 1);  // e3, to be entered now
}

// How group g2 came to have the last entry in flight.
enum class InFlight : std::uint8_t {
  read,            // fenced_read delivered it, nothing acked it
  next_after_ack,  // fenced_next acked the entry before and delivered it in one step
  older_consumer,  // g2's owner that read it is gone: it is pending under an older generation
};

inline const char* in_flight_name(InFlight how) {
  switch (how) {
    case InFlight::read:
      return "read";
    case InFlight::next_after_ack:
      return "next_after_ack";
    case InFlight::older_consumer:
      return "older_consumer";
  }
  return "?";
}

// Contract 2: g1's owner (lease C:K:__lease__) has acked every entry; g2 (its own lease,
// C:K:__lease__:g2) has been delivered the last one and not acked it. The reap refuses and
// changes nothing; once g2 acks, the same reap goes ahead.
inline void reap_refused_while_other_group_in_flight(ContractServer& s, const PartitionRef& p,
                                                     InFlight how) {
  SCOPED_TRACE(std::string("g2's entry in flight by: ") + in_flight_name(how));
  redis::RedisBroker& b = s.broker();
  for (const char* group : {kGroup, kOtherGroup}) {
    ASSERT_TRUE(call(s, b.subscribe(p.category, group)).ok());
    ASSERT_TRUE(call(s, b.ensure_group(p, group)).ok());
  }
  const std::string e1 = publish(s, p, 1);
  const std::string e2 = publish(s, p, 2);
  const Lease g1_owner = acquire(s, p, "", "a");
  constexpr std::uint64_t kShortTtlMs = 200;
  Lease g2_owner =
      acquire(s, p, kOtherGroup, "b", how == InFlight::older_consumer ? kShortTtlMs : kLeaseTtlMs);
  for (const std::string& id : {e1, e2}) {
    const std::optional<StreamEntry> entry = read(s, g1_owner, kGroup, ReadFrom::new_entries);
    ASSERT_TRUE(entry.has_value());
    ASSERT_EQ(entry->id, id);
    ASSERT_TRUE(call(s, b.fenced_ack(g1_owner, kGroup, id)).ok());
  }
  const std::optional<StreamEntry> g2_first = read(s, g2_owner, kOtherGroup, ReadFrom::new_entries);
  ASSERT_TRUE(g2_first.has_value());
  if (how == InFlight::next_after_ack) {
    Result<NextReply> next =
        call(s, b.fenced_next(g2_owner, kOtherGroup, ReadFrom::new_entries, e1));
    ASSERT_TRUE(next.ok()) << next.error().message;
    ASSERT_TRUE(next.value().acked);
    ASSERT_TRUE(next.value().entry.has_value());
    ASSERT_EQ(next.value().entry->id, e2);
  } else {
    ASSERT_TRUE(call(s, b.fenced_ack(g2_owner, kOtherGroup, e1)).ok());
    ASSERT_TRUE(read(s, g2_owner, kOtherGroup, ReadFrom::new_entries).has_value());
  }
  if (how == InFlight::older_consumer) {
    // g2's owner b:N is gone (its lease expired); c takes g2's lease and has not reclaimed
    // yet: e2 is pending under b:N.
    s.pass_ms(2 * kShortTtlMs + 100);
    ASSERT_EQ(s.run({"EXISTS", g2_owner.key()}).integer, 0);
    g2_owner = acquire(s, p, kOtherGroup, "c");
  }
  s.pass_ms(20);
  const std::vector<std::string> groups = {kGroup, kOtherGroup};
  const std::string before = partition_state(s, p, g1_owner.key(), groups);
  const Result<bool> reaped = call(s, b.reap(g1_owner, 1));
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_FALSE(reaped.value()) << "reaped while " << kOtherGroup << " had " << e2 << " in flight";
  EXPECT_EQ(partition_state(s, p, g1_owner.key(), groups), before);
  EXPECT_EQ(s.run({"XLEN", p.stream()}).integer, 2);
  EXPECT_EQ(s.run({"SISMEMBER", p.index(), p.key}).integer, 1);
  EXPECT_EQ(s.run({"GET", g1_owner.key()}).str, g1_owner.token());

  // g2 gets e2 (again) and acks it: nothing is in flight, the same reap goes ahead.
  if (how == InFlight::older_consumer) {
    ASSERT_EQ(call(s, b.reclaim(g2_owner, kOtherGroup)).value(), 1u);
    ASSERT_TRUE(read(s, g2_owner, kOtherGroup, ReadFrom::pending).has_value());
  }
  ASSERT_TRUE(call(s, b.fenced_ack(g2_owner, kOtherGroup, e2)).ok());
  s.pass_ms(20);
  const Result<bool> after = call(s, b.reap(g1_owner, 1));
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after.value()) << "not reaped once every group had acked everything";
  EXPECT_EQ(s.run({"EXISTS", p.stream()}).integer, 0);
}

}  // namespace contract
}  // namespace seqby::testing
