// OpenSSL's engine interface, deprecated since 3.0, is the only way to have it read a certificate's key with its own
// RSA and EC readers.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CReceiptOpenSSLStart.h"

#include <openssl/engine.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdatomic.h>

#if !defined(OPENSSL_NO_ENGINE) && !defined(OPENSSL_NO_DEPRECATED_3_0)

// Held while a certificate is read with the engine registered, so that one thread's reading never unregisters it
// under another's, and while the engine is made.
static pthread_mutex_t reading = PTHREAD_MUTEX_INITIALIZER;
// Set once, under `reading`, and kept until the process ends; until it is set, certificates are read without the lock.
static _Atomic(ENGINE *) built_in_methods;

static const int key_types[] = {EVP_PKEY_RSA, EVP_PKEY_EC};

// The engine's one table: OpenSSL's own method for each key type, asked for by number.
static int built_in_method(ENGINE *engine, EVP_PKEY_METHOD **method, const int **types, int type) {
    (void)engine;
    if (method == NULL) {
        *types = key_types;
        return (int)(sizeof key_types / sizeof key_types[0]);
    }
    *method = (EVP_PKEY_METHOD *)EVP_PKEY_meth_find(type);
    return *method != NULL;
}

int receipt_openssl_read_certificate_keys_directly(void) {
    pthread_mutex_lock(&reading);
    if (atomic_load(&built_in_methods) == NULL) {
        ENGINE *engine = ENGINE_new();
        if (engine != NULL && ENGINE_set_id(engine, "receipt-built-in-key-methods") == 1
            && ENGINE_set_name(engine, "OpenSSL's own RSA and EC methods, for reading certificates' keys") == 1
            && ENGINE_set_pkey_meths(engine, built_in_method) == 1) {
            atomic_store(&built_in_methods, engine);
        } else {
            ENGINE_free(engine);
        }
    }
    int enabled = atomic_load(&built_in_methods) != NULL;
    pthread_mutex_unlock(&reading);
    return enabled;
}

// Once enabled: locks `reading`, registers the engine and returns it, for `reading_ends`; NULL before.
static ENGINE *reading_begins(void) {
    ENGINE *engine = atomic_load(&built_in_methods);
    if (engine != NULL) {
        pthread_mutex_lock(&reading);
        ENGINE_register_pkey_meths(engine);
    }
    return engine;
}

static void reading_ends(ENGINE *engine) {
    if (engine != NULL) {
        ENGINE_unregister_pkey_meths(engine);
        pthread_mutex_unlock(&reading);
    }
}

#else

int receipt_openssl_read_certificate_keys_directly(void) { return 0; }

static ENGINE *reading_begins(void) { return NULL; }

static void reading_ends(ENGINE *engine) { (void)engine; }

#endif

X509 *receipt_d2i_X509(const unsigned char **input, long length) {
    ENGINE *engine = reading_begins();
    X509 *certificate = d2i_X509(NULL, input, length);
    reading_ends(engine);
    return certificate;
}

X509 *receipt_PEM_read_bio_X509(BIO *bio) {
    ENGINE *engine = reading_begins();
    X509 *certificate = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    reading_ends(engine);
    return certificate;
}
