# Finds SuiteSparse CHOLMOD (Debian: libsuitesparse-dev) and defines CHOLMOD::CHOLMOD.
find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
find_library(CHOLMOD_LIBRARY NAMES cholmod)
find_library(SUITESPARSE_CONFIG_LIBRARY NAMES suitesparseconfig)

# CHOLMOD's own version (SuiteSparse 5.12 ships CHOLMOD 3.0.x), read from cholmod_core.h.
if(CHOLMOD_INCLUDE_DIR AND EXISTS "${CHOLMOD_INCLUDE_DIR}/cholmod_core.h")
  foreach(_part MAIN SUB SUBSUB)
    file(STRINGS "${CHOLMOD_INCLUDE_DIR}/cholmod_core.h" _line
         REGEX "#define CHOLMOD_${_part}_VERSION ")
    string(REGEX REPLACE ".*VERSION +([0-9]+).*" "\\1" _v_${_part} "${_line}")
  endforeach()
  set(CHOLMOD_VERSION "${_v_MAIN}.${_v_SUB}.${_v_SUBSUB}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CHOLMOD
  REQUIRED_VARS CHOLMOD_LIBRARY SUITESPARSE_CONFIG_LIBRARY CHOLMOD_INCLUDE_DIR
  VERSION_VAR CHOLMOD_VERSION)

if(CHOLMOD_FOUND AND NOT TARGET CHOLMOD::CHOLMOD)
  add_library(CHOLMOD::CHOLMOD UNKNOWN IMPORTED GLOBAL)
  set_target_properties(CHOLMOD::CHOLMOD PROPERTIES
    IMPORTED_LOCATION "${CHOLMOD_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CHOLMOD_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${SUITESPARSE_CONFIG_LIBRARY}")
endif()
mark_as_advanced(CHOLMOD_INCLUDE_DIR CHOLMOD_LIBRARY SUITESPARSE_CONFIG_LIBRARY)
