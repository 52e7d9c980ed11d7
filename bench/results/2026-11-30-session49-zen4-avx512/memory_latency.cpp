// Latency of dependent loads over a random cyclic permutation of 64-byte lines in buffers of 1-64 MB
// (4 KiB pages): where it jumps, the data no longer stays in the caches this VM gets (and the TLB).
// Build: g++ -O2 memory_latency.cpp -o memory_latency
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <random>
#include <algorithm>
int main(){
  for (size_t mb : {1,2,4,6,8,12,16,24,32,64}) {
    size_t n = mb*1024*1024/64;
    std::vector<size_t> idx(n); for(size_t i=0;i<n;++i) idx[i]=i;
    std::shuffle(idx.begin(), idx.end(), std::mt19937_64(1));
    std::vector<size_t> next(n*8);
    for(size_t i=0;i<n;++i) next[idx[i]*8]=idx[(i+1)%n]*8;
    size_t p=0; for(size_t i=0;i<n;++i) p=next[p];
    auto t0=std::chrono::steady_clock::now();
    size_t steps=std::max<size_t>(n*4, 2000000);
    for(size_t i=0;i<steps;++i) p=next[p];
    double ns=std::chrono::duration<double,std::nano>(std::chrono::steady_clock::now()-t0).count();
    printf("%3zu MB: %.1f ns per dependent load (%zu)\n", mb, ns/steps, p%2);
  }
}
