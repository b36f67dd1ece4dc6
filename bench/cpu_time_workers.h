// The main loop the CPU-bound bench workloads share (busy_stacks, deep_tree):
// THREADS workers (argv[2], default 2) run until they have used SECONDS of
// CPU time together (argv[1], default 10), so a profile of them holds as many
// samples on a busy machine as on a quiet one (perf's cpu-clock samples CPU
// time); they give up after 30 times SECONDS of wall time.
#ifndef PROFCPU_BENCH_CPU_TIME_WORKERS_H_
#define PROFCPU_BENCH_CPU_TIME_WORKERS_H_

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace profcpu::bench {

// Runs worker(seed_step * (i + 1)) on thread i; sets *stop when the budget is
// used and joins them. Returns main's exit code.
inline int RunWorkersForCpuTime(int argc, char** argv, uint64_t seed_step,
                                void (*worker)(uint64_t seed), std::atomic<bool>* stop) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) workers.emplace_back(worker, seed_step * (i + 1));
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(30 * seconds);
  for (;;) {
    timespec used;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
    if (used.tv_sec + used.tv_nsec / 1e9 >= seconds) break;
    if (std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop->store(true);
  for (std::thread& w : workers) w.join();
  return 0;
}

}  // namespace profcpu::bench

#endif  // PROFCPU_BENCH_CPU_TIME_WORKERS_H_
