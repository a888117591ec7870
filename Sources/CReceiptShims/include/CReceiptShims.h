// Functions for the OpenSSL macros that Swift cannot import. Each wraps exactly one macro; nothing else lives here.
#ifndef C_RECEIPT_SHIMS_H
#define C_RECEIPT_SHIMS_H

#include <stddef.h>
#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/x509.h>
#include <zlib.h>

/// `sk_X509_new_null`: an empty certificate stack, or NULL when out of memory.
STACK_OF(X509) *receipt_sk_X509_new_null(void);
/// `sk_X509_push`: appends without taking a reference; returns the new count, or 0 on failure.
int receipt_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate);
/// `sk_X509_num`: the number of certificates, or -1 for NULL.
int receipt_sk_X509_num(const STACK_OF(X509) *stack);
/// `sk_X509_value`: the certificate at `index`, borrowed.
X509 *receipt_sk_X509_value(const STACK_OF(X509) *stack, int index);
/// `sk_X509_free`: frees the stack, not the certificates.
void receipt_sk_X509_free(STACK_OF(X509) *stack);
/// `sk_X509_pop_free(stack, X509_free)`: frees the stack and drops one reference of each certificate.
void receipt_sk_X509_pop_free(STACK_OF(X509) *stack);
/// `sk_CMS_SignerInfo_num`: the number of signers, or -1 for NULL.
int receipt_sk_CMS_SignerInfo_num(STACK_OF(CMS_SignerInfo) *stack);
/// `sk_CMS_SignerInfo_value`: the signer at `index`, borrowed.
CMS_SignerInfo *receipt_sk_CMS_SignerInfo_value(STACK_OF(CMS_SignerInfo) *stack, int index);
/// `OPENSSL_free`: releases memory that OpenSSL allocated for the caller.
void receipt_OPENSSL_free(void *pointer);
/// `BIO_get_mem_data`: the bytes written into a memory BIO (borrowed) and their count.
long receipt_BIO_get_mem_data(BIO *bio, const unsigned char **data);
/// `XN_FLAG_RFC2253`: the flags that print a name as RFC 2253 text (a composed macro).
unsigned long receipt_XN_FLAG_RFC2253(void);
/// `inflateInit`: starts inflating a zlib (RFC 1950) stream; returns Z_OK or a zlib error code.
int receipt_inflateInit(z_streamp stream);
/// `deflateInit`: starts deflating into a zlib (RFC 1950) stream at `level` (0-9).
int receipt_deflateInit(z_streamp stream, int level);

#endif
