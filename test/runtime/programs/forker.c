/* fork() without exec: parent and child each work and write their own run
 * directory; the child's exit status reaches the parent. */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static double work(double seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    double x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 < seconds);
    return x;
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
