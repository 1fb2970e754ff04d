/* Embeds the installed seen stage through the C API: prints the new URLs read from stdin. */
#include <stdio.h>
#include <string.h>

#include "dedup/urlsieve.h"

int main(void) {
  urlsieve_options options;
  urlsieve_filter* seen;
  urlsieve_error error;
  char line[4096];
  int is_new, invalid = 0;
  urlsieve_options_init(&options);
  options.capacity = 1000000;
  if (urlsieve_open(&options, &seen, &error) != URLSIEVE_OK) {
    fprintf(stderr, "urlsieve_open: %s\n", error.message);
    return 1;
  }
  while (fgets(line, sizeof(line), stdin) != NULL) {
    size_t n = strcspn(line, "\r\n");
    if (urlsieve_insert_if_new(seen, line, n, &is_new, &error) != URLSIEVE_OK) {
      fprintf(stderr, "invalid: %.*s: %s\n", (int)n, line, error.message);
      ++invalid;
    } else if (is_new) {
      printf("%.*s\n", (int)n, line);
    }
  }
  urlsieve_close(seen, NULL);
  return invalid == 0 ? 0 : 3;
}
