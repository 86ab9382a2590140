#pragma once
// The exit code of a command run with popen, from what pclose returned: a wait status on POSIX
// (-1 when the command did not exit by itself), the code itself on Windows (_pclose).
#ifndef _WIN32
#include <sys/wait.h>
#endif

namespace p64::test {

inline int exit_code(int pclose_status) {
#ifdef _WIN32
  return pclose_status;
#else
  return WIFEXITED(pclose_status) ? WEXITSTATUS(pclose_status) : -1;
#endif
}

}  // namespace p64::test
