# Warnings for project code only; TESSERA_WERROR (the ci preset) makes them errors. In .cu files
# the host compiler's warnings go through -Xcompiler and nvcc's own through -Werror all-warnings.
function(tessera_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${TESSERA_WERROR}>>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow,-Wno-unused-parameter>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${TESSERA_WERROR}>>:-Xcompiler=-Werror -Werror=all-warnings>)
endfunction()
