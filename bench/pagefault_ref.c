/*
 * bench/pagefault_ref.c — the reference for `oslab run pagefault.anon`: map a new anonymous
 * region, write one byte to each 4 KiB page once, and print the time per page.
 *
 * What is timed is the touch loop alone (CLOCK_MONOTONIC around it); the mmap and the
 * munmap are not. MADV_NOHUGEPAGE keeps every page 4 KiB, as oslab's thp=off does, so each
 * write is one minor fault (do_anonymous_page); the fault count is printed so the script can
 * check that.
 *
 *   cc -O2 -o pagefault_ref pagefault_ref.c
 *   ./pagefault_ref [MiB]          default 1024
 *
 * Output, one line: ns_per_page=<float> minflt_per_page=<float> pages=<n>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define PAGE 4096UL

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(int argc, char **argv)
{
    unsigned long mib = 1024;
    if (argc > 1) {
        char *end;
        mib = strtoul(argv[1], &end, 10);
        if (*end != '\0' || mib == 0) {
            fprintf(stderr, "usage: %s [MiB]  (a positive whole number, default 1024)\n", argv[0]);
            return 2;
        }
    }
    size_t len = (size_t)mib << 20;
    size_t pages = len / PAGE;

    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "mmap of %lu MiB failed: %s\n", mib, strerror(errno));
        return 1;
    }
    if (madvise(p, len, MADV_NOHUGEPAGE) != 0) {
        fprintf(stderr, "madvise(MADV_NOHUGEPAGE) failed: %s\n", strerror(errno));
        return 1;
    }

    long faults0 = minflt();
    double t0 = now_ns();
    for (size_t i = 0; i < pages; i++)
        ((volatile char *)p)[i * PAGE] = 1;
    double t1 = now_ns();
    long faults1 = minflt();

    printf("ns_per_page=%.1f minflt_per_page=%.4f pages=%zu\n", (t1 - t0) / (double)pages,
           (double)(faults1 - faults0) / (double)pages, pages);
    munmap(p, len);
    return 0;
}
