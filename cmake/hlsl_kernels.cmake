# HLSL compute kernels -> SPIR-V (glslc) -> one generated C++ file embedding every variant plus the registry
# (src/gpu/kernel_registry.h). Outputs stay in the build tree; no shader file is read at run time.
#
#   dmlgrad_hlsl_kernel(<list> NAME <id> SOURCE <file.hlsl> [WORKGROUP_SIZE <n>] [DEFINES A=1 ...])
#       one variant: a custom command running glslc with -D flags; a depfile (-MD) makes an edit of an included
#       .hlsli rebuild exactly its users. Appends the variant to <list>.
#   dmlgrad_embed_kernels(<target> <list>)
#       writes the registry .cpp (rewritten only when the variant list changes) and adds it to <target>.
#   With DMLGRAD_KERNELS_FROM set, every compiled kernel file is copied from that build tree instead.
#
# glslc's HLSL front end (glslang) traps, all seen: keep --target-env=vulkan1.1 (1.2/1.3 break buffer access);
# give every resource [[vk::binding(i, 0)]]; no int64_t or float16_t; no spec constants in [numthreads].
find_program(DMLGRAD_GLSLC glslc REQUIRED DOC "glslc (shaderc), compiles the HLSL kernels to SPIR-V")

# Direct3D 12: the same sources to DXBC with vkd3d-compiler (-DDMLGRAD_D3D12=1), only where it is on PATH.
# The variants it can compile (kernels/README.md says why the others cannot); `make dxbc` copies their DXBC
# to kernels/dxbc/.
find_program(DMLGRAD_VKD3D_COMPILER vkd3d-compiler DOC "vkd3d-compiler (vkd3d 1.17), HLSL to DXBC; optional")
# One pattern a family: a CMake regular expression holds at most nine groups.
set(DMLGRAD_D3D12_VARIANTS
    "^relu_grad_"
    "^clip_grad_"
    "^maxpool_grad_(twopass|cells|k2s2|select)_"
    "^slice_grad_(b|rowends_b|walk_b|walk_lines_b|walk_lines_gaps_b|spans_b)(8|16|32|64)$"
    "^resample_grad_block_"
    "^resample_grad_(nearest|linear)_f(16|32)(_strips(_taps[0-9])?|_walk|_walk_words|_walk_words_ahead|_walk_sparse|_lines_taps[0-9]|_lines_taps[0-9]_words|_lines_bounds|_rows|_planes|_fractions_steps[0-9]|_elements)?$")

function(dmlgrad_is_d3d12_variant name out_var)
  foreach(pattern IN LISTS DMLGRAD_D3D12_VARIANTS)
    if(name MATCHES "${pattern}")
      set(${out_var} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out_var} FALSE PARENT_SCOPE)
endfunction()

# make test's sanitizer build compiles no kernel: glslc's and vkd3d-compiler's output does not depend on the C++
# compiler, so it copies the Release build's (which make test builds first) and saves minutes on two cores.
set(DMLGRAD_KERNELS_FROM "" CACHE PATH "A build tree of this source whose compiled kernels this build copies")

set(DMLGRAD_KERNEL_DIR "${CMAKE_CURRENT_LIST_DIR}/../kernels")
cmake_path(NORMAL_PATH DMLGRAD_KERNEL_DIR)

function(dmlgrad_hlsl_kernel list_var)
  cmake_parse_arguments(PARSE_ARGV 1 K "" "NAME;SOURCE;WORKGROUP_SIZE" "DEFINES")
  if(NOT K_NAME OR NOT K_SOURCE)
    message(FATAL_ERROR "dmlgrad_hlsl_kernel: NAME and SOURCE are required")
  endif()
  if(NOT K_NAME MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "dmlgrad_hlsl_kernel: NAME '${K_NAME}' must be a lower-case identifier")
  endif()
  if(NOT K_WORKGROUP_SIZE)
    set(K_WORKGROUP_SIZE 256)
  endif()
  set(source "${DMLGRAD_KERNEL_DIR}/${K_SOURCE}")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/kernels")
  set(output "${out_dir}/${K_NAME}.spv.inc")
  set(depfile "${out_dir}/${K_NAME}.d")
  set(defines "-DWORKGROUP_SIZE=${K_WORKGROUP_SIZE}")
  foreach(d IN LISTS K_DEFINES)
    list(APPEND defines "-D${d}")
  endforeach()
  if(NOT DMLGRAD_KERNELS_FROM)  # else dmlgrad_kernels_target copies it
    add_custom_command(
      OUTPUT "${output}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}"
      COMMAND "${DMLGRAD_GLSLC}" -x hlsl -fshader-stage=compute -fentry-point=main --target-env=vulkan1.1 -O -Werror
              ${defines} -I "${DMLGRAD_KERNEL_DIR}" -MD -MF "${depfile}" -MT "${output}" -mfmt=num
              -o "${output}" "${source}"
      MAIN_DEPENDENCY "${source}"
      DEPFILE "${depfile}"
      COMMENT "HLSL -> SPIR-V ${K_NAME}"
      VERBATIM)
  endif()
  set(${list_var} ${${list_var}} "${K_NAME}:${K_WORKGROUP_SIZE}:${output}" PARENT_SCOPE)
  dmlgrad_is_d3d12_variant(${K_NAME} d3d12)
  if(d3d12)
    set(d3d12_defines "WORKGROUP_SIZE=${K_WORKGROUP_SIZE};${K_DEFINES}")
    string(REPLACE ";" "," d3d12_defines "${d3d12_defines}")  # a ; would split the argument
    set_property(GLOBAL APPEND PROPERTY DMLGRAD_DXBC_VARIANTS "${K_NAME}|${K_SOURCE}|${d3d12_defines}")
    if(DMLGRAD_VKD3D_COMPILER AND NOT DMLGRAD_KERNELS_FROM)
      dmlgrad_dxbc_kernel(${K_NAME} "${source}" "${d3d12_defines}")
    endif()
  endif()
endfunction()

# One variant's DXBC; every kernel header is a dependency (vkd3d-compiler writes no depfile).
function(dmlgrad_dxbc_kernel name source defines)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/kernels/${name}.dxbc")
  file(GLOB headers CONFIGURE_DEPENDS "${DMLGRAD_KERNEL_DIR}/*.hlsli" "${DMLGRAD_KERNEL_DIR}/interface/*.h")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/kernels"
    COMMAND "${CMAKE_COMMAND}" "-DSOURCE=${source}" "-DOUTPUT=${output}" "-DDEFINES=${defines}"
            "-DCOMPILER=${DMLGRAD_VKD3D_COMPILER}" -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/compile_dxbc.cmake"
    DEPENDS "${source}" ${headers} "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/compile_dxbc.cmake"
    COMMENT "HLSL -> DXBC ${name}"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY DMLGRAD_DXBC_OUTPUTS "${output}")
endfunction()

# Writes the D3D12 variant list (name|source|defines) for cmake/dxbc_stamp.cmake, and the `dxbc` target: builds
# every D3D12 variant, copies it to kernels/dxbc/ (committed, for builds without vkd3d) and rewrites the stamp.
function(dmlgrad_dxbc_target)
  get_property(variants GLOBAL PROPERTY DMLGRAD_DXBC_VARIANTS)
  list(JOIN variants "\n" text)
  set(DMLGRAD_DXBC_MANIFEST "${CMAKE_BINARY_DIR}/dxbc_variants.txt" CACHE INTERNAL "")
  file(CONFIGURE OUTPUT "${DMLGRAD_DXBC_MANIFEST}" CONTENT "${text}\n")
  get_property(outputs GLOBAL PROPERTY DMLGRAD_DXBC_OUTPUTS)
  if(outputs)
    add_custom_target(dxbc
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${DMLGRAD_KERNEL_DIR}/dxbc"
      COMMAND "${CMAKE_COMMAND}" -E copy ${outputs} "${DMLGRAD_KERNEL_DIR}/dxbc/"
      COMMAND "${CMAKE_COMMAND}" -DMODE=write "-DMANIFEST=${DMLGRAD_DXBC_MANIFEST}" "-DKERNEL_DIR=${DMLGRAD_KERNEL_DIR}"
              -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/dxbc_stamp.cmake"
      DEPENDS ${outputs}
      COMMENT "DXBC of the D3D12 variants -> kernels/dxbc/"
      VERBATIM)
  endif()
endfunction()

function(dmlgrad_embed_kernels target list_var)
  set(arrays "")
  set(entries "")
  set(outputs "")
  foreach(kernel IN LISTS ${list_var})
    string(REPLACE ":" ";" parts "${kernel}")
    list(GET parts 0 name)
    list(GET parts 1 workgroup)
    list(GET parts 2 output)
    list(APPEND outputs "${output}")
    string(APPEND arrays "constexpr uint32_t k_${name}[] = {\n#include \"${output}\"\n};\n")
    string(APPEND entries "    {\"${name}\", k_${name}, ${workgroup}},\n")
  endforeach()
  set(registry "${CMAKE_CURRENT_BINARY_DIR}/kernels/kernel_binaries.cpp")
  file(CONFIGURE OUTPUT "${registry}" @ONLY CONTENT [[
// Generated by cmake/hlsl_kernels.cmake: every kernel variant as SPIR-V words. Do not edit.
#include <cstdint>

#include "gpu/kernel_registry.h"

namespace dmlgrad {
namespace {
@arrays@
const KernelBinary kKernels[] = {
@entries@};
}  // namespace

std::span<const KernelBinary> kernel_binaries() { return kKernels; }

}  // namespace dmlgrad
]])
  # The SPIR-V files are listed as sources so that they are built before the registry is compiled.
  target_sources(${target} PRIVATE "${registry}" ${outputs})
  set_property(GLOBAL APPEND PROPERTY DMLGRAD_KERNEL_FILES ${outputs})
endfunction()

# Embeds the DXBC of every D3D12 variant in <target>: the build tree's where vkd3d-compiler is on PATH, else the
# committed kernels/dxbc/.
function(dmlgrad_embed_dxbc target)
  get_property(variants GLOBAL PROPERTY DMLGRAD_DXBC_VARIANTS)
  if(DMLGRAD_VKD3D_COMPILER)
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/kernels")
  else()
    set(dir "${DMLGRAD_KERNEL_DIR}/dxbc")
  endif()
  set(inputs "")
  foreach(v IN LISTS variants)
    string(REGEX REPLACE "\\|.*" "" name "${v}")
    list(APPEND inputs "${dir}/${name}.dxbc")
  endforeach()
  set(output "${CMAKE_CURRENT_BINARY_DIR}/kernels/dxbc_binaries.cpp")
  target_sources(${target} PRIVATE "${output}")
  set_property(GLOBAL APPEND PROPERTY DMLGRAD_KERNEL_FILES "${output}")
  if(DMLGRAD_KERNELS_FROM)  # dmlgrad_kernels_target copies it
    return()
  endif()
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DMANIFEST=${DMLGRAD_DXBC_MANIFEST}" "-DDXBC_DIR=${dir}" "-DOUTPUT=${output}"
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_dxbc.cmake"
    DEPENDS ${inputs} "${DMLGRAD_DXBC_MANIFEST}" "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_dxbc.cmake"
    COMMENT "DXBC -> ${output}"
    VERBATIM)
endfunction()

# The `kernels` target: every compiled kernel file this build embeds, for a build that copies them
# (DMLGRAD_KERNELS_FROM). Such a build copies them all from the same places in that tree, in one command (a process
# a file cost a minute of CPU time).
function(dmlgrad_kernels_target)
  get_property(files GLOBAL PROPERTY DMLGRAD_KERNEL_FILES)
  if(DMLGRAD_KERNELS_FROM)
    set(sources "")
    foreach(output IN LISTS files)
      file(RELATIVE_PATH relative "${CMAKE_BINARY_DIR}" "${output}")
      list(APPEND sources "${DMLGRAD_KERNELS_FROM}/${relative}")
    endforeach()
    add_custom_command(
      OUTPUT ${files}
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/kernels"
      COMMAND "${CMAKE_COMMAND}" -E copy ${sources} "${CMAKE_CURRENT_BINARY_DIR}/kernels"
      DEPENDS ${sources}
      COMMENT "compiled kernels copied from ${DMLGRAD_KERNELS_FROM}"
      VERBATIM)
  endif()
  add_custom_target(kernels DEPENDS ${files})
endfunction()
