#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <time.h>
#include <vector>
#include <algorithm>
static double cpu_ms(){ timespec ts{}; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&ts); return ts.tv_sec*1e3+ts.tv_nsec*1e-6; }
int main(){
  std::atomic<bool> stop{false};
  std::thread spinner([&]{ while(!stop.load(std::memory_order_relaxed)) {} });
  for (double run_ms : {0.1, 1.0, 4.0, 10.0}) {
    std::vector<double> per; double c0all=cpu_ms(); auto w0=std::chrono::steady_clock::now(); int reps=int(500/run_ms);
    for(int i=0;i<reps;++i){ double c0=cpu_ms(); auto a=std::chrono::steady_clock::now();
      while(std::chrono::duration<double,std::milli>(std::chrono::steady_clock::now()-a).count()<run_ms){}
      per.push_back(cpu_ms()-c0);}
    double wall=std::chrono::duration<double,std::milli>(std::chrono::steady_clock::now()-w0).count()/reps;
    std::sort(per.begin(),per.end());
    printf("run %.1f ms (2 busy threads): per-run median CPU %.3f ms, loop mean CPU %.3f ms, wall %.3f\n",run_ms,per[per.size()/2],(cpu_ms()-c0all)/reps,wall);
  }
  stop=true; spinner.join();
}
