/*
 * dhry.h: declarations shared by dhry_1.c and dhry_2.c, oslab's C Dhrystone 2.1.
 *
 * Written for oslab from the published algorithm: Reinhold P. Weicker, "Dhrystone: a
 * synthetic systems programming benchmark", Communications of the ACM 27(10), 1984, and
 * version 2.1 of the program ("Dhrystone benchmark results", CACM 31(10), 1988, and the
 * `dhry-c` distribution). It stands in for UnixBench's "Dhrystone 2 using register
 * variables" (`pgms/dhry2reg`, built from `dhry_1.c` and `dhry_2.c` with `-DREG=register`),
 * and mirrors oslab's Rust port in ../dhrystone.rs. No UnixBench (GPL) text is copied: the
 * code was written again from Weicker's description; only the facts that fix the work per
 * loop were checked against UnixBench (the types below, the split between the two files,
 * `register` locals, malloc'd records, strcpy/strcmp of the 30-character strings).
 *
 * As in the 2.1 sources: One_Thirty, One_Fifty, Boolean and the array elements are `int`;
 * the strings are 31-byte arrays (30 characters and the NUL); the records are a struct
 * with a union of three variants, copied whole by structure assignment.
 *
 * The program's identifiers are Weicker's. So that they cannot collide with anything else
 * linked into oslab, every external one is renamed below to an `oslab_dhry_` symbol.
 * Globals: not thread-safe; one thread at a time.
 */
#ifndef OSLAB_DHRY_H
#define OSLAB_DHRY_H

/* UnixBench's dhry2reg is built with -DREG=register; this file stands in for that build,
 * so REG is `register` unless the build defines it otherwise. */
#ifndef REG
#define REG register
#endif

/* External names, prefixed for the linker. */
#define Ptr_Glob      oslab_dhry_Ptr_Glob
#define Next_Ptr_Glob oslab_dhry_Next_Ptr_Glob
#define Int_Glob      oslab_dhry_Int_Glob
#define Bool_Glob     oslab_dhry_Bool_Glob
#define Ch_1_Glob     oslab_dhry_Ch_1_Glob
#define Ch_2_Glob     oslab_dhry_Ch_2_Glob
#define Arr_1_Glob    oslab_dhry_Arr_1_Glob
#define Arr_2_Glob    oslab_dhry_Arr_2_Glob
#define Run_Index     oslab_dhry_Run_Index
#define Proc_1        oslab_dhry_Proc_1
#define Proc_2        oslab_dhry_Proc_2
#define Proc_3        oslab_dhry_Proc_3
#define Proc_4        oslab_dhry_Proc_4
#define Proc_5        oslab_dhry_Proc_5
#define Proc_6        oslab_dhry_Proc_6
#define Proc_7        oslab_dhry_Proc_7
#define Proc_8        oslab_dhry_Proc_8
#define Func_1        oslab_dhry_Func_1
#define Func_2        oslab_dhry_Func_2
#define Func_3        oslab_dhry_Func_3

/* Every symbol below has hidden visibility: still linked normally into oslab's binary, but
 * never interposable, so that a build with -fPIC (the cc crate's default) compiles these
 * files as UnixBench's executable (-fPIE or non-PIC) is compiled: direct access to the
 * globals, and the procedures of one file may be inlined into its callers there. Without
 * this, -fPIC routes every global through the GOT and stops gcc inlining Proc_2, Proc_4
 * and Proc_5 into the loop, as it does in UnixBench's dhry2reg. Include system headers
 * before this file. */
#pragma GCC visibility push(hidden)

typedef enum { Ident_1, Ident_2, Ident_3, Ident_4, Ident_5 } Enumeration;

#define Null 0
#define true 1
#define false 0

typedef int One_Thirty;
typedef int One_Fifty;
typedef char Capital_Letter;
typedef int Boolean;
typedef char Str_30[31];
typedef int Arr_1_Dim[50];
typedef int Arr_2_Dim[50][50];

typedef struct record {
    struct record *Ptr_Comp;
    Enumeration Discr;
    union {
        struct {
            Enumeration Enum_Comp;
            int Int_Comp;
            char Str_Comp[31];
        } var_1;
        struct {
            Enumeration E_Comp_2;
            char Str_2_Comp[31];
        } var_2;
        struct {
            char Ch_1_Comp;
            char Ch_2_Comp;
        } var_3;
    } variant;
} Rec_Type, *Rec_Pointer;

/* Globals, defined in dhry_1.c. */
extern Rec_Pointer Ptr_Glob, Next_Ptr_Glob;
extern int Int_Glob;
extern Boolean Bool_Glob;
extern char Ch_1_Glob, Ch_2_Glob;
extern int Arr_1_Glob[50];
extern int Arr_2_Glob[50][50];
extern unsigned long Run_Index;

/* dhry_1.c */
void Proc_1(Rec_Pointer Ptr_Val_Par);
void Proc_2(One_Fifty *Int_Par_Ref);
void Proc_3(Rec_Pointer *Ptr_Ref_Par);
void Proc_4(void);
void Proc_5(void);

/* dhry_2.c */
void Proc_6(Enumeration Enum_Val_Par, Enumeration *Enum_Ref_Par);
void Proc_7(One_Fifty Int_1_Par_Val, One_Fifty Int_2_Par_Val, One_Fifty *Int_Par_Ref);
void Proc_8(Arr_1_Dim Arr_1_Par_Ref, Arr_2_Dim Arr_2_Par_Ref, int Int_1_Par_Val,
            int Int_2_Par_Val);
Enumeration Func_1(Capital_Letter Ch_1_Par_Val, Capital_Letter Ch_2_Par_Val);
Boolean Func_2(Str_30 Str_1_Par_Ref, Str_30 Str_2_Par_Ref);
Boolean Func_3(Enumeration Enum_Par_Val);

/* oslab's entry points (dhry_1.c). */
void oslab_dhry_init(void);
void oslab_dhry_run(unsigned long long loops);
void oslab_dhry_globals(long *int_glob, int *bool_glob, char *ch_1, char *ch_2, long *arr_1_8,
                        long *arr_2_8_7);

#pragma GCC visibility pop

#endif /* OSLAB_DHRY_H */
