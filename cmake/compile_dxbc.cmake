# cmake -DSOURCE=<kernel.hlsl> -DOUTPUT=<variant.dxbc> -DDEFINES=<A=1,B=2> -DCOMPILER=<vkd3d-compiler> -P ...
# One variant to DXBC (cs_5_0) for Direct3D 12. vkd3d-compiler has no -D or -I: a wrapper source holds the
# defines and includes the kernel, and the compiler runs in kernels/ so the kernel's own includes resolve.
set(wrapper "${OUTPUT}.in.hlsl")
set(text "#define DMLGRAD_D3D12 1\n")
string(REPLACE "," ";" DEFINES "${DEFINES}")
foreach(d IN LISTS DEFINES)
  string(REPLACE "=" " " d "${d}")
  string(APPEND text "#define ${d}\n")
endforeach()
string(APPEND text "#include \"${SOURCE}\"\n")
file(WRITE "${wrapper}" "${text}")
cmake_path(GET SOURCE PARENT_PATH kernel_dir)
# A timeout: vkd3d has been seen to loop for many minutes on some kernels.
execute_process(
  COMMAND "${COMPILER}" -x hlsl -p cs_5_0 -e main -b dxbc-tpf -o "${OUTPUT}" "${wrapper}"
  WORKING_DIRECTORY "${kernel_dir}"
  TIMEOUT 120
  RESULT_VARIABLE result
  ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  file(REMOVE "${OUTPUT}")
  string(REGEX REPLACE "vkd3d:[0-9]+:fixme:[^\n]*\n" "" errors "${errors}")
  message(FATAL_ERROR "HLSL -> DXBC failed (${result}) for ${SOURCE} with ${DEFINES}:\n${errors}")
endif()
