#include "seqby/core/history.h"

#include <array>

namespace seqby {
namespace {

struct OpName {
  HistoryOp op;
  const char* name;
};

constexpr std::array<OpName, 23> kOpNames{{
    {HistoryOp::publish, "publish"},
    {HistoryOp::acquire, "acquire"},
    {HistoryOp::renew, "renew"},
    {HistoryOp::lose, "lose"},
    {HistoryOp::release, "release"},
    {HistoryOp::read, "read"},
    {HistoryOp::read_fenced, "read_fenced"},
    {HistoryOp::enter, "enter"},
    {HistoryOp::exit, "exit"},
    {HistoryOp::ack, "ack"},
    {HistoryOp::ack_fenced, "ack_fenced"},
    {HistoryOp::commit, "commit"},
    {HistoryOp::commit_fenced, "commit_fenced"},
    {HistoryOp::commit_rejected, "commit_rejected"},
    {HistoryOp::reclaim, "reclaim"},
    {HistoryOp::halt, "halt"},
    {HistoryOp::dlq, "dlq"},
    {HistoryOp::skip, "skip"},
    {HistoryOp::fault, "fault"},
    {HistoryOp::warn, "warn"},
    {HistoryOp::reap, "reap"},
    {HistoryOp::resume, "resume"},
    {HistoryOp::drop, "drop"},
}};

}  // namespace

const char* history_op_name(HistoryOp op) {
  for (const auto& entry : kOpNames) {
    if (entry.op == op) return entry.name;
  }
  return "unknown";
}

bool parse_history_op(std::string_view name, HistoryOp* out) {
  for (const auto& entry : kOpNames) {
    if (name == entry.name) {
      *out = entry.op;
      return true;
    }
  }
  return false;
}

const HistoryField* find_history_field(std::string_view name) {
  for (const HistoryField& field : kHistoryFields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

std::string HistoryField::text_of(const HistoryRecord& record) const {
  switch (type) {
    case HistoryFieldType::unsigned_number:
      return std::to_string(record.*unsigned_member);
    case HistoryFieldType::signed_number:
      return std::to_string(record.*signed_member);
    case HistoryFieldType::text:
      return record.*text_member;
    case HistoryFieldType::op:
      return std::string(history_op_name(record.op));
  }
  return std::string();
}

}  // namespace seqby
