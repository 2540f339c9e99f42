// Fuzz target: case files (seqby/scenarios/case_io.h), as `seqby replay` reads them. Input: the
// file's text. Properties: no exception escapes the reader (nlohmann's included); a refusal is
// Errc::invalid naming the file; an accepted case writes a file that reads back to a case (and
// simulated server) that writes the same bytes (write(read(write(read(x)))) == write(read(x))).
#include <string>

#include "fuzz_support.h"
#include "seqby/scenarios/case_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = seqby::fuzz::as_text(data, size);
  seqby::scenarios::CaseServer server;
  const seqby::Result<seqby::sim::SimCase> read =
      seqby::scenarios::case_from_json(text, "c.json", &server);
  if (!read.ok()) {
    FUZZ_CHECK(read.error().code == seqby::Errc::invalid, "a refusal is Errc::invalid");
    FUZZ_CHECK(read.error().message.starts_with("c.json"), "a refusal names the file");
    return 0;
  }
  const std::string written = seqby::scenarios::case_to_json(read.value(), server);
  seqby::scenarios::CaseServer server_again;
  const seqby::Result<seqby::sim::SimCase> again =
      seqby::scenarios::case_from_json(written, "written.json", &server_again);
  if (!again.ok()) std::fprintf(stderr, "%s\n", again.error().message.c_str());
  FUZZ_CHECK(again.ok(), "a written case reads back");
  FUZZ_CHECK(server_again == server, "the server read back is the one written");
  FUZZ_CHECK(seqby::scenarios::case_to_json(again.value(), server_again) == written,
             "a case written, read and written again is the same file");
  const seqby::sim::SimCase& a = read.value();
  const seqby::sim::SimCase& b = again.value();
  FUZZ_CHECK(a.seed == b.seed && a.events == b.events && a.engine == b.engine,
             "the case read back has the same seed, events and engine limits");
  return 0;
}
