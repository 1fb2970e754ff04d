// Forwarding header: moved to url/url_canonicalizer.h (docs/architecture.md, "Layers").
// Include that instead; this file goes in the next release.
#ifndef URLSIEVE_DEDUP_URL_CANONICALIZER_H_
#define URLSIEVE_DEDUP_URL_CANONICALIZER_H_

#include "url/url_canonicalizer.h"

#endif  // URLSIEVE_DEDUP_URL_CANONICALIZER_H_
