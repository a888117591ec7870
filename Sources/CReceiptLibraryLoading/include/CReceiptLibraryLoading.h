// Opening a shared library at its first use (dlopen) instead of at process start: for the libraries only some
// commands need (libpq, libmicrohttpd), whose loading and relocation would otherwise cost every run of `receipt`.
#ifndef C_RECEIPT_LIBRARY_LOADING_H
#define C_RECEIPT_LIBRARY_LOADING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/// A library to open once, and the functions to look up in it. Define one as a static with
/// `RECEIPT_LIBRARY(soname, names, symbols)`; `symbols` holds the functions, in the order of `names`, once open.
typedef struct {
    const char *soname;
    const char *const *names;
    void **symbols;
    size_t count;
    pthread_mutex_t lock;
    bool attempted;
    bool opened;
    char failure[512];
} ReceiptLibrary;

#define RECEIPT_LIBRARY(soname, names, symbols)                                                                     \
    {(soname), (names), (symbols), sizeof(symbols) / sizeof((symbols)[0]), PTHREAD_MUTEX_INITIALIZER, false, false, \
     {0}}

/// Declares `library`, a static ReceiptLibrary of `soname` over the functions `FUNCTIONS(X)` lists (`X(name)` for
/// each): the table of their names and of the symbols found, and an index `index_NAME` per function.
#define RECEIPT_LIBRARY_FUNCTIONS(library, soname, FUNCTIONS)                                                        \
    enum { FUNCTIONS(RECEIPT_LIBRARY_INDEX) library##_function_count };                                            \
    static const char *const library##_names[library##_function_count] = {FUNCTIONS(RECEIPT_LIBRARY_NAME)};         \
    static void *library##_symbols[library##_function_count];                                                      \
    static ReceiptLibrary library = RECEIPT_LIBRARY(soname, library##_names, library##_symbols)

#define RECEIPT_LIBRARY_INDEX(name) index_##name,
#define RECEIPT_LIBRARY_NAME(name) #name,

/// The library's own function `name`, once `library` (declared by RECEIPT_LIBRARY_FUNCTIONS) is open.
#define RECEIPT_LIBRARY_FUNCTION(library, name) ((__typeof__(&name))library##_symbols[index_##name])

/// Opens `library` and looks its functions up, the first time it is called; later calls give the same outcome.
/// Returns NULL when the library is open and has every function; otherwise why not (dlerror's words), the
/// library's own text, and closes what it opened.
const char *receipt_library_open(ReceiptLibrary *library);

#endif
