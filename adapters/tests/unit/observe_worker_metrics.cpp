// WorkerMetrics (seqby/observe/worker_metrics.h) without Redis: history records become the
// counters and the handler-duration histogram; /readyz answers 200 only while the commands link
// is connected and after a whole discovery cycle; /healthz turns 503 when the loop is silent;
// pending and lag gauges are bounded and leave with the streams; a cluster link's redirections,
// slot maps and failovers are counted; parse_listen_address names
// what is wrong with an address.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/keyspace.h"
#include "seqby/observe/metrics_server.h"
#include "seqby/observe/worker_metrics.h"

namespace seqby::redis {
namespace {

// The value of the sample `series` (name and labels exactly as exposed), or -1 when absent.
double sample(const std::string& text, const std::string& series) {
  const std::string head = "\n" + series + " ";
  const std::size_t at = ("\n" + text).find(head);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + head.size() - 1));
}

HistoryRecord record(HistoryOp op, const std::string& key, const std::string& id = "",
                     const std::string& detail = "") {
  HistoryRecord r;
  r.op = op;
  r.category = "billing";
  r.key = key;
  r.group = "g";
  r.generation = 1;
  r.event_id = id;
  r.detail = detail;
  return r;
}

WorkerMetricsOptions billing() {
  WorkerMetricsOptions o;
  o.categories = {"billing"};
  o.group = "g";
  return o;
}

TEST(WorkerMetrics, HistoryRecordsBecomeTheCountersAndTheDurations) {
  WorkerMetrics m(billing());
  m.on_record(record(HistoryOp::acquire, "a"), 0);
  m.on_record(record(HistoryOp::renew, "a"), 0);
  m.on_record(record(HistoryOp::renew, "a"), 0);
  m.on_record(record(HistoryOp::enter, "a", "1-1"), 1'000);
  m.on_record(record(HistoryOp::exit, "a", "1-1", "ok"), 3'000);  // 2 ms
  m.on_record(record(HistoryOp::enter, "a", "1-2"), 10'000);
  m.on_record(record(HistoryOp::exit, "a", "1-2", "failed: no seq"), 10'500);
  m.on_record(record(HistoryOp::halt, "a", "1-2"), 11'000);
  m.on_record(record(HistoryOp::ack_fenced, "a", "1-2"), 12'000);
  m.on_record(record(HistoryOp::lose, "a"), 12'000);
  const std::string text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_events_handled_total{category=\"billing\"}"), 1) << text;
  EXPECT_EQ(sample(text, "seqby_events_failed_total{category=\"billing\"}"), 1);
  EXPECT_EQ(sample(text, "seqby_lease_events_total{event=\"acquire\"}"), 1);
  EXPECT_EQ(sample(text, "seqby_lease_events_total{event=\"renew\"}"), 2);
  EXPECT_EQ(sample(text, "seqby_lease_events_total{event=\"lose\"}"), 1);
  EXPECT_EQ(sample(text, "seqby_fenced_refusals_total{op=\"ack\"}"), 1);
  EXPECT_EQ(sample(text, "seqby_fenced_refusals_total{op=\"read\"}"), 0);
  EXPECT_EQ(sample(text, "seqby_halts_total"), 1);
  EXPECT_EQ(sample(text, "seqby_history_records_total{op=\"renew\"}"), 2);
  EXPECT_EQ(sample(text, "seqby_handler_duration_seconds_count{category=\"billing\"}"), 2);
  EXPECT_DOUBLE_EQ(sample(text, "seqby_handler_duration_seconds_sum{category=\"billing\"}"),
                   0.0025);
  EXPECT_EQ(
      sample(text, "seqby_handler_duration_seconds_bucket{category=\"billing\",le=\"0.001\"}"), 1);
  EXPECT_EQ(
      sample(text, "seqby_handler_duration_seconds_bucket{category=\"billing\",le=\"0.0025\"}"), 2);
}

TEST(WorkerMetrics, ReadyOnlyWhileConnectedAndAfterAWholeDiscoveryCycle) {
  WorkerMetricsOptions o = billing();
  o.categories = {"billing", "shipping"};
  o.process_manager = true;
  WorkerMetrics m(o);
  const Command first{"SMEMBERS", partition_index_name("billing")};
  const Command second{"SMEMBERS", partition_index_name("shipping")};
  EXPECT_EQ(m.readyz().status, 503);
  EXPECT_NE(m.readyz().body.find("not connected"), std::string::npos);
  m.on_command_sent(first);
  m.on_command_done(first[1], true, true);
  EXPECT_NE(m.readyz().body.find("discovery"), std::string::npos) << m.readyz().body;
  m.on_command_sent(second);
  m.on_command_done(second[1], false, false);  // the second index read got no answer
  m.on_command_sent(first);                    // the next cycle: the one before was not whole
  EXPECT_EQ(m.readyz().status, 503);
  m.on_command_done(first[1], true, true);
  m.on_command_sent(second);
  m.on_command_done(second[1], true, true);
  EXPECT_EQ(m.readyz().status, 503);  // the cycle may still be taking its share
  m.on_command_sent(first);           // ... now it is done
  EXPECT_EQ(m.readyz().status, 200) << m.readyz().body;
  EXPECT_EQ(sample(m.scrape(), "seqby_ready"), 1);

  HiredisLink::ConnectionEvent lost;
  lost.kind = HiredisLink::ConnectionEvent::Kind::lost;
  m.on_connection_event("commands", lost);
  EXPECT_EQ(m.readyz().status, 503);
  EXPECT_NE(m.readyz().body.find("not connected to Redis"), std::string::npos);
  EXPECT_EQ(sample(m.scrape(), "seqby_redis_connected{link=\"commands\"}"), 0);
  m.on_command_done("", true, false);  // a reply after the loss: reconnected
  EXPECT_EQ(m.readyz().status, 200);
  const std::string text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_redis_reconnects_total{link=\"commands\"}"), 1) << text;
  EXPECT_EQ(sample(text, "seqby_redis_connections_lost_total{link=\"commands\"}"), 1);
  EXPECT_EQ(sample(text, "seqby_units_owned{kind=\"process_manager\"}"), 0);
  m.stopping();
  EXPECT_EQ(m.readyz().status, 503);
  EXPECT_NE(m.readyz().body.find("stopping"), std::string::npos);
}

// With the cluster layout discovery reads each index with its reaping set (one SUNION): those
// reads make a discovery cycle as SMEMBERS do on one server; other reads of the index do not.
TEST(WorkerMetrics, ClusterDiscoveryReadsMakeTheWorkerReady) {
  WorkerMetrics m(billing());
  const Command read{"SUNION", partition_index_name("billing"), reaping_set_name("billing")};
  EXPECT_EQ(discovery_index_read(read), partition_index_name("billing"));
  EXPECT_EQ(discovery_index_read({"SCARD", partition_index_name("billing")}), "");
  EXPECT_EQ(discovery_index_read({"SUNION", partition_index_name("billing")}), "");
  m.on_command_sent(read);
  m.on_command_done(discovery_index_read(read), true, true);
  EXPECT_EQ(m.readyz().status, 503) << m.readyz().body;  // the cycle may still take its share
  m.on_command_sent(read);
  EXPECT_EQ(m.readyz().status, 200) << m.readyz().body;
}

// On a cluster each node's connection reports apart: one master lost mid-failover is counted,
// but the worker stays connected (and ready) while the other nodes answer.
TEST(WorkerMetrics, OneClusterNodeLostIsCountedAndLeavesTheWorkerConnected) {
  WorkerMetrics m(billing());
  const Command read{"SUNION", partition_index_name("billing"), reaping_set_name("billing")};
  m.on_command_sent(read);
  m.on_command_done(discovery_index_read(read), true, true);
  m.on_command_sent(read);
  ASSERT_EQ(m.readyz().status, 200) << m.readyz().body;
  HiredisLink::ConnectionEvent lost;
  lost.kind = HiredisLink::ConnectionEvent::Kind::lost;
  m.on_connection_event("commands", lost, true);
  EXPECT_EQ(m.readyz().status, 200) << m.readyz().body;
  std::string text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_redis_connected{link=\"commands\"}"), 1) << text;
  EXPECT_EQ(sample(text, "seqby_redis_connections_lost_total{link=\"commands\"}"), 1) << text;
  m.on_command_done("", true, false);  // another node answers: no reconnect of the worker's
  text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_redis_reconnects_total{link=\"commands\"}"), 0) << text;
  HiredisLink::ConnectionEvent back;
  back.kind = HiredisLink::ConnectionEvent::Kind::connected;
  back.failures_in_row = 2;
  m.on_connection_event("commands", back, true);  // the node's connection is made again
  EXPECT_EQ(sample(m.scrape(), "seqby_redis_reconnects_total{link=\"commands\"}"), 1);
}

TEST(WorkerMetrics, HealthzIsUnhealthyWhenTheLoopIsSilent) {
  WorkerMetricsOptions o = billing();
  o.loop_silence_max_ms = 1000;
  WorkerMetrics m(o);
  EXPECT_EQ(m.healthz(5).status, 200);  // starting
  m.sample_figures(WorkerFigures{}, 100);
  EXPECT_EQ(m.healthz(1100).status, 200);
  const HealthAnswer silent = m.healthz(1101);
  EXPECT_EQ(silent.status, 503);
  EXPECT_NE(silent.body.find("1001 ms"), std::string::npos) << silent.body;
}

TEST(WorkerMetrics, SampledFiguresAndBoundedLagGauges) {
  WorkerMetrics m(billing());
  WorkerFigures f;
  f.units_owned = 3;
  f.units_halted = 1;
  f.index_members_skipped = 2;
  f.command_refusals = {{"commands", 4}};
  m.sample_figures(f, 1);
  f.index_members_skipped = 5;  // cumulative: the counter grows by the difference
  f.heartbeat_rounds_ms = {40, 2100, 35};
  m.sample_figures(f, 2);
  std::string text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_units_owned{kind=\"partition\"}"), 3) << text;
  EXPECT_EQ(sample(text, "seqby_units_halted"), 1);
  EXPECT_EQ(sample(text, "seqby_index_members_skipped_total"), 5);
  EXPECT_DOUBLE_EQ(sample(text, "seqby_heartbeat_round_seconds{of=\"last\"}"), 0.035);
  EXPECT_DOUBLE_EQ(sample(text, "seqby_heartbeat_round_seconds{of=\"longest_recent\"}"), 2.1);
  EXPECT_EQ(sample(text, "seqby_redis_command_refusals_total{link=\"commands\"}"), 4);

  std::vector<std::string> keys;
  for (int i = 0; i < 150; ++i) keys.push_back("k" + std::to_string(1000 + i));
  std::uint64_t omitted = 0;
  const std::vector<PartitionRef> streams = m.lag_streams(keys, &omitted);
  ASSERT_EQ(streams.size(), WorkerMetrics::kLagStreamsMax);
  EXPECT_EQ(omitted, 50u);
  EXPECT_EQ(streams.front().key, "k1000");
  std::vector<WorkerMetrics::StreamLag> lags;
  for (const PartitionRef& s : streams) lags.push_back({s, 1, 2});
  m.sample_lag(lags, omitted);
  text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_partition_pending{category=\"billing\",key=\"k1000\"}"), 1);
  EXPECT_EQ(sample(text, "seqby_partition_lag{category=\"billing\",key=\"k1099\"}"), 2);
  EXPECT_EQ(sample(text, "seqby_partition_lag{category=\"billing\",key=\"k1100\"}"), -1);
  EXPECT_EQ(sample(text, "seqby_partition_lag_streams_omitted"), 50);
  m.sample_lag({{PartitionRef{"billing", "k1000"}, 0, 0}}, 0);  // the others are no longer held
  text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_partition_pending{category=\"billing\",key=\"k1000\"}"), 0);
  EXPECT_EQ(sample(text, "seqby_partition_pending{category=\"billing\",key=\"k1001\"}"), -1);
}

// A cluster worker's link figures (ClusterLink::Stats, cumulative) become counters of what a
// slot migration or a failover made it meet; a worker on one server has none of them.
TEST(WorkerMetrics, ClusterRedirectionsSlotMapsAndFailoversAreCounted) {
  WorkerMetrics one_server(billing());
  one_server.sample_figures(WorkerFigures{}, 1);
  EXPECT_EQ(one_server.scrape().find("seqby_cluster_"), std::string::npos) << one_server.scrape();

  WorkerMetrics m(billing());
  WorkerFigures f;
  f.cluster = true;
  f.cluster_moved = 2;
  f.cluster_asked = 1;
  f.cluster_map_refreshes = 3;
  m.sample_figures(f, 1);
  f.cluster_asked = 4;  // cumulative: the counter grows by the difference
  f.cluster_tryagain = 5;
  f.cluster_failovers_seen = 1;
  m.sample_figures(f, 2);
  const std::string text = m.scrape();
  EXPECT_EQ(sample(text, "seqby_cluster_redirections_total{kind=\"moved\"}"), 2) << text;
  EXPECT_EQ(sample(text, "seqby_cluster_redirections_total{kind=\"ask\"}"), 4);
  EXPECT_EQ(sample(text, "seqby_cluster_redirections_total{kind=\"tryagain\"}"), 5);
  EXPECT_EQ(sample(text, "seqby_cluster_slot_map_refreshes_total"), 3);
  EXPECT_EQ(sample(text, "seqby_cluster_failovers_seen_total"), 1);
}

// A worker with the cluster layout samples its streams by their cluster names (C:{K}), the
// names it reads them by; the gauges keep the category and the key as labels.
TEST(WorkerMetrics, LagStreamsAreNamedInTheWorkersKeyLayout) {
  WorkerMetricsOptions o = billing();
  o.key_layout = KeyLayout::cluster;
  WorkerMetrics m(o);
  std::uint64_t omitted = 0;
  const std::vector<PartitionRef> streams = m.lag_streams({"k1"}, &omitted);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams.front().stream(), "billing:{k1}");
  m.sample_lag({{streams.front(), 0, 3}}, omitted);
  EXPECT_EQ(sample(m.scrape(), "seqby_partition_lag{category=\"billing\",key=\"k1\"}"), 3);
}

TEST(ListenAddress, HostPortWithAnIpv4AddressAndAPort) {
  const Result<ListenAddress> ok = parse_listen_address("127.0.0.1:9464");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().host, "127.0.0.1");
  EXPECT_EQ(ok.value().port, 9464);
  const std::vector<std::pair<std::string, std::string>> bad{
      {"9464", "is not HOST:PORT"},
      {"localhost:9464", "'localhost' is not an IPv4 address"},
      {"127.0.0.1:", "the port '' is not a number"},
      {"127.0.0.1:0", "the port '0' is not a number from 1 to 65535"},
      {"127.0.0.1:65536", "from 1 to 65535"},
      {"127.0.0.1:9x", "the port '9x'"},
      {"300.0.0.1:9464", "'300.0.0.1' is not an IPv4 address"},
  };
  for (const auto& [text, why] : bad) {
    const Result<ListenAddress> parsed = parse_listen_address(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message.find(why), std::string::npos) << parsed.error().message;
  }
}

}  // namespace
}  // namespace seqby::redis
