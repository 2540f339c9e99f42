// Runs a built program (the seqby command, SEQBY_BINARY_DIR "/seqby", or a benchmark) as a child
// process and captures its exit status, standard output and standard error separately, for the
// tests of command lines. Output goes through temporary files so a chatty child never blocks on a
// full pipe.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "seqby_binary.h"

extern char** environ;

namespace seqby::apps::testing {

struct RunResult {
  int exit_code = -1;  // -1 when the child did not exit normally
  std::string out;
  std::string err;
};

inline std::string read_and_remove(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

inline std::string temp_path() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/seqby-cli.XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd >= 0) ::close(fd);
  return path;
}

// Runs `binary args...` and waits for it.
inline RunResult run_program(const std::string& binary, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  const std::string out_path = temp_path();
  const std::string err_path = temp_path();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_TRUNC,
                                   0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_TRUNC,
                                   0);

  RunResult result;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == 0) {
    int status = 0;
    if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    }
  } else {
    result.err = "posix_spawn failed for " + binary;
  }
  result.out = read_and_remove(out_path);
  result.err += read_and_remove(err_path);
  return result;
}

// Runs `seqby args...` and waits for it.
inline RunResult run_seqby(const std::vector<std::string>& args) {
  return run_program(kSeqby, args);
}

// The whole file at `path`, as bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace seqby::apps::testing
