#include "CReceiptLibraryLoading.h"

#include <dlfcn.h>
#include <stdio.h>

/* Opens `library` and fills its symbols; false with the reason in `library->failure` when it cannot. */
static bool open_library(ReceiptLibrary *library) {
    // RTLD_LOCAL: the library's symbols stay out of the global scope, where the forwarding functions of the same
    // names live.
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(library->failure, sizeof library->failure, "%s", dlerror());
        return false;
    }
    for (size_t index = 0; index < library->count; index++) {
        dlerror();
        library->symbols[index] = dlsym(handle, library->names[index]);
        if (library->symbols[index] == NULL) {
            const char *reason = dlerror();
            snprintf(library->failure, sizeof library->failure, "%s", reason != NULL ? reason : library->names[index]);
            dlclose(handle);
            return false;
        }
    }
    return true;
}

const char *receipt_library_open(ReceiptLibrary *library) {
    pthread_mutex_lock(&library->lock);
    if (!library->attempted) {
        library->opened = open_library(library);
        library->attempted = true;
    }
    bool opened = library->opened;
    pthread_mutex_unlock(&library->lock);
    return opened ? NULL : library->failure;
}
