// Fuzz target: reply decoding from Redis (seqby/broker/reply.h, adapters/src/broker/reply.cpp).
// Input: the bytes a server sent, read by hiredis's reader and converted as the links convert
// them (convert_reply); then every typed read the broker and `seqby admin` use, and every script
// contract's decode_reply. Properties: every reply hiredis builds converts; a converted reply
// written back as RESP reads back equal; an error reply decodes to its error for every shape
// (FENCED and NOGROUP to their Errc), another wrong shape to Errc::protocol naming what was read;
// a typed read succeeds exactly on its shape, and what it reads agrees with the reply.
#include <string>
#include <tuple>

#include "fuzz_support.h"
#include "resp.h"
#include "seqby/broker/reply.h"
#include "seqby/broker/script_contracts.h"

namespace {

using seqby::Errc;
using seqby::Result;
using seqby::redis::Reply;

// A decode of `reply` as T: an error reply gives its own error, another shape Errc::protocol.
template <typename T>
Result<T> checked_decode(const Reply& reply) {
  Result<T> value = seqby::redis::decode<T>(reply, "FUZZ");
  if (reply.is_error()) {
    FUZZ_CHECK(!value.ok(), "an error reply never decodes");
    const Errc expected = reply.is_error_with("FENCED")    ? Errc::fenced
                          : reply.is_error_with("NOGROUP") ? Errc::no_group
                                                           : Errc::protocol;
    FUZZ_CHECK(value.error().code == expected && value.error().message == reply.str,
               "an error reply decodes to its own error");
  } else if (!value.ok()) {
    FUZZ_CHECK(value.error().code == Errc::protocol, "a wrong shape is Errc::protocol");
    FUZZ_CHECK(value.error().message.starts_with("unexpected reply to FUZZ: "),
               "a wrong shape names what was read");
  }
  return value;
}

template <typename S>
void decode_contract(const Reply& reply) {
  const Result<typename S::Out> out = S::decode_reply(reply);
  if (reply.is_error() && !reply.is_error_with("FENCED")) {
    FUZZ_CHECK(!out.ok(), "a script's error reply is never a result");
  }
  const Result<typename S::Out> again = seqby::redis::script::decode_reply<S>(Result<Reply>(reply));
  FUZZ_CHECK(again.ok() == out.ok(), "both decode_reply forms agree");
}

template <typename... S>
void decode_contracts(const Reply& reply) {
  (decode_contract<S>(reply), ...);
}

void check_typed_reads(const Reply& reply) {
  using Kind = Reply::Kind;
  const Result<std::int64_t> integer = checked_decode<std::int64_t>(reply);
  FUZZ_CHECK(integer.ok() == (reply.kind == Kind::integer), "an integer exactly from :N");
  if (integer.ok()) FUZZ_CHECK(integer.value() == reply.integer, "the integer read is the reply's");
  const Result<std::uint64_t> count = checked_decode<std::uint64_t>(reply);
  FUZZ_CHECK(count.ok() == (reply.kind == Kind::integer && reply.integer >= 0),
             "an unsigned integer exactly from :N with N >= 0");
  const Result<bool> flag = checked_decode<bool>(reply);
  FUZZ_CHECK(
      flag.ok() == (reply.kind == Kind::integer && (reply.integer == 0 || reply.integer == 1)),
      "a boolean exactly from :0 or :1");
  const Result<std::string> text = checked_decode<std::string>(reply);
  FUZZ_CHECK(text.ok() == (reply.kind == Kind::bulk || reply.kind == Kind::status),
             "a string exactly from a bulk or status reply");
  if (text.ok()) FUZZ_CHECK(text.value() == reply.str, "the string read is the reply's");
  const Result<std::optional<std::string>> maybe =
      checked_decode<std::optional<std::string>>(reply);
  FUZZ_CHECK(maybe.ok() == (text.ok() || reply.is_nil()), "nil or a string");
  if (maybe.ok()) FUZZ_CHECK(maybe.value().has_value() != reply.is_nil(), "nil reads as nullopt");

  const Result<std::vector<std::string>> strings = checked_decode<std::vector<std::string>>(reply);
  if (strings.ok()) {
    FUZZ_CHECK(reply.kind == Kind::array && strings.value().size() == reply.elements.size(),
               "an array of strings has one string per element");
  }
  const Result<seqby::redis::FieldMap> map = checked_decode<seqby::redis::FieldMap>(reply);
  if (map.ok()) {
    FUZZ_CHECK(reply.kind == Kind::array && reply.elements.size() % 2 == 0 &&
                   map.value().fields.size() * 2 == reply.elements.size(),
               "a field map has one field per pair");
    for (std::size_t i = 0; i < map.value().fields.size(); ++i) {
      FUZZ_CHECK(map.value().fields[i].first == reply.elements[2 * i].str &&
                     map.value().fields[i].second == reply.elements[2 * i + 1],
                 "a field map keeps names and values in reply order");
      const Reply* found = map.value().find(map.value().fields[i].first);
      FUZZ_CHECK(found != nullptr, "every field is found");
    }
  }
  (void)checked_decode<seqby::redis::AnyReply>(reply);
  (void)checked_decode<std::tuple<std::string, std::int64_t>>(reply);
  (void)checked_decode<std::vector<std::tuple<std::string, seqby::redis::FieldMap>>>(reply);
  (void)checked_decode<std::tuple<std::string, std::vector<std::string>>>(reply);
  (void)checked_decode<std::vector<std::optional<std::int64_t>>>(reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = seqby::fuzz::as_text(data, size);
  if (seqby::fuzz::declares_huge_array(bytes)) return 0;
  const seqby::fuzz::ReadReplies read = seqby::fuzz::read_resp(bytes);
  for (const Result<Reply>& converted : read.replies) {
    FUZZ_CHECK(converted.ok(), "every reply hiredis builds converts");
    const Reply& reply = converted.value();
    (void)seqby::redis::to_string(reply);

    const seqby::fuzz::ReadReplies back = seqby::fuzz::read_resp(seqby::fuzz::to_resp(reply));
    FUZZ_CHECK(!back.protocol_error && back.replies.size() == 1 && back.replies[0].ok() &&
                   back.replies[0].value() == reply,
               "a reply written back as RESP reads back equal");

    check_typed_reads(reply);
    namespace s = seqby::redis::script;
    decode_contracts<s::Publish, s::AnnounceMember, s::LiveMembers, s::Acquire, s::Renew,
                     s::Release, s::CheckLease, s::Reclaim, s::DropStaleConsumers, s::FencedRead,
                     s::FencedAck, s::FencedNext, s::RenewMany, s::AcquireMany, s::RingWake,
                     s::FencedCommit, s::RecordHalt, s::Reap, s::AdminSkip, s::AdminDlq,
                     s::AdminDlqReplay, s::HandlerEnter, s::HandlerExit>(reply);
  }
  return 0;
}
