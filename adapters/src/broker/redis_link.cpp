#include "seqby/broker/redis_link.h"

#include <optional>

namespace seqby::redis {

Task<std::vector<Result<Reply>>> RedisLink::execute_many(std::vector<Command> commands) {
  std::vector<Result<Reply>> out;
  out.reserve(commands.size());
  std::optional<Error> failed;
  for (Command& command : commands) {
    if (failed) {
      out.emplace_back(*failed);
      continue;
    }
    Result<Reply> reply = co_await execute(std::move(command));
    if (!reply.ok()) failed = reply.error();
    out.push_back(std::move(reply));
  }
  co_return out;
}

Task<Result<ReplicatedReply>> RedisLink::execute_replicated(Command command,
                                                            std::uint32_t /*replicas*/,
                                                            std::uint64_t /*timeout_ms*/) {
  co_return make_error(Errc::unsupported, "this link cannot send WAIT on the connection of " +
                                              command.front() +
                                              " (the durability option needs a real Redis link)");
}

}  // namespace seqby::redis
