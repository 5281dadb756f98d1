/* The calls ppw's sampling signal must not interrupt.
 *
 * The sampler counts kernel time where it may, so its signal can be raised
 * while a thread is inside a system call.  SA_RESTART restarts most of
 * them, but not the sleeping ones (nanosleep, clock_nanosleep, poll,
 * select, epoll_wait, sem_timedwait, sigtimedwait...: signal(7)), which
 * would return EINTR to a program that never asked for a signal; and one
 * raised during execve stays pending into the new program, whose default
 * action for a real-time signal is to die.  blocking.c interposes those
 * calls: the sleeping ones run with the sampling signal masked (a sample
 * due meanwhile arrives when they return), and the exec family pauses the
 * thread's signal source and drains it first.  The program's own signals
 * interrupt them as before. */
#ifndef PPW_RUNTIME_BLOCKING_H
#define PPW_RUNTIME_BLOCKING_H

/* Looks the real functions up (dlsym), at start-up: not later from a
 * signal handler that calls one of them. */
void ppw_blocking_init(void);

#endif
