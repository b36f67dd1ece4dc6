// Benchmark workload for bench/fold.sh and bench/render.sh: threads that walk
// pseudo-random call chains through 48 distinct functions, 8 to 40 frames
// deep, so a perf profile of it has tens of thousands of distinct stacks, as
// a real service does (a flame graph of one hot loop would flatter any
// renderer). Runs for SECONDS of CPU time of THREADS threads
// (bench/cpu_time_workers.h).
// Usage: busy_stacks [SECONDS] [THREADS]
#include <atomic>
#include <cstdint>

#include "bench/cpu_time_workers.h"

namespace {
std::atomic<bool> g_stop{false};
volatile uint64_t g_sink;
void* volatile g_frame;

using Step = uint64_t (*)(int depth, uint64_t state);
extern Step g_steps[48];

uint64_t Next(uint64_t state) { return state * 6364136223846793005u + 1442695040888963407u; }

uint64_t Burn(uint64_t state) {
  for (int i = 0; i < 20000; ++i) state = Next(state);
  return state;
}

// Calls a function chosen by the state until the chain is `depth` deep.
inline uint64_t Descend(int depth, uint64_t state) {
  g_frame = __builtin_frame_address(0);  // a real frame, for frame-pointer walks
  if (depth <= 0) return Burn(state);
  state = Next(state);
  return g_steps[(state >> 33) % 48](depth - 1, state) ^ 1;
}
}  // namespace

#define STEP(n) \
  extern "C" __attribute__((noinline)) uint64_t busy_step_##n(int depth, uint64_t state) { \
    return Descend(depth, state + n);                                                       \
  }
#define STEP8(a) STEP(a##0) STEP(a##1) STEP(a##2) STEP(a##3) STEP(a##4) STEP(a##5) STEP(a##6) STEP(a##7)
STEP8(1) STEP8(2) STEP8(3) STEP8(4) STEP8(5) STEP8(6)

namespace {
#define REF8(a) busy_step_##a##0, busy_step_##a##1, busy_step_##a##2, busy_step_##a##3, \
                busy_step_##a##4, busy_step_##a##5, busy_step_##a##6, busy_step_##a##7
Step g_steps[48] = {REF8(1), REF8(2), REF8(3), REF8(4), REF8(5), REF8(6)};

void Worker(uint64_t seed) {
  uint64_t state = seed;
  while (!g_stop.load(std::memory_order_relaxed)) {
    state = Next(state);
    g_sink = Descend(8 + static_cast<int>((state >> 40) % 33), state);
  }
}
}  // namespace

int main(int argc, char** argv) {
  return profcpu::bench::RunWorkersForCpuTime(argc, argv, 0x9e3779b97f4a7c15u, Worker, &g_stop);
}
