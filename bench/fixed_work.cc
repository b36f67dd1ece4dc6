// Benchmark workload: a fixed amount of CPU work through a 24-deep call chain
// (so every sample's stack walk has real depth), on one thread. Waits
// DELAY seconds first so a profiler can attach, then prints the work's wall
// and CPU seconds as "wall=S cpu=S".
// Usage: fixed_work ITERATIONS [DELAY_SECONDS]
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
volatile uint64_t g_sink;
void* volatile g_frame;

double Seconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}
}  // namespace

extern "C" __attribute__((noinline)) uint64_t leaf_work(uint64_t x) {
  // A real frame, as a non-leaf function would have (GCC omits it in leaves).
  g_frame = __builtin_frame_address(0);
  for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005u + 1442695040888963407u;
  return x;
}

extern "C" __attribute__((noinline)) uint64_t descend(int depth, uint64_t x) {
  if (depth == 0) return leaf_work(x);
  return descend(depth - 1, x + 1) ^ static_cast<uint64_t>(depth);
}

int main(int argc, char** argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 20000;
  double delay = argc > 2 ? std::atof(argv[2]) : 0.5;
  usleep(static_cast<useconds_t>(delay * 1e6));
  double wall0 = Seconds(CLOCK_MONOTONIC), cpu0 = Seconds(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t x = 1;
  for (long i = 0; i < iterations; ++i) x = descend(24, x);
  g_sink = x;
  std::printf("wall=%.4f cpu=%.4f\n", Seconds(CLOCK_MONOTONIC) - wall0,
              Seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
  return 0;
}
