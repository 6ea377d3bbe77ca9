# Warnings for project code only; TESSERA_WERROR (the ci preset) makes them errors.
function(tessera_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${TESSERA_WERROR}>>:-Werror>)
endfunction()
