#include "MomentsCStartup.h"

#include <signal.h>
#include <stddef.h>

static sigset_t blocked_at_start;
static bool did_block = false;

#if defined(__linux__)
/// Runs from the executable's `.preinit_array`: after the dynamic loader has mapped
/// and relocated every library, before any library's initialiser and long before
/// `main` (about 20 ms later, with Foundation and libcurl's dependencies to
/// initialise). The process has one thread here.
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

bool moments_startup_blocked_interrupts(void) {
    return did_block;
}

void moments_startup_unblock_interrupts(void) {
    if (!did_block) return;
    pthread_sigmask(SIG_UNBLOCK, &blocked_at_start, NULL);
}
