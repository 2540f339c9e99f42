// Subprocess: redirection to /dev/null, files and a pipe, exit statuses, signals by pid, bounded
// waits that SIGKILL at the bound, and an object that never leaves its child running.
#include "seqby/runtime/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace seqby::redis {
namespace {

constexpr std::uint64_t kWaitMaxMs = 20000;  // a bound against a hang, never a timing

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path().string() + "/seqby-subprocess-" +
         std::to_string(::getpid()) + "-" + name;
}

Subprocess spawn_ok(const std::vector<std::string>& argv, const SpawnOptions& options = {}) {
  Result<Subprocess> child = Subprocess::spawn(argv, options);
  EXPECT_TRUE(child.ok());
  return child.ok() ? std::move(child).value() : Subprocess();
}

TEST(Subprocess, ThePipeCarriesStdoutAndWaitReturnsTheExitStatus) {
  SpawnOptions options;
  options.out = Redirect::pipe();
  Subprocess child = spawn_ok({"/bin/sh", "-c", "echo hello; exit 3"}, options);
  EXPECT_EQ(child.read_stdout(kWaitMaxMs), "hello\n");
  EXPECT_EQ(child.wait(kWaitMaxMs), 3);
  EXPECT_EQ(child.term_signal(), 0);  // it exited
  EXPECT_FALSE(child.running());
}

TEST(Subprocess, FilesReceiveStdoutAndStderrAndStdinIsEmpty) {
  const std::string out_path = temp_path("out");
  const std::string err_path = temp_path("err");
  SpawnOptions options;
  options.in = Redirect::null();
  options.out = Redirect::file(out_path);
  options.err = Redirect::file(err_path);
  Subprocess child =
      spawn_ok({"/bin/sh", "-c", "cat; echo to-out; echo to-err >&2; exit 0"}, options);
  EXPECT_EQ(child.wait(kWaitMaxMs), 0);
  EXPECT_EQ(read_file(out_path), "to-out\n");
  EXPECT_EQ(read_file(err_path), "to-err\n");
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
}

TEST(Subprocess, AProgramThatCannotBeExecutedExits127) {
  SpawnOptions options;
  options.err = Redirect::null();
  Subprocess missing = spawn_ok({"/nonexistent/seqby-no-such-program"}, options);
  EXPECT_EQ(missing.wait(kWaitMaxMs), 127);
  options.search_path = true;
  Subprocess from_path = spawn_ok({"sh", "-c", "exit 5"}, options);
  EXPECT_EQ(from_path.wait(kWaitMaxMs), 5);
}

TEST(Subprocess, TerminateEndsAStoppedChild) {
  Subprocess child = spawn_ok({"/bin/sleep", "3600"});
  ASSERT_TRUE(child.stop());
  EXPECT_EQ(child.terminate(kWaitMaxMs), Subprocess::kNotExited);  // ended by SIGTERM
  EXPECT_EQ(child.term_signal(), SIGTERM);
  EXPECT_FALSE(child.running());
  EXPECT_FALSE(child.send(SIGCONT));  // a reaped child is never signalled (its pid may be reused)
}

TEST(Subprocess, AWaitThatRunsOutKillsAndReapsTheChild) {
  Subprocess child = spawn_ok({"/bin/sleep", "3600"});
  EXPECT_EQ(child.wait(1), Subprocess::kNotExited);
  EXPECT_EQ(child.term_signal(), SIGKILL);
  EXPECT_FALSE(child.running());
  EXPECT_TRUE(child.try_reap());
}

TEST(Subprocess, DestroyingTheObjectKillsAndReapsItsChild) {
  pid_t pid = -1;
  {
    Subprocess child = spawn_ok({"/bin/sleep", "3600"});
    pid = child.pid();
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(child.running());
    Subprocess moved = std::move(child);  // the new owner kills it
    EXPECT_FALSE(child.running());
    EXPECT_EQ(moved.pid(), pid);
  }
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped: no such process (not even a zombie)
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace seqby::redis
