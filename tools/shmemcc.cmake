# tessera-shmemcc and tessera-shmemcxx: compiler wrappers for OpenSHMEM programs (see
# tessera-shmemcc.in). Two variants from one template: <build>/bin/ uses the build tree's headers
# and libraries; the installed one finds them relative to its own directory (<prefix>/bin/..).
include(GNUInstallDirs)

set(_shmemcc_deps "")
if(TESSERA_HAVE_MPI)
  list(APPEND _shmemcc_deps ${MPI_C_LIBRARIES})
endif()
if(TESSERA_HAVE_FABRIC)
  list(APPEND _shmemcc_deps ${LIBFABRIC_LINK_LIBRARIES})
endif()
if(TESSERA_HAVE_HWLOC)
  list(APPEND _shmemcc_deps ${HWLOC_LINK_LIBRARIES})
endif()
if(TESSERA_HAVE_CUDA)
  list(APPEND _shmemcc_deps $<TARGET_FILE:CUDA::cudart_static> -ldl -lrt)
endif()
# Shared libraries outside the loader's default path (Debian's openmpi/lib, a CUDA toolkit) stay
# findable at run time, as the installed tools keep their link directories as RPATH.
set(_shmemcc_rpaths "")
foreach(_dep IN LISTS _shmemcc_deps)
  if(IS_ABSOLUTE "${_dep}" AND _dep MATCHES "\\.so(\\.[0-9.]+)?$")
    get_filename_component(_dir "${_dep}" DIRECTORY)
    list(APPEND _shmemcc_rpaths "-Wl,-rpath,${_dir}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _shmemcc_rpaths)
list(APPEND _shmemcc_deps ${_shmemcc_rpaths} -lstdc++ -lm -pthread)
list(JOIN _shmemcc_deps " " _shmemcc_deps)

set(TESSERA_SHMEMCC_CC ${CMAKE_C_COMPILER})
set(TESSERA_SHMEMCC_CXX ${CMAKE_CXX_COMPILER})
set(_shmemcc_permissions FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# Build tree.
set(TESSERA_SHMEMCC_TREE "build tree")
# include/tessera too, so that <shmem.h> and <pshmem.h> work as with other implementations.
set(TESSERA_SHMEMCC_CFLAGS "-I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/include/tessera")
set(TESSERA_SHMEMCC_LIBS "$<TARGET_FILE:tessera_shmem> $<TARGET_FILE:tessera> ${_shmemcc_deps}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/tessera-shmemcc.in
               ${CMAKE_CURRENT_BINARY_DIR}/tessera-shmemcc.build.in @ONLY)
# The OpenSHMEM names (oshcc, oshc++, oshcxx, oshCC) are the same script: it picks C or C++ from
# the name it was called by.
set(_shmemcc_names tessera-shmemcc tessera-shmemcxx oshcc oshc++ oshcxx oshCC)
foreach(_name ${_shmemcc_names})
  file(GENERATE OUTPUT ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${_name}
       INPUT ${CMAKE_CURRENT_BINARY_DIR}/tessera-shmemcc.build.in ${_shmemcc_permissions})
endforeach()

# Install tree: paths relative to the script ($prefix is the shell's, set by the script).
set(TESSERA_SHMEMCC_TREE "installed tree")
set(TESSERA_SHMEMCC_CFLAGS
    "-I$prefix/${CMAKE_INSTALL_INCLUDEDIR} -I$prefix/${CMAKE_INSTALL_INCLUDEDIR}/tessera")
set(TESSERA_SHMEMCC_LIBS "$prefix/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:tessera_shmem> \
$prefix/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:tessera> ${_shmemcc_deps}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/tessera-shmemcc.in
               ${CMAKE_CURRENT_BINARY_DIR}/tessera-shmemcc.install.in @ONLY)
foreach(_name ${_shmemcc_names})
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/install/${_name}
       INPUT ${CMAKE_CURRENT_BINARY_DIR}/tessera-shmemcc.install.in ${_shmemcc_permissions})
  install(PROGRAMS ${CMAKE_CURRENT_BINARY_DIR}/install/${_name}
          DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# oshrun: the OpenSHMEM launcher name, over tessera-run in the same directory (-n and --np are
# taken as -np). Not a template: it finds tessera-run next to itself in both trees.
file(GENERATE OUTPUT ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/oshrun
     INPUT ${CMAKE_CURRENT_LIST_DIR}/oshrun.sh ${_shmemcc_permissions})
install(PROGRAMS ${CMAKE_CURRENT_LIST_DIR}/oshrun.sh DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME oshrun)
