/* The program check_gasp.sh stub links with gasp_stub.c (instrumented with
 * inst-functions at -O0 and -O2), and check_gasp.sh link runs unchanged
 * without any tool.  It prints the values the tool must receive. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Called 1000 times: 1000 START and 1000 END events, whichever return. */
__attribute__((noinline)) int classify(int i)
{
    if (i % 3 == 0)
        return 0;
    if (i % 3 == 1)
        return 1;
    return 2;
}

int main(int argc, char **argv)
{
    (void)argv;
    int counts[3] = {0};
    for (int i = 0; i < 1000; i++)
        counts[classify(i)]++;
    size_t size = 12344 + (size_t)argc;
    char *buffer = malloc(size);
    pthread_mutex_lock(&lock);
    buffer[0] = (char)counts[2];
    pthread_mutex_unlock(&lock);
    printf("counts %d %d %d\n", counts[0], counts[1], counts[2]);
    printf("malloc %#zx -> %p\n", size, (void *)buffer);
    printf("lock %p\n", (void *)&lock);
    int status = buffer[0] == 77 ? 3 : 4; /* non-zero: the builds must share it */
    free(buffer);
    return status;
}
