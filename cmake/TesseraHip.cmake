# The HIP backend's host side. TESSERA_ENABLE_HIP is ON, OFF (default) or AUTO: AUTO turns it on
# when ROCm's HIP runtime (hip/hip_runtime_api.h and libamdhip64) is found. The result is
# TESSERA_HAVE_HIP.
#
# What a HIP build compiles: the GPU backend (src/gpu/, written once for CUDA and HIP over
# include/tessera/detail/gpu_names.hpp, here with TESSERA_GPU_HIP) with the host C++ compiler
# against ROCm's C API, linked to libamdhip64, which loads without an AMD GPU. Device code (the device API, the
# ops, the launch glue) is not compiled by CMake: Debian's ROCm 5.2 installs hip-lang's package
# config under lib/<triplet>/cmake, where CMake 3.25's HIP language does not look, so
# scripts/hip_compile_check compiles it with hipcc for gfx90a and gfx940 instead.
set(_tessera_hip_found OFF)
if(NOT TESSERA_ENABLE_HIP STREQUAL "OFF")
  find_path(TESSERA_HIP_INCLUDE_DIR hip/hip_runtime_api.h
            HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES include)
  find_library(TESSERA_HIP_LIBRARY amdhip64 HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES lib)
  if(TESSERA_HIP_INCLUDE_DIR AND TESSERA_HIP_LIBRARY)
    set(_tessera_hip_found ON)
  endif()
endif()
tessera_resolve(HIP _tessera_hip_found)

if(TESSERA_HAVE_HIP)
  message(STATUS "tessera: HIP runtime ${TESSERA_HIP_LIBRARY} (headers in "
                 "${TESSERA_HIP_INCLUDE_DIR}); device code is checked by scripts/hip_compile_check")
endif()
