# urlsieve_node_addon(TARGET OUTPUT_DIR INCLUDE_DIRS...): the Node-API addon `urlsieve.node` (the
# sources in src/) over urlsieve::dedup, written to OUTPUT_DIR. Two builds call it: node/CMakeLists.txt
# (cmake-js, what `npm install` runs) and tests/node/CMakeLists.txt (the project's own build, whose
# tests load the addon from there). INCLUDE_DIRS: node-addon-api's and the Node-API headers',
# included as system headers so that the project's warnings (errors in CI) stay on our code only.
function(urlsieve_node_addon target output_dir)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  # The package's version; tests/node checks that it is the CMake project's.
  file(READ ${dir}/package.json package_json)
  string(JSON version GET ${package_json} version)
  add_library(${target} MODULE ${dir}/src/addon.cc ${dir}/src/errors.cc ${dir}/src/options.cc
                               ${dir}/src/seen_filter_wrap.cc ${dir}/src/workers.cc)
  target_include_directories(${target} SYSTEM PRIVATE ${ARGN})
  target_include_directories(${target} PRIVATE ${dir}/src)
  # Node-API 8 (Node 12.22+); C++ exceptions off: errors are thrown as JavaScript exceptions.
  target_compile_definitions(${target} PRIVATE NAPI_VERSION=8 NAPI_DISABLE_CPP_EXCEPTIONS
                                               NODE_ADDON_API_DISABLE_DEPRECATED
                                               URLSIEVE_VERSION="${version}")
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_link_libraries(${target} PRIVATE urlsieve::dedup urlsieve_warnings)
  set_target_properties(${target} PROPERTIES
    PREFIX "" SUFFIX ".node" OUTPUT_NAME urlsieve
    LIBRARY_OUTPUT_DIRECTORY ${output_dir}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # The addon's symbols stay its own: Node resolves napi_* from the process, and nothing else.
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
endfunction()
