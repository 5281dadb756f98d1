/* fork() then exec: `forkexec PROGRAM ARGS...` runs PROGRAM in a fork()ed
 * child, working before and after, and prints how the child ended
 * (runtime.fork_exec: the child's output and status are unchanged, an
 * instrumented PROGRAM writes its own run directory). */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

__attribute__((noinline)) static double work(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double x = work(0.05);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* Right after fork, while the child's sampler runs: exec must not
         * leave a sampling signal pending for the new program. */
        work(0.02);
        execv(argv[1], argv + 1);
        perror("execv");
        _exit(127);
    }
    x += work(0.05);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status))
        printf("child exit %d\n", WEXITSTATUS(status));
    else
        printf("child signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    printf("parent %d\n", x > 0);
    return 0;
}
