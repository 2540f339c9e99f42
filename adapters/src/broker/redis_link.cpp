#include "seqby/broker/redis_link.h"

namespace seqby::redis {

Task<std::vector<Result<Reply>>> RedisLink::execute_many(std::vector<Command> commands) {
  return one_after_another(std::move(commands),
                           [this](Command command) { return execute(std::move(command)); });
}

Task<Result<ReplicatedReply>> RedisLink::execute_replicated(Command command,
                                                            std::uint32_t /*replicas*/,
                                                            std::uint64_t /*timeout_ms*/) {
  co_return make_error(Errc::unsupported, "this link cannot send WAIT on the connection of " +
                                              command.front() +
                                              " (the durability option needs a real Redis link)");
}

}  // namespace seqby::redis
