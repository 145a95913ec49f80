# `cmake --install` (included by the top-level CMakeLists.txt after the
# runtime and the tools). Components:
#   runtime   the runtime's static libraries, the C API header, the CMake
#             package (find_package(Strata) -> Strata::runtime) and
#             strata-runtime.pc
#   compiler  the tools (tools/CMakeLists.txt): strata-compile, strata-opt,
#             strata-run, strata-bench, strata-dump, strata-minimal-run
#   python    the strata package (python/CMakeLists.txt)
# examples/embed builds against the runtime component out of tree
# (tests/install checks it).
include(CMakePackageConfigHelpers)

set(STRATA_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)

install(EXPORT StrataRuntimeTargets NAMESPACE Strata::
        DESTINATION ${STRATA_CMAKE_PACKAGE_DIR}
        FILE StrataRuntimeTargets.cmake COMPONENT runtime)

# What the C++ compiler driver links beyond the C one (libstdc++ and libm
# here): a C-only consumer names them itself.
set(STRATA_CXX_RUNTIME_LIBRARIES ${CMAKE_CXX_IMPLICIT_LINK_LIBRARIES})
if(CMAKE_C_IMPLICIT_LINK_LIBRARIES)
  list(REMOVE_ITEM STRATA_CXX_RUNTIME_LIBRARIES
       ${CMAKE_C_IMPLICIT_LINK_LIBRARIES})
endif()
list(REMOVE_DUPLICATES STRATA_CXX_RUNTIME_LIBRARIES)

set(STRATA_RUNTIME_EXPORT_NAMES)
set(STRATA_PC_LIBS)
foreach(library ${STRATA_RUNTIME_LIBRARIES})
  get_target_property(_export_name ${library} EXPORT_NAME)
  list(APPEND STRATA_RUNTIME_EXPORT_NAMES ${_export_name})
  string(APPEND STRATA_PC_LIBS " -l${library}")
endforeach()
string(STRIP "${STRATA_PC_LIBS}" STRATA_PC_LIBS)
string(REPLACE ";" " " STRATA_RUNTIME_EXPORT_NAMES
       "${STRATA_RUNTIME_EXPORT_NAMES}")

# Threads::Threads and dl (strata_base, strata_hal), then the C++ ones.
set(STRATA_PC_SYSTEM_LIBS "-pthread")
foreach(library ${CMAKE_DL_LIBS} ${STRATA_CXX_RUNTIME_LIBRARIES})
  string(APPEND STRATA_PC_SYSTEM_LIBS " -l${library}")
endforeach()
# As the config file writes them (one list item each).
string(REPLACE ";" " " STRATA_CXX_RUNTIME_LIBRARIES
       "${STRATA_CXX_RUNTIME_LIBRARIES}")

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/StrataConfig.cmake.in
  ${CMAKE_BINARY_DIR}/package/StrataConfig.cmake
  INSTALL_DESTINATION ${STRATA_CMAKE_PACKAGE_DIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/package/StrataConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/StrataConfig.cmake
              ${CMAKE_BINARY_DIR}/package/StrataConfigVersion.cmake
        DESTINATION ${STRATA_CMAKE_PACKAGE_DIR} COMPONENT runtime)

# Relocatable: the prefix is found from the .pc file's own folder.
file(RELATIVE_PATH STRATA_PC_PREFIX_FROM_PCDIR
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" STRATA_PC_PREFIX_FROM_PCDIR
       "${STRATA_PC_PREFIX_FROM_PCDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/strata-runtime.pc.in
               ${CMAKE_BINARY_DIR}/package/strata-runtime.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/strata-runtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT runtime)
