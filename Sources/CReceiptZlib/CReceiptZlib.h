// Umbrella header for zlib.
#include <zlib.h>
