# Applies URLSIEVE_SANITIZE to every target of the build.
if(URLSIEVE_SANITIZE STREQUAL "asan")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(URLSIEVE_SANITIZE STREQUAL "tsan")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT URLSIEVE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "URLSIEVE_SANITIZE must be '', 'asan' or 'tsan'")
endif()

# Fuzz builds instrument every library for coverage (the fuzz targets add -fsanitize=fuzzer), so
# libFuzzer is guided by the code under test, not only by the target's own few lines.
if(URLSIEVE_BUILD_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
