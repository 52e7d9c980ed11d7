// Sequential read rate of buffers of 1-64 MB, best of several passes (one dependent add chain per
// pass, so 78 GB/s is this loop's own limit at this clock, not the cache's).
// Build: g++ -O2 -mavx512f read_bandwidth.cpp -o read_bandwidth
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
int main(){
  for (size_t mb : {1,2,3,4,6,8,12,16,24,32,64}) {
    size_t n = mb*1024*1024/4;
    float* a=(float*)aligned_alloc(64,n*4); for(size_t i=0;i<n;++i) a[i]=1.0f;
    double best=1e30; __m512 acc=_mm512_setzero_ps();
    for(int r=0;r<std::max<int>(5,(int)(256/mb));++r){
      auto t0=std::chrono::steady_clock::now();
      for(size_t i=0;i<n;i+=64){ acc=_mm512_add_ps(acc,_mm512_load_ps(a+i)); acc=_mm512_add_ps(acc,_mm512_load_ps(a+i+16)); acc=_mm512_add_ps(acc,_mm512_load_ps(a+i+32)); acc=_mm512_add_ps(acc,_mm512_load_ps(a+i+48)); }
      double ns=std::chrono::duration<double,std::nano>(std::chrono::steady_clock::now()-t0).count(); best=std::min(best,ns);
    }
    float s[16]; _mm512_storeu_ps(s,acc);
    printf("%3zu MB: %.1f GB/s read (%g)\n", mb, n*4.0/best, s[0]>0?1.0:0.0);
    free(a);
  }
}
