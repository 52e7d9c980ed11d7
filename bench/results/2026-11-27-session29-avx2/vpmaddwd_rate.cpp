#include <chrono>
#include <cstdio>
#define R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define MADD(i) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #i "\n"
#define MADDACC(i) "vpmaddwd %%ymm14, %%ymm15, %%ymm12\n vpaddd %%ymm12, %%ymm" #i ", %%ymm" #i "\n"
#define ADD(i) "vpaddd %%ymm15, %%ymm" #i ", %%ymm" #i "\n"
#define FMA(i) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #i "\n"
#define MADD6(i) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #i "\n"
template<int M> double run(long iters){
  auto t0=std::chrono::steady_clock::now();
  for(long n=0;n<iters;++n){
    if constexpr(M==0) asm volatile(R12(MADD) ::: "memory");
    if constexpr(M==1) asm volatile(R12(ADD) ::: "memory");
    if constexpr(M==2) asm volatile(R12(FMA) ::: "memory");
    if constexpr(M==3) asm volatile(MADDACC(0) MADDACC(1) MADDACC(2) MADDACC(3) MADDACC(4) MADDACC(5) ::: "memory");
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
}
int main(){
  long it=50000000;
  for(int r=0;r<2;++r){
  printf("madd %.2f G/s\n", 12*it/run<0>(it)/1e9);
  printf("add  %.2f G/s\n", 12*it/run<1>(it)/1e9);
  printf("fma  %.2f G/s\n", 12*it/run<2>(it)/1e9);
  printf("madd+add pairs %.2f G pairs/s\n", 6*it/run<3>(it)/1e9);
  }
}
