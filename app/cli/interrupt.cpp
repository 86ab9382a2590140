#include "app/cli/interrupt.h"

#include <atomic>
#include <cstring>

#ifdef _WIN32
#include <windows.h>
#else
#include <signal.h>
#include <unistd.h>
#endif

namespace p64::cli {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<bool> g_generating{true};
const char* g_idle_hint = nullptr;  // set before the handler can read it; a static string

#ifdef _WIN32
// Ctrl-C reaches a console program on a thread of its own; TRUE = handled, FALSE = default (exit).
BOOL WINAPI on_console_ctrl(DWORD event) {
  if (event != CTRL_C_EVENT) return FALSE;
  if (!g_generating.load()) {
    if (g_idle_hint) {
      DWORD written = 0;
      WriteFile(GetStdHandle(STD_ERROR_HANDLE), g_idle_hint, static_cast<DWORD>(std::strlen(g_idle_hint)), &written,
                nullptr);
    }
    return TRUE;
  }
  return g_requested.exchange(true) ? FALSE : TRUE;
}
#else
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
#endif

}  // namespace

void install_interrupt_handler() {
#ifdef _WIN32
  SetConsoleCtrlHandler(on_console_ctrl, TRUE);
#else
  struct sigaction sa{};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read at the chat prompt goes on after the hint
  sigaction(SIGINT, &sa, nullptr);
#endif
}

bool interrupt_requested() { return g_requested.load(); }
void clear_interrupt() { g_requested.store(false); }
void set_generating(bool on, const char* idle_hint) {
  if (idle_hint) g_idle_hint = idle_hint;
  g_generating.store(on);
}

}  // namespace p64::cli
