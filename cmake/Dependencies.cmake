# Every dependency comes from Debian's packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
pkg_check_modules(LIBZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
# libunwind's remote unwinding, only for the comparison with libdwfl
# (symbolize/libunwind_unwinder.h, bench/unwinders.sh): profcpu does not link it.
pkg_check_modules(LIBUNWIND REQUIRED IMPORTED_TARGET libunwind-generic)
# Headers only: these are loaded at first use (base/shared_library.h), not linked.
pkg_check_modules(LIBCURL REQUIRED IMPORTED_TARGET libcurl)            # SSQP symbol servers
pkg_check_modules(LIBDEBUGINFOD REQUIRED IMPORTED_TARGET libdebuginfod)  # debuginfod servers
find_package(absl REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)      # here, not only where used, so StaticDeps.cmake sees the targets
find_package(Protobuf REQUIRED)
if(PROFCPU_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/StaticDeps.cmake)
