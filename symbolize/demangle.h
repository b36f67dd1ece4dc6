// Turns a mangled symbol name into the form perf prints: C++ names demangled
// with their parameter lists ("ns::Foo::bar(int)"), anything else unchanged.
#ifndef PROFCPU_SYMBOLIZE_DEMANGLE_H_
#define PROFCPU_SYMBOLIZE_DEMANGLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

// Names longer than this are returned as they are: the demangler recurses on
// the input's structure, and symbol names come from files the target controls.
inline constexpr size_t kMaxDemangleLength = 16 * 1024;

// Demangles Itanium C++ ABI names ("_Z..."), keeping a "@VERSION" suffix (as
// ".symtab" of a static link may carry) after the demangled name. Returns
// `name` unchanged when it is not mangled or does not demangle.
std::string Demangle(absl::string_view name);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DEMANGLE_H_
