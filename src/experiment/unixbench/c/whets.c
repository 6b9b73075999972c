/*
 * whets.c: oslab's C double-precision Whetstone, in the form of Roy Longbottom's C/C++
 * Whetstone (sections N1 .. N8, inner loops x100 times the loop constants), for the
 * unixbench.whetstone experiment.
 *
 * Written for oslab from the published algorithm: H. J. Curnow and B. A. Wichmann, "A
 * synthetic benchmark", The Computer Journal 19(1), 1976, as restructured by Roy Longbottom
 * in his C/C++ Whetstone of 1996-97 (eight active loops, each run x100 = 100 times its loop
 * constant: 12, 14, 345, 210, 32, 899, 616, 93; T = 0.49999975, T1 = 0.50000025, T2 = 2;
 * procedures PA, PO and P3). It stands in for UnixBench's "Double-Precision Whetstone"
 * (`pgms/whetstone-double`, Longbottom's whets.c built with -DDP and `-O3 -ffast-math`) and
 * follows oslab's Rust port, ../whetstone.rs, pass for pass. Nothing is copied from
 * UnixBench (GPL): the code was written again from the algorithm, and only the facts that
 * fix the work were checked against UnixBench's whets.c (the loop counts, the constants,
 * the order of the operations, PA/PO/P3 as separate functions in the same file, the
 * results kept in globals).
 *
 * One pass is the eight sections once each with x100 = 100, exactly as ../whetstone.rs's
 * `pass()`: section N1 runs its 1,200 loops once (whets.c runs it ten times as often and
 * divides its time by ten, so this is the time whets.c counts); a pass is 10 million
 * Whetstone instructions, so MWIPS = passes per second x 10 = 1e10 / nanoseconds per pass
 * (whets.c: MWIPS = xtra * x100 / (10 * seconds)). As in the Rust port, the array e1 and T
 * carry over from pass to pass (T alternating between 0.49999975 and 0.50000025, the
 * values whets.c alternates between), and the other sections start afresh each pass.
 * (whets.c alternates T within N1, N2 and N5 only and uses 0.49999975 in N6; the cost is
 * the same.) The results after the first pass are N1 -1.1323949930313546, N2
 * -1.1302710247846879, N3 1, N4 12, N5 0.4990293728151826, N6 0.9999998789080281, N7 3,
 * N8 0.7510016301845419 (N5, N6 and N8 as in Longbottom's published double-precision
 * results; N1 and N2 differ because N1 runs 1,200 loops, not 12,000); the check sum
 * 15.987 settles at 22.3166 after some 200 passes, e1 converging.
 *
 * Optimisation: the sections are written as whets.c writes them, with constant starting
 * values in locals and PA/PO/P3 as ordinary external functions of this file, so that gcc
 * at `-O3 -ffast-math` may simplify them exactly as it simplifies UnixBench's build (gcc 12
 * folds the integer section N4 to constants and turns N3's if-chain into j = 1 - j there
 * too; it turns sqrt(exp(a)) in N8 into exp(a / 2)). Here this C differs from the Rust
 * port, whose black_box calls make N3 and N4 do their full integer work. What the compiler
 * may not do is drop a pass: each section's result is stored to an external global
 * (oslab_whets_results, like whets.c's results[] and Check, which its main prints), and a
 * pass is a separate, non-inlined function whose state (e1, T) lives in external globals.
 * The state is saved as soon as it is final (e1[3] after N2, T after N6, e1[0..2] after
 * N7) so that it is not live, and spilled to the stack, through later loops: compiled
 * with gcc 12 at -O3 -ffast-math, each section's inner loop is then the same instruction
 * sequence as in UnixBench's build, give or take a register move.
 *
 * Entry points:
 *   void oslab_whets_pass(unsigned long long passes);  run `passes` passes
 *   double oslab_whets_check(void);  the sum of the eight sections' results of the last
 *       pass (whets.c's Check); ../whetstone.rs computes the same sum in `check`.
 * Globals: not thread-safe; one thread at a time.
 */
#include <math.h>

/* Hidden visibility for everything defined here (see dhry.h): with -fPIC, the cc crate's
 * default, default-visibility globals would be reached through the GOT and PA, PO and P3,
 * being interposable, would not be inlined, unlike in UnixBench's executable. */
#pragma GCC visibility push(hidden)

#define X100 100L /* whets.c's x100 */

/* The state and the results, external so that the compiler must keep every pass. */
double oslab_whets_e1[4] = {1.0, -1.0, -1.0, -1.0};
double oslab_whets_t = 0.49999975;
double oslab_whets_results[9]; /* [1] .. [8]: each section's check value, as in whets.c */

void oslab_whets_pa(double e[4], double t, double t2);
void oslab_whets_po(double e1[4], long j, long k, long l);
void oslab_whets_p3(double *x, double *y, double *z, double t, double t1, double t2);
void oslab_whets_one_pass(void) __attribute__((noinline));

void oslab_whets_one_pass(void)
{
    long n1, n2, n3, n4, n5, n6, n7, n8, i;
    long j, k, l;
    double x, y, z;
    double e1[4];
    double t = oslab_whets_t;
    double t1 = 0.50000025;
    double t2 = 2.0;

    n1 = 12 * X100;
    n2 = 14 * X100;
    n3 = 345 * X100;
    n4 = 210 * X100;
    n5 = 32 * X100;
    n6 = 899 * X100;
    n7 = 616 * X100;
    n8 = 93 * X100;

    e1[0] = oslab_whets_e1[0];
    e1[1] = oslab_whets_e1[1];
    e1[2] = oslab_whets_e1[2];
    e1[3] = oslab_whets_e1[3];

    /* N1: array elements. */
    for (i = 0; i < n1; i++) {
        e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
        e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
        e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
        e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
    }
    oslab_whets_results[1] = e1[3];

    /* N2: array as parameter. */
    for (i = 0; i < n2; i++)
        oslab_whets_pa(e1, t, t2);
    oslab_whets_results[2] = e1[3];
    /* e1[3] is final here (N4 writes only e1[0] and e1[1], N7 only e1[0..2]); saving it now
     * keeps it from being live, and spilled, through N2's loop. */
    oslab_whets_e1[3] = e1[3];

    /* N3: conditional jumps. */
    j = 1;
    for (i = 0; i < n3; i++) {
        if (j == 1)
            j = 2;
        else
            j = 3;
        if (j > 2)
            j = 0;
        else
            j = 1;
        if (j < 1)
            j = 1;
        else
            j = 0;
    }
    oslab_whets_results[3] = (double)j;

    /* N4: integer arithmetic. */
    j = 1;
    k = 2;
    l = 3;
    for (i = 0; i < n4; i++) {
        j = j * (k - j) * (l - k);
        k = l * k - (l - j) * k;
        l = (l - k) * (k + j);
        e1[l - 2] = j + k + l;
        e1[k - 2] = j * k * l;
    }
    x = e1[0] + e1[1];
    oslab_whets_results[4] = x;

    /* N5: trigonometric functions. */
    x = 0.5;
    y = 0.5;
    for (i = 1; i < n5; i++) {
        x = t * atan(t2 * sin(x) * cos(x) / (cos(x + y) + cos(x - y) - 1.0));
        y = t * atan(t2 * sin(y) * cos(y) / (cos(x + y) + cos(x - y) - 1.0));
    }
    oslab_whets_results[5] = y;

    /* N6: procedure calls. */
    x = 1.0;
    y = 1.0;
    z = 1.0;
    for (i = 0; i < n6; i++)
        oslab_whets_p3(&x, &y, &z, t, t1, t2);
    oslab_whets_results[6] = z;
    oslab_whets_t = 1.0 - t; /* T for the next pass; N7 and N8 do not use it */

    /* N7: array references. */
    j = 0;
    k = 1;
    l = 2;
    e1[0] = 1.0;
    e1[1] = 2.0;
    e1[2] = 3.0;
    for (i = 0; i < n7; i++)
        oslab_whets_po(e1, j, k, l);
    oslab_whets_results[7] = e1[2];
    /* e1 is final for this pass: save it before N8, whose calls would otherwise make the
     * compiler keep it on the stack around every log and exp. */
    oslab_whets_e1[0] = e1[0];
    oslab_whets_e1[1] = e1[1];
    oslab_whets_e1[2] = e1[2];

    /* N8: standard functions. */
    x = 0.75;
    for (i = 0; i < n8; i++)
        x = sqrt(exp(log(x) / t1));
    oslab_whets_results[8] = x;

}

void oslab_whets_pass(unsigned long long passes)
{
    unsigned long long p;

    for (p = 0; p < passes; p++)
        oslab_whets_one_pass();
}

double oslab_whets_check(void)
{
    /* whets.c's Check: the sum of the sections' results. Summed here, when asked, rather
     * than at the end of each pass, where the partial sums would stay live (and spilled)
     * through N8's calls. */
    return oslab_whets_results[1] + oslab_whets_results[2] + oslab_whets_results[3] +
           oslab_whets_results[4] + oslab_whets_results[5] + oslab_whets_results[6] +
           oslab_whets_results[7] + oslab_whets_results[8];
}

void oslab_whets_pa(double e[4], double t, double t2)
{
    long j;

    for (j = 0; j < 6; j++) {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

void oslab_whets_po(double e1[4], long j, long k, long l)
{
    e1[j] = e1[k];
    e1[k] = e1[l];
    e1[l] = e1[j];
}

void oslab_whets_p3(double *x, double *y, double *z, double t, double t1, double t2)
{
    *x = *y;
    *y = *z;
    *x = t * (*x + *y);
    *y = t1 * (*x + *y);
    *z = (*x + *y) / t2;
}

#pragma GCC visibility pop
