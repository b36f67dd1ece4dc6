// Fixture for the DWARF unwinder test: a chain of calls compiled WITHOUT
// frame pointers (see symbolize/CMakeLists.txt), so only call frame
// information (.eh_frame) can walk it. The innermost function hands control
// to a callback that captures registers and stack, as a perf sample would.
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

}  // extern "C"
