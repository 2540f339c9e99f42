// A process manager's lease (ADR decision 2): keyed by correlation value, one key for every
// category stream of that value; the __pm__ namespace is reserved; the engine options that make
// an engine a process manager, and the combinations they refuse.
#include <gtest/gtest.h>

#include <string>

#include "seqby/core/engine_options.h"
#include "seqby/core/keys.h"
#include "seqby/core/lease.h"
#include "seqby/core/naming.h"

namespace seqby {
namespace {

Lease pm_lease() {
  Lease lease;
  lease.partition = PartitionRef{pm_lease_category("fulfil"), "order-7"};
  lease.owner_id = "w1";
  lease.generation = 4;
  lease.process_manager = "fulfil";
  return lease;
}

TEST(DomainPmLease, OneLeaseKeyForEveryCategoryStreamOfACorrelationValue) {
  const Lease lease = pm_lease();
  EXPECT_EQ(lease.key(), "__pm__:fulfil:order-7:__lease__");
  EXPECT_EQ(lease.unit().fence(), "__pm__:fulfil:order-7:__fence__");
  EXPECT_EQ(lease.token(), "w1:4");

  const Lease order = lease.on("order");
  const Lease payment = lease.on("payment");
  EXPECT_EQ(order.partition.stream(), "order:order-7");
  EXPECT_EQ(payment.partition.stream(), "payment:order-7");
  // Acting on either stream checks the one lease, at the one generation.
  EXPECT_EQ(order.key(), lease.key());
  EXPECT_EQ(payment.key(), lease.key());
  EXPECT_EQ(payment.token(), lease.token());
  EXPECT_EQ(order.unit(), lease.unit());
}

TEST(DomainPmLease, PartitionLeasesAreUnchanged) {
  Lease lease;
  lease.partition = PartitionRef{"order", "order-7"};
  lease.owner_id = "w1";
  lease.generation = 2;
  EXPECT_EQ(lease.key(), "order:order-7:__lease__");
  EXPECT_EQ(lease.unit(), lease.partition);
  lease.scope = "billing";
  EXPECT_EQ(lease.key(), "order:order-7:__lease__:billing");
  lease.partition.layout = KeyLayout::cluster;
  EXPECT_EQ(lease.key(), "order:{order-7}:__lease__:billing");
  lease.generation = 18446744073709551615ULL;
  EXPECT_EQ(lease.token(), "w1:18446744073709551615");
}

TEST(DomainPmLease, ThePmNamespaceIsNoCategory) {
  EXPECT_EQ(validate_category_name("__pm__").error().message,
            "invalid category \"__pm__\": rule not_reserved: the __pm__ namespace holds process "
            "managers' leases");
  EXPECT_FALSE(validate_category_name("__pm__:fulfil").ok());
  EXPECT_TRUE(validate_category_name("shop:__pm__").ok());
  EXPECT_TRUE(validate_category_name("__pm").ok());
}

EngineOptions pm_options() {
  EngineOptions o;
  o.owner_id = "w1";
  o.group = "fulfil";
  o.pm_categories = {"order", "payment"};
  return o;
}

TEST(DomainPmLease, EngineOptionsOfAProcessManager) {
  EXPECT_TRUE(validate_engine_options(pm_options()).ok());

  EngineOptions both = pm_options();
  both.category = "order";
  EXPECT_EQ(validate_engine_options(both).error().message,
            "engine options: category must be empty for a process manager (pm_categories name "
            "them)");

  EngineOptions twice = pm_options();
  twice.pm_categories = {"order", "order"};
  EXPECT_EQ(validate_engine_options(twice).error().message,
            "engine options: pm_categories lists \"order\" twice");

  EngineOptions reserved = pm_options();
  reserved.pm_categories = {"order", "__pm__:x"};
  EXPECT_FALSE(validate_engine_options(reserved).ok());

  EngineOptions per_group = pm_options();
  per_group.lease_per_group = true;
  EXPECT_EQ(validate_engine_options(per_group).error().message,
            "engine options: lease_per_group does not apply to a process manager");

  EngineOptions reaping = pm_options();
  reaping.reap_idle_ms = 1000;
  EXPECT_EQ(validate_engine_options(reaping).error().message,
            "engine options: reap_idle_ms does not apply to a process manager");

  EngineOptions neither = pm_options();
  neither.pm_categories.clear();
  EXPECT_EQ(validate_engine_options(neither).error().message, "engine options: category is empty");

  // A handler may not serve the process managers' namespace either (it would join PM G's
  // membership and lower its fair share).
  EngineOptions handler = pm_options();
  handler.pm_categories.clear();
  handler.category = "__pm__:fulfil";
  EXPECT_EQ(validate_engine_options(handler).error().message,
            "engine options: category: invalid category \"__pm__:fulfil\": rule not_reserved: the "
            "__pm__ namespace holds process managers' leases");
}

}  // namespace
}  // namespace seqby
