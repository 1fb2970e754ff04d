# Every dependency is a Debian package (scripts/setup.sh installs them), found here.
# First what the dedup library (and so the Python module) needs, then the crawler's.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(IDN2 REQUIRED IMPORTED_TARGET libidn2)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)  # dedup/: the Redis seen set
if(NOT URLSIEVE_BUILD_CRAWLER)
  return()  # the dedup library and the Python module only (python/setup.py)
endif()
find_package(ZLIB REQUIRED)
find_package(CURL REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
pkg_check_modules(PSL REQUIRED IMPORTED_TARGET libpsl)
pkg_check_modules(GUMBO REQUIRED IMPORTED_TARGET gumbo)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # tools/ site server, crawler/ metrics
pkg_check_modules(NETTLE REQUIRED IMPORTED_TARGET nettle)  # SHA-1 for WARC digests
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)  # WARC gzip members
pkg_check_modules(EXPAT REQUIRED IMPORTED_TARGET expat)  # crawler/sitemap_parser: sitemaps (XML)
find_package(OpenSSL REQUIRED)  # tools/ site server: HTTPS with a self-signed certificate
if(URLSIEVE_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(URLSIEVE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
