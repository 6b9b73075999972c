/* bench/kernel_canary.c — does a null system call's cost move while the CPU's speed stays put?
 *
 * Pinned to one CPU, it repeats for SECONDS: a loop of 1000 getppid calls (ns per call), the
 * CPU canary's chain of 4096 dependent multiplies and shifts (oslab's `measure::host`), and 16
 * getppid calls (oslab's kernel canary, ns per call). Each line is the median of each over
 * about a second (at most 4000 rounds): seconds since the start, loop, chain, canary.
 * bench/kernel_canary.sh builds it and sums the lines up. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 4000

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}

__attribute__((noinline)) static uint64_t chain(uint64_t steps) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < steps; i++) {
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
    }
    return x;
}

__attribute__((noinline)) static void calls(int n) {
    for (int i = 0; i < n; i++)
        syscall(SYS_getppid);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: kernel_canary SECONDS CPU\n");
        return 2;
    }
    int seconds = atoi(argv[1]);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[2]), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    static double loop[ROUNDS], cpu[ROUNDS], kernel[ROUNDS];
    volatile uint64_t sink = 0;
    double t0 = now();
    while (now() - t0 < seconds * 1e9) {
        int n = 0;
        double start = now();
        while (now() - start < 1e9 && n < ROUNDS) {
            double t = now();
            calls(1000);
            loop[n] = (now() - t) / 1000;
            t = now();
            sink += chain(4096);
            cpu[n] = now() - t;
            t = now();
            calls(16);
            kernel[n] = (now() - t) / 16;
            n++;
        }
        printf("%.1f %.2f %.1f %.2f\n", (now() - t0) / 1e9, median(loop, n), median(cpu, n),
               median(kernel, n));
        fflush(stdout);
    }
    return (int)(sink & 0);
}
