#include "seqby/properties/history_io.h"

#include <array>
#include <charconv>
#include <fstream>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "seqby/core/json_flat.h"

namespace seqby::properties {
namespace {

constexpr std::string_view kEndOfHistory = "(end of history)";
constexpr std::uint64_t kLineBytesMax = 1 << 20;

Error field_error(std::string_view file_name, std::uint64_t line_number, std::string_view field,
                  const std::string& what) {
  std::string message(file_name);
  message += ":" + std::to_string(line_number) + ": ";
  if (!field.empty()) message += "field '" + std::string(field) + "': ";
  message += what;
  return make_error(Errc::invalid, std::move(message));
}

}  // namespace

namespace {

template <typename Number>
void append_number(std::string& out, Number value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out.append(digits, static_cast<std::size_t>(end - digits));
}

// record_to_jsonl's bytes, appended to `out` (no string per record or per number): the fields
// of kHistoryFields in order, each when the JSON-lines codec writes it.
void append_record_jsonl(std::string& out, const HistoryRecord& r) {
  char separator = '{';
  for (const HistoryField& field : kHistoryFields) {
    if (!field.written(field.in_jsonl, r)) continue;
    out.push_back(separator);
    separator = ',';
    out.push_back('"');
    out += field.name;
    out += "\":";
    switch (field.type) {
      case HistoryFieldType::unsigned_number:
        append_number(out, r.*field.unsigned_member);
        break;
      case HistoryFieldType::signed_number:
        append_number(out, r.*field.signed_member);
        break;
      case HistoryFieldType::text:
        append_json_string(out, r.*field.text_member);
        break;
      case HistoryFieldType::op:
        append_json_string(out, history_op_name(r.op));
        break;
    }
  }
  SEQBY_CHECK(separator == ',');  // index is always written
  out.push_back('}');
}

}  // namespace

std::string record_to_jsonl(const HistoryRecord& r) {
  std::string out;
  out.reserve(160);
  append_record_jsonl(out, r);
  return out;
}

std::string history_to_jsonl(const std::vector<HistoryRecord>& history) {
  std::string out;
  out.reserve(history.size() * 120);
  for (const HistoryRecord& record : history) {
    append_record_jsonl(out, record);
    out.push_back('\n');
  }
  return out;
}

void write_history(std::ostream& out, const std::vector<HistoryRecord>& history) {
  for (const HistoryRecord& record : history) out << record_to_jsonl(record) << '\n';
}

std::string history_sha256(const std::vector<HistoryRecord>& history) {
  // The lines go through one buffer, hashed every kBatchBytes: the digest of the same bytes.
  constexpr std::size_t kBatchBytes = 64 << 10;
  Sha256 hasher;
  std::string batch;
  batch.reserve(kBatchBytes + 1024);
  for (const HistoryRecord& record : history) {
    append_record_jsonl(batch, record);
    batch.push_back('\n');
    if (batch.size() >= kBatchBytes) {
      hasher.update(batch);
      batch.clear();
    }
  }
  hasher.update(batch);
  return digest_hex(hasher.finish());
}

Result<HistoryRecord> parse_history_line(std::string_view line, std::string_view file_name,
                                         std::uint64_t line_number) {
  const nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return field_error(file_name, line_number, "", "not valid JSON");
  if (!object.is_object()) {
    return field_error(file_name, line_number, "",
                       std::string("expected a JSON object, got ") + object.type_name());
  }
  HistoryRecord record;
  std::array<bool, kHistoryFields.size()> seen{};
  for (const auto& item : object.items()) {
    // Named references, not a structured binding: clang 14 cannot capture a binding in a lambda.
    const std::string& name = item.key();
    const nlohmann::json& value = item.value();
    auto wrong_type = [&](const char* expected) {
      return field_error(file_name, line_number, name,
                         std::string("expected ") + expected + ", got " + value.type_name());
    };
    const HistoryField* field = find_history_field(name);
    if (field == nullptr || field->in_jsonl == HistoryFieldPresence::never) {
      return field_error(file_name, line_number, name, "unknown field");
    }
    seen[static_cast<std::size_t>(field - kHistoryFields.data())] = true;
    switch (field->type) {
      case HistoryFieldType::unsigned_number:
        if (!value.is_number_unsigned()) return wrong_type("an unsigned integer");
        record.*field->unsigned_member = value.get<std::uint64_t>();
        break;
      case HistoryFieldType::signed_number: {
        std::int64_t& number = record.*field->signed_member;
        static const std::string expected = "an integer >= " + std::to_string(kHistorySeqUnknown);
        if (!value.is_number_integer()) return wrong_type(expected.c_str());
        if (value.is_number_unsigned()) {
          const std::uint64_t n = value.get<std::uint64_t>();
          if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return field_error(file_name, line_number, name, "out of range");
          }
          number = static_cast<std::int64_t>(n);
        } else {
          number = value.get<std::int64_t>();
          if (number < kHistorySeqUnknown) {
            return field_error(file_name, line_number, name,
                               "expected " + expected + ", got " + std::to_string(number));
          }
        }
        break;
      }
      case HistoryFieldType::text:
        if (!value.is_string()) return wrong_type("a string");
        record.*field->text_member = value.get_ref<const std::string&>();
        break;
      case HistoryFieldType::op: {
        if (!value.is_string()) return wrong_type("a string");
        const std::string& op_name = value.get_ref<const std::string&>();
        if (!parse_history_op(op_name, &record.op)) {
          return field_error(file_name, line_number, name, "unknown op '" + op_name + "'");
        }
        break;
      }
    }
  }
  for (std::size_t i = 0; i < kHistoryFields.size(); ++i) {
    const HistoryField& field = kHistoryFields[i];
    if (field.required && field.in_jsonl != HistoryFieldPresence::never && !seen[i]) {
      return field_error(file_name, line_number, field.name, "missing");
    }
  }
  return record;
}

Result<std::vector<HistoryRecord>> read_history(std::istream& in, std::string_view file_name) {
  std::vector<HistoryRecord> history;
  std::string line;
  std::uint64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.size() > kLineBytesMax) {
      return field_error(file_name, line_number, "",
                         "line longer than " + std::to_string(kLineBytesMax) + " bytes");
    }
    Result<HistoryRecord> record = parse_history_line(line, file_name, line_number);
    if (!record.ok()) return record.error();
    if (!history.empty() && record.value().index <= history.back().index) {
      return field_error(file_name, line_number, "index",
                         std::to_string(record.value().index) + " does not follow " +
                             std::to_string(history.back().index) +
                             " (indices must strictly increase)");
    }
    history.push_back(std::move(record).value());
  }
  if (in.bad()) return field_error(file_name, line_number, "", "read error");
  return history;
}

Result<std::vector<HistoryRecord>> read_history_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::not_found, path + ": cannot open the history file");
  return read_history(in, path);
}

std::optional<HistoryDifference> first_difference(const std::vector<HistoryRecord>& a,
                                                  const std::vector<HistoryRecord>& b) {
  const std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common; ++i) {
    std::string left = record_to_jsonl(a[i]);
    std::string right = record_to_jsonl(b[i]);
    if (left != right) return HistoryDifference{i, std::move(left), std::move(right)};
  }
  if (a.size() == b.size()) return std::nullopt;
  HistoryDifference difference;
  difference.position = common;
  difference.left = common < a.size() ? record_to_jsonl(a[common]) : std::string(kEndOfHistory);
  difference.right = common < b.size() ? record_to_jsonl(b[common]) : std::string(kEndOfHistory);
  return difference;
}

void VectorHistorySink::record(HistoryRecord record) {
  record.index = records_.size();
  records_.push_back(std::move(record));
}

std::vector<HistoryRecord> VectorHistorySink::take() {
  std::vector<HistoryRecord> out = std::move(records_);
  records_.clear();
  return out;
}

JsonlHistorySink::JsonlHistorySink() = default;

JsonlHistorySink::JsonlHistorySink(std::ostream& out) : out_(&out) {}

void JsonlHistorySink::record(HistoryRecord record) {
  record.index = next_index_++;
  std::string line = record_to_jsonl(record);
  line.push_back('\n');
  hasher_.update(line);
  if (out_ != nullptr) {
    *out_ << line;
  } else {
    text_ += line;
  }
}

const std::string& JsonlHistorySink::text() const {
  SEQBY_CHECK(out_ == nullptr);
  return text_;
}

std::string JsonlHistorySink::sha256_hex() const {
  Sha256 copy = hasher_;
  return digest_hex(copy.finish());
}

}  // namespace seqby::properties
