# The layers of libtessera.a as targets (docs/architecture.md, "Layers and targets"). Each layer
# is an OBJECT library compiled with only the include paths its layer may use, so an include that
# points the wrong way (bootstrap/ -> src/) fails to compile; tessera archives the objects of
# every layer into the one static libtessera.a that is installed.
#
#   tessera_add_layer(<target> [SOURCES ...])   an OBJECT library whose objects go into tessera
#   tessera_layer_link(<target> <library>...)   a library the layer's code calls: the layer
#       compiles against it, and tessera (static) carries it to its users' link lines
#
# A layer lists its sources in its folder's CMakeLists.txt (one list per layer), so files that
# are added or split need only that list.

function(tessera_add_layer target)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${target} OBJECT ${ARG_SOURCES})
  tessera_warnings(${target})
  target_sources(tessera PRIVATE $<TARGET_OBJECTS:${target}>)
endfunction()

function(tessera_layer_link target)
  target_link_libraries(${target} PRIVATE ${ARGN})
  # Not through the layer: tessera takes the layer's objects, not a link to it, so the export
  # names the libraries themselves ($<LINK_ONLY:...>) and no internal target.
  target_link_libraries(tessera PRIVATE ${ARGN})
endfunction()
