// AMX for the int8 GEMM (docs/engine.md, "AMX"). The AMX kernel (kernels/amx/gemm_int8_amx.cpp) has
// never run on a machine of this project, so the engine trusts it only after a child of this process
// has run it beside the VNNI kernel and found the same bits (int8 sums are exact, so any difference is
// a fault); in a child, a kernel that faults cannot take the user's process down with it.
#include "amx_support.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "nova/conv/conv.hpp"

namespace nova::conv {

namespace {

// CPU bits and Linux's permission for the tile state.
bool amx_tile_permitted(std::string& reason) {
#if defined(__x86_64__) && defined(__linux__)
  if (!lowp_simd_supported(Precision::kInt8)) {
    reason = "no avx512-vnni path on this CPU";
    return false;
  }
  // GCC's cpu model checks CPUID.(EAX=7,ECX=0):EDX[24,25] and that XCR0 enables the tile state.
  if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-int8")) {
    reason = "no AMX-INT8 on this CPU";
    return false;
  }
  // Linux (5.16 and later) grants the 8 KiB of tile data per process, on request.
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    reason = "Linux refused the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM)";
    return false;
  }
  return true;
#else
  reason = "AMX is used on x86-64 Linux only";
  return false;
#endif
}

}  // namespace

bool int8_gemms_agree(Int8GemmFn candidate, Int8GemmFn reference, std::string* where) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> code(1, 255), weight(-127, 127), offset(-40000, 40000);
  std::uniform_real_distribution<float> sc(1e-6f, 1e-3f);
  for (const std::size_t kc : {std::size_t{64}, std::size_t{48}, std::size_t{192}, std::size_t{512}}) {
    for (int nv = 1; nv <= kMaxNV; ++nv) {
      const std::size_t w = static_cast<std::size_t>(16 * nv);
      const std::size_t lda = kc + 16;  // rows apart by more than kc, as the engine's blocks can be
      const std::size_t ldc = w + 16;
      for (const int64_t rows : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{32},
                                 int64_t{48}, int64_t{50}, int64_t{80}}) {
        std::vector<uint8_t> a(static_cast<std::size_t>(rows) * lda);
        std::vector<int8_t> b(kc * w);
        std::vector<int32_t> comp(w);
        std::vector<float> scale(w);
        for (auto& x : a) x = static_cast<uint8_t>(code(rng));
        for (auto& x : b) x = static_cast<int8_t>(weight(rng));
        for (auto& x : comp) x = offset(rng);
        for (auto& x : scale) x = sc(rng);
        std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
        candidate(rows, nv, kc, a.data(), lda, b.data(), comp.data(), scale.data(), got.data(), ldc);
        reference(rows, nv, kc, a.data(), lda, b.data(), comp.data(), scale.data(), want.data(), ldc);
        if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0) {
          if (where)
            *where = "rows " + std::to_string(rows) + ", " + std::to_string(nv) + " column vector(s), " +
                     std::to_string(kc) + " channels";
          return false;
        }
      }
    }
  }
  return true;
}

bool int8_gemm_admitted(Int8GemmFn candidate, Int8GemmFn reference, std::string& why) {
#if defined(__linux__)
  // The child reports a difference with exit status kDiffered and the case through a pipe; any other
  // end (a signal, another exit status) is a fault. A child still running after kSeconds is ended by
  // SIGALRM, so a kernel that hangs is refused too.
  constexpr int kDiffered = 3;
  constexpr unsigned kSeconds = 60;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    why = "no pipe to a test process (pipe failed)";
    return false;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    why = "no process could be started to test the kernel (fork failed)";
    return false;
  }
  if (pid == 0) {  // the child: no destructors, no atexit handlers
    close(fds[0]);
    // A fault ends the child by its signal, whatever handlers the process installed (Python's
    // faulthandler, a sanitizer's report).
    for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGALRM}) std::signal(sig, SIG_DFL);
    alarm(kSeconds);
    std::string where;
    if (int8_gemms_agree(candidate, reference, &where)) _exit(0);
    [[maybe_unused]] const ssize_t wrote = write(fds[1], where.data(), where.size());  // short: the parent says so
    _exit(kDiffered);
  }
  close(fds[1]);
  std::string where;
  char buf[256];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) != 0;) {
    if (got > 0)
      where.append(buf, static_cast<std::size_t>(got));
    else if (errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      why = "the test process of the kernel was lost (waitpid failed)";
      return false;
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kDiffered)
    why = "the kernel differed from the reference (" + where + ")";
  else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    why = "the kernel did not finish within " + std::to_string(kSeconds) + " s in a test process";
  else if (WIFSIGNALED(status))
    why = "the kernel crashed in a test process (signal " + std::to_string(WTERMSIG(status)) + ")";
  else
    why = "the kernel's test process failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  return false;
#else
  why = "kernels are admitted on Linux only";
  (void)candidate;
  (void)reference;
  return false;
#endif
}

bool amx_int8_supported(std::string* reason) {
  static std::once_flag once;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    if (!amx_tile_permitted(why)) return;  // the permission is the process's, inherited by the child
    std::string check;
    ok = int8_gemm_admitted(int8_gemm_amx(), int8_gemm_avx512vnni(), check);
    if (!ok) why = "AMX int8 kernel not used: " + check;
  });
  if (reason) *reason = why;
  return ok;
}

}  // namespace nova::conv
