// The `moments` executable: a small, statically linked program that blocks SIGINT and
// SIGTERM with its very first instruction, then replaces itself (execve, same process)
// with the command-line program built beside it, MomentsCLI.
//
// Why: MomentsCLI links 50-odd shared libraries (the Swift runtime, Foundation, libcurl
// and its TLS stacks, libpq, SQLite). The dynamic loader maps and relocates them for
// 10 to 30 ms after exec, before any code of the program can run, and an interrupt
// arriving then ends the process by its default action. This program has no dynamic
// loader, and its entry point (`moments_launcher_entry`, set by the linker's --entry)
// blocks both signals with one system call before the C library starts. A blocked
// signal stays pending across execve, so MomentsCLI receives it once its handlers are
// installed, and stops as it would have later.
//
// What is left: a signal that arrives after the kernel has committed to the exec but
// before the process's first instruction runs (the parent can send one as soon as its
// spawn call returns, while the new process waits to be scheduled) ends it by the
// default action, as it would any program; nothing of it has run then.
//
// Rules:
// - Only the signals the parent had not blocked are blocked, and only those are named to
//   MomentsCLI (MOMENTS_INTERRUPTS_BLOCKED_AT_START), which unblocks exactly them.
// - Arguments, environment (but for that variable), descriptors and process id are kept:
//   the process the caller started is the one that runs the command and exits with its
//   status.
// - If MomentsCLI cannot be started, the mask is restored, the reason is written to
//   standard error, and the status is 127 (as a shell's for a missing command).

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

/// The variable naming the signals this program blocked; MomentsCStartup reads and
/// removes it.
#define BLOCKED_VARIABLE "MOMENTS_INTERRUPTS_BLOCKED_AT_START"

/// The program this one starts, in the order they are tried, beside this executable:
/// SwiftPM builds MomentsCLI as a tool of this target's plugin (`-tool`) whenever
/// `moments` is built, and as an executable of its own when every product is built.
static const char *const program_names[] = {"MomentsCLI-tool", "MomentsCLI"};

/// The signal mask the process started with, as the kernel's 64-bit set (bit n-1 for
/// signal n); written by the entry point.
__attribute__((used)) uint64_t moments_launcher_mask_at_exec;

/// SIGINT and SIGTERM, as the kernel's 64-bit set.
__attribute__((used)) const uint64_t moments_launcher_interrupts =
    (UINT64_C(1) << (SIGINT - 1)) | (UINT64_C(1) << (SIGTERM - 1));

#if defined(__x86_64__)
// rt_sigprocmask(SIG_BLOCK, &interrupts, &mask_at_exec, 8), then the C library's own
// entry. %rdx (the function the loader asks the program to register with atexit, zero
// here) is kept in %r8, which _start does not read.
__asm__(
    ".text\n"
    ".globl moments_launcher_entry\n"
    ".type moments_launcher_entry, @function\n"
    "moments_launcher_entry:\n"
    "    mov %rdx, %r8\n"
    "    mov $14, %eax\n"
    "    xor %edi, %edi\n"
    "    lea moments_launcher_interrupts(%rip), %rsi\n"
    "    lea moments_launcher_mask_at_exec(%rip), %rdx\n"
    "    mov $8, %r10d\n"
    "    syscall\n"
    "    mov %r8, %rdx\n"
    "    jmp _start\n"
    ".size moments_launcher_entry, . - moments_launcher_entry\n");
#elif defined(__aarch64__)
// The same, with x0 (the atexit function) kept in x9.
__asm__(
    ".text\n"
    ".globl moments_launcher_entry\n"
    ".type moments_launcher_entry, %function\n"
    "moments_launcher_entry:\n"
    "    mov x9, x0\n"
    "    mov x8, #135\n"
    "    mov x0, #0\n"
    "    adrp x1, moments_launcher_interrupts\n"
    "    add x1, x1, :lo12:moments_launcher_interrupts\n"
    "    adrp x2, moments_launcher_mask_at_exec\n"
    "    add x2, x2, :lo12:moments_launcher_mask_at_exec\n"
    "    mov x3, #8\n"
    "    svc #0\n"
    "    mov x0, x9\n"
    "    b _start\n"
    ".size moments_launcher_entry, . - moments_launcher_entry\n");
#elif defined(__linux__)
#error "MomentsLauncher: this architecture needs an entry point (x86_64 and aarch64 have one)"
#endif

/// The signals this program blocked (those the parent had not).
static sigset_t blocked_here;

static void note_what_the_entry_blocked(void) {
    sigemptyset(&blocked_here);
#if defined(__linux__)
    if (!(moments_launcher_mask_at_exec & (UINT64_C(1) << (SIGINT - 1)))) sigaddset(&blocked_here, SIGINT);
    if (!(moments_launcher_mask_at_exec & (UINT64_C(1) << (SIGTERM - 1)))) sigaddset(&blocked_here, SIGTERM);
#else
    // Without the entry point, as early as this program can.
    sigset_t wanted, previous;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGINT);
    sigaddset(&wanted, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &wanted, &previous) != 0) return;
    if (!sigismember(&previous, SIGINT)) sigaddset(&blocked_here, SIGINT);
    if (!sigismember(&previous, SIGTERM)) sigaddset(&blocked_here, SIGTERM);
#endif
}

/// The environment to start MomentsCLI with: `envp` without any inherited
/// BLOCKED_VARIABLE, plus BLOCKED_VARIABLE naming what this program blocked (if it did).
/// Out of memory, `envp` as it is, with the block given up.
static char **environment_for_program(char **envp) {
    size_t count = 0;
    while (envp[count] != NULL) count += 1;
    char **result = calloc(count + 2, sizeof(char *));
    if (result == NULL) {
        // Without the variable the program would never unblock them: give up the early
        // block rather than leave the signals blocked for good.
        sigprocmask(SIG_UNBLOCK, &blocked_here, NULL);
        sigemptyset(&blocked_here);
        return envp;
    }
    size_t kept = 0;
    const size_t prefix = strlen(BLOCKED_VARIABLE "=");
    for (size_t index = 0; index < count; index += 1) {
        if (strncmp(envp[index], BLOCKED_VARIABLE "=", prefix) == 0) continue;
        result[kept++] = envp[index];
    }
    int has_int = sigismember(&blocked_here, SIGINT) == 1;
    int has_term = sigismember(&blocked_here, SIGTERM) == 1;
    if (has_int && has_term) {
        result[kept++] = BLOCKED_VARIABLE "=INT,TERM";
    } else if (has_int) {
        result[kept++] = BLOCKED_VARIABLE "=INT";
    } else if (has_term) {
        result[kept++] = BLOCKED_VARIABLE "=TERM";
    }
    result[kept] = NULL;
    return result;
}

/// The absolute path of this executable, or an empty string.
static void own_path(char *path, size_t capacity) {
    path[0] = '\0';
#if defined(__linux__)
    ssize_t length = readlink("/proc/self/exe", path, capacity - 1);
    if (length > 0) path[length] = '\0';
#elif defined(__APPLE__)
    uint32_t size = (uint32_t)capacity;
    if (_NSGetExecutablePath(path, &size) != 0) path[0] = '\0';
#endif
}

int main(int argc, char **argv, char **envp) {
    (void)argc;
    note_what_the_entry_blocked();
    char directory[PATH_MAX];
    own_path(directory, sizeof directory);
    int failure = errno != 0 ? errno : ENOENT;
    char *slash = strrchr(directory, '/');
    if (slash != NULL) {
        slash[1] = '\0';
        char **environment = environment_for_program(envp);
        for (size_t index = 0; index < sizeof program_names / sizeof program_names[0]; index += 1) {
            char path[PATH_MAX];
            int written = snprintf(path, sizeof path, "%s%s", directory, program_names[index]);
            if (written < 0 || (size_t)written >= sizeof path) {
                failure = ENAMETOOLONG;
                continue;
            }
            execve(path, argv, environment);
            if (index == 0 || errno != ENOENT) failure = errno;
        }
    }
    sigprocmask(SIG_UNBLOCK, &blocked_here, NULL);
    fprintf(stderr, "moments: cannot start %s beside %s: %s (build it with `swift build --product moments`)\n",
            program_names[0], slash != NULL ? directory : "this executable", strerror(failure));
    return 127;
}
