# urlsieve_warnings: interface target carrying the project's warning flags. -Werror only with
# URLSIEVE_WERROR (off by default; scripts/build.sh and CI turn it on).
add_library(urlsieve_warnings INTERFACE)
target_compile_options(urlsieve_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                                   -Wnon-virtual-dtor)
if(URLSIEVE_WERROR)
  target_compile_options(urlsieve_warnings INTERFACE -Werror)
endif()
