#include "seqby/broker/cluster_link.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "seqby/core/check.h"
#include "seqby/core/when_all.h"

namespace seqby::redis {
namespace {

constexpr std::uint32_t kNoOwner = 0xffffffffu;

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "host:port" split at the last colon; nullopt unless the port is a number in range.
std::optional<std::pair<std::string, std::uint16_t>> split_address(std::string_view address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= address.size()) {
    return std::nullopt;
  }
  const std::string_view port_text = address.substr(colon + 1);
  if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(),
                                           [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const int port = std::stoi(std::string(port_text));
  if (port <= 0 || port > 65535) return std::nullopt;
  return std::make_pair(std::string(address.substr(0, colon)), static_cast<std::uint16_t>(port));
}

std::string address_of(const std::string& host, std::uint16_t port) {
  return host + ":" + std::to_string(port);
}

// Clears a flag when the coroutine frame that set it ends, also when it is destroyed mid-wait.
class FlagGuard {
 public:
  explicit FlagGuard(bool* flag) : flag_(flag) { *flag_ = true; }
  ~FlagGuard() { *flag_ = false; }
  FlagGuard(const FlagGuard&) = delete;
  FlagGuard& operator=(const FlagGuard&) = delete;

 private:
  bool* flag_;
};

// A reply with no WAIT asked, or none run (the command was redirected or refused here).
ReplicatedReply replied(Reply reply) { return ReplicatedReply{std::move(reply), -1, ""}; }

}  // namespace

Task<Result<ReplicatedReply>> ClusterNodeLink::execute_replicated_asking(Command command,
                                                                         std::uint32_t replicas,
                                                                         std::uint64_t timeout_ms) {
  (void)command;
  (void)replicas;
  (void)timeout_ms;
  co_return make_error(Errc::unsupported, "this cluster node link cannot WAIT after ASKING");
}

ClusterLink::ClusterLink(Runtime& runtime, std::string seed_host, std::uint16_t seed_port,
                         ClusterNodeConnect connect, ClusterLinkOptions options)
    : runtime_(runtime),
      seed_host_(std::move(seed_host)),
      seed_port_(seed_port),
      connect_(std::move(connect)),
      options_(options),
      slot_owner_(kClusterSlotCount, kNoOwner) {
  SEQBY_CHECK(connect_ != nullptr);
  SEQBY_CHECK(options_.redirects_max >= 1);
  SEQBY_CHECK(options_.nodes_max >= 1);
}

ClusterLink::~ClusterLink() = default;

Task<Result<Reply>> ClusterLink::execute(Command command) {
  CommandRoute route = route_command(command);
  if (route.kind == CommandRoute::Kind::refused) {
    ++stats_.refused;
    co_return Reply::error(std::move(route.refusal));
  }
  Status ready = co_await ensure_map();
  if (!ready.ok()) co_return ready.error();
  if (route.kind == CommandRoute::Kind::all_masters) {
    const std::string name = upper(command.front());
    Result<Reply> all = co_await execute_on_all(std::move(command), name);
    co_return all;
  }
  // A command without keys goes to the master of slot 0 (any master would do).
  const std::uint16_t slot = route.kind == CommandRoute::Kind::slot ? route.slot : 0;
  Result<ReplicatedReply> reply = co_await execute_on_slot(std::move(command), slot, {});
  if (!reply.ok()) co_return reply.error();
  co_return std::move(reply).value().reply;
}

Task<std::vector<Result<Reply>>> ClusterLink::execute_many(std::vector<Command> commands) {
  // The commands of each node (by the map now; before a map, or for a command of no one slot,
  // the node is not known: "" stands for it), in their order.
  std::vector<std::string> group_nodes;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const CommandRoute route = route_command(commands[i]);
    const std::string node = route.kind == CommandRoute::Kind::slot ? node_of_slot(route.slot) : "";
    const auto g = static_cast<std::size_t>(
        std::find(group_nodes.begin(), group_nodes.end(), node) - group_nodes.begin());
    if (g == group_nodes.size()) {
      group_nodes.push_back(node);
      groups.emplace_back();
    }
    groups[g].push_back(i);
  }
  if (groups.size() <= 1) {
    std::vector<Result<Reply>> out = co_await execute_in_order(std::move(commands));
    co_return out;
  }
  // Each node's commands in order, the nodes at once: one that does not answer holds back only
  // its own commands, for its command timeout, and not the other nodes' after it.
  std::vector<Task<std::vector<Result<Reply>>>> runs;
  runs.reserve(groups.size());
  for (const std::vector<std::size_t>& group : groups) {
    std::vector<Command> own;
    own.reserve(group.size());
    for (std::size_t i : group) own.push_back(std::move(commands[i]));
    runs.push_back(execute_in_order(std::move(own)));
  }
  std::vector<std::vector<Result<Reply>>> replies = co_await when_all(std::move(runs));
  std::vector<std::optional<Result<Reply>>> placed(commands.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    SEQBY_CHECK(replies[g].size() == groups[g].size());
    for (std::size_t j = 0; j < groups[g].size(); ++j) {
      placed[groups[g][j]].emplace(std::move(replies[g][j]));
    }
  }
  std::vector<Result<Reply>> out;
  out.reserve(commands.size());
  for (std::optional<Result<Reply>>& reply : placed) out.push_back(std::move(*reply));
  co_return out;
}

Task<std::vector<Result<Reply>>> ClusterLink::execute_in_order(std::vector<Command> commands) {
  std::vector<Result<Reply>> out;
  out.reserve(commands.size());
  std::map<std::string, Error> failed;  // node -> its transport failure in this call
  for (Command& command : commands) {
    const CommandRoute route = route_command(command);
    // Before a map, or for a command of no one slot, the node is not known: "" stands for it.
    const std::string node = route.kind == CommandRoute::Kind::slot ? node_of_slot(route.slot) : "";
    if (auto f = failed.find(node); f != failed.end()) {
      out.emplace_back(f->second);
      continue;
    }
    Result<Reply> reply = co_await execute(std::move(command));
    if (!reply.ok()) failed.emplace(node, reply.error());
    out.push_back(std::move(reply));
  }
  co_return out;
}

// As execute, for one slot's command only: the WAIT goes with the command to the node that runs
// it, on the same connection (after a MOVED or an ASK, to the node redirected to).
Task<Result<ReplicatedReply>> ClusterLink::execute_replicated(Command command,
                                                              std::uint32_t replicas,
                                                              std::uint64_t timeout_ms) {
  CommandRoute route = route_command(command);
  if (route.kind == CommandRoute::Kind::refused) {
    ++stats_.refused;
    co_return replied(Reply::error(std::move(route.refusal)));
  }
  if (route.kind != CommandRoute::Kind::slot) {
    co_return make_error(Errc::invalid, "WAIT after " + upper(command.front()) +
                                            ": the durability option waits after a command of "
                                            "one slot only (it names no key, or is sent to every "
                                            "master)");
  }
  Status ready = co_await ensure_map();
  if (!ready.ok()) co_return ready.error();
  Result<ReplicatedReply> reply =
      co_await execute_on_slot(std::move(command), route.slot, WaitAsk{replicas, timeout_ms});
  co_return reply;
}

Task<Result<ReplicatedReply>> ClusterLink::execute_on_slot(Command command, std::uint16_t slot,
                                                           std::optional<WaitAsk> wait) {
  SEQBY_CHECK(slot < kClusterSlotCount);
  if (slot_owner_[slot] == kNoOwner) {
    // A map read mid-failover (the master gone, its replica not yet promoted) would otherwise be
    // kept for good: a command refused here draws no reply from a server to mark it stale.
    mark_stale();
    co_return replied(
        Reply::error("CLUSTERDOWN Hash slot not served (seqby cluster link: no master "
                     "serves slot " +
                     std::to_string(slot) + " in the last slot map; not sent)"));
  }
  std::string address = nodes_[slot_owner_[slot]].address;
  bool asking = false;
  std::uint32_t redirects = 0;
  std::uint32_t tryagains = 0;
  std::uint64_t backoff_ms = options_.tryagain_backoff_min_ms;
  bool reloaded = false;
  const std::string name = upper(command.front());
  for (;;) {
    const bool asked_here = asking;
    Result<ReplicatedReply> result = co_await send_on(address, command, asking, wait);
    asking = false;
    if (!result.ok()) {
      // It may have run: passed on as it is, and the map is read again before the next command.
      ++stats_.transport_errors;
      mark_stale();
      co_return result;
    }
    const Reply& reply = result.value().reply;
    if (!reply.is_error()) co_return result;

    if (std::optional<Redirection> redirect = parse_redirect(reply); redirect.has_value()) {
      // MOVED and ASK: the node did not run the command.
      if (redirects >= options_.redirects_max) {
        co_return replied(Reply::error(reply.str + " (seqby cluster link: still redirected after " +
                                       std::to_string(redirects) + " redirections; not run)"));
      }
      ++redirects;
      Result<std::size_t> target = node_index(redirect->address);
      if (!target.ok()) co_return target.error();
      if (redirect->ask) {
        ++stats_.asked;
        asking = true;  // the next send only; the map stays: the slot is still the owner's
      } else {
        ++stats_.moved;
        const auto target_index = static_cast<std::uint32_t>(target.value());
        if (!failover_counted_since_refresh_ &&
            std::find(slot_owner_.begin(), slot_owner_.end(), target_index) == slot_owner_.end()) {
          // Moved to a node that served no slot in the last map: a replica promoted (a fresh
          // cluster's CLUSTER SLOTS may not list its replicas yet, so this does not ask whether
          // the map named it one). Told now, not at the next refresh.
          ++stats_.failovers_seen;
          failover_counted_since_refresh_ = true;
        }
        slot_owner_[redirect->slot] = target_index;
        mark_stale();  // more slots may have moved with it
      }
      address = redirect->address;
      continue;
    }
    if (reply.is_error_with("TRYAGAIN")) {
      // A multi-key command on a slot being migrated while its keys are split: it did not run.
      if (tryagains >= options_.tryagain_count_max) {
        co_return replied(Reply::error(reply.str + " (seqby cluster link: gave up after " +
                                       std::to_string(tryagains + 1) + " tries while slot " +
                                       std::to_string(slot) + " is migrating; not run)"));
      }
      ++tryagains;
      ++stats_.tryagain;
      co_await runtime_.sleep_ms(backoff_ms);
      backoff_ms *= 2;
      if (slot_owner_[slot] == kNoOwner) continue;  // keeps the address it had
      address = nodes_[slot_owner_[slot]].address;
      continue;
    }
    if (reply.is_error_with("NOSCRIPT") && !reloaded &&
        (name == "EVALSHA" || name == "EVALSHA_RO") && command.size() >= 2) {
      auto known = scripts_.find(command[1]);
      if (known != scripts_.end()) {
        // This node has not seen the script (a new master, a flushed cache): load it there.
        reloaded = true;
        Command load{"SCRIPT", "LOAD", known->second};
        Result<Reply> loaded = co_await send(address, load, false);
        if (!loaded.ok()) {
          ++stats_.transport_errors;
          mark_stale();
          co_return loaded.error();  // the EVALSHA did not run; the load may have
        }
        if (loaded.value() == Reply::bulk(command[1])) {
          ++stats_.script_reloads;
          asking = asked_here;
          continue;
        }
      }
    }
    if (reply.is_error_with("CLUSTERDOWN")) mark_stale();
    co_return result;
  }
}

Task<Result<Reply>> ClusterLink::execute_on_all(Command command, const std::string& name) {
  const std::vector<std::string> targets = masters();
  if (targets.empty()) {
    co_return Reply::error("CLUSTERDOWN no master in the slot map (seqby cluster link; " + name +
                           " not sent)");
  }
  const bool script_load = name == "SCRIPT" && command.size() >= 3 && upper(command[1]) == "LOAD";
  std::vector<Reply> replies;
  std::optional<Error> first_error;
  for (const std::string& address : targets) {
    Result<Reply> result = co_await send(address, command, false);
    if (!result.ok()) {
      ++stats_.transport_errors;
      mark_stale();
      // A master that misses a script load gets it on its first NOSCRIPT; any other command
      // must reach every master.
      if (!script_load) co_return result;
      if (!first_error) first_error = result.error();
      continue;
    }
    if (result.value().is_error()) {
      co_return Reply::error(result.value().str + " (from " + address + ")");
    }
    replies.push_back(std::move(result).value());
  }
  if (replies.empty()) co_return *first_error;
  if (name == "KEYS") {
    std::vector<Reply> keys;
    for (Reply& reply : replies) {
      for (Reply& key : reply.elements) keys.push_back(std::move(key));
    }
    co_return Reply::array(std::move(keys));
  }
  for (const Reply& reply : replies) {
    if (!(reply == replies.front())) {
      co_return Reply::error("ERR seqby cluster link: the masters answered " + name +
                             " differently: " + to_string(replies.front()) + " and " +
                             to_string(reply));
    }
  }
  if (script_load) remember_script(command, replies.front());
  co_return replies.front();
}

Task<Result<std::vector<std::pair<std::string, Reply>>>> ClusterLink::execute_on_each_master(
    Command command) {
  Status ready = co_await ensure_map();
  if (!ready.ok()) co_return ready.error();
  std::vector<std::pair<std::string, Reply>> out;
  for (const std::string& address : masters()) {
    Result<Reply> result = co_await send(address, command, false);
    if (!result.ok()) {
      ++stats_.transport_errors;
      mark_stale();
      co_return result.error();
    }
    out.emplace_back(address, std::move(result).value());
  }
  co_return out;
}

Task<Result<Reply>> ClusterLink::send(const std::string& address, const Command& command,
                                      bool asking) {
  Result<ReplicatedReply> reply = co_await send_on(address, command, asking, {});
  if (!reply.ok()) co_return reply.error();
  co_return std::move(reply).value().reply;
}

Task<Result<ReplicatedReply>> ClusterLink::send_on(const std::string& address,
                                                   const Command& command, bool asking,
                                                   std::optional<WaitAsk> wait) {
  Result<ReplicatedReply> reply = co_await send_on_link(address, command, asking, wait);
  if (reply.ok()) {
    unanswered_.erase(address);
  } else if (reply.error().code == Errc::timeout || reply.error().code == Errc::closed) {
    unanswered_.insert(address);
  }
  co_return reply;
}

Task<Result<ReplicatedReply>> ClusterLink::send_on_link(const std::string& address,
                                                        const Command& command, bool asking,
                                                        std::optional<WaitAsk> wait) {
  Result<std::size_t> index = node_index(address);
  if (!index.ok()) co_return index.error();
  // The link, not the vector slot: nodes_ may grow while this command waits.
  ClusterNodeLink* link = nodes_[index.value()].link.get();
  sent_[address] += asking ? 2 : 1;  // a durable command's WAIT is shared (HiredisLink): uncounted
  Command copy = command;
  if (wait.has_value()) {
    if (asking) {
      Result<ReplicatedReply> waited = co_await link->execute_replicated_asking(
          std::move(copy), wait->replicas, wait->timeout_ms);
      co_return waited;
    }
    Result<ReplicatedReply> waited =
        co_await link->execute_replicated(std::move(copy), wait->replicas, wait->timeout_ms);
    co_return waited;
  }
  if (asking) {
    Result<Reply> asked = co_await link->execute_asking(std::move(copy));
    if (!asked.ok()) co_return asked.error();
    co_return replied(std::move(asked).value());
  }
  Result<Reply> reply = co_await link->execute(std::move(copy));
  if (!reply.ok()) co_return reply.error();
  co_return replied(std::move(reply).value());
}

Task<Status> ClusterLink::ensure_map() {
  if (have_map_ && !stale_) co_return Status::Ok();
  const std::uint64_t now_ms = runtime_.clock().now_ms();
  if (have_map_ && now_ms < last_refresh_ms_ + options_.refresh_interval_min_ms) {
    co_return Status::Ok();  // stale, but read moments ago: the command's reply will tell
  }
  // One refresh at a time; the others wait for it (bounded by its node time limits).
  while (refreshing_) co_await runtime_.sleep_ms(1);
  if (have_map_ && !stale_) co_return Status::Ok();
  Status refreshed = co_await refresh();
  if (!refreshed.ok() && have_map_) co_return Status::Ok();  // keep routing by the old map
  co_return refreshed;
}

Task<Status> ClusterLink::refresh() {
  FlagGuard guard(&refreshing_);
  last_refresh_ms_ = runtime_.clock().now_ms();
  std::vector<std::string> candidates;
  const std::string seed = address_of(seed_host_, seed_port_);
  if (!have_map_) candidates.push_back(seed);
  for (const std::string& master : masters()) candidates.push_back(master);
  for (const std::string& replica : replica_addresses_) candidates.push_back(replica);
  candidates.push_back(seed);
  // A node that just did not answer (stopped, cut off) is asked last: every command that needs
  // the map waits for this refresh, and its timeout would hold them all.
  std::stable_partition(candidates.begin(), candidates.end(), [this](const std::string& address) {
    return !unanswered_.contains(address);
  });
  std::set<std::string> tried;
  std::string failures;
  std::optional<std::pair<std::string, std::string>> refused;  // a node's error reply
  for (const std::string& address : candidates) {
    if (!tried.insert(address).second) continue;
    Command slots{"CLUSTER", "SLOTS"};
    Result<Reply> reply = co_await send(address, slots, false);
    if (!reply.ok()) {
      failures += "; " + address + ": " + reply.error().message;
      continue;
    }
    if (reply.value().is_error()) refused.emplace(address, reply.value().str);
    const std::optional<std::pair<std::string, std::uint16_t>> asked = split_address(address);
    Status applied = apply_slots(reply.value(), asked ? asked->first : seed_host_);
    if (!applied.ok()) {
      failures += "; " + address + ": " + applied.error().message;
      continue;
    }
    ++stats_.refreshes;
    co_return Status::Ok();
  }
  ++stats_.refresh_failures;
  if (refused && map_refused_) map_refused_(refused->first, refused->second);
  co_return make_error(Errc::closed, "no cluster node answered CLUSTER SLOTS" + failures);
}

// Whether the new map `owner` tells of a failover: a slot whose master changed, where the old
// master is no master of `owner` (gone or demoted) or the new one was a replica in the old map
// (promoted). A migration moves a slot between two masters and does not count.
bool ClusterLink::replaced_a_master(const std::vector<std::uint32_t>& owner) const {
  std::set<std::uint32_t> masters(owner.begin(), owner.end());
  for (std::size_t slot = 0; slot < owner.size(); ++slot) {
    const std::uint32_t before = slot_owner_[slot];
    if (before == kNoOwner || before == owner[slot]) continue;
    if (masters.count(before) == 0) return true;
    if (owner[slot] != kNoOwner &&
        std::find(replica_addresses_.begin(), replica_addresses_.end(),
                  nodes_[owner[slot]].address) != replica_addresses_.end()) {
      return true;
    }
  }
  return false;
}

Status ClusterLink::apply_slots(const Reply& reply, const std::string& asked_host) {
  if (reply.is_error()) return make_error(Errc::protocol, "CLUSTER SLOTS: " + reply.str);
  if (reply.kind != Reply::Kind::array || reply.elements.empty()) {
    return shape_error("CLUSTER SLOTS", reply, "a non-empty array of slot ranges");
  }
  // [[start, end, [host, port, id, ...] (the master), [host, port, ...] (replicas)...], ...]
  auto endpoint = [&asked_host](const Reply& node) -> std::optional<std::string> {
    if (node.kind != Reply::Kind::array || node.elements.size() < 2 ||
        node.elements[1].kind != Reply::Kind::integer || node.elements[1].integer <= 0 ||
        node.elements[1].integer > 65535) {
      return std::nullopt;
    }
    std::string host = node.elements[0].kind == Reply::Kind::bulk ? node.elements[0].str : "";
    // An unknown endpoint (nil, "" or "?"): the host this reply came from, with its port.
    if (host.empty() || host == "?") host = asked_host;
    return address_of(host, static_cast<std::uint16_t>(node.elements[1].integer));
  };
  struct Range {
    std::uint16_t start;
    std::uint16_t end;
    std::string master;
  };
  std::vector<Range> ranges;
  std::set<std::string> replicas;
  for (const Reply& entry : reply.elements) {
    if (entry.kind != Reply::Kind::array || entry.elements.size() < 3 ||
        entry.elements[0].kind != Reply::Kind::integer ||
        entry.elements[1].kind != Reply::Kind::integer) {
      return shape_error("CLUSTER SLOTS", entry, "[start, end, master, replicas...]");
    }
    const std::int64_t start = entry.elements[0].integer;
    const std::int64_t end = entry.elements[1].integer;
    std::optional<std::string> master = endpoint(entry.elements[2]);
    if (start < 0 || end < start || end >= kClusterSlotCount || !master) {
      return shape_error("CLUSTER SLOTS", entry, "a slot range within 0..16383 and its master");
    }
    ranges.push_back(Range{static_cast<std::uint16_t>(start), static_cast<std::uint16_t>(end),
                           std::move(*master)});
    for (std::size_t i = 3; i < entry.elements.size(); ++i) {
      std::optional<std::string> replica = endpoint(entry.elements[i]);
      if (replica) replicas.insert(std::move(*replica));
    }
  }
  std::vector<std::uint32_t> owner(kClusterSlotCount, kNoOwner);
  for (const Range& range : ranges) {
    Result<std::size_t> index = node_index(range.master);
    if (!index.ok()) return index.error();
    for (std::uint32_t slot = range.start; slot <= range.end; ++slot) {
      owner[slot] = static_cast<std::uint32_t>(index.value());
    }
  }
  if (have_map_ && !failover_counted_since_refresh_ && replaced_a_master(owner)) {
    ++stats_.failovers_seen;
  }
  failover_counted_since_refresh_ = false;
  slot_owner_ = std::move(owner);
  replica_addresses_.assign(replicas.begin(), replicas.end());
  have_map_ = true;
  stale_ = false;
  return Status::Ok();
}

Result<std::size_t> ClusterLink::node_index(const std::string& address) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].address == address) return i;
  }
  const std::optional<std::pair<std::string, std::uint16_t>> parts = split_address(address);
  if (!parts) {
    return make_error(Errc::protocol, "cluster node address \"" + address + "\" is not host:port");
  }
  if (nodes_.size() >= options_.nodes_max) {
    return make_error(Errc::closed, "cluster link: " + std::to_string(nodes_.size()) +
                                        " node connections already, none made for " + address);
  }
  std::unique_ptr<ClusterNodeLink> link = connect_(parts->first, parts->second);
  if (link == nullptr) {
    return make_error(Errc::closed, "cluster link: no connection could be made to " + address);
  }
  nodes_.push_back(Node{address, std::move(link)});
  return nodes_.size() - 1;
}

std::optional<ClusterLink::Redirection> ClusterLink::parse_redirect(const Reply& reply) {
  // "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381"
  const bool ask = reply.is_error_with("ASK ");
  if (!ask && !reply.is_error_with("MOVED ")) return std::nullopt;
  const std::string_view text = reply.str;
  const std::size_t slot_at = text.find(' ') + 1;
  const std::size_t address_at = text.find(' ', slot_at);
  if (address_at == std::string_view::npos) return std::nullopt;
  const std::string_view slot_text = text.substr(slot_at, address_at - slot_at);
  if (slot_text.empty() || slot_text.size() > 5 ||
      !std::all_of(slot_text.begin(), slot_text.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const int slot = std::stoi(std::string(slot_text));
  std::string address(text.substr(address_at + 1));
  if (slot >= kClusterSlotCount || !split_address(address)) return std::nullopt;
  return Redirection{ask, static_cast<std::uint16_t>(slot), std::move(address)};
}

void ClusterLink::remember_script(const Command& command, const Reply& reply) {
  if (reply.kind != Reply::Kind::bulk || command.size() < 3) return;
  if (scripts_.size() >= options_.scripts_max && scripts_.count(reply.str) == 0) return;
  scripts_[reply.str] = command[2];
}

std::string ClusterLink::node_of_slot(std::uint16_t slot) const {
  SEQBY_CHECK(slot < kClusterSlotCount);
  return slot_owner_[slot] == kNoOwner ? "" : nodes_[slot_owner_[slot]].address;
}

std::vector<std::string> ClusterLink::masters() const {
  std::set<std::string> out;
  for (std::uint32_t owner : slot_owner_) {
    if (owner != kNoOwner) out.insert(nodes_[owner].address);
  }
  return {out.begin(), out.end()};
}

std::map<std::string, std::uint64_t> ClusterLink::commands_per_node() const { return sent_; }

}  // namespace seqby::redis
