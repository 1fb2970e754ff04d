// SelfSignedCert: a throwaway key and self-signed certificate for 127.0.0.1 (subjectAltName
// IP:127.0.0.1, valid for a day), generated in memory for HTTPS test servers. A client trusts it by
// using cert_pem as its CA bundle.
// Thread-safety: a plain value (the OpenSSL objects are reference-counted and immutable once made).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_SELF_SIGNED_CERT_H_
#define URLSIEVE_TOOLS_SITE_SERVER_SELF_SIGNED_CERT_H_

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace urlsieve::site {

struct SelfSignedCert {
  std::shared_ptr<EVP_PKEY> key;
  std::shared_ptr<X509> cert;
  std::string cert_pem;
};

Result<SelfSignedCert> MakeSelfSignedCert();

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_SELF_SIGNED_CERT_H_
