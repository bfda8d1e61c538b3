// Wrappers for the _GNU_SOURCE functions declared in include/CLinuxSystem.h.
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/socket.h>

#include "CLinuxSystem.h"

int courier_accept4(int socket, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(socket, address, length, flags);
}

int courier_set_thread_name(pthread_t thread, const char *name) {
    return pthread_setname_np(thread, name);
}
