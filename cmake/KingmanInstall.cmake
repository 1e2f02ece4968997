# Install rules and the exported package: find_package(kingman) gives kingman::kernels and
# kingman::engine (and the kingman program on PATH).
include(CMakePackageConfigHelpers)

install(TARGETS kingman_kernels kingman_engine
        EXPORT kingmanTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY kernels/include/kingman engine/include/kingman
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(KINGMAN_BUILD_APPS)
  install(TARGETS kingman_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(KINGMAN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kingman)
install(EXPORT kingmanTargets NAMESPACE kingman:: DESTINATION ${KINGMAN_CMAKE_DIR})
configure_package_config_file(cmake/kingmanConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/kingmanConfig.cmake
  INSTALL_DESTINATION ${KINGMAN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kingmanConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kingmanConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/kingmanConfigVersion.cmake
        DESTINATION ${KINGMAN_CMAKE_DIR})
