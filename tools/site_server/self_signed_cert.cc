#include "tools/site_server/self_signed_cert.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace urlsieve::site {
namespace {

Status OpenSslError(const char* what) {
  char text[256];
  ERR_error_string_n(ERR_get_error(), text, sizeof(text));
  return Status::IoError(std::string(what) + ": " + text);
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

}  // namespace

Result<SelfSignedCert> MakeSelfSignedCert() {
  SelfSignedCert out;
  out.key.reset(EVP_EC_gen("P-256"), EVP_PKEY_free);  // fast to generate, unlike RSA
  if (!out.key) return OpenSslError("EVP_EC_gen");
  out.cert.reset(X509_new(), X509_free);
  X509* cert = out.cert.get();
  if (cert == nullptr) return OpenSslError("X509_new");
  X509_NAME* name = X509_get_subject_name(cert);
  const bool built = X509_set_version(cert, 2) == 1 &&
                     ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) == 1 &&
                     X509_gmtime_adj(X509_getm_notBefore(cert), -3600) != nullptr &&
                     X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600) != nullptr &&
                     X509_set_pubkey(cert, out.key.get()) == 1 &&
                     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                                reinterpret_cast<const unsigned char*>("127.0.0.1"),
                                                -1, -1, 0) == 1 &&
                     X509_set_issuer_name(cert, name) == 1 &&
                     AddExtension(cert, NID_basic_constraints, "critical,CA:TRUE") &&
                     AddExtension(cert, NID_subject_alt_name, "IP:127.0.0.1") &&
                     X509_sign(cert, out.key.get(), EVP_sha256()) > 0;
  if (!built) return OpenSslError("building the certificate");

  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return OpenSslError("PEM_write_bio_X509");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  out.cert_pem.assign(data, static_cast<size_t>(size));
  return out;
}

}  // namespace urlsieve::site
