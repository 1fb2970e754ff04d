# `cmake --install`: the embeddable seen stage (urlsieve::dedup), static and shared, its public
# headers, a CMake package (find_package(urlsieve) -> urlsieve::dedup) and a pkg-config file.
#   <prefix>/include/urlsieve/dedup/*.h            (-I<prefix>/include/urlsieve)
#   <prefix>/<libdir>/liburlsieve_dedup.a, .so
#   <prefix>/<libdir>/cmake/urlsieve/               urlsieveConfig.cmake, targets, version
#   <prefix>/<libdir>/pkgconfig/urlsieve.pc
# Every file is relocatable: the package and the .pc file find the prefix from their own location,
# so `cmake --install build --prefix DIR` works for any DIR.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(URLSIEVE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/urlsieve)

install(TARGETS urlsieve_dedup urlsieve_dedup_shared EXPORT urlsieveTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every header of the layer: the public ones include a few internal ones, and a glob cannot
# forget a header a later change adds.
file(GLOB URLSIEVE_DEDUP_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/dedup/*.h)
install(FILES ${URLSIEVE_DEDUP_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/urlsieve/dedup)
file(GLOB URLSIEVE_BASE_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/base/*.h)
install(FILES ${URLSIEVE_BASE_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/urlsieve/base)

install(EXPORT urlsieveTargets NAMESPACE urlsieve:: DESTINATION ${URLSIEVE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/urlsieveConfig.cmake.in
  ${PROJECT_BINARY_DIR}/urlsieveConfig.cmake INSTALL_DESTINATION ${URLSIEVE_CMAKE_DIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/urlsieveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/urlsieveConfig.cmake
              ${PROJECT_BINARY_DIR}/urlsieveConfigVersion.cmake
        DESTINATION ${URLSIEVE_CMAKE_DIR})

# pkg-config: the prefix is computed from ${pcfiledir}, so the file stays right after relocation.
file(RELATIVE_PATH URLSIEVE_PC_TO_PREFIX
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" URLSIEVE_PC_TO_PREFIX "${URLSIEVE_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/urlsieve.pc.in ${PROJECT_BINARY_DIR}/urlsieve.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/urlsieve.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
