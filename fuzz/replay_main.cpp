// The replay driver of the ordinary build: runs a fuzz target's LLVMFuzzerTestOneInput over every
// file of the directories (or the files) given on the command line, in name order, so that
// `make test` replays each committed corpus without clang. A failed property aborts, naming it;
// a clean run prints how many inputs it replayed and exits 0. Bad arguments: exit 2.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz_support.h"

namespace {

// The input being replayed, named when a failed property aborts.
std::string current_input;

void name_failed_input(int signal_number) {
  const char prefix[] = "fuzz replay: failed on input ";
  [[maybe_unused]] ssize_t put = ::write(2, prefix, sizeof(prefix) - 1);
  put = ::write(2, current_input.data(), current_input.size());
  put = ::write(2, "\n", 1);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path path(argv[i]);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (fs::is_regular_file(path, ec)) {
      inputs.push_back(path);
    } else {
      std::fprintf(stderr, "%s: not a directory or file: %s\n", argv[0], argv[i]);
      return 2;
    }
    if (ec) {
      std::fprintf(stderr, "%s: cannot read %s: %s\n", argv[0], argv[i], ec.message().c_str());
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "%s: no inputs to replay\n", argv[0]);
    return 2;
  }
  std::signal(SIGABRT, name_failed_input);
  std::signal(SIGSEGV, name_failed_input);
  for (const fs::path& input : inputs) {
    current_input = input.string();
    std::ifstream in(input, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot open %s\n", argv[0], input.c_str());
      return 2;
    }
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    // A copy of exactly the input's size, so that a read past its end is one past a heap block.
    std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
