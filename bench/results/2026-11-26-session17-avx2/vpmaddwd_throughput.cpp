// Session 17: instruction throughput on the development machine (AMD EPYC, AVX2), register operands
// only, so that nothing but the execution units counts. Eight independent vfmadd231ps per iteration
// run at two per cycle (FMA's known rate) and give the clock; vpmaddwd is timed against it, alone and
// mixed with FMAs (do they share the two pipes?).
//   g++ -O2 -mavx2 -mfma -std=c++17 vpmaddwd_throughput.cpp -o tp && ./tp
// Output on that machine (02:35 UTC, nothing else running):
//   8 fma/iter: 1.518 ns (taken as 4 cycles: 2.63 GHz)
//   8 vpmaddwd/iter: 3.70 cycles -> 2.16 per cycle
//   4 vpmaddwd + 8 fma/iter: 5.55 cycles (4 if they issue on separate pipes, 8 if they share)
#include <chrono>
#include <cstdio>
#define M(d) "vpmaddwd %%ymm0, %%ymm1, %%ymm" #d "\n\t"
#define F(d) "vfmadd231ps %%ymm0, %%ymm1, %%ymm" #d "\n\t"
template <class Fn> double tm(Fn f) { auto t0 = std::chrono::steady_clock::now(); f(); return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
int main() {
  const long n = 200000000;
  double tf = tm([&] { for (long i = 0; i < n; ++i) asm volatile(F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) ::: "xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9"); });
  double tmd = tm([&] { for (long i = 0; i < n; ++i) asm volatile(M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) ::: "xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9"); });
  double tx = tm([&] { for (long i = 0; i < n; ++i) asm volatile(M(2) M(3) M(4) M(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) ::: "xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13"); });
  // FMA at 2/cycle gives the clock: 8 per iteration = 4 cycles.
  double cyc = tf / n / 4.0;
  printf("8 fma/iter: %.3f ns (taken as 4 cycles: %.2f GHz)\n", tf / n * 1e9, 1e-9 / cyc);
  printf("8 vpmaddwd/iter: %.2f cycles -> %.2f per cycle\n", tmd / n / cyc, 8.0 / (tmd / n / cyc));
  printf("4 vpmaddwd + 8 fma/iter: %.2f cycles (4 if they issue on separate pipes, 8 if they share)\n", tx / n / cyc);
}
