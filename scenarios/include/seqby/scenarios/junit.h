// JUnit XML for CI (`--junit FILE` on `seqby sim`, `hunt`, `scenario run` and `chaos`): one
// <testcase> per seed or scenario, a failure carrying the violation sentences and the replay line,
// in the shape CI tools read (Jenkins, GitLab, GitHub test reporters: testsuites > testsuite >
// testcase > failure). It describes a finished run; it never decides whether a run passed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqby/core/result.h"
#include "seqby/scenarios/run.h"

namespace seqby::scenarios {

struct JunitCase {
  std::string name;     // e.g. "seed 12"
  double seconds = 0;   // wall time of this case (0 when unknown)
  bool failed = false;  // a property or an assertion failed
  std::string message;  // one line: the first violation (failed only)
  std::string details;  // every violation, then the replay line (failed only)
};

struct JunitSuite {
  std::string name;       // e.g. "seqby sim default"
  std::string classname;  // e.g. "seqby.sim.default": the group a CI tool files the cases under
  double seconds = 0;     // wall time of the whole run
  std::vector<JunitCase> cases;
};

// The XML document (UTF-8); text and attributes escaped, control characters dropped.
std::string render_junit(const JunitSuite& suite);

// A campaign's report: one case per seed ("seed N"), a failing seed's failure carrying its
// violations (the first as the message), a determinism difference, and its replay lines.
// `suite` names the command, e.g. "seqby sim --variant no_fence".
JunitSuite campaign_junit(const CampaignResult& result, const std::string& suite);

// Errc::invalid naming the path when the file could not be created where `path` says (checked
// before a campaign runs, so that a bad --junit fails at once with exit status 2).
Status check_junit_path(const std::string& path);
// Writes the document to `path` through a temporary file renamed into place: a reader never
// sees half a file. Errc::invalid naming the path on failure.
Status write_junit(const std::string& path, const JunitSuite& suite);

}  // namespace seqby::scenarios
