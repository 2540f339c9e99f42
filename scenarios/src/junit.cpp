// JUnit XML (junit.h): rendered by hand, as the format is a handful of elements.
#include "seqby/scenarios/junit.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace seqby::scenarios {
namespace {

// XML 1.0 allows tab, LF and CR among the control characters; the rest are dropped (a history
// explanation may quote arbitrary bytes of a key).
std::string xml_escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (byte < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') break;
        out += ch;
    }
  }
  return out;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds < 0 ? 0.0 : seconds);
  return text;
}

std::string temporary_path(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

}  // namespace

std::string render_junit(const JunitSuite& suite) {
  std::size_t failures = 0;
  for (const JunitCase& c : suite.cases) failures += c.failed ? 1 : 0;
  const std::string counts = " tests=\"" + std::to_string(suite.cases.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\" time=\"" +
                             seconds_text(suite.seconds) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"" + xml_escaped(suite.name) + "\"" + counts + ">\n";
  out += "  <testsuite name=\"" + xml_escaped(suite.name) + "\"" + counts + ">\n";
  for (const JunitCase& c : suite.cases) {
    out += "    <testcase classname=\"" + xml_escaped(suite.classname) + "\" name=\"" +
           xml_escaped(c.name) + "\" time=\"" + seconds_text(c.seconds) + "\"";
    if (!c.failed) {
      out += "/>\n";
      continue;
    }
    out += ">\n      <failure message=\"" + xml_escaped(c.message) + "\" type=\"property\">" +
           xml_escaped(c.details) + "</failure>\n    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

JunitSuite campaign_junit(const CampaignResult& r, const std::string& suite_name) {
  JunitSuite suite;
  suite.name = suite_name;
  suite.classname = "seqby.sim";
  suite.seconds = static_cast<double>(r.wall_ms) / 1e3;
  std::map<std::uint64_t, JunitCase> cases;
  for (const auto& [seed, wall_us] : r.seed_wall_us) {
    JunitCase& c = cases[seed];
    c.name = "seed " + std::to_string(seed);
    c.seconds = static_cast<double>(wall_us) / 1e6;
  }
  for (const CampaignViolation& v : r.violations) {
    JunitCase& c = cases[v.seed];
    if (c.message.empty()) {
      c.message = v.property + (v.key.empty() ? "" : " key " + v.key) + ": " + v.explanation;
    }
    c.details += render_violation(v);
  }
  for (const auto& [seed, difference] : r.determinism_failures) {
    JunitCase& c = cases[seed];
    if (c.message.empty()) c.message = difference.substr(0, difference.find('\n'));
    c.details += "nondeterminism: " + difference + "\n";
  }
  for (std::uint64_t seed : r.failed_seeds) {
    JunitCase& c = cases[seed];
    c.failed = true;
    if (c.message.empty()) c.message = "seed " + std::to_string(seed) + " failed";
    c.details += render_seed_replay(r, seed);
  }
  for (auto& [seed, c] : cases) {
    SEQBY_CHECK(c.failed || c.details.empty());  // a passing seed has no violation
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

Status check_junit_path(const std::string& path) {
  if (path.empty()) return make_error(Errc::invalid, "--junit: expected a file path");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(Errc::invalid, "--junit '" + path + "': is a directory");
  }
  const std::string probe = temporary_path(path);
  {
    std::ofstream file(probe, std::ios::binary | std::ios::trunc);
    if (!file) return make_error(Errc::invalid, "--junit '" + path + "': cannot create the file");
  }
  std::filesystem::remove(probe, ec);
  return Status::Ok();
}

Status write_junit(const std::string& path, const JunitSuite& suite) {
  const std::string temporary = temporary_path(path);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << render_junit(suite);
    file.flush();
    if (!file) {
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      return make_error(Errc::invalid, "--junit '" + path + "': cannot write the file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    return make_error(Errc::invalid, "--junit '" + path + "': " + ec.message());
  }
  return Status::Ok();
}

}  // namespace seqby::scenarios
