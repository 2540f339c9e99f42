// no_loss also judges commits beyond what should commit: a lane whose accepted commits are the
// due seqs 1..n and then more (an event's effect applied a second time) does not end in the
// state of applying its events once each in publish order, and no_loss says so on its own (order
// says it too). It kills the scripts/mutate mutant checker-no-loss-extra-commits of
// mutate/catalog.txt, which the checker's other tests let survive.
#include <gtest/gtest.h>

#include "checker_builder.h"
#include "seqby/properties/checker.h"

namespace seqby::properties {
namespace {

using testing::check;
using testing::HistoryBuilder;
using testing::Lease;
using testing::of;
using W = std::vector<std::uint64_t>;

const Lease kW1{"w1", "orders", "A", "billing", 1};

TEST(CheckerNoLoss, ACommitBeyondEveryDueCommitIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.commit(kW1, "1-0", 1);
  h.commit(kW1, "2-0", 2);
  const auto again = h.commit(kW1, "2-0", 2);
  const CheckReport report = check(h);
  const std::vector<Finding> found = of(report, Property::no_loss);
  ASSERT_EQ(found.size(), 1u) << render_report_text(report);
  EXPECT_EQ(found[0].key, "A");
  EXPECT_EQ(found[0].group, "billing");
  EXPECT_EQ(found[0].witnesses, (W{again}));
  EXPECT_NE(found[0].explanation.find("go beyond what should commit"), std::string::npos)
      << found[0].explanation;
}

}  // namespace
}  // namespace seqby::properties
