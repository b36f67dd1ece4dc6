// symbols.bin, the symbol snapshot inside prof.tar.gz (format in
// symbolize/symbol_snapshot.h). Parsing is total; a snapshot the parser
// accepts serializes to a canonical form that parses to the same table.
#include <string>
#include <vector>

#include "symbolize/symbol_snapshot.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace symbolize = profcpu::symbolize;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  symbolize::SymbolTable table;
  std::vector<symbolize::Module> modules;
  if (!symbolize::ParseSnapshot(profcpu::fuzz::AsText(data, size), &table, &modules).ok()) {
    Check(table.size() == 0 && modules.empty(), "a rejected snapshot changed the outputs");
    return 0;
  }
  std::string canonical = symbolize::SerializeSnapshot(table, modules);
  symbolize::SymbolTable table2;
  std::vector<symbolize::Module> modules2;
  Check(symbolize::ParseSnapshot(canonical, &table2, &modules2).ok(),
        "a serialized snapshot does not parse");
  Check(table2.size() == table.size() && modules2.size() == modules.size(),
        "a snapshot round trip changed its size");
  Check(symbolize::SerializeSnapshot(table2, modules2) == canonical,
        "serialize(parse(serialize(x))) differs from serialize(x)");
  return 0;
}
