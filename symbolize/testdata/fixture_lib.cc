// Fixture shared library for the symbolize tests. Built at test time (see
// symbolize/CMakeLists.txt) in two forms: as compiled (.symtab and .dynsym)
// and stripped (.dynsym only). Tests dlopen it, take function addresses with
// dlsym, and turn them into file offsets through the loaded program headers.

namespace fixture_ns {

class Widget {
 public:
  static int Compute(int x);
};

// Exported C++ function: "_ZN10fixture_ns6Widget7ComputeEi" in both tables.
__attribute__((noinline, visibility("default"))) int Widget::Compute(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc * 3 + i;
  return acc;
}

}  // namespace fixture_ns

namespace {

// Local (STB_LOCAL) function: only .symtab names it, so the stripped copy
// must not.
__attribute__((noinline)) int HiddenHelper(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc * 5 - i;
  return acc;
}

}  // namespace

extern "C" {

__attribute__((noinline, visibility("default"))) int fixture_leaf(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc * 7 + i;
  return acc + HiddenHelper(x);
}

__attribute__((visibility("default"))) void* fixture_hidden_helper_address() {
  return reinterpret_cast<void*>(&HiddenHelper);
}

}  // extern "C"

// Two exported functions written in assembly with no .size directive, as
// hand-written assembly often is: the first has st_size 0 and must still own
// the bytes up to the second.
asm(R"(
  .text
  .globl fixture_asm_nosize
  .type fixture_asm_nosize, @function
fixture_asm_nosize:
  nop
  nop
  nop
  nop
  nop
  nop
  nop
  ret
  .globl fixture_asm_next
  .type fixture_asm_next, @function
fixture_asm_next:
  ret
)");
