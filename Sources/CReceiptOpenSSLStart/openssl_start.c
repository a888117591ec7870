// The deprecated per-library loaders are the only way to load error texts after OpenSSL's start skipped them.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CReceiptOpenSSLStart.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

int receipt_openssl_leave_out_unused_tables(void) {
#ifdef OPENSSL_NO_DEPRECATED_3_0
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ADD_ALL_CIPHERS, NULL);
#else
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, NULL);
#endif
}

void receipt_openssl_load_error_texts(void) {
#ifndef OPENSSL_NO_DEPRECATED_3_0
    ERR_load_ERR_strings();
    ERR_load_ASN1_strings();
    ERR_load_ASYNC_strings();
    ERR_load_BIO_strings();
    ERR_load_BN_strings();
    ERR_load_BUF_strings();
#ifndef OPENSSL_NO_CMS
    ERR_load_CMS_strings();
#endif
#ifndef OPENSSL_NO_COMP
    ERR_load_COMP_strings();
#endif
    ERR_load_CONF_strings();
    ERR_load_CRYPTO_strings();
#ifndef OPENSSL_NO_CT
    ERR_load_CT_strings();
#endif
#ifndef OPENSSL_NO_DH
    ERR_load_DH_strings();
#endif
#ifndef OPENSSL_NO_DSA
    ERR_load_DSA_strings();
#endif
#ifndef OPENSSL_NO_EC
    ERR_load_EC_strings();
#endif
#ifndef OPENSSL_NO_ENGINE
    ERR_load_ENGINE_strings();
#endif
    ERR_load_EVP_strings();
    ERR_load_KDF_strings();
    ERR_load_OBJ_strings();
#ifndef OPENSSL_NO_OCSP
    ERR_load_OCSP_strings();
#endif
    ERR_load_OSSL_STORE_strings();
    ERR_load_PEM_strings();
    ERR_load_PKCS12_strings();
    ERR_load_PKCS7_strings();
    ERR_load_RAND_strings();
    ERR_load_RSA_strings();
#ifndef OPENSSL_NO_TS
    ERR_load_TS_strings();
#endif
    ERR_load_UI_strings();
    ERR_load_X509V3_strings();
    ERR_load_X509_strings();
#endif
}
