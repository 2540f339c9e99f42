// Case files of process-manager cases: `pm_categories` and each event's `category` round-trip
// exactly; a non-PM case file carries neither; bad input is refused naming the field.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "seqby/scenarios/case_io.h"

namespace seqby::scenarios {
namespace {

sim::SimCase pm_case() {
  sim::CaseTemplate t;
  t.key_count = 2;
  t.event_count = 12;
  t.pm_categories = {"order", "payment"};
  return sim::generate_case(5, t);
}

// The PM case as JSON with `edit` applied, loaded back; the error message ("" if it loaded).
template <typename Edit>
std::string load_edited(Edit edit) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(case_to_json(pm_case()));
  edit(j);
  Result<sim::SimCase> r = case_from_json(j.dump(2), "case.json");
  return r.ok() ? "" : r.error().message;
}

TEST(CaseIoPm, RoundTripKeepsCategoriesAndPerStreamSeqs) {
  const sim::SimCase c = pm_case();
  const std::string text = case_to_json(c);
  Result<sim::SimCase> back = case_from_json(text, "case.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().pm_categories, (std::vector<std::string>{"order", "payment"}));
  EXPECT_EQ(back.value().category, "");
  EXPECT_EQ(back.value().events, c.events);
  EXPECT_EQ(case_to_json(back.value()), text);
  // Both categories are used, and seq counts per (category, key) stream.
  std::map<std::pair<std::string, std::string>, std::int64_t> last;
  for (const sim::CaseEvent& e : back.value().events) {
    ASSERT_TRUE(e.category == "order" || e.category == "payment") << e.category;
    const std::pair<std::string, std::string> stream{e.category, e.key};
    EXPECT_EQ(e.seq, ++last[stream]);
  }
  EXPECT_EQ(last.size(), 4u);
}

TEST(CaseIoPm, NonPmCaseFileCarriesNoPmFields) {
  sim::CaseTemplate t;
  t.key_count = 2;
  t.event_count = 4;
  const std::string text = case_to_json(sim::generate_case(3, t));
  EXPECT_EQ(text.find("pm_categories"), std::string::npos);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  for (const auto& e : j["events"]) EXPECT_FALSE(e.contains("category")) << e.dump();
  Result<sim::SimCase> back = case_from_json(text, "case.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back.value().pm_categories.empty());
  EXPECT_EQ(case_to_json(back.value()), text);
}

TEST(CaseIoPm, BadPmFieldsNameTheField) {
  EXPECT_EQ(load_edited([](auto& j) { j["events"][0]["category"] = "shipping"; }),
            "case.json: field 'events[0].category': \"shipping\" is not in pm_categories (order, "
            "payment)");
  EXPECT_EQ(load_edited([](auto& j) { j["category"] = "order"; }),
            "case.json: field 'category': must be \"\" in a process-manager case (pm_categories "
            "names its categories), got \"order\"");
  EXPECT_EQ(load_edited([](auto& j) {
              j["pm_categories"] = {"order", "payment", "order"};
            }),
            "case.json: field 'pm_categories[2]': duplicate category \"order\"");
  EXPECT_EQ(load_edited([](auto& j) { j["pm_categories"] = "order"; }),
            "case.json: field 'pm_categories': expected an array of strings, got \"order\"");
  EXPECT_EQ(load_edited([](auto& j) { j["events"][2].erase("category"); }),
            "case.json: field 'events[2].category': missing (a process-manager case names each "
            "event's category)");
  EXPECT_EQ(load_edited([](auto& j) {
              j["events"][0]["seq"] = 2;
            }).rfind("case.json: field 'events[0].seq': expected 1 for stream \"", 0),
            0u);
}

TEST(CaseIoPm, NonPmEventNamingAnotherCategoryIsRefused) {
  sim::CaseTemplate t;
  t.key_count = 2;
  t.event_count = 4;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(case_to_json(sim::generate_case(3, t)));
  j["events"][1]["category"] = "payment";
  Result<sim::SimCase> r = case_from_json(j.dump(2), "case.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "case.json: field 'events[1].category': \"payment\" is not the case's category "
            "\"order\" (only a process-manager case has several)");
}

}  // namespace
}  // namespace seqby::scenarios
