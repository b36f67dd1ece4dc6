// /proc/kallsyms text (symbolize/kallsyms.h). The kernel writes it, but module
// symbol names come from loaded modules and the file can be 15 MB: parsing
// must be total and lookups must name a symbol inside its module.
#include <cstring>

#include "symbolize/kallsyms.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = profcpu::fuzz::AsText(data, size);
  auto kallsyms = profcpu::symbolize::Kallsyms::Parse(text);
  if (!kallsyms.ok()) return 0;
  for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
    uint64_t address;
    std::memcpy(&address, data + i, 8);
    for (uint64_t probe : {address, address + 1, address - 1}) {
      auto match = kallsyms->Lookup(probe);
      if (!match) continue;
      Check(!match->name.empty() && !match->module.empty(), "a kernel symbol without a name");
      Check(match->offset <= probe, "a kernel symbol starts after the address");
    }
  }
  (void)kallsyms->Lookup(0);
  (void)kallsyms->Lookup(UINT64_MAX);
  return 0;
}
