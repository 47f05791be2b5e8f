//===- AuditStatements.h - A statement per modelled instruction -*- C++ -*-===//
//
// One statement for every instruction MNCore2.md lists that mncc-sim
// models (manual chapter 3: MV 3.5, PE 3.6.5-3.6.9), the "Instruction
// audit" table of docs/target/mncore2.md: the audit test parses each, the
// step thread test runs them all.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TEST_UNIT_EMU_AUDITSTATEMENTS_H
#define MNCC_TEST_UNIT_EMU_AUDITSTATEMENTS_H

namespace mncc::emu {

inline const char *const AuditSupportedStatements[] = {
    // MV (manual 3.5).
    "mvnop",
    "mvp/n64i1f $p0 $d0",
    "mvb/n64 $p0@0 $lc0",
    "mvb2/n64 $d0 $lc0",
    "mvrdfadd/n64 $lc0 $p0",
    "mvr2dfadd/n64 $lc0 $p0",
    "mvb4/n64 $d0 $lc0",
    "mvr4dfadd/n64 $lc0 $d0",
    "mvd/n128 $p0@0 $lc0",
    "mvd/n64 $d0 $p0@1",
    "mvp/i02n64 $p0 $d0",
    // Synchronisation.
    "nop",
    "noforward ; lpassa $lr0 $lr2",
    "lpassa $lr0 $lr2 ; wait i1",
    // L2BM (3.6.7).
    "l2bmb $lc0 $lb0",
    "l2bmb2@3 $lc0 $lb0",
    "l2bmd $lc0 $lb0",
    "l2bmd $lb0 $lc0",
    "l2bm@1 $lb0 $lc0",
    "l2bmrdfadd $lb0 $lc0",
    "l2bmr2iiadd $lb0 $lc0",
    "l2bmi@0 $lb0 $lb64",
    "l2bmi@5/6 $lb0 $lb64",
    // L1BM (3.6.8), with the turnaround register.
    "l1bmp $lb0 $lr0",
    "l1bmm $llb0 $llr0",
    "l1bmm@0 $lr0 $lb0",
    "l1bmrdfadd $lr0 $lb0",
    "l1bmm4 $lb0 $lr0",
    "l1bmm4@0 $lr0 $lb0",
    "l1bmr4hfadd $lr0 $lb0",
    "l1bmd $lb0 $lr0",
    "l1bmd $lr0 $lb0",
    "l1bmd+1 $lb0 $lr0",
    "l1bmd-15 $lr0 $lb0",
    "l1bmm $lbi $lr0",
    "l1bmrffadd $lr0 $lbi",
    // MAU (3.6.6).
    "dmfmau $lx $lr0 $ls2 $lr4",
    "dmmuld $ly $lr0 $lr2",
    "fmfma $lx $lr0 $ls2 $lr4",
    "fmmul $lx $lr0 $lr2",
    "gmfma $lx $lr0 $ls2 $lr4",
    "gmmul $lx $lr0 $lr2",
    "hmfma $lx $lr0 $lls4 $llr8",
    "hmmul $lx $lr0 $llr4",
    "dvfmau $lr0 $ls2 $lm4 $lr6",
    "dvmuld $lr0 $ls2 $lr4",
    "dvadd $lr0 $ls2 $lr4",
    "dvpassa $lr0 $lr2",
    "fvfma $lr0 $ls2 $lm4 $lr6",
    "fvmul $lr0 $ls2 $lr4",
    "fvadd $lr0 $ls2 $lr4",
    "fvpassa $lr0 $lr2",
    "hvfma $lr0 $ls2 $llm4 $llr8",
    "hvmul $lr0 $ls2 $llr4",
    "hvadd $lr0 $lls4 $llr8",
    "hvpassa $lr0 $llr4",
    // Matrix registers.
    "dmwrite $lr0 $lx0",
    "fmwrite $lr0 $lx0",
    "gmwrite $lr0 $ly0",
    "hmwrite $llr0 $llx0",
    "dmread $lx0 $lr0",
    "fmread $lx0 $lr0",
    "gmread $ly0 $lr0",
    "hmread $llx0 $llr0",
    // ALU (3.6.9).
    "zero $lr0",
    "imm i\"1\" $lr0",
    "immu f\"1.5\" $lr0",
    "msl $lr0 $lr2",
    "msr $lr0 $lr2",
    "dpassa $lr0 $lr2",
    "uiinc $lr0 $lr2",
    "sdec $lr0 $lr2",
    "lnot $lr0 $lr2",
    "llnot $lr0 $lr2",
    "dfloor $lr0 $lr2",
    "udftoi $lr0 $lr2",
    "hbfe $lr0 $lr2",
    "gbfn $lr0 $lr2",
    "dmax $lr0 $ls2 $lr4",
    "uimin $lr0 $ls2 $lr4",
    "land $lr0 $ls2 $lr4",
    "lor $lr0 $ls2 $lr4",
    "ixor $lr0 $ls2 $lr4",
    "uladd $lr0 $ls2 $lr4",
    "ssub $lr0 $ls2 $lr4",
    "llsl $lr0 $ls2 $lr4",
    "ullsr $lr0 $ls2 $lr4",
    "lbsl $lr0 $ls2 $lr4",
    "lbsr $lr0 $ls2 $lr4",
    "drelu $lr0 $ls2 $lr4",
    "frelu0 $lr0 $ls2 $lr4",
    "hrelu1 $lr0 $ls2 $lr4",
    "drelu2 $lr0 $ls2 $lr4",
    "drelu3 $lr0 $ls2 $lr4",
    "dlrelud $lr0 $ls2 $lr4",
    "flreluo $lr0 $ls2 $lr4",
    "hilrelud $lr0 $ls2 $lr4",
    "lpackbit $lr0 $ls2 $lr4",
    "hpackbit $lr0 $ls2 $lr4",
    "drsqrt $lr0 $lr2",
};

} // namespace mncc::emu

#endif // MNCC_TEST_UNIT_EMU_AUDITSTATEMENTS_H
