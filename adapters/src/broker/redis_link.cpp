#include "seqby/broker/redis_link.h"

namespace seqby::redis {

Task<std::vector<Result<Reply>>> RedisLink::execute_many(std::vector<Command> commands) {
  return one_after_another(std::move(commands),
                           [this](Command command) { return execute(std::move(command)); });
}

Task<std::vector<Result<Reply>>> RedisLink::execute_prepared(
    std::shared_ptr<const PreparedCommands> prepared) {
  std::vector<Result<Reply>> replies = co_await execute_many(prepared->commands());
  co_return replies;
}

const std::string& PreparedCommands::wire(std::size_t i) const {
  SEQBY_CHECK(i < commands_.size());
  if (wire_.empty()) wire_.resize(commands_.size());
  std::string& out = wire_[i];
  if (!out.empty()) return out;
  const Command& command = commands_[i];
  std::size_t size = 16;
  for (const std::string& arg : command) size += arg.size() + 16;
  out.reserve(size);
  out += '*';
  out += std::to_string(command.size());
  out += "\r\n";
  for (const std::string& arg : command) {
    out += '$';
    out += std::to_string(arg.size());
    out += "\r\n";
    out += arg;
    out += "\r\n";
  }
  return out;
}

Task<Result<ReplicatedReply>> RedisLink::execute_replicated(Command command,
                                                            std::uint32_t /*replicas*/,
                                                            std::uint64_t /*timeout_ms*/) {
  co_return make_error(Errc::unsupported, "this link cannot send WAIT on the connection of " +
                                              command.front() +
                                              " (the durability option needs a real Redis link)");
}

}  // namespace seqby::redis
