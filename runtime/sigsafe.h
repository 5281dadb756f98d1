/* Signal-safety rules for libppw (see docs/runtime.md).
 *
 * Functions marked PPW_SIGSAFE may run inside the sampling signal handler.
 * They may call only other PPW_SIGSAFE functions, atomics, and this
 * allowlist: write, clock_gettime, ioctl/fcntl on our own descriptors,
 * timer_settime, getrlimit, fallocate/ftruncate, mmap/munmap (thin system
 * call wrappers in glibc), and libunwind's local unw_backtrace.
 * Forbidden: malloc, stdio, mutexes, dlsym, lazily allocated TLS, and loops
 * without a fixed bound. */
#ifndef PPW_RUNTIME_SIGSAFE_H
#define PPW_RUNTIME_SIGSAFE_H

/* Documentation only: grep for it when auditing the handler path. */
#define PPW_SIGSAFE

/* Thread-local storage libppw reads in signal context: initial-exec, so an
 * access never allocates.  libppw is linked, not dlopen'ed, so static TLS
 * is always available. */
#define PPW_TLS __thread __attribute__((tls_model("initial-exec")))

/* Symbols the program calls or interposes; everything else is hidden. */
#define PPW_EXPORT __attribute__((visibility("default")))

#endif
