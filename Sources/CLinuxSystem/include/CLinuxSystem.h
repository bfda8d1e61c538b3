#ifndef COURIER_CLINUXSYSTEM_H
#define COURIER_CLINUXSYSTEM_H

// The Linux interfaces CourierWire needs that Swift's Glibc module does not import.
//
// - epoll and eventfd: their headers are declared here, so that Swift imports the calls, the
//   constants and `struct epoll_event` with the C compiler's own layout (packed, 12 bytes, on
//   x86_64; 16 bytes elsewhere).
// - accept4 and pthread_setname_np: glibc declares them only under _GNU_SOURCE, which a header
//   cannot switch on for a C library that Swift's Glibc module has already compiled. They are
//   wrapped in CLinuxSystem.c, which defines _GNU_SOURCE before its includes.

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <pthread.h>

/// accept4(2): accepts a connection on `socket` and applies `flags` (SOCK_NONBLOCK,
/// SOCK_CLOEXEC) to the new descriptor atomically. Returns the descriptor, or -1 with errno set.
int courier_accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);

/// pthread_setname_np(3): names `thread` for debuggers, `top -H` and /proc/<pid>/task/<tid>/comm.
/// `name` must be at most 15 bytes long. Returns 0, or an error number (ERANGE when too long).
int courier_set_thread_name(pthread_t thread, const char *name);

#endif
