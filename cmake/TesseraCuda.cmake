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
  set(_tessera_sms ${CMAKE_CUDA_ARCHITECTURES})
  list(TRANSFORM _tessera_sms PREPEND "sm_")
  list(JOIN _tessera_sms " " _tessera_sms)
  message(STATUS "tessera: CUDA ${CMAKE_CUDA_COMPILER_VERSION} (${CMAKE_CUDA_COMPILER}), "
                 "compiling for ${_tessera_sms}, cudart static, driver API via "
                 "cudaGetDriverEntryPoint")
endif()
