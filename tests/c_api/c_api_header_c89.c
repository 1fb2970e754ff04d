/* Compiled with -std=c89 -pedantic-errors: the C API header must stay plain C. */
#include "dedup/urlsieve.h"

int urlsieve_c89_check(void) {
  urlsieve_options options;
  urlsieve_options_init(&options);
  return options.struct_size == sizeof(options) ? 0 : 1;
}
