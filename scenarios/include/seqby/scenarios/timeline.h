// The timeline: one self-contained HTML page that draws a history (`seqby timeline`, and beside
// every failing case that sim, hunt and replay save). One lane per lease unit (a partition, or a
// process manager's correlation value), time left to right: handler executions as bars coloured
// by instance, reads, acks and commits as marks, lease tenures as bands under the lane, faults as
// markers and shaded spans, and every witness record of every violated property highlighted with
// the checker's sentence. The page needs no network: its script, style and data are inline (the
// data as JSON in a <script type="application/json"> element), so it opens offline from a CI
// artifact. It draws on a canvas (only what is in view), so a 50,000-record history stays usable.
// It never judges on its own: the violations are check_history's, as `seqby check` reports them.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/core/result.h"
#include "seqby/properties/checker.h"

namespace seqby::scenarios {

// The page's data, as the JSON its script reads (exposed for tests): records, lanes, executions,
// tenures, faults, violations. Keys of the top-level object: "format" ("seqby-timeline-1"),
// "title", "nodes", "ops", "strings", "records", "lanes", "execs", "tenures", "faults",
// "violations", "stale_overlaps", "properties", "time_min", "time_max".
std::string timeline_data_json(const std::vector<HistoryRecord>& history,
                               const properties::CheckReport& report, const std::string& title);

// The whole HTML page for `history` judged by `report`; `title` names it (e.g. the file name).
std::string render_timeline_html(const std::vector<HistoryRecord>& history,
                                 const properties::CheckReport& report, const std::string& title);

// Writes the page of `history` judged by `report` (`seqby timeline` judges as `seqby check`
// does; a saved case passes its run's report) to `html_path` through a temporary file renamed
// into place, so a reader never sees half a page and a failure leaves no file.
Status write_timeline(const std::vector<HistoryRecord>& history,
                      const properties::CheckReport& report, const std::string& html_path,
                      const std::string& title);

// The page that goes beside a saved case or history: X.json or X.jsonl -> X.html (any other
// name gets ".html" appended).
std::string timeline_path_for(const std::string& path);

// `seqby timeline HISTORY.jsonl [-o FILE.html]`: reads the history, writes the page (to
// timeline_path_for(HISTORY) when `out_path` is empty) and prints "timeline: PATH". Exit 0 when
// written, 2 when the history cannot be read or is empty, or the page cannot be written (a
// message on `err`, no file written).
int timeline_main(const std::string& history_path, const std::string& out_path, std::ostream& out,
                  std::ostream& err);

}  // namespace seqby::scenarios
