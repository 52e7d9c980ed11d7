// Runs a check in a forked child process whose address space is limited: how tests reach the paths of
// a system that will not give memory or threads (std::bad_alloc, thread creation failing) without
// taking that memory from the machine.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace nova::testing {

// The exit status a child gives when it could not read or limit its address space (the test skips).
inline constexpr int kAddressSpaceNotLimited = 3;

// Forks; the child limits its address space to what it uses now plus `room` bytes, runs `check` and
// exits with its status (0: passed). Returns the child's exit status, or -1 when fork or waitpid failed
// or the child did not exit normally. AddressSanitizer reserves the address space the limit is taken
// from: callers skip under it.
template <class Check>
int exit_status_with_address_space_room(rlim_t room, Check check) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    long pages = 0;  // the process's virtual size now, in pages (/proc/self/statm's first field)
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    if (pages <= 0) _exit(kAddressSpaceNotLimited);
    const rlim_t limit_bytes = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + room;
    const rlimit limit{limit_bytes, limit_bytes};
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(kAddressSpaceNotLimited);
    _exit(check());
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace nova::testing

// AddressSanitizer reserves the address space a limit is taken from.
#if defined(__SANITIZE_ADDRESS__)
#define NOVA_UNDER_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOVA_UNDER_ADDRESS_SANITIZER 1
#endif
#endif
