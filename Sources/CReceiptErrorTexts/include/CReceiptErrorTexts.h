// OpenSSL's error texts (what ERR_reason_error_string returns) loaded when an error is described, not at every start.
// OpenSSL 3.0 loads the texts of all its libraries the first time any thread touches its error queue (about 3,500
// entries put in a hash table: 850,000 instructions, 0.33 ms of a 4.8 ms `receipt verify FILE`), although a run that
// succeeds reads none of them. Loading them later takes OpenSSL's per-library loaders, deprecated since 3.0, which
// Swift would warn about; they live behind these two functions.
#ifndef C_RECEIPT_ERROR_TEXTS_H
#define C_RECEIPT_ERROR_TEXTS_H

/// Asks OpenSSL not to load its error texts at start (OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS); returns 1 when that took
/// effect. It must come before any other OpenSSL call of the process, which would load them already, and takes effect
/// only where `receipt_error_texts_load` can load them later (OpenSSL built with its 3.0 deprecated functions);
/// otherwise returns 0 and OpenSSL loads them at start as before.
int receipt_error_texts_defer(void);

/// Loads the error texts of each of OpenSSL's libraries that has a loader of its own (all but those of providers,
/// decoders, encoders and a few more, whose errors take the texts of the reasons common to all libraries, such as
/// "unsupported", or print as codes). Safe from any thread and at any time: texts already loaded are kept.
void receipt_error_texts_load(void);

#endif
