// AMX for the int8 and bf16 GEMMs (docs/engine.md, "AMX"). The AMX kernels (kernels/amx/) were
// written without AMX hardware and have run only on a borrowed machine (a 16-core Xeon with AMX,
// session 11), so the engine trusts one only after a child of this process has checked it: the int8 kernel
// must give the VNNI kernel's bits (int8 sums are exact, so any difference is a fault); the bf16 kernel,
// whose FP32 sums follow the tile unit's own order, must stay within the error bound of FP32 summation and
// propagate NaN and Inf. In a child, a kernel that faults cannot take the user's process down with it.
#include "amx_support.hpp"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <vector>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "cpu_supports.hpp"
#include "nova/conv/conv.hpp"

namespace nova::conv {

namespace {

// CPU bits and Linux's permission for the tile state, for the AMX kernel of `precision` (int8 or
// bf16) and the AVX-512 kernel that takes the blocks it leaves.
bool amx_tile_permitted(Precision precision, std::string& reason) {
#if defined(__x86_64__) && defined(__linux__)
  const bool int8 = precision == Precision::kInt8;
  if (!lowp_simd_supported(precision)) {
    reason = std::string("no ") + (int8 ? "avx512-vnni" : "avx512-bf16") + " path on this CPU";
    return false;
  }
  // CPUID.(EAX=7,ECX=0):EDX[22,24,25] and XCR0 enabling the tile state (cpu_supports.hpp).
  if (!cpu_supports(CpuFeature::kAmxTile) ||
      !cpu_supports(int8 ? CpuFeature::kAmxInt8 : CpuFeature::kAmxBf16)) {
    reason = std::string("no ") + (int8 ? "AMX-INT8" : "AMX-BF16") + " on this CPU";
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
  (void)precision;
  reason = "AMX is used on x86-64 Linux only";
  return false;
#endif
}

// A random bf16 value 2^e * (1 + m/128), |e| <= 3: products are multiples of 2^-20 below 2^8, so sums
// of up to 512 of them are exact in double.
uint16_t random_bf16(std::mt19937& rng) {
  const uint32_t bits = rng();
  const uint32_t sign = bits & 0x8000u, mantissa = (bits >> 16) & 0x7Fu, exponent = 124u + (bits >> 24) % 7u;
  return static_cast<uint16_t>(sign | (exponent << 7) | mantissa);
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

namespace {

// Runs `check` in a forked child; true when it passed. Otherwise `why` says what happened: `failure`
// and the case the check named, or the signal that ended the child, or why no child could run.
bool checked_in_child(const std::function<bool(std::string*)>& check, const std::string& failure,
                      std::string& why) {
#if defined(__linux__)
  // The child reports a failed check with exit status kCheckFailed and the case through a pipe; any other
  // end (a signal, another exit status) is a fault. A child still running after kSeconds is ended by
  // SIGALRM, so a kernel that hangs is refused too.
  constexpr int kCheckFailed = 3;
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
    if (check(&where)) _exit(0);
    [[maybe_unused]] const ssize_t wrote =
        write(fds[1], where.data(), where.size());  // short: the parent says so
    _exit(kCheckFailed);
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
  if (WIFEXITED(status) && WEXITSTATUS(status) == kCheckFailed)
    why = failure + " (" + where + ")";
  else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    why = "the kernel did not finish within " + std::to_string(kSeconds) + " s in a test process";
  else if (WIFSIGNALED(status))
    why = "the kernel crashed in a test process (signal " + std::to_string(WTERMSIG(status)) + ")";
  else
    why = "the kernel's test process failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  return false;
#else
  why = "kernels are admitted on Linux only";
  (void)check;
  (void)failure;
  return false;
#endif
}

}  // namespace

bool int8_gemm_admitted(Int8GemmFn candidate, Int8GemmFn reference, std::string& why) {
  return checked_in_child([&](std::string* where) { return int8_gemms_agree(candidate, reference, where); },
                          "the kernel differed from the reference", why);
}

bool bf16_gemm_within_bound(Bf16GemmFn candidate, std::string* where) {
  std::mt19937 rng(20261123);
  const float sentinel = -1.0f;
  // One case: C of `candidate` against the exact sums (double), gaps between rows untouched. With
  // `specials`, a NaN in row 3 of A and an Inf in column 7 of B: row 3 must be NaN, column 7 infinite
  // elsewhere, the rest finite and within the bound.
  auto run = [&](int64_t rows, int nv, std::size_t kc, bool specials) -> bool {
    const std::size_t w = static_cast<std::size_t>(16 * nv), lda = kc + 16, ldc = w + 16;
    const auto n = static_cast<std::size_t>(rows);
    std::vector<uint16_t> a(n * lda), b(kc * w);
    for (auto& x : a) x = random_bf16(rng);
    for (auto& x : b) x = random_bf16(rng);
    auto b_at = [&](std::size_t ch, std::size_t j) -> uint16_t& {
      return b[(ch / 2) * (2 * w) + 2 * j + (ch & 1)];
    };
    if (specials) {
      a[3 * lda + 5] = 0x7FC0;  // NaN
      b_at(9, 7) = 0x7F80;      // +Inf
    }
    std::vector<float> c(n * ldc, sentinel);
    candidate(rows, nv, kc, a.data(), lda, b.data(), c.data(), ldc);
    // Any order of the kc exact products' FP32 sums, with at most kc + 2 roundings on the way to an
    // element, errs by at most gamma(kc + 2) * sum |products| (Higham, 3.1); twice that allows for a
    // sum of partial sums.
    const double gamma = 2.0 * static_cast<double>(kc + 2) * 0x1p-24;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < ldc; ++j) {
        const float got = c[i * ldc + j];
        std::string fault;
        if (j >= w) {
          if (std::memcmp(&got, &sentinel, sizeof got) != 0) fault = "written outside the panel's columns";
        } else if (specials && i == 3) {
          if (!std::isnan(got)) fault = "a NaN operand lost";
        } else if (specials && j == 7) {
          if (!std::isinf(got)) fault = "an Inf operand lost";
        } else {
          double exact = 0.0, magnitude = 0.0;
          for (std::size_t ch = 0; ch < kc; ++ch) {
            const double p = static_cast<double>(bf16_to_float(a[i * lda + ch])) * bf16_to_float(b_at(ch, j));
            exact += p;
            magnitude += std::fabs(p);
          }
          if (!(std::fabs(static_cast<double>(got) - exact) <= gamma * magnitude))
            fault = "C = " + std::to_string(got) + ", exact " + std::to_string(exact) + ", bound " +
                    std::to_string(gamma * magnitude);
        }
        if (!fault.empty()) {
          if (where)
            *where = "rows " + std::to_string(rows) + ", " + std::to_string(nv) + " column vector(s), " +
                     std::to_string(kc) + " channels, C[" + std::to_string(i) + "][" + std::to_string(j) +
                     "]: " + fault;
          return false;
        }
      }
    return true;
  };
  for (const std::size_t kc : {std::size_t{32}, std::size_t{64}, std::size_t{96}, std::size_t{512}})
    for (int nv = 1; nv <= kMaxNV; ++nv)
      for (const int64_t rows : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{32},
                                 int64_t{33}, int64_t{48}, int64_t{50}, int64_t{80}})
        if (!run(rows, nv, kc, false)) return false;
  return run(20, 2, 64, true) && run(40, 3, 96, true);
}

bool bf16_gemm_admitted(Bf16GemmFn candidate, std::string& why) {
  return checked_in_child([&](std::string* where) { return bf16_gemm_within_bound(candidate, where); },
                          "the kernel's sums left the FP32 error bound", why);
}

bool amx_int8_supported(std::string* reason) {
  static std::once_flag once;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    if (!amx_tile_permitted(Precision::kInt8, why))
      return;  // the process's permission, inherited by the child
    std::string check;
    ok = int8_gemm_admitted(int8_gemm_amx(), int8_gemm_avx512vnni(), check);
    if (!ok) why = "AMX int8 kernel not used: " + check;
  });
  if (reason) *reason = why;
  return ok;
}

bool amx_bf16_supported(std::string* reason) {
  static std::once_flag once;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    if (!amx_tile_permitted(Precision::kBf16, why)) return;
    std::string check;
    ok = bf16_gemm_admitted(bf16_gemm_amx(), check);
    if (!ok) why = "AMX bf16 kernel not used: " + check;
  });
  if (reason) *reason = why;
  return ok;
}

namespace {

std::atomic<bool> use_model{false};

bool model_int8_admitted(std::string* reason) {
  const bool ok = lowp_simd_supported(Precision::kInt8);
  if (reason) *reason = ok ? "" : "no avx512-vnni for the AMX tile model";
  return ok;
}

bool model_bf16_admitted(std::string* reason) {
  const bool ok = lowp_simd_supported(Precision::kBf16);
  if (reason) *reason = ok ? "" : "no avx512-bf16 for the AMX tile model";
  return ok;
}

}  // namespace

const AmxBackend& amx_backend() {
  static const AmxBackend hardware{&amx_int8_supported,        &amx_bf16_supported,
                                   int8_gemm_amx_in_session(), bf16_gemm_amx_in_session(),
                                   &amx_session_begin,         &amx_session_end};
  static const AmxBackend model{&model_int8_admitted,
                                &model_bf16_admitted,
                                int8_gemm_amx_model_in_session(),
                                bf16_gemm_amx_model_in_session(),
                                &amx_model_session_begin,
                                &amx_model_session_end};
  return use_model.load() ? model : hardware;
}

void use_amx_model_for_tests(bool on) {
  use_model.store(on);
}

}  // namespace nova::conv
