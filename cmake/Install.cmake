# `cmake --install`: the embeddable seen stage (urlsieve::dedup), static and shared, its public
# headers (the list below), a CMake package (find_package(urlsieve) -> urlsieve::dedup) and a
# pkg-config file.
#   <prefix>/include/urlsieve/{base,url,dedup}/...  (-I<prefix>/include/urlsieve)
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
# The public API only, as an explicit list: the seen set (SeenSet), the URL-level SeenFilter, the
# content-seen sets and their indexes, the canonicalizer, Status/Result, the C header, and the
# small value types they name. Everything else in dedup/ and base/ (the Bloom filter's internals,
# the indexes' packed buckets, the exact store, the state directory, the SQLite wrapper, key_hash.h
# with its <xxhash.h>) is internal: an embedder cannot come to depend on it, and it may change in
# any release. A public header includes only headers of this list; scripts/test_install.sh checks
# the installed list exactly and compiles each header on its own against the install.
set(URLSIEVE_PUBLIC_HEADERS
  base/status.h                    # Status, Result<T>
  base/encoding/text_encoding.h    # TextEncoding (UrlCanonicalizer::Resolve's document encoding)
  url/url_canonicalizer.h          # UrlCanonicalizer, CanonicalizeOptions
  dedup/bloom/key_hash_value.h     # KeyHash, the digest SeenSet takes with each key
  dedup/state/state_identity.h     # StateIdentity (SeenStats::identity)
  dedup/seen_filter.h              # SeenFilter: canonicalizer + SeenSet
  dedup/seen_set.h                 # SeenSet, SeenStats, SeenNotice
  dedup/urlsieve.h                 # the C API
  # The content-seen test (docs/features/content-seen.md): fingerprints, the indexes, the sets.
  dedup/content/content_seen_set.h        # ContentSeenSet, ContentFingerprint, the digests
  dedup/content/exact_content_index.h     # ExactContentIndex
  dedup/content/local_content_seen_set.h  # LocalContentSeenSet (SqliteDb only declared)
  dedup/content/near_duplicate_index.h    # NearDuplicateIndex
  dedup/content/simhash.h                 # SimHash, HammingDistance
  dedup/content_seen_filter.h             # ContentSeenFilter: a local or Redis set by options
  # Forwarding headers of the public headers moved in 0.1 (removed in the next release).
  base/text_encoding.h
  dedup/key_hash_value.h
  dedup/state_identity.h
  dedup/url_canonicalizer.h)
foreach(header ${URLSIEVE_PUBLIC_HEADERS})
  get_filename_component(folder ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/urlsieve/${folder})
endforeach()

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
