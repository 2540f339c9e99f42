// What the fuzz targets of fuzz/ found, one test per finding, each asserting the behaviour the
// fix gives (the crashing input is also in the target's corpus, fuzz/corpus/<target>/).
#include <gtest/gtest.h>

#include <string>

#include "seqby/core/keys.h"
#include "seqby/core/naming.h"
#include "seqby/scenarios/case_io.h"

namespace seqby {
namespace {

// fuzz/naming.cpp: parse_stream_name() took any text before the first colon as the category
// when a rest followed, so "__pm__:P" (the reserved process-manager namespace) and "\x01:k" (a
// control byte) parsed as partitions, while "__pm__" and "\x01" alone were unknown.
TEST(FuzzFindings, ParsedCategoriesObeyTheCategoryRules) {
  for (std::string_view name : {"__pm__:P", "__pm__:P:dlq", "\x01:k", "a\x7f:k:__lease__"}) {
    EXPECT_FALSE(validate_category_name(name.substr(0, name.find(':'))).ok()) << name;
    EXPECT_EQ(parse_stream_name(name), ParsedName{}) << printable(name);
  }
  // What the rules allow still parses.
  EXPECT_EQ(parse_stream_name("__pm:P"), (ParsedName{NameKind::partition, "__pm", "P"}));
  EXPECT_EQ(parse_stream_name("order:client-1:dlq"),
            (ParsedName{NameKind::dlq, "order", "client-1"}));
}

// fuzz/case_file.cpp: a number beyond a double's range (1e400) made nlohmann throw out_of_range,
// which case_from_json did not catch (only parse_error): `seqby replay` ended in std::terminate.
TEST(FuzzFindings, ACaseFileWithAnOverflowingNumberIsRefused) {
  for (std::string_view text : {"44444444444e2444vm", R"({"seed": 1e400})", "[-1E999]"}) {
    const Result<sim::SimCase> read = scenarios::case_from_json(text, "case.json");
    ASSERT_FALSE(read.ok()) << text;
    EXPECT_EQ(read.error().code, Errc::invalid);
    EXPECT_TRUE(read.error().message.starts_with("case.json: not JSON: number overflow parsing"))
        << read.error().message;
  }
}

}  // namespace
}  // namespace seqby
