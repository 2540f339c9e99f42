// seqby timeline: a history drawn as one self-contained HTML page (lanes per partition, handler
// executions, lease tenures, faults, every violation's witness records highlighted). The page
// itself is scenarios::timeline_main over seqby/scenarios/timeline.h.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "seqby/scenarios/timeline.h"

namespace seqby::apps {
namespace {

struct TimelineOptions {
  std::string history_file;
  std::string out_file;
};

}  // namespace

void add_timeline_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TimelineOptions>();
  CLI::App* cmd = app.add_subcommand(
      "timeline",
      "Draw a history (JSON lines) as one self-contained HTML page: a lane per partition, "
      "handler executions, lease tenures, faults, and the witnesses of every violated property");
  cmd->add_option("HISTORY.jsonl", options->history_file, "The history to draw")->required();
  cmd->add_option("-o,--out", options->out_file,
                  "Write the page to FILE.html (default: HISTORY with .html, beside it)")
      ->type_name("FILE.html");
  cmd->callback([&exit_code, options] {
    exit_code =
        scenarios::timeline_main(options->history_file, options->out_file, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
