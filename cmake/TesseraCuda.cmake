# The CUDA backend. TESSERA_ENABLE_CUDA is ON, OFF or AUTO (default): AUTO turns it on when a
# CUDA compiler is found (CMAKE_CUDA_COMPILER, CUDACXX, nvcc on PATH, or /usr/local/cuda/bin/nvcc).
# The result is TESSERA_HAVE_CUDA. The runtime is linked statically and the driver API is reached
# only through cudaGetDriverEntryPoint, so CUDA-enabled binaries still load, and run the host
# backend, on machines without a GPU driver.
set(_tessera_cuda_found OFF)
if(NOT TESSERA_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    find_program(_tessera_nvcc nvcc)
    if(NOT _tessera_nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_tessera_cuda_found ON)
  endif()
endif()
tessera_resolve(CUDA _tessera_cuda_found)

if(TESSERA_HAVE_CUDA)
  # sm_80 (A100) and sm_90 (H100/H200) by default; -DCMAKE_CUDA_ARCHITECTURES=90 for one GPU.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "GPU architectures to compile CUDA code for")
  endif()
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
  # nvcc drives the host compiler of the C++ build, so both halves of a .cu agree on the ABI.
  if(NOT CMAKE_CUDA_HOST_COMPILER)
    set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER} CACHE FILEPATH "Host compiler for nvcc")
  endif()
  enable_language(CUDA)
  # C++20 in device code. CMake 3.25 lists cuda_std_20 but knows no nvcc flag for it
  # (CMAKE_CUDA_STANDARD 20, a cuda_std_20 requirement or CMAKE_CXX_STANDARD_REQUIRED fails to
  # generate; the exported cxx_std_20 applies to C++ files only), so the flag is passed directly;
  # nvcc >= 12 with g++ >= 10 accepts it.
  add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
  find_package(CUDAToolkit REQUIRED)
  # 12.5: the first runtime with cudaGetDriverEntryPointByVersion, through which
  # runtime/cuda_driver.cpp reaches the driver's VMM calls.
  if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.5)
    message(FATAL_ERROR "the CUDA backend needs CUDA >= 12.5 (cudaGetDriverEntryPointByVersion), "
                        "found ${CMAKE_CUDA_COMPILER_VERSION}")
  endif()
  # Device code optimised (the default), or, OFF, compiled to be checked only: cicc at -O1 and
  # ptxas at -O0 still parse, instantiate and assemble every kernel (inline PTX included) for every
  # architecture, in about half of the optimising time (src/ops/broadcast.cpp: 45 s against 23 s
  # of CPU). For builds that run no GPU code: scripts/test turns it off where no GPU is visible.
  option(TESSERA_CUDA_DEVICE_OPT "Optimise CUDA device code (OFF: compile it to check it only)" ON)
  set(_tessera_device_code "optimised")
  if(NOT TESSERA_CUDA_DEVICE_OPT)
    add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Xcicc -O1>"
                        "$<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-O0>")
    set(_tessera_device_code "compiled to be checked only (TESSERA_CUDA_DEVICE_OPT=OFF)")
  endif()
  set(_tessera_sms ${CMAKE_CUDA_ARCHITECTURES})
  list(TRANSFORM _tessera_sms PREPEND "sm_")
  list(JOIN _tessera_sms " " _tessera_sms)
  message(STATUS "tessera: CUDA ${CMAKE_CUDA_COMPILER_VERSION} (${CMAKE_CUDA_COMPILER}), "
                 "compiling for ${_tessera_sms}, cudart static, driver API via "
                 "cudaGetDriverEntryPoint, device code ${_tessera_device_code}")
endif()

# tessera_cuda_shared_ptx([SASS_LAST] <target>...): the targets' CUDA sources are compiled to
# PTX once, for the lowest of CMAKE_CUDA_ARCHITECTURES, and that PTX is embedded (for the driver to
# compile on GPUs with no SASS of their own) and assembled to SASS for every listed architecture,
# or, with SASS_LAST, for the last one only (the GPU test programs and compile checks: a ptxas
# pass saved per object). Tessera's device code has no per-architecture paths (nothing tests
# __CUDA_ARCH__'s value), so the other architectures' PTX would be the same code, and each cicc
# run saved is a large share of an object's time (all_reduce.cpp, beside a running build: cicc
# 77 s, ptxas 152 s per architecture; ptxas stays per architecture). What is given up: the CUDA headers' own paths for newer
# architectures (sm_90's native bf16 arithmetic, say) are not taken in the newer SASS. Off with
# -DTESSERA_CUDA_SHARED_PTX=OFF (PTX per architecture), and for architecture lists other than
# plain numbers ("all", "native", "90a", "80-real"), which are compiled as CMake says.
option(TESSERA_CUDA_SHARED_PTX
       "Compile CUDA code to PTX once (lowest architecture) and to SASS for every architecture" ON)
function(tessera_cuda_shared_ptx)
  cmake_parse_arguments(ARG "SASS_LAST" "" "" ${ARGN})
  if(NOT TESSERA_HAVE_CUDA OR NOT TESSERA_CUDA_SHARED_PTX)
    return()
  endif()
  set(archs ${CMAKE_CUDA_ARCHITECTURES})
  foreach(arch IN LISTS archs)
    if(NOT arch MATCHES "^[0-9]+$")
      return()
    endif()
  endforeach()
  list(GET archs -1 last)
  list(SORT archs COMPARE NATURAL)
  list(GET archs 0 low)
  if(ARG_SASS_LAST)
    set(archs ${last})
  endif()
  set(codes "compute_${low}")
  foreach(arch IN LISTS archs)
    string(APPEND codes "$<COMMA>sm_${arch}")
  endforeach()
  foreach(target IN LISTS ARG_UNPARSED_ARGUMENTS)
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES OFF)
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:--generate-code=arch=compute_${low}$<COMMA>code=[${codes}]>")
  endforeach()
endfunction()
