#include "app/cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace p64::cli {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<bool> g_generating{true};
const char* g_idle_hint = nullptr;  // set before the handler can read it; a static string

void on_sigint(int) {
  if (!g_generating.load()) {
    if (g_idle_hint) {
      const ssize_t ignored = write(STDERR_FILENO, g_idle_hint, std::strlen(g_idle_hint));
      (void)ignored;
    }
    return;
  }
  if (g_requested.exchange(true)) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa{};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read at the chat prompt goes on after the hint
  sigaction(SIGINT, &sa, nullptr);
}

bool interrupt_requested() { return g_requested.load(); }
void clear_interrupt() { g_requested.store(false); }
void set_generating(bool on, const char* idle_hint) {
  if (idle_hint) g_idle_hint = idle_hint;
  g_generating.store(on);
}

}  // namespace p64::cli
