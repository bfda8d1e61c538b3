// Makes Swift's Synchronization.Mutex visible to ThreadSanitizer on Linux.
//
// Why: Mutex's fast paths are inlined into our (instrumented) code, but its contended
// paths (_lockSlow, _tryLockSlow, _unlockSlow) live in libswiftSynchronization.so, which is
// not built with TSan, and hand the lock over through FUTEX_LOCK_PI / FUTEX_UNLOCK_PI in the
// kernel. TSan therefore never sees a happens-before edge when a contended Mutex changes
// hands, and reports every pair of accesses made under the same lock by two threads as a
// race (reproduce: four threads appending to one Mutex<[Int]>).
//
// What: scripts/tsan.sh preloads this library into the test process. It interposes the three
// exported slow-path functions, calls the real ones, and tells TSan what they did:
// acquire on the lock word after taking it, release on it before handing it over. This is
// exactly the annotation TSan's own pthread_mutex interceptors make; it adds edges only
// where a real lock hand-over happened, so it cannot hide a race on state that is not
// protected by the Mutex. Nothing is suppressed.
//
// The symbols are the Swift 6 mangled names of
//   Synchronization._MutexHandle._lockSlow(_: UInt32)
//   Synchronization._MutexHandle._tryLockSlow() -> Bool
//   Synchronization._MutexHandle._unlockSlow()
// whose `self` (the address of the lock word) arrives in the Swift context register.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCALL void (*LockSlow)(uint32_t, SWIFT_SELF void *);
typedef SWIFTCALL bool (*TryLockSlow)(SWIFT_SELF void *);
typedef SWIFTCALL void (*UnlockSlow)(SWIFT_SELF void *);

// Weak: child processes that are not built with TSan (nginx, openssl, swift-build) load
// this library too, and there these are null and the wrappers only forward.
extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

static LockSlow realLockSlow;
static TryLockSlow realTryLockSlow;
static UnlockSlow realUnlockSlow;

static void *lookUp(const char *name) {
    void *function = dlsym(RTLD_NEXT, name);
    if (function == NULL) {
        fprintf(stderr, "tsan-mutex-annotations: %s not found (%s)\n", name, dlerror());
        abort();
    }
    return function;
}

__attribute__((constructor)) static void resolve(void) {
    // Null in processes without the Synchronization library; the wrappers then look again
    // on first use (a later dlopen) and stop the process if the library never came.
    realLockSlow = (LockSlow)dlsym(RTLD_NEXT, LOCK_SLOW);
    realTryLockSlow = (TryLockSlow)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    realUnlockSlow = (UnlockSlow)dlsym(RTLD_NEXT, UNLOCK_SLOW);
}

SWIFTCALL void $s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF(uint32_t threadID, SWIFT_SELF void *lock) {
    if (realLockSlow == NULL) realLockSlow = (LockSlow)lookUp(LOCK_SLOW);
    realLockSlow(threadID, lock);
    if (__tsan_acquire) __tsan_acquire(lock);
}

SWIFTCALL bool $s15Synchronization12_MutexHandleV12_tryLockSlowSbyF(SWIFT_SELF void *lock) {
    if (realTryLockSlow == NULL) realTryLockSlow = (TryLockSlow)lookUp(TRY_LOCK_SLOW);
    bool locked = realTryLockSlow(lock);
    if (locked && __tsan_acquire) __tsan_acquire(lock);
    return locked;
}

SWIFTCALL void $s15Synchronization12_MutexHandleV11_unlockSlowyyF(SWIFT_SELF void *lock) {
    if (realUnlockSlow == NULL) realUnlockSlow = (UnlockSlow)lookUp(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(lock);
    realUnlockSlow(lock);
}
