# PROFCPU_STATIC_DEPS: link into profcpu what Debian ships as static archives
# (Abseil, libbpf, elfutils' libdw and libelf with their compressors, zstd,
# zlib, protobuf, libstdc++ and libgcc). Every command paid at start-up for
# each shared library it linked: with 51 of them, `profcpu fold` on a one-line
# input spent 40% of its ~6 ms in ld.so's symbol relocations and half in the
# kernel mapping the files. glibc stays shared (static glibc breaks dlopen and
# NSS); libcurl and libdebuginfod are loaded at first use
# (base/shared_library.h) because of the dozens of libraries they pull in.
#
# Included by Dependencies.cmake once the packages are found: it rewrites their
# imported targets in place, so the libraries' CMakeLists keep linking
# absl::strings, PkgConfig::LIBDW, ZLIB::ZLIB, protobuf::libprotobuf as before.
#
# Sanitizer, fuzz and TSan builds stay dynamic: their runtimes interpose
# malloc and friends and expect the shared libstdc++ (static C++ runtimes
# under ASan/TSan give false reports or crash at start-up).
option(PROFCPU_STATIC_DEPS "Link Debian's static archives of the dependencies into profcpu" ON)
if(PROFCPU_SANITIZE OR PROFCPU_FUZZ OR PROFCPU_TSAN)
  set(PROFCPU_STATIC_DEPS OFF)
endif()

# -static-libstdc++ and -static-libgcc for profcpu's own executables (profcpu
# and everything linking profcpu_base, which links this target); the test
# fixtures keep the shared libstdc++ the tests expect to see in their stacks.
add_library(profcpu_static_runtime INTERFACE)
if(NOT PROFCPU_STATIC_DEPS)
  return()
endif()
target_link_options(profcpu_static_runtime INTERFACE -static-libstdc++ -static-libgcc)

# The archives linked statically, by library name; what pkg-config lists
# beyond these (glibc's pthread) stays as given.
set(PROFCPU_STATIC_ARCHIVES elf dw bpf zstd z lzma bz2)

# OUT = an IMPORTED STATIC target for lib<NAME>.a (created once). Searched
# without a cache entry so that switching the option never finds a stale path.
function(_profcpu_static_archive name out)
  set(target profcpu_static::${name})
  if(NOT TARGET ${target})
    unset(archive)
    find_library(archive NAMES lib${name}.a NO_CACHE)
    if(NOT archive)
      message(FATAL_ERROR "PROFCPU_STATIC_DEPS: lib${name}.a not found (scripts/setup.sh "
        "installs the -dev packages that ship it; or configure with -DPROFCPU_STATIC_DEPS=OFF)")
    endif()
    add_library(${target} STATIC IMPORTED)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${archive})
  endif()
  set(${out} ${target} PARENT_SCOPE)
endfunction()

# PkgConfig::PREFIX links the module's archive, which depends on the others
# `pkg-config --static` lists for it (libdw: bz2, elf, z, lzma, pthread).
# Targets rather than paths, so that CMake orders every archive before the
# ones it needs wherever the modules meet on one link line.
function(_profcpu_static_pkg prefix)
  set(items)
  foreach(name IN LISTS ${prefix}_STATIC_LIBRARIES)
    if(name IN_LIST PROFCPU_STATIC_ARCHIVES)
      _profcpu_static_archive(${name} item)
      list(APPEND items ${item})
    else()
      list(APPEND items ${name})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES items)
  list(POP_FRONT items own)
  if("-pthread" IN_LIST ${prefix}_STATIC_LDFLAGS_OTHER)
    list(APPEND items Threads::Threads)
  endif()
  set_property(TARGET ${own} APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${items})
  set_target_properties(PkgConfig::${prefix} PROPERTIES INTERFACE_LINK_LIBRARIES ${own})
endfunction()

foreach(prefix LIBELF LIBDW LIBZSTD LIBBPF)
  _profcpu_static_pkg(${prefix})
endforeach()

# An imported target found by a Find module (ZLIB::ZLIB, protobuf::libprotobuf):
# every configuration's location becomes lib<NAME>.a.
function(_profcpu_static_location target name)
  unset(archive)
  find_library(archive NAMES lib${name}.a NO_CACHE)
  if(NOT archive)
    message(FATAL_ERROR "PROFCPU_STATIC_DEPS: lib${name}.a not found")
  endif()
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${archive})
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  foreach(config IN LISTS configs)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION_${config} ${archive})
  endforeach()
endfunction()

_profcpu_static_location(ZLIB::ZLIB z)
_profcpu_static_location(protobuf::libprotobuf protobuf)
# libprotobuf.a's gzip streams need zlib (`pkg-config --static protobuf`).
set_property(TARGET protobuf::libprotobuf APPEND PROPERTY INTERFACE_LINK_LIBRARIES ZLIB::ZLIB)

# Debian's Abseil package exports only its shared libraries: each absl::X
# imported as SHARED at libabsl_X.so.<version>. Its libabsl-dev also ships the
# same libraries as libabsl_X.a, built from the same tree: pointing each target
# there links them statically. The targets' own dependencies (absl::strings on
# absl::base, ...) stay, so CMake still orders them as static archives need.
get_directory_property(imported IMPORTED_TARGETS)
foreach(target IN LISTS imported)
  if(NOT target MATCHES "^absl::")
    continue()
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "SHARED_LIBRARY")
    continue()  # header-only parts
  endif()
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  foreach(config IN LISTS configs)
    get_target_property(shared ${target} IMPORTED_LOCATION_${config})
    string(REGEX REPLACE "\\.so(\\.[0-9]+)*$" ".a" static_path "${shared}")
    if(NOT EXISTS "${static_path}")
      message(FATAL_ERROR "PROFCPU_STATIC_DEPS: ${static_path} not found for ${target}")
    endif()
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION_${config} ${static_path})
    set_property(TARGET ${target} PROPERTY IMPORTED_SONAME_${config})
  endforeach()
endforeach()
