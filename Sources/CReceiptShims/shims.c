#include "CReceiptShims.h"

#include <openssl/crypto.h>

STACK_OF(X509) *receipt_sk_X509_new_null(void) { return sk_X509_new_null(); }

int receipt_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }

int receipt_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }

X509 *receipt_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }

void receipt_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

void receipt_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

int receipt_sk_CMS_SignerInfo_num(STACK_OF(CMS_SignerInfo) *stack) { return sk_CMS_SignerInfo_num(stack); }

CMS_SignerInfo *receipt_sk_CMS_SignerInfo_value(STACK_OF(CMS_SignerInfo) *stack, int index) {
    return sk_CMS_SignerInfo_value(stack, index);
}

void receipt_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

long receipt_BIO_get_mem_data(BIO *bio, const unsigned char **data) { return BIO_get_mem_data(bio, data); }

unsigned long receipt_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }

int receipt_inflateInit(z_streamp stream) { return inflateInit(stream); }

int receipt_deflateInit(z_streamp stream, int level) { return deflateInit(stream, level); }
