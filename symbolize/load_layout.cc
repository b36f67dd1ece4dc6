#include "symbolize/load_layout.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>

namespace profcpu::symbolize {

LoadLayout ReadLoadLayout(Elf* elf) {
  LoadLayout layout;
  GElf_Ehdr ehdr;
  size_t count = 0;
  if (gelf_getehdr(elf, &ehdr) == nullptr || elf_getphdrnum(elf, &count) != 0 || count > 4096) {
    return layout;
  }
  layout.exec = ehdr.e_type == ET_EXEC;
  bool first = true;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
      continue;
    }
    if (first) {
      uint64_t align = phdr.p_align > 1 ? phdr.p_align : 1;
      layout.first_vaddr = phdr.p_vaddr & ~(align - 1);
      first = false;
    }
    layout.end_vaddr = std::max<uint64_t>(layout.end_vaddr, phdr.p_vaddr + phdr.p_memsz);
    layout.segments.push_back({phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, (phdr.p_flags & PF_X) != 0});
  }
  layout.usable = !first && layout.end_vaddr > layout.first_vaddr;
  return layout;
}

}  // namespace profcpu::symbolize
