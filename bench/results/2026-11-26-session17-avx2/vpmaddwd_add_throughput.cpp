// Session 17: the integer GEMMs' inner step without VNNI, vpmaddwd into a temporary and vpaddd into a
// sum (8 sums), with and without a vpbroadcastd from memory per step, timed against 8 FMAs (2 per
// cycle). The steps the AVX2 int8 and int16 kernels are made of; their ceiling on this CPU.
//   g++ -O2 -mavx2 -mfma -std=c++17 vpmaddwd_add_throughput.cpp -o tp2 && ./tp2
// Output on that machine (02:37 UTC):
//   8 x (vpmaddwd + vpaddd): 4.56 cycles
//   8 x (vpbroadcastd m32 + vpmaddwd + vpaddd): 4.58 cycles
// so about 1.75 vpmaddwd per cycle (28 int8/int16 MACs per cycle, against FMA's 16).
#include <chrono>
#include <cstdio>
#define F(d) "vfmadd231ps %%ymm0, %%ymm1, %%ymm" #d "\n\t"
#define MA(t, acc) "vpmaddwd %%ymm0, %%ymm1, %%ymm" #t "\n\tvpaddd %%ymm" #t ", %%ymm" #acc ", %%ymm" #acc "\n\t"
#define MB(t, acc) "vpbroadcastd (%0), %%ymm" #t "\n\tvpmaddwd %%ymm" #t ", %%ymm1, %%ymm" #t "\n\tvpaddd %%ymm" #t ", %%ymm" #acc ", %%ymm" #acc "\n\t"
#define CL "xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","xmm14","xmm15"
template <class Fn> double tm(Fn f) { auto t0 = std::chrono::steady_clock::now(); f(); return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
int main() {
  const long n = 100000000;
  int mem[16] = {1, 2, 3};
  double tf = tm([&] { for (long i = 0; i < n; ++i) asm volatile(F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) ::: CL); });
  double cyc = tf / n / 4.0;
  double a = tm([&] { for (long i = 0; i < n; ++i) asm volatile(MA(2,10) MA(3,11) MA(4,12) MA(5,13) MA(6,14) MA(7,15) MA(8,10) MA(9,11) ::: CL); });
  printf("8 x (vpmaddwd + vpaddd): %.2f cycles\n", a / n / cyc);
  double b = tm([&] { for (long i = 0; i < n; ++i) asm volatile(MB(2,10) MB(3,11) MB(4,12) MB(5,13) MB(6,14) MB(7,15) MB(8,10) MB(9,11) :: "r"(mem) : CL); });
  printf("8 x (vpbroadcastd m32 + vpmaddwd + vpaddd): %.2f cycles\n", b / n / cyc);
}
