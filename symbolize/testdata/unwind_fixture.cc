// Fixture for the DWARF unwinder test: a chain of calls compiled WITHOUT
// frame pointers (see symbolize/CMakeLists.txt), so only call frame
// information (.eh_frame) can walk it. The innermost function hands control
// to a callback that captures registers and stack, as a perf sample would.
#include <ucontext.h>

extern "C" {

using UnwindCapture = void (*)(void*);

// Each level does some work around the call so it keeps its own frame (no
// tail call, no inlining) and moves the stack pointer by a different amount.
__attribute__((noinline)) int unwind_fixture_c(UnwindCapture capture, void* arg, int depth) {
  volatile char pad[40];
  pad[0] = static_cast<char>(depth);
  capture(arg);
  return pad[0] + 3;
}

__attribute__((noinline)) int unwind_fixture_b(UnwindCapture capture, void* arg, int depth) {
  volatile char pad[72];
  pad[1] = static_cast<char>(depth);
  return unwind_fixture_c(capture, arg, depth + 1) * 5 + pad[1];
}

__attribute__((noinline, visibility("default"))) int unwind_fixture_a(UnwindCapture capture,
                                                                      void* arg) {
  volatile char pad[24];
  pad[2] = 1;
  return unwind_fixture_b(capture, arg, 1) * 7 + pad[2];
}

// Code without frame pointers that uses rbp for data, as libcrypto's SHA-256
// keeps its constants table there: the context captured in the frameless
// innermost function has rbp pointing at the table, and only the CFI of
// unwind_fixture_bp_table (which saved the caller's rbp) restores it.
using UnwindContextCapture = void (*)(const ucontext_t*, void*);

__attribute__((visibility("default"))) extern const unsigned long kUnwindFixtureTable[4] = {0x71374491428a2f98ul, 0xe9b5dba5b5c0fbcful,
    0x59f111f13956c25bul, 0xab1c5ed5923f82a4ul};

__attribute__((noinline)) int unwind_fixture_frameless_capture(UnwindContextCapture capture,
                                                               void* arg) {
  ucontext_t uc;
  getcontext(&uc);
  // The callback's frame lies below the captured stack pointer: the bytes
  // above it stay as they were when the context was taken.
  capture(&uc, arg);
  return static_cast<int>(uc.uc_flags & 1);
}

__attribute__((noinline, visibility("default"))) int unwind_fixture_bp_table(
    UnwindContextCapture capture, void* arg) {
  register const unsigned long* table asm("rbp") = kUnwindFixtureTable;
  asm volatile("" : "+r"(table));
  int result = unwind_fixture_frameless_capture(capture, arg);
  asm volatile("" : : "r"(table));
  return result + 1;
}

}  // extern "C"
