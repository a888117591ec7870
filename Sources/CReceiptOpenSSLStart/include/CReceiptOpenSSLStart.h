// Two tables OpenSSL 3.0 builds at every start that a run of `receipt` seldom or never reads, left out.
// - Its error texts (what ERR_reason_error_string returns): loaded, for all its libraries, the first time any thread
//   touches its error queue (about 3,500 entries put in a hash table: 850,000 instructions, 0.38 ms of a 4.9 ms
//   `receipt verify FILE`), although a run that succeeds reads none of them.
// - Its table of ciphers by name (EVP_get_cipherbyname), which OpenSSL then copies, every alias with it, into the
//   names its providers answer to (2.2 million instructions, 0.34 ms of 4.7). Ciphers encrypt, and nothing here
//   encrypts or decrypts (an encrypted key is refused before OpenSSL reads it; TLS, in libpq, fetches its ciphers
//   from the providers). The table of digests by name, which OpenSSL's certificate checks read, stays.
// Loading the error texts later takes OpenSSL's per-library loaders, deprecated since 3.0, which Swift would warn
// about; they live behind the second function.
// And a cost OpenSSL 3.0 pays for every certificate it reads: the certificate's public key is read by its provider
// decoders, and finding them enumerates every decoder and key manager of every provider (about a million instructions
// a certificate, five the first time). The last three functions read certificates as OpenSSL 1.1 did, the key by
// OpenSSL's own RSA or EC reader, once `receipt_openssl_read_certificate_keys_directly` has enabled it: 3.0 reads a key
// so only for a type an engine has registered methods for, so an engine offering OpenSSL's own methods is registered
// while a certificate is read and unregistered after.
#ifndef C_RECEIPT_OPENSSL_START_H
#define C_RECEIPT_OPENSSL_START_H

#include <openssl/bio.h>
#include <openssl/x509.h>

/// Has OpenSSL leave out both tables (OPENSSL_INIT_NO_ADD_ALL_CIPHERS and OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS);
/// returns 1 on success. Takes effect only as the process's first call into OpenSSL; later, both are built already.
/// The error texts are left out only where `receipt_openssl_load_error_texts` can load them (OpenSSL built with its
/// 3.0 deprecated functions).
int receipt_openssl_leave_out_unused_tables(void);

/// Loads the error texts of each of OpenSSL's libraries that has a loader of its own (all but those of providers,
/// decoders, encoders and a few more, whose errors take the texts of the reasons common to all libraries, such as
/// "unsupported", or print as numbers). Safe from any thread and at any time: texts already loaded are kept.
void receipt_openssl_load_error_texts(void);

/// Has `receipt_d2i_X509` and `receipt_PEM_read_bio_X509` read RSA and EC keys with OpenSSL's own readers from now on,
/// for the whole process; returns 1 when they will (OpenSSL built with engines and its 3.0 deprecated functions), 0
/// when they keep reading as d2i_X509 does. While one of them reads, OpenSSL's own RSA and EC methods also serve any
/// other thread that makes an EVP_PKEY_CTX for those key types by type or name, or for a key read the same way.
int receipt_openssl_read_certificate_keys_directly(void);

/// `d2i_X509(NULL, input, length)`, with the key read as enabled above (then one certificate at a time).
X509 *receipt_d2i_X509(const unsigned char **input, long length);

/// `PEM_read_bio_X509(bio, NULL, NULL, NULL)`, with the key read as enabled above (then one certificate at a time).
X509 *receipt_PEM_read_bio_X509(BIO *bio);

#endif
