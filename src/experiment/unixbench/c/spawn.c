/*
 * spawn.c: oslab's stand-in for UnixBench's "Process Creation" program (`pgms/spawn`,
 * UnixBench's src/spawn.c): a small, dynamically linked C program that forks, lets the
 * child exit at once with exit(0), and waits for it, again and again. Written for oslab
 * from the description of that benchmark (BYTE UNIX Benchmarks: "Process Creation", the
 * number of times a process can fork and reap a child that immediately exits); no UnixBench
 * (GPL) text is copied, only the facts that fix the work of one loop were checked against
 * its source (fork(), exit(0) in the child, wait() and a status check in the parent).
 *
 * Why a program of its own: a fork's cost grows with the forking process's address space
 * (each anonymous page write-protected at the fork and released at the child's exit, each
 * mapping duplicated). oslab's worker is a larger process than UnixBench's spawn, and
 * forking from it measured 25-30% slower on the same machine (docs/unixbench.md); this
 * program is the size of UnixBench's, so its loop is UnixBench's loop.
 *
 * Usage: spawn COUNT
 *   COUNT  decimal number of loops (fork, the child exit(0)s, wait), 0 allowed.
 * Exit status: 0 when every child was created, exited with status 0 and was reaped; 1 with
 * a message on stderr otherwise (the caller reports it).
 *
 * How it differs from UnixBench's spawn: the loop count is given, where UnixBench's loops
 * until an alarm after its duration and prints "COUNT|<loops>|1|lps" (the caller times the
 * loops here); nothing else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
    unsigned long count, loop;
    char *end;
    pid_t child;
    int status;

    if (argc != 2 || argv[1][0] < '0' || argv[1][0] > '9') {
        fprintf(stderr, "usage: %s COUNT  (fork, the child exit(0)s, wait; COUNT times)\n",
                argc > 0 ? argv[0] : "spawn");
        return 1;
    }
    errno = 0;
    count = strtoul(argv[1], &end, 10);
    if (errno != 0 || *end != '\0') {
        fprintf(stderr, "spawn: COUNT must be a decimal number, not %s\n", argv[1]);
        return 1;
    }
    for (loop = 0; loop < count; loop++) {
        child = fork();
        if (child == 0)
            exit(0);
        if (child < 0) {
            fprintf(stderr, "spawn: fork failed after %lu loops: %s\n", loop, strerror(errno));
            return 1;
        }
        if (wait(&status) != child) {
            fprintf(stderr, "spawn: wait failed after %lu loops: %s\n", loop, strerror(errno));
            return 1;
        }
        if (status != 0) {
            fprintf(stderr, "spawn: a child ended with status %#x after %lu loops\n", status,
                    loop);
            return 1;
        }
    }
    return 0;
}
