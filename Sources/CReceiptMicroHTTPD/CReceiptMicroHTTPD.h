#include <sys/socket.h>
#include <stdarg.h>
#include <microhttpd.h>
