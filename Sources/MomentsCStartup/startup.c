#include "MomentsCStartup.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>

static sigset_t blocked_at_start;
static bool did_block = false;

#if defined(__linux__)
/// The variable by which the `moments` launcher (MomentsLauncher) names the signals
/// it blocked for this program before starting it: they count as blocked here.
static const char blocked_variable[] = "MOMENTS_INTERRUPTS_BLOCKED_AT_START=";

/// Adds the signals `envp`'s launcher variable names to `blocked_at_start`, and removes
/// the variable from the environment (`envp` is the process's environment array here),
/// so that no program this one starts inherits it.
static void take_launcher_variable(char **envp) {
    if (envp == NULL) return;
    const size_t prefix = sizeof blocked_variable - 1;
    for (char **entry = envp; *entry != NULL;) {
        if (strncmp(*entry, blocked_variable, prefix) != 0) {
            entry += 1;
            continue;
        }
        const char *names = *entry + prefix;
        if (strstr(names, "INT") != NULL) sigaddset(&blocked_at_start, SIGINT);
        if (strstr(names, "TERM") != NULL) sigaddset(&blocked_at_start, SIGTERM);
        for (char **shifted = entry; *shifted != NULL; shifted += 1) shifted[0] = shifted[1];
    }
}

/// Runs from the executable's `.preinit_array`: once the dynamic loader has mapped
/// and relocated every library (10 to 30 ms after `exec` on a 2-core machine; the
/// `moments` launcher covers that window by blocking both signals before it starts
/// this program), before any library's initialiser and so a few milliseconds before
/// `main` (the Swift runtime's, Foundation's and the TLS libraries' initialisers run in
/// between). The process has one thread here.
static void moments_block_interrupts_at_start(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    sigset_t wanted, previous;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGINT);
    sigaddset(&wanted, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &wanted, &previous) != 0) return;
    sigemptyset(&blocked_at_start);
    if (!sigismember(&previous, SIGINT)) sigaddset(&blocked_at_start, SIGINT);
    if (!sigismember(&previous, SIGTERM)) sigaddset(&blocked_at_start, SIGTERM);
    take_launcher_variable(envp);
    did_block = true;
}

__attribute__((section(".preinit_array"), used))
static void (*const moments_preinit_entry)(int, char **, char **) = moments_block_interrupts_at_start;
#endif

void moments_startup_unblock_interrupts(void) {
    if (!did_block) return;
    pthread_sigmask(SIG_UNBLOCK, &blocked_at_start, NULL);
}
