// SigpipeBlock: while alive, SIGPIPE is blocked in the calling thread, so a write to a socket
// the server closed fails with EPIPE instead of killing the process (hiredis writes with plain
// write(2)). A SIGPIPE raised meanwhile is consumed before the previous mask is restored.
// Thread-local: the process's signal dispositions are left alone.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace seqby::redis {

class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlock() {
    if (sigismember(&previous_, SIGPIPE) == 1) return;  // it was blocked before us: leave it
    sigset_t pending;
    sigemptyset(&pending);
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
};

}  // namespace seqby::redis
