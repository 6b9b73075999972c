/*
 * cpu.c: the program that runs oslab's Dhrystone and Whetstone loops (dhry_1.c, dhry_2.c,
 * whets.c, linked in) as a process of its own, the shape of UnixBench's dhry2reg and
 * whetstone-double: a small, dynamically linked C program whose main calls the benchmark.
 *
 * Why a program of its own: Dhrystone's speed depends on where its stack and data lie (a
 * store to a local and a load of a global 4 KiB apart look alike to the CPU's memory
 * disambiguation). Called from oslab's worker, deep in its Rust stack, the same object code
 * ran about 4% slower than in a small C program (measured: 52.9-54.5 against 56.3-56.6
 * million loops a second, docs/unixbench.md); shifting a small program's stack by 0-8 KiB
 * moved it by up to 5%. A program like UnixBench's places them as UnixBench's are placed.
 *
 * Usage: cpu dhrystone|whetstone COUNT
 *   dhrystone COUNT  COUNT runs of Dhrystone 2.1's main loop;
 *   whetstone COUNT  COUNT Whetstone passes (10 million Whetstone instructions each).
 *   COUNT is a decimal number, 0 allowed (the caller's baseline: the start alone).
 * Exit status: 0; 1 with a message on stderr for a bad argument.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void oslab_dhry_init(void);
void oslab_dhry_run(unsigned long long loops);
void oslab_whets_pass(unsigned long long passes);

int main(int argc, char *argv[])
{
    unsigned long long count;
    char *end;

    if (argc != 3 || argv[2][0] < '0' || argv[2][0] > '9') {
        fprintf(stderr, "usage: %s dhrystone|whetstone COUNT\n", argc > 0 ? argv[0] : "cpu");
        return 1;
    }
    errno = 0;
    count = strtoull(argv[2], &end, 10);
    if (errno != 0 || *end != '\0') {
        fprintf(stderr, "cpu: COUNT must be a decimal number, not %s\n", argv[2]);
        return 1;
    }
    if (strcmp(argv[1], "dhrystone") == 0) {
        oslab_dhry_init();
        oslab_dhry_run(count);
    } else if (strcmp(argv[1], "whetstone") == 0) {
        oslab_whets_pass(count);
    } else {
        fprintf(stderr, "cpu: no benchmark %s (dhrystone or whetstone)\n", argv[1]);
        return 1;
    }
    return 0;
}
