// The production pieces of `seqby worker`: the logged history sink and the halt figures.
#include "seqby/hiredis/worker.h"

#include "seqby/core/naming.h"

namespace seqby::redis {

LoggedHistorySink::LoggedHistorySink(HistorySink& inner, Log log)
    : inner_(inner), log_(std::move(log)) {}

void LoggedHistorySink::record(HistoryRecord record) {
  const std::string line = operator_log_line(record);
  if (!line.empty() && log_) log_(record, line);
  inner_.record(std::move(record));
}

Task<std::string> halt_figures_line(RedisLink& link, HistoryRecord halt, KeyLayout layout) {
  const PartitionRef partition{halt.category, halt.key, layout};
  std::int64_t pending = -1;
  std::int64_t lag = -1;
  Command summary{"XPENDING", partition.stream(), halt.group};
  Result<Reply> pending_reply = co_await link.execute(std::move(summary));
  if (pending_reply.ok() && !pending_reply.value().elements.empty() &&
      pending_reply.value().elements[0].kind == Reply::Kind::integer) {
    pending = pending_reply.value().elements[0].integer;
  }
  Command groups{"XINFO", "GROUPS", partition.stream()};
  Result<Reply> groups_reply = co_await link.execute(std::move(groups));
  if (groups_reply.ok()) {
    for (const Reply& group : groups_reply.value().elements) {
      bool ours = false;
      std::int64_t group_lag = -1;
      for (std::size_t i = 0; i + 1 < group.elements.size(); i += 2) {
        const Reply& value = group.elements[i + 1];
        if (group.elements[i].str == "name") ours = value.str == halt.group;
        if (group.elements[i].str == "lag" && value.kind == Reply::Kind::integer) {
          group_lag = value.integer;
        }
      }
      if (ours) lag = group_lag;
    }
  }
  co_return "event=halt_figures category=" + halt.category + " key=" + halt.key +
      " group=" + halt.group + " event_id=" + halt.event_id +
      " pending=" + std::to_string(pending) + " lag=" + std::to_string(lag);
}

std::string operator_log_line(const HistoryRecord& r) {
  if (r.op != HistoryOp::warn && r.op != HistoryOp::halt && r.op != HistoryOp::resume &&
      r.op != HistoryOp::reap) {
    return "";
  }
  std::string line = "event=" + std::string(history_op_name(r.op)) + " category=" + r.category;
  if (!r.key.empty()) line += " key=" + r.key;
  if (!r.group.empty()) line += " group=" + r.group;
  if (r.generation > 0) line += " generation=" + std::to_string(r.generation);
  if (!r.event_id.empty()) line += " event_id=" + r.event_id;
  if (r.seq > 0) line += " seq=" + std::to_string(r.seq);
  if (!r.detail.empty()) line += " detail=\"" + r.detail + "\"";
  return line;
}

}  // namespace seqby::redis
