#ifndef MOMENTS_C_STARTUP_H
#define MOMENTS_C_STARTUP_H

#include <stdbool.h>

/// An executable linking this target blocks SIGINT and SIGTERM at its very start
/// (Linux), before any shared library's initialiser runs: an interrupt arriving while
/// the process starts then waits, pending, instead of ending it before its handlers
/// are installed. Only the signals the process's parent had not blocked already are
/// blocked, and the signals the `moments` launcher blocked before it started this
/// program (MOMENTS_INTERRUPTS_BLOCKED_AT_START, removed from the environment here)
/// count as blocked here.
///
/// Unblocks, in the calling thread, what the start blocked (nothing if it blocked
/// nothing). Call it in every thread that must receive interrupts, once their
/// handlers are installed: a signal that came meanwhile is delivered then.
void moments_startup_unblock_interrupts(void);

#endif
