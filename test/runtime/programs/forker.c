/* fork() without exec: parent and child each work and write their own run
 * directory; the child's exit status reaches the parent. */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

__attribute__((noinline)) static double work(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

int main(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        work(0.2);
        printf("child done\n");
        return 3;
    }
    work(0.2);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("parent done, child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
