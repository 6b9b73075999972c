/*
 * dhry_2.c: oslab's C Dhrystone 2.1, part 2 of 2: Proc_6 .. Proc_8 and Func_1 .. Func_3,
 * called from dhry_1.c across translation units (compiled separately, no LTO, so these
 * are real calls, as in Weicker's distribution and UnixBench's dhry2reg).
 *
 * Written for oslab from the published algorithm: Reinhold P. Weicker, "Dhrystone: a
 * synthetic systems programming benchmark", Communications of the ACM 27(10), 1984, in the
 * form of version 2.1 (1988). Stands in for UnixBench's dhry_2.c (built with
 * -DREG=register, `-O3 -ffast-math`); follows oslab's Rust port (../dhrystone.rs). Nothing
 * is copied from UnixBench (GPL); see dhry.h.
 */
#include <string.h>

#include "dhry.h"

void Proc_6(Enumeration Enum_Val_Par, Enumeration *Enum_Ref_Par)
{
    /* Enum_Val_Par == Ident_3 here; *Enum_Ref_Par becomes Ident_2 */
    *Enum_Ref_Par = Enum_Val_Par;
    if (!Func_3(Enum_Val_Par)) /* not taken */
        *Enum_Ref_Par = Ident_4;
    switch (Enum_Val_Par) {
    case Ident_1:
        *Enum_Ref_Par = Ident_1;
        break;
    case Ident_2:
        if (Int_Glob > 100)
            *Enum_Ref_Par = Ident_1;
        else
            *Enum_Ref_Par = Ident_4;
        break;
    case Ident_3: /* taken */
        *Enum_Ref_Par = Ident_2;
        break;
    case Ident_4:
        break;
    case Ident_5:
        *Enum_Ref_Par = Ident_3;
        break;
    }
}

void Proc_7(One_Fifty Int_1_Par_Val, One_Fifty Int_2_Par_Val, One_Fifty *Int_Par_Ref)
{
    /* Called three times a loop: (2, 3) -> 7, (10, 5) -> 17, (6, 10) -> 18. */
    One_Fifty Int_Loc;

    Int_Loc = Int_1_Par_Val + 2;
    *Int_Par_Ref = Int_2_Par_Val + Int_Loc;
}

void Proc_8(Arr_1_Dim Arr_1_Par_Ref, Arr_2_Dim Arr_2_Par_Ref, int Int_1_Par_Val,
            int Int_2_Par_Val)
{
    /* Int_1_Par_Val == 3, Int_2_Par_Val == 7 */
    REG One_Fifty Int_Index;
    REG One_Fifty Int_Loc;

    Int_Loc = Int_1_Par_Val + 5;
    Arr_1_Par_Ref[Int_Loc] = Int_2_Par_Val;
    Arr_1_Par_Ref[Int_Loc + 1] = Arr_1_Par_Ref[Int_Loc];
    Arr_1_Par_Ref[Int_Loc + 30] = Int_Loc;
    for (Int_Index = Int_Loc; Int_Index <= Int_Loc + 1; ++Int_Index)
        Arr_2_Par_Ref[Int_Loc][Int_Index] = Int_Loc;
    Arr_2_Par_Ref[Int_Loc][Int_Loc - 1] += 1;
    Arr_2_Par_Ref[Int_Loc + 20][Int_Loc] = Arr_1_Par_Ref[Int_Loc];
    Int_Glob = 5;
}

Enumeration Func_1(Capital_Letter Ch_1_Par_Val, Capital_Letter Ch_2_Par_Val)
{
    /* Called three times a loop: ('H', 'R'), ('A', 'C'), ('B', 'C'); returns Ident_1. */
    Capital_Letter Ch_1_Loc;
    Capital_Letter Ch_2_Loc;

    Ch_1_Loc = Ch_1_Par_Val;
    Ch_2_Loc = Ch_1_Loc;
    if (Ch_2_Loc != Ch_2_Par_Val) { /* taken */
        return Ident_1;
    } else {
        Ch_1_Glob = Ch_1_Loc;
        return Ident_2;
    }
}

Boolean Func_2(Str_30 Str_1_Par_Ref, Str_30 Str_2_Par_Ref)
{
    /* "DHRYSTONE PROGRAM, 1'ST STRING" and "DHRYSTONE PROGRAM, 2'ND STRING": false */
    REG One_Thirty Int_Loc;
    Capital_Letter Ch_Loc;

    Ch_Loc = 'A';
    Int_Loc = 2;
    while (Int_Loc <= 2) { /* once */
        if (Func_1(Str_1_Par_Ref[Int_Loc], Str_2_Par_Ref[Int_Loc + 1]) == Ident_1) {
            Ch_Loc = 'A';
            Int_Loc += 1;
        }
    }
    if (Ch_Loc >= 'W' && Ch_Loc < 'Z') /* not taken */
        Int_Loc = 7;
    if (Ch_Loc == 'R') { /* not taken */
        return true;
    } else {
        if (strcmp(Str_1_Par_Ref, Str_2_Par_Ref) > 0) { /* not taken */
            Int_Loc += 7;
            Int_Glob = Int_Loc;
            return true;
        } else {
            return false;
        }
    }
}

Boolean Func_3(Enumeration Enum_Par_Val)
{
    /* Enum_Par_Val == Ident_3: true */
    Enumeration Enum_Loc;

    Enum_Loc = Enum_Par_Val;
    if (Enum_Loc == Ident_3)
        return true;
    else
        return false;
}
