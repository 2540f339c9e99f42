// A runtime whose sleeps only note their duration and return at once, for tests of code that
// waits between attempts: its tasks never really suspend (run them to their end at once). Its
// clock is a given one, or one that stays at 0. Nothing waits on an alarm or is spawned here:
// either is a test failure.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "seqby/core/clock.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby::testing {

class NotingRuntime final : public Runtime {
 public:
  NotingRuntime() : clock_(&fixed_) {}
  explicit NotingRuntime(Clock& clock) : clock_(&clock) {}

  Clock& clock() override { return *clock_; }
  Task<void> sleep_ms(std::uint64_t duration_ms) override {
    sleeps_ms.push_back(duration_ms);
    co_return;
  }
  Task<bool> wait_alarm(Alarm&, std::uint64_t) override {
    ADD_FAILURE() << "nothing waits on an alarm here";
    co_return false;
  }
  void spawn(std::string, Task<void>) override { ADD_FAILURE() << "nothing is spawned here"; }
  Task<void> run_blocking(std::function<void()> work) override {
    work();
    co_return;
  }

  std::vector<std::uint64_t> sleeps_ms;  // every sleep asked, in order

 private:
  class FixedClock final : public Clock {
   public:
    std::uint64_t now_ms() override { return 0; }
  };
  FixedClock fixed_;
  Clock* clock_;
};

}  // namespace seqby::testing
