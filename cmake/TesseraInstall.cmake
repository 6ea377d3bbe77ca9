# `cmake --install <build> [--prefix P]`: headers, the static library, the tools, a CMake package
# (tesseraConfig.cmake, its version file, the exported targets tessera::tessera, tessera::device
# and, when built, tessera::shmem) and a pkg-config file. Included last by the top-level
# CMakeLists.txt, once every target exists.
#
# libtessera.a is static, so its private dependencies (MPI, libfabric, hwloc, the static CUDA
# runtime) travel with it: CMake exports them as $<LINK_ONLY:...> and tesseraConfig.cmake finds
# them again; tessera.pc lists them in Libs.private for `pkg-config --static`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
set(TESSERA_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Headers: the host API (include/tessera) and the device side (device/tessera) meet in
# <prefix>/include/tessera, as they do on the build tree's two include paths.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessera ${PROJECT_SOURCE_DIR}/device/tessera
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.cuh")

set_target_properties(tessera PROPERTIES EXPORT_NAME tessera)
set_target_properties(tessera_device PROPERTIES EXPORT_NAME device)
set(_tessera_export_targets tessera tessera_device)
if(TARGET tessera_shmem)
  set_target_properties(tessera_shmem PROPERTIES EXPORT_NAME shmem)
  list(APPEND _tessera_export_targets tessera_shmem)
endif()
install(TARGETS ${_tessera_export_targets} EXPORT tesseraTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tesseraTargets NAMESPACE tessera:: FILE tesseraTargets.cmake
        DESTINATION ${TESSERA_INSTALL_CMAKEDIR})

# Tools. The MPI library sits outside the default search path on some systems (Debian's
# openmpi/lib), so installed binaries keep the link-time directories as their RPATH.
set(_tessera_tools tessera-run tessera-info)
if(TARGET tessera-bench)
  list(APPEND _tessera_tools tessera-bench)
endif()
set_target_properties(${_tessera_tools} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ${_tessera_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# --- CMake package -------------------------------------------------------------------------
# What the config file needs to know about this build: which dependencies libtessera.a carries.
set(TESSERA_CONFIG_HAVE_MPI ${TESSERA_HAVE_MPI})
set(TESSERA_CONFIG_HAVE_FABRIC ${TESSERA_HAVE_FABRIC})
set(TESSERA_CONFIG_HAVE_HWLOC ${TESSERA_HAVE_HWLOC})
set(TESSERA_CONFIG_HAVE_CUDA ${TESSERA_HAVE_CUDA})
set(TESSERA_CONFIG_MPI_C_LIBRARIES "${MPI_C_LIBRARIES}")
set(TESSERA_CONFIG_CUDA_ROOT "")
if(TESSERA_HAVE_CUDA)
  get_filename_component(TESSERA_CONFIG_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/tesseraConfigVersion.cmake
        DESTINATION ${TESSERA_INSTALL_CMAKEDIR})

# --- pkg-config ----------------------------------------------------------------------------
# tessera_pc_libs(<out> <libraries...>): -L/-l flags for full library paths, others unchanged.
function(tessera_pc_libs out)
  set(flags "")
  foreach(lib IN LISTS ARGN)
    if(IS_ABSOLUTE "${lib}")
      get_filename_component(dir "${lib}" DIRECTORY)
      get_filename_component(name "${lib}" NAME_WE)
      string(REGEX REPLACE "^lib" "" name "${name}")
      list(APPEND flags "-L${dir}" "-l${name}")
    elseif(lib MATCHES "^-")
      list(APPEND flags "${lib}")
    else()
      list(APPEND flags "-l${lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# Libs.private names the dependencies' own shared libraries rather than Requires.private on
# their modules: `pkg-config --static libfabric` (Debian) asks for psm2, rdmacm and other static
# archives that are not installed, while libtessera.a only needs -lfabric.
set(_tessera_pc_private "")
if(TESSERA_HAVE_MPI)
  tessera_pc_libs(_mpi ${MPI_C_LIBRARIES})
  string(APPEND _tessera_pc_private " ${_mpi}")
endif()
if(TESSERA_HAVE_FABRIC)
  list(JOIN LIBFABRIC_LDFLAGS " " _fabric)
  string(APPEND _tessera_pc_private " ${_fabric}")
endif()
if(TESSERA_HAVE_HWLOC)
  list(JOIN HWLOC_LDFLAGS " " _hwloc)
  string(APPEND _tessera_pc_private " ${_hwloc}")
endif()
set(TESSERA_PC_CFLAGS "")
if(TESSERA_HAVE_CUDA)
  string(APPEND _tessera_pc_private " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
  set(TESSERA_PC_CFLAGS " -DTESSERA_HAVE_CUDA=1")
endif()
string(APPEND _tessera_pc_private " -pthread")
string(STRIP "${_tessera_pc_private}" TESSERA_PC_LIBS_PRIVATE)
# Relocatable: the prefix is found from the .pc file's own place, so `--prefix` at install time
# needs no reconfigure.
file(RELATIVE_PATH TESSERA_PC_PREFIX_FROM_PCFILEDIR
     /tessera_prefix/${TESSERA_INSTALL_PKGCONFIGDIR} /tessera_prefix)
string(REGEX REPLACE "/$" "" TESSERA_PC_PREFIX_FROM_PCFILEDIR "${TESSERA_PC_PREFIX_FROM_PCFILEDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in ${PROJECT_BINARY_DIR}/cmake/tessera.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tessera.pc DESTINATION ${TESSERA_INSTALL_PKGCONFIGDIR})
if(TARGET tessera_shmem)
  get_target_property(TESSERA_SHMEM_LIB_NAME tessera_shmem OUTPUT_NAME)
  if(NOT TESSERA_SHMEM_LIB_NAME)
    set(TESSERA_SHMEM_LIB_NAME tessera_shmem)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera-shmem.pc.in
                 ${PROJECT_BINARY_DIR}/cmake/tessera-shmem.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/tessera-shmem.pc
          DESTINATION ${TESSERA_INSTALL_PKGCONFIGDIR})
endif()
