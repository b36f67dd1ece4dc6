// Benchmark workload for bench/postprocess.sh (f): an interpreter evaluating
// random expression trees, each node kind its own function that evaluates
// its children recursively, 10 to 60 levels deep, so a profile holds tens of
// thousands of distinct deep stacks made differently from busy_stacks'
// (recursion through a dispatcher, branching trees, several kinds of leaf
// work). Runs for SECONDS of CPU time of THREADS threads
// (bench/cpu_time_workers.h).
// Usage: deep_tree [SECONDS] [THREADS]
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/cpu_time_workers.h"

// (Named, not anonymous: the extern "C" node kinds take it.)
namespace deep_tree {
struct Node {
  int kind = 0;
  uint64_t value = 0;
  std::vector<std::unique_ptr<Node>> children;
};
}  // namespace deep_tree
using deep_tree::Node;

namespace {
std::atomic<bool> g_stop{false};
volatile uint64_t g_sink;

constexpr int kKinds = 40;
constexpr int kTreesPerThread = 400;

using Evaluator = uint64_t (*)(const Node& node);
extern Evaluator g_kinds[kKinds];

uint64_t Next(uint64_t& state) {
  state = state * 6364136223846793005u + 1442695040888963407u;
  return state >> 33;
}

// Leaf work of three shapes, so samples land in different leaves.
__attribute__((noinline)) uint64_t LeafHash(uint64_t v) {
  for (int i = 0; i < 3000; ++i) v = (v ^ (v >> 29)) * 0xbf58476d1ce4e5b9u;
  return v;
}
__attribute__((noinline)) uint64_t LeafSum(uint64_t v) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < 4000; ++i) sum += (v + i) * (i | 1);
  return sum;
}
__attribute__((noinline)) uint64_t LeafDivide(uint64_t v) {
  uint64_t x = v | 1;
  for (int i = 1; i < 600; ++i) x = x / static_cast<uint64_t>(i % 7 + 2) + v * i;
  return x;
}

__attribute__((noinline)) uint64_t Eval(const Node& node) {
  return g_kinds[node.kind](node);
}

// Children evaluated in order, combined by the kind.
inline uint64_t EvalKind(const Node& node, int kind) {
  if (node.children.empty()) {
    switch (node.value % 3) {
      case 0: return LeafHash(node.value + kind);
      case 1: return LeafSum(node.value + kind);
      default: return LeafDivide(node.value + kind);
    }
  }
  uint64_t acc = static_cast<uint64_t>(kind);
  for (const auto& child : node.children) acc = acc * 31 + Eval(*child);
  return acc;
}

std::unique_ptr<Node> Build(int depth, uint64_t& state) {
  auto node = std::make_unique<Node>();
  node->kind = static_cast<int>(Next(state) % kKinds);
  node->value = Next(state);
  if (depth == 0) return node;
  const uint64_t roll = Next(state) % 100;
  const int children = roll < 90 ? 1 : roll < 98 ? 2 : 3;
  for (int i = 0; i < children; ++i) node->children.push_back(Build(depth - 1, state));
  return node;
}

void Worker(uint64_t seed) {
  uint64_t state = seed;
  std::vector<std::unique_ptr<Node>> trees;
  for (int i = 0; i < kTreesPerThread; ++i) {
    trees.push_back(Build(10 + static_cast<int>(Next(state) % 51), state));
  }
  while (!g_stop.load(std::memory_order_relaxed)) {
    for (const auto& tree : trees) {
      g_sink = Eval(*tree);
      if (g_stop.load(std::memory_order_relaxed)) break;
    }
  }
}
}  // namespace

#define KIND(n) \
  extern "C" __attribute__((noinline)) uint64_t deep_tree_kind_##n(const Node& node) { \
    return EvalKind(node, n);                                                           \
  }
#define KIND8(a) KIND(a##0) KIND(a##1) KIND(a##2) KIND(a##3) KIND(a##4) KIND(a##5) KIND(a##6) KIND(a##7)
KIND8(1) KIND8(2) KIND8(3) KIND8(4) KIND8(5)

namespace {
#define REF8(a) deep_tree_kind_##a##0, deep_tree_kind_##a##1, deep_tree_kind_##a##2, deep_tree_kind_##a##3, \
                deep_tree_kind_##a##4, deep_tree_kind_##a##5, deep_tree_kind_##a##6, deep_tree_kind_##a##7
Evaluator g_kinds[kKinds] = {REF8(1), REF8(2), REF8(3), REF8(4), REF8(5)};
}  // namespace

int main(int argc, char** argv) {
  return profcpu::bench::RunWorkersForCpuTime(argc, argv, 0x2545f4914f6cdd1du, Worker, &g_stop);
}
