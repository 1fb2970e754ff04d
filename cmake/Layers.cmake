# One library per folder (docs/architecture.md, "Layers"): each folder of the library is an object
# library with an explicit source list; tools/check_includes.py (ctest include_layers) checks
# that its includes point down only. The libraries people link are made of these objects:
# urlsieve::url (base/ + url/, for the frontier), urlsieve::dedup (the embeddable seen stage,
# installed) and urlsieve::crawler.

include(${CMAKE_CURRENT_LIST_DIR}/EmbedFile.cmake)  # urlsieve_embed_file: Redis Functions' .lua

# urlsieve_objects(NAME SOURCES file... [LINK target...]): a folder's object library.
function(urlsieve_objects name)
  cmake_parse_arguments(arg "" "" "SOURCES;LINK" ${ARGN})
  add_library(${name} OBJECT ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_features(${name} PUBLIC cxx_std_20)
  target_link_libraries(${name} PRIVATE urlsieve_warnings Threads::Threads ${arg_LINK})
endfunction()

# urlsieve_crawler_objects(NAME file...): a crawler/ folder's object library (part of
# urlsieve::crawler), with the crawler's dependencies.
function(urlsieve_crawler_objects name)
  add_library(${name} OBJECT ${ARGN})
  target_link_libraries(${name}
    PRIVATE urlsieve_warnings urlsieve::frontier urlsieve::dedup nlohmann_json::nlohmann_json
            tomlplusplus::tomlplusplus CURL::libcurl PkgConfig::GUMBO PkgConfig::HTTPLIB
            PkgConfig::NETTLE PkgConfig::LIBDEFLATE PkgConfig::XXHASH PkgConfig::EXPAT
            PkgConfig::HIREDIS ZLIB::ZLIB SQLite::SQLite3)
  set_property(GLOBAL APPEND PROPERTY URLSIEVE_CRAWLER_OBJECT_LIBRARIES ${name})
endfunction()
