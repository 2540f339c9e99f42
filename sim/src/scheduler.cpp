#include "seqby/sim/scheduler.h"

#include <algorithm>
#include <utility>

#include "seqby/core/check.h"

namespace seqby::sim {

namespace {
// Min-heap order: earlier due time first, then earlier insertion. Compared as one 128-bit
// number (due_ms, seq), the same order as comparing due_ms then seq, without a branch on their
// tie: many events fall due in the same millisecond, and the heap's sifting mispredicted it.
struct Later {
  template <typename K>
  bool operator()(const K& a, const K& b) const {
    return order_of(a) > order_of(b);
  }
  template <typename K>
  static unsigned __int128 order_of(const K& k) {
    return (static_cast<unsigned __int128>(k.due_ms) << 64) | k.seq;
  }
};
}  // namespace

const char* run_stop_name(RunStop stop) {
  switch (stop) {
    case RunStop::reached:
      return "reached";
    case RunStop::predicate:
      return "predicate";
    case RunStop::idle:
      return "idle";
    case RunStop::step_cap:
      return "step_cap";
  }
  return "unknown";
}

Scheduler::Scheduler(SchedulerOptions options) : options_(options), now_ms_(options.start_ms) {
  heap_.reserve(1024);
  entries_.reserve(1024);
}

Scheduler::~Scheduler() = default;

DomainId Scheduler::add_domain(Domain* domain) {
  SEQBY_CHECK(domain != nullptr);
  SEQBY_CHECK(domains_.size() < options_.domain_count_max);
  domains_.push_back(domain);
  return static_cast<DomainId>(domains_.size() - 1);
}

void Scheduler::remove_domain(DomainId id) {
  SEQBY_CHECK(id < domains_.size() && domains_[id] != nullptr);
  domains_[id] = nullptr;
}

void Scheduler::call_at(std::uint64_t due_ms, Callback fn) {
  SEQBY_CHECK(fn);
  push(due_ms, kWorld, 0, Work{{}, std::move(fn)});
}

void Scheduler::resume_at(std::uint64_t due_ms, DomainId domain, std::uint64_t tag,
                          std::coroutine_handle<> handle) {
  SEQBY_CHECK(handle && domain < domains_.size());
  push(due_ms, domain, tag, Work{handle, {}});
}

void Scheduler::call_bound_at(std::uint64_t due_ms, DomainId domain, std::uint64_t tag,
                              Callback fn) {
  SEQBY_CHECK(fn && domain < domains_.size());
  push(due_ms, domain, tag, Work{{}, std::move(fn)});
}

void Scheduler::push(std::uint64_t due_ms, DomainId domain, std::uint64_t tag, Work work) {
  SEQBY_CHECK(due_ms >= now_ms_);
  SEQBY_CHECK(heap_.size() < options_.queue_size_max);
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[slot];
  e.domain = domain;
  e.tag = tag;
  e.work = std::move(work);
  push_key(due_ms, slot);
}

void Scheduler::push_key(std::uint64_t due_ms, std::uint32_t slot) {
  heap_.push_back(Key{due_ms, seq_next_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

std::uint64_t Scheduler::next_due_ms() const {
  SEQBY_CHECK(!heap_.empty());
  return heap_.front().due_ms;
}

void Scheduler::mix(std::uint64_t value) {
  // A word-at-a-time multiplicative mix: fixed, cheap, order-sensitive.
  trace_hash_ = (trace_hash_ ^ value) * 0x9e3779b97f4a7c15ULL;
  trace_hash_ ^= trace_hash_ >> 29;
}

bool Scheduler::step() {
  if (heap_.empty() || step_cap_reached()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  const Key key = heap_.back();
  heap_.pop_back();
  SEQBY_CHECK(key.due_ms >= now_ms_);
  now_ms_ = key.due_ms;
  step_count_++;

  Entry& entry = entries_[key.slot];
  const DomainId domain = entry.domain;
  const std::uint64_t tag = entry.tag;
  // Take the work out first: running it may push new work and reallocate entries_.
  Work work = std::move(entry.work);
  entry.work = Work{};

  Dispatch outcome = Dispatch::ran();
  if (domain == kWorld) {
    work.run();
  } else if (domains_[domain] == nullptr) {
    outcome = Dispatch::dropped();
  } else {
    outcome = domains_[domain]->dispatch(tag, work);
  }
  mix(key.due_ms);
  mix(key.seq);
  mix((static_cast<std::uint64_t>(domain) << 8) | static_cast<std::uint64_t>(outcome.kind));
  mix(tag);

  if (outcome.kind == Dispatch::Kind::deferred) {
    SEQBY_CHECK(outcome.until_ms > now_ms_);
    Entry& again = entries_[key.slot];  // re-fetch: entries_ may have grown
    again.work = std::move(work);
    push_key(outcome.until_ms, key.slot);  // a fresh sequence: after work already due then
  } else {
    free_slots_.push_back(key.slot);
  }
  return true;
}

RunStop Scheduler::run_until(std::uint64_t time_ms) {
  SEQBY_CHECK(time_ms >= now_ms_);
  while (!heap_.empty() && heap_.front().due_ms <= time_ms) {
    if (!step()) return RunStop::step_cap;
  }
  now_ms_ = time_ms;
  return RunStop::reached;
}

RunStop Scheduler::run_until(const std::function<bool()>& done, std::uint64_t time_limit_ms) {
  SEQBY_CHECK(time_limit_ms >= now_ms_);
  for (;;) {
    if (done()) return RunStop::predicate;
    if (heap_.empty()) return RunStop::idle;
    if (heap_.front().due_ms > time_limit_ms) {
      now_ms_ = time_limit_ms;
      return RunStop::reached;
    }
    if (!step()) return RunStop::step_cap;
  }
}

}  // namespace seqby::sim
