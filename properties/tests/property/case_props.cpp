// The properties of DESIGN section 6 hold for the `correct` engine over generated whole cases
// (case_gen.h): one rapidcheck property per property, each asserting that property's verdict in
// run_case's report. A failure is shrunk by rapidcheck (fewer events, faults, instances, keys,
// simpler options); the minimal case is saved as a case file in $SEQBY_RC_SAVE_DIR (default
// ./rc-failures) and both replay commands are printed: rapidcheck's RC_PARAMS="reproduce=..."
// line and `seqby replay PATH`.
//
// Counts: kMaxSuccessDefault cases per property unless RC_PARAMS sets max_success, so the label
// stays short here; nightly: RC_PARAMS="max_success=2000" ctest -L property.
// SEQBY_RC_VARIANT=NAME runs the same properties against a known-broken variant instead (they
// are then expected to fail): a way to watch the generators find, shrink and save a bug.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "case_gen.h"
#include "seqby/core/engine_options.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"

namespace seqby {
namespace {

using properties::Property;

constexpr int kMaxSuccessDefault = 300;

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
void expect_holds_over_cases(Property property, testing::CaseShape shape) {
  shape.variant = env_or("SEQBY_RC_VARIANT", sim::kCorrectVariant);
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (env_or("RC_PARAMS", "").find("max_success") == std::string::npos) {
    params.maxSuccess = kMaxSuccessDefault;
  }
  LastFailure last;
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [&] {
        const sim::SimCase c = *testing::gen_case(shape);
        scenarios::RunOptions options;
        options.compute_history_sha256 = false;
        scenarios::RunResult r = scenarios::run_case(c, options);
        const properties::PropertyStatus& status = r.report.status(property);
        RC_TAG(status.checked ? "judged" : "not applicable");
        if (status.violated()) {
          last = LastFailure{true, c, std::move(r.history)};
          RC_FAIL(c.variant + " violates " + std::string(properties::property_name(property)) +
                  ": " + first_explanation(r.report, property));
        }
      },
      metadata, params);
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

TEST(CaseProps, OrderHolds) { expect_holds_over_cases(Property::order, {}); }
TEST(CaseProps, FenceHolds) { expect_holds_over_cases(Property::fence, {}); }
TEST(CaseProps, ExclusionHolds) { expect_holds_over_cases(Property::exclusion, {}); }
TEST(CaseProps, NoLossHolds) { expect_holds_over_cases(Property::no_loss, {}); }
TEST(CaseProps, PoisonHaltHolds) { expect_holds_over_cases(Property::poison_halt, {}); }
TEST(CaseProps, ParallelHolds) {
  expect_holds_over_cases(Property::parallel, testing::CaseShape{.parallel_work = true});
}

// The generators keep their promise: engine options a real engine accepts, and cases that a
// case file carries unchanged (so a saved minimal case replays exactly).
RC_GTEST_PROP(CaseGen, GeneratedCasesAreValidCaseFiles, ()) {
  const sim::SimCase c = *testing::gen_case();
  RC_ASSERT(validate_engine_options(sim::engine_options_for(c, "i0-g1")).ok());
  const Result<sim::SimCase> back = scenarios::case_from_json(scenarios::case_to_json(c), "gen");
  RC_ASSERT(back.ok());
  RC_ASSERT(scenarios::case_to_json(back.value()) == scenarios::case_to_json(c));
}

}  // namespace
}  // namespace seqby
