/* Jobs side by side on threads, for the kernels that release the GIL (the ranking curves, the speech edit counts).
 * The last job runs on the calling thread; a job whose thread cannot start runs there too, after the others. */
#ifndef OLIVE_EVAL_METRICS_RUN_JOBS_H
#define OLIVE_EVAL_METRICS_RUN_JOBS_H

#include <stddef.h>
#ifndef _WIN32
#include <pthread.h>
#endif

#define MAX_THREADS 16

/* `count` (1..MAX_THREADS) jobs of `size` bytes each, laid out from `jobs`, each handed to `run`. */
static void run_jobs_on_threads(void *jobs, size_t size, int count, void *(*run)(void *)) {
    char *base = jobs;
#ifdef _WIN32
    for (int t = 0; t < count; t++) run(base + (size_t)t * size);
#else
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS];
    for (int t = 0; t + 1 < count; t++) started[t] = pthread_create(&ids[t], NULL, run, base + (size_t)t * size) == 0;
    run(base + (size_t)(count - 1) * size);
    for (int t = 0; t + 1 < count; t++) {
        if (started[t]) pthread_join(ids[t], NULL);
        else run(base + (size_t)t * size);
    }
#endif
}

#endif
