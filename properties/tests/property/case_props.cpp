// The properties of DESIGN section 6 hold for the `correct` engine over generated whole cases
// (case_gen.h): one rapidcheck property per property, each asserting that property's verdict in
// run_case's report. A failure is shrunk by rapidcheck (fewer events, faults, instances, keys,
// simpler options); the minimal case is saved as a case file in $SEQBY_RC_SAVE_DIR (default
// ./rc-failures) and both replay commands are printed: rapidcheck's RC_PARAMS="reproduce=..."
// line and `seqby replay PATH`. One more test drives that failure path on purpose (dlq_continue
// against poison_halt) and checks the lines and the saved case.
//
// The same properties (pm_exclusion in place of exclusion) hold over process-manager cases
// (CaseShape::process_manager: 2-3 categories, correlation values as keys), and the failure path
// works for them too.
//
// Counts: kMaxSuccessDefault cases per property (kPmMaxSuccessDefault on process-manager cases)
// unless RC_PARAMS sets max_success, so the label stays short here; nightly:
// RC_PARAMS="max_success=2000" ctest -L property.
// SEQBY_RC_VARIANT=NAME runs the same properties against a known-broken variant instead (they
// are then expected to fail): a way to watch the generators find, shrink and save a bug.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/detail/TestListenerAdapter.h>
#include <rapidcheck/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "case_gen.h"
#include "seqby/core/engine_options.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/testing/variant.h"

namespace seqby {
namespace {

using properties::Property;

constexpr int kMaxSuccessDefault = 300;
constexpr int kPmMaxSuccessDefault = 150;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// The failing case rapidcheck saw last: after shrinking, the minimal one.
struct LastFailure {
  bool seen = false;
  sim::SimCase c;
  std::vector<HistoryRecord> history;
};

std::size_t poisoned_key_count(const sim::SimCase& c) {
  std::size_t count = 0;
  for (const auto& key : c.keys) count += sim::first_poison_seq(c, key) > 0 ? 1 : 0;
  return count;
}

std::string first_explanation(const properties::CheckReport& report, Property property) {
  for (const auto& f : report.violations) {
    if (f.property == property) return f.explanation;
  }
  return "";
}

// Saves the minimal case and its history; returns the case path, or a note why it could not.
std::string save_minimal(const LastFailure& last, const std::string& test_name) {
  const std::string dir = env_or("SEQBY_RC_SAVE_DIR", "rc-failures");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / (test_name + ".json")).string();
  if (Status s = scenarios::save_case(last.c, path); !s.ok())
    return "(not saved: " + s.error().message + ")";
  std::ofstream history((std::filesystem::path(dir) / (test_name + ".jsonl")).string(),
                        std::ios::binary | std::ios::trunc);
  properties::write_history(history, last.history);
  return path;
}

// Like RC_GTEST_PROP's check, with the count bounded and the minimal case saved on failure.
// `listener` null: rapidcheck's global one (it also prints the reproduce line at exit).
void expect_holds_over_cases(Property property, const testing::CaseShape& shape,
                             rc::detail::TestListener* listener = nullptr) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (env_or("RC_PARAMS", "").find("max_success") == std::string::npos) {
    params.maxSuccess = shape.process_manager ? kPmMaxSuccessDefault : kMaxSuccessDefault;
  }
  LastFailure last;
  const auto property_holds = [&] {
    const sim::SimCase c = *testing::gen_case(shape);
    scenarios::RunOptions options;
    options.compute_history_sha256 = false;
    scenarios::RunResult r = scenarios::run_case(c, options);
    const properties::PropertyStatus& status = r.report.status(property);
    RC_TAG(status.checked ? "judged" : "not applicable");
    RC_ASSERT(r.report.status(Property::pm_exclusion).checked == sim::is_process_manager(c));
    if (status.violated()) {
      last = LastFailure{true, c, std::move(r.history)};
      RC_FAIL(std::string(testing::variant_name(c.variant)) + " violates " +
              std::string(properties::property_name(property)) + ": " +
              first_explanation(r.report, property));
    }
  };
  const rc::detail::TestResult result =
      listener != nullptr ? rc::detail::checkTestable(property_holds, metadata, params, *listener)
                          : rc::detail::checkTestable(property_holds, metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) {
    rc::detail::printResultMessage(result, std::cout);
    std::cout << "\n";
    return;
  }
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  if (result.template is<rc::detail::FailureResult>()) {
    rc::detail::Configuration reproduce;
    reproduce.reproduce[metadata.id] = result.template get<rc::detail::FailureResult>().reproduce;
    const std::string test_name = std::string(info->test_suite_name()) + "." + info->name();
    std::error_code ec;
    const std::string binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    message << "\nreplay (rapidcheck): RC_PARAMS=\"" << rc::detail::configToMinimalString(reproduce)
            << "\" " << (ec ? "property_case_props" : binary) << " --gtest_filter=" << test_name
            << "\n";
    if (last.seen) {
      const std::string path = save_minimal(last, test_name);
      message << "minimal case saved: " << path << "\nreplay (seqby): seqby replay " << path
              << "\n";
    }
  }
  FAIL() << message.str();
}

// The cases' variant: `correct`, or SEQBY_RC_VARIANT.
testing::CaseShape shape(bool parallel_work = false) {
  testing::CaseShape s;
  s.parallel_work = parallel_work;
  s.variant = env_or("SEQBY_RC_VARIANT", "correct");
  return s;
}

testing::CaseShape pm_shape(bool parallel_work = false) {
  testing::CaseShape s = shape(parallel_work);
  s.process_manager = true;
  return s;
}

TEST(CaseProps, OrderHolds) { expect_holds_over_cases(Property::order, shape()); }
TEST(CaseProps, FenceHolds) { expect_holds_over_cases(Property::fence, shape()); }
TEST(CaseProps, ExclusionHolds) { expect_holds_over_cases(Property::exclusion, shape()); }
TEST(CaseProps, NoLossHolds) { expect_holds_over_cases(Property::no_loss, shape()); }
TEST(CaseProps, PoisonHaltHolds) { expect_holds_over_cases(Property::poison_halt, shape()); }
TEST(CaseProps, ParallelHolds) { expect_holds_over_cases(Property::parallel, shape(true)); }

TEST(PmCaseProps, PmExclusionHolds) { expect_holds_over_cases(Property::pm_exclusion, pm_shape()); }
TEST(PmCaseProps, FenceHolds) { expect_holds_over_cases(Property::fence, pm_shape()); }
TEST(PmCaseProps, OrderHolds) { expect_holds_over_cases(Property::order, pm_shape()); }
TEST(PmCaseProps, NoLossHolds) { expect_holds_over_cases(Property::no_loss, pm_shape()); }
TEST(PmCaseProps, PoisonHaltHolds) { expect_holds_over_cases(Property::poison_halt, pm_shape()); }
// Correlation values run in parallel (a PM's streams of one value never do: the checker counts
// values, not streams).
TEST(PmCaseProps, ParallelHolds) {
  expect_holds_over_cases(Property::parallel, pm_shape(/*parallel_work=*/true));
}

// The failure path, on a variant known to break poison_halt: the property fails, the message
// carries both replay lines, and the saved case is the shrunk counterexample, replayable (for a
// process-manager case too: the saved case keeps its categories).
void poison_halt_of_dlq_continue(bool process_manager) {
  testing::CaseShape s;
  s.variant = "dlq_continue";
  s.process_manager = process_manager;
  rc::detail::TestListenerAdapter quiet;  // a deliberate failure: no reproduce line at exit
  expect_holds_over_cases(Property::poison_halt, s, &quiet);
}

void expect_failure_saved_and_replayable(bool process_manager) {
  if (!testing::parse_variant("dlq_continue").has_value())
    GTEST_SKIP() << "no dlq_continue variant";
  if (!rc::detail::configuration().reproduce.empty()) GTEST_SKIP() << "reproducing another test";
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "seqby-rc.XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  ::setenv("SEQBY_RC_SAVE_DIR", dir.c_str(), 1);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    poison_halt_of_dlq_continue(process_manager);
  }
  ::unsetenv("SEQBY_RC_SAVE_DIR");
  ASSERT_EQ(failures.size(), 1);
  const std::string message = failures.GetTestPartResult(0).message();
  const std::string path = dir + "/" + info->test_suite_name() + "." + info->name() + ".json";
  EXPECT_NE(message.find("replay (rapidcheck): RC_PARAMS=\"reproduce="), std::string::npos)
      << message;
  EXPECT_NE(message.find("replay (seqby): seqby replay " + path + "\n"), std::string::npos)
      << message;
  const Result<sim::SimCase> saved = scenarios::load_case(path);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_TRUE(scenarios::run_case(saved.value()).report.status(Property::poison_halt).violated());
  EXPECT_EQ(poisoned_key_count(saved.value()), 1u) << "shrunk to one poison head";
  EXPECT_EQ(sim::is_process_manager(saved.value()), process_manager);
  if (process_manager) {
    EXPECT_EQ(saved.value().group, testing::kPmGroup);
    for (const sim::CaseEvent& e : saved.value().events) {
      EXPECT_FALSE(e.category.empty()) << "every event of a PM case names its category";
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(CaseProps, AFailureSavesTheMinimalCaseAndPrintsBothReplayLines) {
  expect_failure_saved_and_replayable(/*process_manager=*/false);
}

TEST(PmCaseProps, AFailureSavesTheMinimalCaseAndPrintsBothReplayLines) {
  expect_failure_saved_and_replayable(/*process_manager=*/true);
}

// The generators keep their promise: engine options a real engine accepts, and cases that a
// case file carries unchanged (so a saved minimal case replays exactly).
RC_GTEST_PROP(CaseGen, GeneratedCasesAreValidCaseFiles, ()) {
  testing::CaseShape shape;
  shape.process_manager = *rc::gen::arbitrary<bool>();
  const sim::SimCase c = *testing::gen_case(shape);
  RC_ASSERT(sim::is_process_manager(c) == shape.process_manager);
  std::map<std::pair<std::string, std::string>, std::int64_t> seqs;
  for (const sim::CaseEvent& e : c.events) {
    const std::string category = sim::category_of(c, e);
    const std::vector<std::string> categories = sim::categories_of(c);
    RC_ASSERT(std::find(categories.begin(), categories.end(), category) != categories.end());
    const std::int64_t expected = ++seqs[std::make_pair(category, e.key)];
    RC_ASSERT(e.seq == expected);  // seq per (category, key), in publish order
  }
  RC_ASSERT(validate_engine_options(sim::engine_options_for(c, "i0-g1")).ok());
  const Result<sim::SimCase> back = scenarios::case_from_json(scenarios::case_to_json(c), "gen");
  RC_ASSERT(back.ok());
  RC_ASSERT(scenarios::case_to_json(back.value()) == scenarios::case_to_json(c));
}

}  // namespace
}  // namespace seqby
