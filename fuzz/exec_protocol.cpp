// Fuzz target: the exec handler's protocol reader (seqby/runtime/exec_handler.h): a child's hello
// line and its reply line, as it may write them, and the request line the worker writes for any
// event. Input: line 1 is the hello, line 2 the reply; the rest is the event's data (line 1 also
// its key, line 2 its type). Properties: a reply is a fault or a result, never both; a fault
// quotes what the child wrote within a bounded length; an ok result is exactly a JSON object with
// the right "n" and "ok": true; a hello with {"protocol": 1} starts the child; the request line is
// one line of JSON whose event fields decode to the event's own (its data verbatim when it is an
// object, as data_text otherwise).
#include <string>
#include <variant>

#include "fuzz_support.h"
#include "seqby/core/json_flat.h"
#include "seqby/runtime/exec_handler.h"

namespace {

using seqby::redis::ExecHandler;

const seqby::JsonValue* field(const seqby::JsonObject& object, const std::string& name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &it->second;
}

void check_hello(std::string_view hello) {
  const std::string fault = ExecHandler::hello_fault(hello);
  const seqby::Result<seqby::JsonObject> parsed = seqby::decode_json_object(hello);
  const seqby::JsonValue* version = parsed.ok() ? field(parsed.value(), "protocol") : nullptr;
  const bool speaks_ours =
      version != nullptr && *version == seqby::JsonValue(seqby::redis::kExecProtocolVersion);
  FUZZ_CHECK(fault.empty() == speaks_ours, "a hello starts the child exactly when it speaks v1");
  // shown(): at most 200 bytes of the line, each escaped to at most 6 ("\u00XX").
  FUZZ_CHECK(fault.size() <= 100 + 200 * 6, "a hello's fault is bounded");
}

void check_reply(std::string_view reply, std::uint64_t n) {
  const ExecHandler::ReplyRead read = ExecHandler::read_reply(reply, n, 3);
  const seqby::Result<seqby::JsonObject> parsed = seqby::decode_json_object(reply);
  if (!read.fault.empty()) {
    FUZZ_CHECK(read.result.ok && read.result.reason.empty(), "a fault carries no result");
    FUZZ_CHECK(read.fault.size() <= 250 + 200 * 6, "a fault quotes a bounded part of the line");
    const bool names_it = read.fault.starts_with("wrote a line that is not a JSON object") ||
                          read.fault.starts_with("replied out of turn") ||
                          read.fault.starts_with("wrote a reply without a boolean");
    FUZZ_CHECK(names_it, "a fault says what was wrong");
    return;
  }
  FUZZ_CHECK(parsed.ok(), "a result comes only from a JSON object");
  const seqby::JsonValue* number = field(parsed.value(), "n");
  const seqby::JsonValue* ok = field(parsed.value(), "ok");
  FUZZ_CHECK(number != nullptr && *number == seqby::JsonValue(static_cast<std::int64_t>(n)),
             "a result answers event n");
  FUZZ_CHECK(ok != nullptr && std::holds_alternative<bool>(*ok), "a result has a boolean ok");
  FUZZ_CHECK(read.result.ok == std::get<bool>(*ok), "the result is what ok says");
  if (read.result.ok) {
    FUZZ_CHECK(read.result.reason.empty(), "a success has no reason");
  } else {
    FUZZ_CHECK(read.result.reason.starts_with("exec handler child=3 failed the event"),
               "a failure names the child");
    const seqby::JsonValue* reason = field(parsed.value(), "reason");
    if (reason != nullptr && std::holds_alternative<std::string>(*reason)) {
      FUZZ_CHECK(read.result.reason.ends_with(": " + std::get<std::string>(*reason)),
                 "a failure carries the child's reason");
    }
  }
}

void check_request(const seqby::Event& event, std::uint64_t n) {
  const std::string line = ExecHandler::request_line(n, event, "w-1", 7);
  FUZZ_CHECK(line.find('\n') == std::string::npos && line.find('\r') == std::string::npos,
             "a request is one line");
  const seqby::Result<seqby::JsonObject> request = seqby::decode_json_object(line);
  if (!request.ok()) {
    // Data nested close to kJsonDepthMax is two levels deeper in the request: too deep for
    // seqby's own reader (a child's JSON library has its own limit), and that is the only excuse.
    FUZZ_CHECK(seqby::decode_json_object(event.data).ok() &&
                   request.error().message.find("nesting deeper") != std::string::npos,
               "a request is a JSON object");
    return;
  }
  FUZZ_CHECK(*field(request.value(), "n") == seqby::JsonValue(static_cast<std::int64_t>(n)),
             "a request carries its number");
  const seqby::JsonValue* inner = field(request.value(), "event");
  FUZZ_CHECK(inner != nullptr && std::holds_alternative<seqby::JsonRaw>(*inner),
             "a request carries the event as an object");
  const seqby::Result<seqby::JsonObject> fields =
      seqby::decode_json_object(std::get<seqby::JsonRaw>(*inner).text);
  FUZZ_CHECK(fields.ok(), "the event is a JSON object of its own");
  const seqby::JsonObject& e = fields.value();
  FUZZ_CHECK(*field(e, "category") == seqby::JsonValue(event.category), "category kept");
  FUZZ_CHECK(*field(e, "key") == seqby::JsonValue(event.key), "key kept");
  FUZZ_CHECK(*field(e, "id") == seqby::JsonValue(event.id), "id kept");
  FUZZ_CHECK(*field(e, "type") == seqby::JsonValue(event.type), "type kept");
  const seqby::Result<seqby::JsonObject> data = seqby::decode_json_object(event.data);
  const seqby::JsonValue* sent = field(e, "data");
  FUZZ_CHECK(sent != nullptr, "a request has data");
  if (data.ok()) {
    FUZZ_CHECK(std::holds_alternative<seqby::JsonRaw>(*sent), "object data is sent as an object");
    // Verbatim, each CR and LF (whitespace between tokens in valid JSON) as a space.
    std::string expected = event.data;
    for (char& c : expected) c = c == '\n' || c == '\r' ? ' ' : c;
    expected.erase(0, expected.find_first_not_of(" \t"));
    expected.erase(expected.find_last_not_of(" \t") + 1);
    FUZZ_CHECK(std::get<seqby::JsonRaw>(*sent).text == expected, "object data is sent verbatim");
    const seqby::Result<seqby::JsonObject> again = seqby::decode_json_object(expected);
    FUZZ_CHECK(again.ok() && again.value().size() == data.value().size(),
               "the data sent decodes to as many fields");
  } else {
    FUZZ_CHECK(std::holds_alternative<std::nullptr_t>(*sent), "other data is null");
    const seqby::JsonValue* text = field(e, "data_text");
    FUZZ_CHECK(text != nullptr && *text == seqby::JsonValue(event.data),
               "other data is carried as data_text");
  }
  FUZZ_CHECK(*field(e, "delivery_count") ==
                 seqby::JsonValue(static_cast<std::int64_t>(event.delivery_count)),
             "delivery count kept");
  const seqby::JsonValue* lease = field(request.value(), "lease");
  FUZZ_CHECK(lease != nullptr && std::holds_alternative<seqby::JsonRaw>(*lease), "a lease object");
  const seqby::Result<seqby::JsonObject> l =
      seqby::decode_json_object(std::get<seqby::JsonRaw>(*lease).text);
  FUZZ_CHECK(l.ok() && *field(l.value(), "token") == seqby::JsonValue(std::string("w-1:7")),
             "the lease's token is O:N");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string_view> parts =
      seqby::fuzz::lines(seqby::fuzz::as_text(data, size), 3);
  const std::uint64_t n = 1 + size % 5;
  check_hello(parts[0]);
  check_reply(parts[1], n);

  seqby::Event event;
  event.category = "orders";
  event.key = std::string(parts[0].substr(0, 64));
  event.id = "1700000000000-" + std::to_string(size);
  event.type = std::string(parts[1].substr(0, 64));
  event.data = std::string(parts[2]);
  event.delivery_count = static_cast<std::uint32_t>(size % 7);
  check_request(event, n);
  return 0;
}
