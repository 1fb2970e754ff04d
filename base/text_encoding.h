// Forwarding header: moved to base/encoding/text_encoding.h (docs/architecture.md, "Layers").
// Include that instead; this file goes in the next release.
#ifndef URLSIEVE_BASE_TEXT_ENCODING_H_
#define URLSIEVE_BASE_TEXT_ENCODING_H_

#include "base/encoding/text_encoding.h"

#endif  // URLSIEVE_BASE_TEXT_ENCODING_H_
