/*
 * dhry_1.c: oslab's C Dhrystone 2.1, part 1 of 2: the globals, the main loop and
 * Proc_1 .. Proc_5 (Proc_6 .. Proc_8 and Func_1 .. Func_3 are in dhry_2.c, a separate
 * translation unit, so the calls between the two files are real calls, as in Weicker's
 * distribution and in UnixBench's build).
 *
 * Written for oslab from the published algorithm: Reinhold P. Weicker, "Dhrystone: a
 * synthetic systems programming benchmark", Communications of the ACM 27(10), 1984, in the
 * form of version 2.1 (1988). It stands in for UnixBench's "Dhrystone 2 using register
 * variables" (`dhry2reg`, UnixBench's dhry_1.c + dhry_2.c built with -DREG=register and
 * `-O3 -ffast-math`) and follows oslab's Rust port (../dhrystone.rs). Nothing is copied from
 * UnixBench (GPL); see dhry.h.
 *
 * Weicker's main program becomes three entry points (no main):
 *   oslab_dhry_init()       the set-up Weicker's main does before its loop;
 *   oslab_dhry_run(loops)   `loops` runs of the loop body, Run_Index continuing;
 *   oslab_dhry_globals(...) the final values Weicker's program prints, for a check.
 * One loop is one Dhrystone (UnixBench's "lps" counts these).
 *
 * The differences from UnixBench's dhry2reg, none of which changes the work in a loop:
 * no alarm or report (the caller times and counts); the loop runs a given number of times
 * (UnixBench's runs until SIGALRM), which adds one counter compare per loop; Str_1_Loc is
 * set up again (one strcpy) at the start of each oslab_dhry_run call, where UnixBench's
 * main sets it once.
 */
#include <stdlib.h>
#include <string.h>

#include "dhry.h"

/* Weicker's globals. Non-static, as in the original, so that the compiler must assume the
 * procedures of dhry_2.c read and write them. */
Rec_Pointer Ptr_Glob, Next_Ptr_Glob;
int Int_Glob;
Boolean Bool_Glob;
char Ch_1_Glob, Ch_2_Glob;
int Arr_1_Glob[50];
int Arr_2_Glob[50][50];
/* The loop counter; a global, as in UnixBench's dhry_1.c, where the SIGALRM handler reads
 * it. Counts loops over the life of the process. */
unsigned long Run_Index;

void oslab_dhry_init(void)
{
    if (Ptr_Glob != Null)
        return; /* already set up in this process: keep the state */

    Next_Ptr_Glob = (Rec_Pointer)malloc(sizeof(Rec_Type));
    Ptr_Glob = (Rec_Pointer)malloc(sizeof(Rec_Type));
    if (Next_Ptr_Glob == Null || Ptr_Glob == Null)
        abort(); /* two records of 56 bytes: nothing sensible to do without them */

    Ptr_Glob->Ptr_Comp = Next_Ptr_Glob;
    Ptr_Glob->Discr = Ident_1;
    Ptr_Glob->variant.var_1.Enum_Comp = Ident_3;
    Ptr_Glob->variant.var_1.Int_Comp = 40;
    strcpy(Ptr_Glob->variant.var_1.Str_Comp, "DHRYSTONE PROGRAM, SOME STRING");

    /* Set in version 2.1; without it Arr_2_Glob[8][7] would start undefined. */
    Arr_2_Glob[8][7] = 10;
}

void oslab_dhry_run(unsigned long long loops)
{
    One_Fifty Int_1_Loc;
    REG One_Fifty Int_2_Loc;
    One_Fifty Int_3_Loc;
    REG char Ch_Index;
    Enumeration Enum_Loc;
    Str_30 Str_1_Loc;
    Str_30 Str_2_Loc;
    unsigned long long done;

    if (Ptr_Glob == Null)
        oslab_dhry_init();

    strcpy(Str_1_Loc, "DHRYSTONE PROGRAM, 1'ST STRING");

    for (done = 0; done < loops; ++done) {
        ++Run_Index;

        Proc_5();
        Proc_4();
        /* now Ch_1_Glob == 'A', Ch_2_Glob == 'B', Bool_Glob == true */
        Int_1_Loc = 2;
        Int_2_Loc = 3;
        strcpy(Str_2_Loc, "DHRYSTONE PROGRAM, 2'ND STRING");
        Enum_Loc = Ident_2;
        Bool_Glob = !Func_2(Str_1_Loc, Str_2_Loc);
        /* Bool_Glob == 1 */
        while (Int_1_Loc < Int_2_Loc) { /* once */
            Int_3_Loc = 5 * Int_1_Loc - Int_2_Loc; /* 7 */
            Proc_7(Int_1_Loc, Int_2_Loc, &Int_3_Loc); /* 7 again */
            Int_1_Loc += 1;
        }
        /* Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7 */
        Proc_8(Arr_1_Glob, Arr_2_Glob, Int_1_Loc, Int_3_Loc);
        /* Int_Glob == 5 */
        Proc_1(Ptr_Glob);
        for (Ch_Index = 'A'; Ch_Index <= Ch_2_Glob; ++Ch_Index) { /* twice */
            if (Enum_Loc == Func_1(Ch_Index, 'C')) { /* never true */
                Proc_6(Ident_1, &Enum_Loc);
                strcpy(Str_2_Loc, "DHRYSTONE PROGRAM, 3'RD STRING");
                Int_2_Loc = (One_Fifty)Run_Index;
                Int_Glob = (int)Run_Index;
            }
        }
        /* Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7 */
        Int_2_Loc = Int_2_Loc * Int_1_Loc;
        Int_1_Loc = Int_2_Loc / Int_3_Loc;
        Int_2_Loc = 7 * (Int_2_Loc - Int_3_Loc) - Int_1_Loc;
        /* Int_1_Loc == 1, Int_2_Loc == 13, Int_3_Loc == 7 */
        Proc_2(&Int_1_Loc);
        /* Int_1_Loc == 5 */
    }
}

void oslab_dhry_globals(long *int_glob, int *bool_glob, char *ch_1, char *ch_2, long *arr_1_8,
                        long *arr_2_8_7)
{
    /* Weicker's expected values: 5, 1, 'A', 'B', 7, and loops run + 10 (an int, so it
     * wraps after 2^31 - 11 loops in a process, as in the original). */
    *int_glob = Int_Glob;
    *bool_glob = Bool_Glob;
    *ch_1 = Ch_1_Glob;
    *ch_2 = Ch_2_Glob;
    *arr_1_8 = Arr_1_Glob[8];
    *arr_2_8_7 = Arr_2_Glob[8][7];
}

void Proc_1(REG Rec_Pointer Ptr_Val_Par)
{
    /* Next_Record renames Ptr_Val_Par->Ptr_Comp (== Next_Ptr_Glob), like Ada's "renames". */
    REG Rec_Pointer Next_Record = Ptr_Val_Par->Ptr_Comp;

    *Ptr_Val_Par->Ptr_Comp = *Ptr_Glob; /* structure assignment */
    Ptr_Val_Par->variant.var_1.Int_Comp = 5;
    Next_Record->variant.var_1.Int_Comp = Ptr_Val_Par->variant.var_1.Int_Comp;
    Next_Record->Ptr_Comp = Ptr_Val_Par->Ptr_Comp;
    Proc_3(&Next_Record->Ptr_Comp);
    /* Ptr_Val_Par->Ptr_Comp->Ptr_Comp == Ptr_Glob->Ptr_Comp */
    if (Next_Record->Discr == Ident_1) { /* taken */
        Next_Record->variant.var_1.Int_Comp = 6;
        Proc_6(Ptr_Val_Par->variant.var_1.Enum_Comp, &Next_Record->variant.var_1.Enum_Comp);
        Next_Record->Ptr_Comp = Ptr_Glob->Ptr_Comp;
        Proc_7(Next_Record->variant.var_1.Int_Comp, 10, &Next_Record->variant.var_1.Int_Comp);
    } else { /* not taken */
        *Ptr_Val_Par = *Ptr_Val_Par->Ptr_Comp;
    }
}

void Proc_2(One_Fifty *Int_Par_Ref)
{
    /* *Int_Par_Ref == 1 on entry, 4 on return */
    One_Fifty Int_Loc;
    Enumeration Enum_Loc;

    /* Weicker leaves Enum_Loc undefined here; UnixBench's version starts it at 0, which is
     * Ident_1, and so does this one, so that gcc sees the same loop. The body runs once
     * either way, since Ch_1_Glob is 'A'. */
    Enum_Loc = Ident_1;
    Int_Loc = *Int_Par_Ref + 10;
    do { /* once */
        if (Ch_1_Glob == 'A') { /* taken */
            Int_Loc -= 1;
            *Int_Par_Ref = Int_Loc - Int_Glob;
            Enum_Loc = Ident_1;
        }
    } while (Enum_Loc != Ident_1);
}

void Proc_3(Rec_Pointer *Ptr_Ref_Par)
{
    /* *Ptr_Ref_Par becomes Ptr_Glob->Ptr_Comp */
    if (Ptr_Glob != Null) /* taken */
        *Ptr_Ref_Par = Ptr_Glob->Ptr_Comp;
    Proc_7(10, Int_Glob, &Ptr_Glob->variant.var_1.Int_Comp);
}

void Proc_4(void)
{
    Boolean Bool_Loc;

    Bool_Loc = Ch_1_Glob == 'A';
    Bool_Glob = Bool_Loc | Bool_Glob;
    Ch_2_Glob = 'B';
}

void Proc_5(void)
{
    Ch_1_Glob = 'A';
    Bool_Glob = false;
}
