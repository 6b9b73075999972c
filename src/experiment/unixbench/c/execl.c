/*
 * execl.c: oslab's stand-in for UnixBench's "Execl Throughput" program (`pgms/execl`,
 * UnixBench's src/execl.c with src/big.c included): a dynamically linked C program that
 * execs itself, again and again. Written for oslab from the description of that benchmark
 * (BYTE UNIX Benchmarks, Release 3: "Execl Throughput", the number of execl calls a
 * second); no UnixBench (GPL) text is copied, only the facts that fix the work of one exec
 * were checked against its source (the argument layout, the libc calls of each image).
 *
 * What one image does, as each re-exec'd image of UnixBench's execl does:
 *   atoi(argv[1]); duration = atoi(argv[2]); iter = atoi(argv[3]);
 *   sscanf(argv[4], "%lu", &start_time);
 *   sprintf(count_str, "%lu", ++iter); sprintf(start_str, "%lu", start_time);
 *   time(&this_time);
 *   execl(argv[0], argv[0], argv[1], argv[2], count_str, start_str, NULL);
 * so each exec also runs the dynamic loader, maps libc and runs libc's start-up, like
 * UnixBench's. Build: `cc -O3 -ffast-math -o execl execl.c` (UnixBench's flags; no
 * -static).
 *
 * Usage: execl COUNT DURATION ITER START
 *   COUNT     decimal count of execs still to do (digits only, below 2^31; leading zeros
 *             allowed, the width is kept); when it is 0 the image exits with status 0,
 *             otherwise it execs itself with COUNT - 1. Started with COUNT = N, the
 *             chain is N execs and N + 1 images.
 *   DURATION  passed along unchanged (UnixBench passes its duration, "30"); parsed, unused.
 *   ITER      images run so far ("0" to start); each image passes ITER + 1.
 *   START     the start time, seconds since the epoch; passed along reformatted.
 * `execl COUNT [DURATION]` also works, for trying it by hand: the image then takes
 * ITER 0, START time() and DURATION "30" (default) and carries on as above.
 * Exit status: 0 at the end of the chain; 1 with a message on stderr if the arguments are
 * wrong or execl fails.
 *
 * How it differs from UnixBench's execl:
 * - The stop condition. UnixBench's images compare time() with the start time and stop
 *   after DURATION seconds (printing "COUNT|<images>|1|lps" to stderr); these count COUNT
 *   down and stop when it reaches 0, printing nothing (the caller counts and times). Each
 *   image still calls time() once, as UnixBench's do; the count is decremented in place in
 *   argv[1] (digit arithmetic, no libc call), where UnixBench passes a constant "0" there,
 *   so the libc calls of an image are the same: three atoi, one sscanf, two sprintf, one
 *   time, one execl with five arguments.
 * - UnixBench's first image (argv[1] = duration, nonzero) builds the path from the
 *   UB_BINDIR environment variable; here every image execs argv[0], as UnixBench's later
 *   images do, so the caller must start the chain with a path in argv[0] that execl can
 *   open (an absolute path, or one relative to the working directory).
 * - big.c: UnixBench includes its old makework.c (592 lines, main renamed, never called)
 *   "to make the image larger", and adds `char bss[8*1024]`. Its code makes the program's
 *   text about 11 KB instead of about 2 KB and imports some 38 libc functions instead of
 *   about 10 (fork, pipe, signal, read, ...), so the loader has a few more (lazy) PLT
 *   relocations to apply per exec; none of it runs. This program has the 8 KiB bss array
 *   (never touched, like UnixBench's) but not that code: the difference is a page or two
 *   of text mapped and a few dozen relocations per exec, small next to the loader's and
 *   libc's own start-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* As UnixBench's execl.c: an 8 KiB uninitialised array, never touched. */
char oslab_execl_bss[8 * 1024];

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s COUNT DURATION ITER START  (or: %s COUNT [DURATION])\n"
            "  execs itself COUNT more times, counting down, then exits 0\n",
            argv0, argv0);
    exit(1);
}

/* The length of `s` if it is a nonempty string of decimal digits, else 0. */
static size_t digits_length(const char *s)
{
    size_t n;

    for (n = 0; s[n] != '\0'; n++)
        if (s[n] < '0' || s[n] > '9')
            return 0;
    return n;
}

/* Subtract one from the decimal number in digits[0 .. n) (not zero), in place, keeping
 * its width: "1000" becomes "0999". */
static void decrement(char *digits, size_t n)
{
    while (n-- > 0) {
        if (digits[n] != '0') {
            digits[n]--;
            return;
        }
        digits[n] = '9';
    }
}

int main(int argc, char *argv[])
{
    unsigned long iter;
    unsigned long remaining;
    size_t count_len;
    int duration;
    char *fullpath;
    char *dur_str;
    char count_str[24], start_str[24];
    unsigned long start;
    time_t start_time, this_time;

    if (argc != 5 && argc != 2 && argc != 3)
        usage(argc > 0 ? argv[0] : "execl");
    count_len = digits_length(argv[1]);
    if (count_len == 0)
        usage(argv[0]);

    remaining = (unsigned long)atoi(argv[1]);
    fullpath = argv[0];
    if (argc == 5) {
        /* A link of the chain: the arguments as UnixBench's execl passes them on. */
        duration = atoi(argv[2]);
        dur_str = argv[2];
        iter = (unsigned long)atoi(argv[3]);
        if (sscanf(argv[4], "%lu", &start) != 1)
            usage(argv[0]);
        start_time = (time_t)start;
    } else {
        /* Started by hand: what UnixBench's first image sets up. */
        dur_str = argc == 3 ? argv[2] : "30";
        duration = atoi(dur_str);
        iter = 0;
        time(&start_time);
    }
    (void)duration; /* parsed as UnixBench parses it; the stop is the count */

    sprintf(count_str, "%lu", ++iter);
    sprintf(start_str, "%lu", (unsigned long)start_time);
    time(&this_time);

    if (remaining == 0)
        exit(0);
    decrement(argv[1], count_len);

    execl(fullpath, fullpath, argv[1], dur_str, count_str, start_str, (char *)NULL);
    fprintf(stderr, "%s: execl failed after %lu images: ", fullpath, iter);
    perror(NULL);
    exit(1);
}
