# Every dependency is a Debian package (scripts/setup.sh installs them), found here.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(CURL REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(IDN2 REQUIRED IMPORTED_TARGET libidn2)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)  # dedup/: the Redis seen set
pkg_check_modules(PSL REQUIRED IMPORTED_TARGET libpsl)
pkg_check_modules(GUMBO REQUIRED IMPORTED_TARGET gumbo)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # tools/ site server, crawler/ metrics
pkg_check_modules(NETTLE REQUIRED IMPORTED_TARGET nettle)  # SHA-1 for WARC digests
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)  # WARC gzip members
find_package(OpenSSL REQUIRED)  # tools/ site server: HTTPS with a self-signed certificate
if(URLSIEVE_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(URLSIEVE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
