// seqby timeline: a history drawn as one self-contained HTML page (lanes per partition, handler
// executions, lease tenures, faults, every violation's witness records highlighted). The page
// itself is scenarios::timeline_main over seqby/scenarios/timeline.h.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "seqby/scenarios/sim_commands.h"
#include "seqby/scenarios/timeline.h"

namespace seqby::apps {
namespace {

struct TimelineOptions {
  std::string history_file;
  std::string out_file;
  scenarios::CheckRedisArgs redis;  // --redis URL --category C [--group G]: a journal in Redis
};

// "" when the options fit, else the message.
std::string combination_error(const TimelineOptions& o) {
  if (o.history_file.empty() == o.redis.url.empty()) {
    return "give either HISTORY.jsonl or --redis URL (with --category), not " +
           std::string(o.history_file.empty() ? "neither" : "both");
  }
  if (!o.redis.url.empty() && o.redis.categories.empty()) {
    return "--redis: --category C is required (the journal of which category to draw)";
  }
  if (o.redis.url.empty() &&
      (!o.redis.categories.empty() || !o.redis.group.empty() || o.redis.cluster)) {
    return "--category, --group and --cluster apply only with --redis";
  }
  return "";
}

}  // namespace

void add_timeline_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TimelineOptions>();
  CLI::App* cmd = app.add_subcommand(
      "timeline",
      "Draw a history (JSON lines) as one self-contained HTML page: a lane per partition, "
      "handler executions, lease tenures, faults, and the witnesses of every violated property");
  cmd->add_option("HISTORY.jsonl", options->history_file, "The history to draw");
  cmd->add_option("-o,--out", options->out_file,
                  "Write the page to FILE.html (default: HISTORY with .html, beside it; with "
                  "--redis journal-C.html)")
      ->type_name("FILE.html");
  cmd->add_option("--redis", options->redis.url,
                  "Draw the decision journal in this Redis (redis://HOST:PORT) instead of a file")
      ->type_name("URL");
  cmd->add_option("--category", options->redis.categories,
                  "With --redis: the category whose journal is drawn (repeat for a process "
                  "manager's categories)")
      ->type_name("C")
      ->take_all();
  cmd->add_option("--group", options->redis.group,
                  "With --redis: draw this handler group (or process manager) only")
      ->type_name("G");
  cmd->add_flag("--cluster", options->redis.cluster,
                "With --redis: it is one node of a Redis Cluster; the journals of every master "
                "are read and merged");
  cmd->callback([&exit_code, options] {
    if (const std::string bad = combination_error(*options); !bad.empty()) {
      std::cerr << "seqby timeline: " << bad << "\n";
      exit_code = kExitUsage;
      return;
    }
    if (!options->redis.url.empty()) {
      exit_code =
          scenarios::timeline_redis_main(options->redis, options->out_file, std::cout, std::cerr);
      return;
    }
    exit_code =
        scenarios::timeline_main(options->history_file, options->out_file, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
