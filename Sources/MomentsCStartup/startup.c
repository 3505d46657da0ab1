#include "MomentsCStartup.h"

#include <signal.h>
#include <stddef.h>

static sigset_t blocked_at_start;
static bool did_block = false;

#if defined(__linux__)
/// Runs from the executable's `.preinit_array`: once the dynamic loader has mapped
/// and relocated every library (about 15 ms after `exec` on a 2-core machine), before
/// any library's initialiser and so a few milliseconds before `main` (the Swift
/// runtime's, Foundation's and the TLS libraries' initialisers run in between). The
/// process has one thread here.
static void moments_block_interrupts_at_start(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    sigset_t wanted, previous;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGINT);
    sigaddset(&wanted, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &wanted, &previous) != 0) return;
    sigemptyset(&blocked_at_start);
    if (!sigismember(&previous, SIGINT)) sigaddset(&blocked_at_start, SIGINT);
    if (!sigismember(&previous, SIGTERM)) sigaddset(&blocked_at_start, SIGTERM);
    did_block = true;
}

__attribute__((section(".preinit_array"), used))
static void (*const moments_preinit_entry)(int, char **, char **) = moments_block_interrupts_at_start;
#endif

void moments_startup_unblock_interrupts(void) {
    if (!did_block) return;
    pthread_sigmask(SIG_UNBLOCK, &blocked_at_start, NULL);
}
