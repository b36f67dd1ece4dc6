# Builds BPF programs into bpftool skeletons, at build time, from source:
#   vmlinux.h  <- bpftool btf dump of the build machine's kernel BTF (never
#                 committed; CO-RE relocates field offsets at load time, so
#                 the program runs on other kernels with BTF too)
#   X.bpf.o    <- clang -target bpf
#   X.skel.h   <- bpftool gen skeleton (the object embedded as bytes)
# Debian packages: clang, llvm, bpftool, libbpf-dev (scripts/setup.sh).
find_program(PROFCPU_BPFTOOL bpftool PATHS /usr/sbin /sbin REQUIRED)
find_program(PROFCPU_BPF_CLANG NAMES clang clang-14 clang-15 clang-16 REQUIRED)
set(PROFCPU_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH
    "Kernel BTF to generate vmlinux.h from (the running kernel's by default)")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64")
  set(PROFCPU_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(PROFCPU_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "BPF programs: no __TARGET_ARCH for ${CMAKE_SYSTEM_PROCESSOR}")
endif()

set(PROFCPU_BPF_GENERATED ${CMAKE_BINARY_DIR}/generated)
set(PROFCPU_VMLINUX_H ${PROFCPU_BPF_GENERATED}/bpf/vmlinux.h)
if(NOT EXISTS ${PROFCPU_VMLINUX_BTF})
  message(FATAL_ERROR "BPF build: ${PROFCPU_VMLINUX_BTF} is missing: this kernel has no BTF "
          "(CONFIG_DEBUG_INFO_BTF). Pass -DPROFCPU_VMLINUX_BTF=<the BTF file of a kernel that "
          "has it>, e.g. a copy of another machine's /sys/kernel/btf/vmlinux.")
endif()
add_custom_command(
  OUTPUT ${PROFCPU_VMLINUX_H}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROFCPU_BPF_GENERATED}/bpf
  COMMAND ${PROFCPU_BPFTOOL} btf dump file ${PROFCPU_VMLINUX_BTF} format c > ${PROFCPU_VMLINUX_H}.tmp
  COMMAND ${CMAKE_COMMAND} -E rename ${PROFCPU_VMLINUX_H}.tmp ${PROFCPU_VMLINUX_H}
  COMMENT "Generating vmlinux.h from ${PROFCPU_VMLINUX_BTF}")

# profcpu_bpf_skeleton(NAME SOURCE HEADERS...): generates
# ${PROFCPU_BPF_GENERATED}/<dir of SOURCE>/NAME.skel.h and a target NAME_skel.
function(profcpu_bpf_skeleton name source)
  file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set(out_dir ${PROFCPU_BPF_GENERATED}/${rel_dir})
  set(object ${out_dir}/${name}.bpf.o)
  set(skeleton ${out_dir}/${name}.skel.h)
  set(deps ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  foreach(header ${ARGN})
    list(APPEND deps ${CMAKE_CURRENT_SOURCE_DIR}/${header})
  endforeach()
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${PROFCPU_BPF_CLANG} -g -O2 -Wall -target bpf -D__TARGET_ARCH_${PROFCPU_BPF_ARCH}
            -I${PROFCPU_BPF_GENERATED}/bpf -I${PROJECT_SOURCE_DIR}
            -c ${CMAKE_CURRENT_SOURCE_DIR}/${source} -o ${object}
    DEPENDS ${deps} ${PROFCPU_VMLINUX_H}
    COMMENT "Compiling BPF program ${source}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skeleton}
    COMMAND ${PROFCPU_BPFTOOL} gen skeleton ${object} name ${name} > ${skeleton}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skeleton}.tmp ${skeleton}
    DEPENDS ${object}
    COMMENT "Generating BPF skeleton ${name}.skel.h")
  add_custom_target(${name}_skel DEPENDS ${skeleton})
endfunction()
