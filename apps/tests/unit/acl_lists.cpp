// The least-privilege ACL lists (README.md "The least privilege a worker needs", the publisher's
// after it; tests/support/worker_access.h, which the real-Redis tests grant) against what they
// must cover, without Redis: every command a script calls (redis.call or redis.pcall in the
// embedded text, its libraries included) is in the list of whoever runs that script, and the
// README's ACL lines grant exactly the lists the tests prove. A command added to a script without
// its ACL, or a README line left behind, fails here rather than as a denial in a user's ACL LOG.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "seqby/broker/scripts.h"
#include "worker_access.h"

namespace seqby::apps {
namespace {

using Commands = std::set<std::string>;

Commands set_of(const std::vector<std::string>& commands) {
  return Commands(commands.begin(), commands.end());
}

const std::regex& literal_call() {
  static const std::regex call(R"(redis\.p?call\(\s*'([A-Za-z]+)'(\s*,\s*'([A-Za-z]+)')?)");
  return call;
}

// How many redis.call( and redis.pcall( `source` holds, whatever follows them.
std::size_t call_sites(const std::string& source) {
  std::size_t count = 0;
  for (const std::string site : {"redis.call(", "redis.pcall("}) {
    for (std::size_t at = source.find(site); at != std::string::npos;
         at = source.find(site, at + 1)) {
      ++count;
    }
  }
  return count;
}

// The commands `source` calls through redis.call and redis.pcall, as an ACL names them: lower
// case, a container's subcommand after '|' (xgroup|create). Only a command named by a literal
// is seen (call_sites tells whether every call is one).
Commands called_by(const std::string& source) {
  Commands out;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), literal_call());
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if ((name == "xgroup" || name == "xinfo" || name == "script" || name == "cluster") &&
        (*it)[3].matched) {
      std::string sub = (*it)[3].str();
      std::transform(sub.begin(), sub.end(), sub.begin(), ::tolower);
      name += "|" + sub;
    }
    out.insert(name);
  }
  return out;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Who runs a script: a publisher (publish*), an operator (admin_*), the known-broken variants
// (unfenced_*, simulated runs only), a cluster worker only (the reap's steps across slots), or
// every worker.
enum class Runner { publisher, cluster_publisher, operator_, variant, cluster_worker, worker };

Runner runner_of(const std::string& name) {
  if (name == "publish") return Runner::publisher;
  if (starts_with(name, "publish_")) return Runner::cluster_publisher;
  if (starts_with(name, "admin_")) return Runner::operator_;
  if (starts_with(name, "unfenced_")) return Runner::variant;
  if (name == "reap_begin" || name == "reap_end" || name == "reap_stream") {
    return Runner::cluster_worker;
  }
  return Runner::worker;
}

std::string readme() {
  std::ifstream in(std::string(SEQBY_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The +commands of the README's text from the first `head` up to the first key pattern (~).
Commands granted_from(const std::string& text, const std::string& head) {
  const std::size_t at = text.find(head);
  if (at == std::string::npos) return {};
  const std::size_t end = text.find('~', at);
  if (end == std::string::npos) return {};
  const std::string block = text.substr(at, end - at);
  static const std::regex plus(R"(\+([a-z|]+))");
  Commands out;
  for (auto it = std::sregex_iterator(block.begin(), block.end(), plus);
       it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

// What script `source` calls that `allowed` lacks.
Commands missing(const std::string& source, const Commands& allowed) {
  Commands out;
  for (const std::string& command : called_by(source)) {
    if (allowed.count(command) == 0) out.insert(command);
  }
  return out;
}

TEST(AclLists, EveryCommandAScriptCallsIsInTheListOfWhoeverRunsIt) {
  const Commands worker = set_of(seqby::testing::worker_acl_commands());
  const Commands cluster_worker = set_of(seqby::testing::cluster_worker_acl_all_commands());
  const Commands publisher = set_of(seqby::testing::publisher_acl_commands());
  const Commands cluster_publisher = set_of(seqby::testing::cluster_publisher_acl_commands());
  std::size_t checked = 0;
  for (const redis::EmbeddedScript& script : redis::embedded_scripts()) {
    const Runner runner = runner_of(script.name);
    const Commands* allowed = runner == Runner::worker              ? &worker
                              : runner == Runner::cluster_worker    ? &cluster_worker
                              : runner == Runner::publisher         ? &publisher
                              : runner == Runner::cluster_publisher ? &cluster_publisher
                                                                    : nullptr;
    if (allowed == nullptr) continue;  // an operator's or a known-broken variant's
    EXPECT_EQ(missing(script.source, *allowed), Commands{}) << script.name << ".lua";
    const std::string source = script.source;
    const auto literal = static_cast<std::size_t>(
        std::distance(std::sregex_iterator(source.begin(), source.end(), literal_call()),
                      std::sregex_iterator()));
    EXPECT_EQ(literal, call_sites(source))
        << script.name << ".lua calls a command this scan cannot read (not a quoted literal)";
    ++checked;
  }
  // The scan sees the calls at all: the worker's renewal reads leases and extends them, and its
  // journal (lib/journal.lua, prepended) appends.
  EXPECT_GE(checked, 20u);
  EXPECT_EQ(called_by(redis::script_source("renew_many")),
            (Commands{"get", "mget", "pexpire", "xadd"}));
  EXPECT_EQ(called_by("redis.call('XGROUP', 'CREATE', k) redis.pcall('xinfo','groups', k)"),
            (Commands{"xgroup|create", "xinfo|groups"}));
  const std::string unreadable = "redis.call(name, k) redis.pcall('GET', k)";
  EXPECT_EQ(call_sites(unreadable), 2u);
  EXPECT_EQ(called_by(unreadable), Commands{"get"});
}

TEST(AclLists, TheReadmeGrantsExactlyTheListsTheTestsProve) {
  const std::string text = readme();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(granted_from(text, "ACL SETUSER seqby-worker reset on"),
            set_of(seqby::testing::worker_acl_commands()));
  EXPECT_EQ(granted_from(text, "ACL SETUSER seqby-worker ... +cluster|slots"),
            set_of(seqby::testing::cluster_worker_acl_commands()));
  EXPECT_EQ(granted_from(text, "`seqby publish` needs less:"),
            set_of(seqby::testing::publisher_acl_commands()));
  Commands cluster_publisher = granted_from(text, "`seqby publish` needs less:");
  const Commands also = granted_from(text, "on a Redis Cluster also");
  cluster_publisher.insert(also.begin(), also.end());
  EXPECT_EQ(cluster_publisher, set_of(seqby::testing::cluster_publisher_acl_commands()));
}

}  // namespace
}  // namespace seqby::apps
