//===- Passes.td - L3IR and emission passes -----------------*- tablegen -*-===//

#ifndef MNCC_PASSES_L3_PASSES_TD
#define MNCC_PASSES_L3_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToL3 : Pass<"mncc-lower-to-l3", "mlir::ModuleOp"> {
  let summary = "Turns the planned graph into kernels over DRAM buffers";
  let description = [{
    Every tensor of the planned graph (after `mncc-plan-layouts`) becomes an
    `l3.buffer` in its DRAM form and every node an `l3.kernel`, in graph
    order, inside one `l3.schedule`; the function is removed. Graph inputs
    and outputs are `input` and `output` buffers named as in the model; a
    Cast at the graph's boundary or of a constant becomes the host's
    conversion at staging (`host_type`), not a kernel. A Reshape, Flatten,
    Squeeze, Unsqueeze or Identity whose result has the same bytes as its
    operand (`sameBytes`) becomes an alias of the operand's buffer; a
    `mngraph.layout_switch` becomes a Transpose kernel between the two
    forms.
  }];
  let dependentDialects = ["::mncc::l3::L3Dialect",
                           "::mncc::graph::GraphDialect"];
}

def SelectKernels : Pass<"mncc-select-kernels", "mlir::ModuleOp"> {
  let summary = "Chooses the kernel generator of every kernel, or the host";
  let description = [{
    Sets `generator` on every `l3.kernel` to the first kernel generator that
    takes it (docs/codegen.md C10), and gives each constant a kernel packs
    in its own arrangement its `arrangement` and size (C3); a constant that
    two kernels read in different arrangements is split in two buffers.

    A node whose operator is in `ops-on-host` (CODEGEN_OPS_ON_HOST), or
    that no generator takes while `host-fallback` is on, runs on the host:
    `generator = "host"` with the reason in `host_reason`; the runtime runs
    it on pfvm:cpu between the device programs (docs/codegen.md, "Host
    partitions"). A node no generator takes with `host-fallback` off, or
    that pfvm:cpu cannot run either, is an error naming the node, its
    operator and every generator's reason.
  }];
  let options = [
    ListOption<"opsOnHost", "ops-on-host", "std::string",
               "Operator types to run on the host (CODEGEN_OPS_ON_HOST)">,
    Option<"hostFallback", "host-fallback", "bool", "true",
           "Run on the host the nodes no device kernel takes">,
  ];
}

def FuseEpilogues : Pass<"mncc-fuse-epilogues", "mlir::ModuleOp"> {
  let summary = "Folds a Relu or Clip into the device kernel before it";
  let description = [{
    A Relu, or a Clip of constant or absent bounds, whose input is a
    temporary buffer written by one device kernel and read by nothing else,
    and whose output has the same DRAM form, is folded into that kernel
    when its generator clamps as it stores
    (`KernelGenerator::fusesActivation`: conv, gemm and elementwise today)
    and emits the combined request (docs/codegen.md L2a). The kernel then
    writes the activation's output buffer, with `activation` and
    `activation_bounds` set; the activation's kernel and the buffer between
    them go. Runs after mncc-select-kernels.

    Example: `l3.kernel "Conv" ... -> [@t]` and `l3.kernel "Relu" ... [@t]
    -> [@y]` become `l3.kernel "Conv" ... -> [@y] {activation = "Relu",
    activation_bounds = array<f32: 0.000000e+00, 0x7F800000>}`.

    Two Casts of float_dtype=mixed fold as well (docs/codegen.md V8, V9):
    before the activations, a device Cast from half to single into the Add
    that alone reads its result, when the `cast-add` generator takes the
    Add with the half source; after them, a device Cast into the kernel
    that alone writes its source, when that kernel's generator writes the
    Cast's result as one more output (`writesNarrowedCopy`): `l3.kernel
    "Add" ... -> [@s]` and `l3.kernel "Cast" [@s] -> [@h]` become
    `l3.kernel "Add" ... -> [@s, @h]`.
  }];
}

def Schedule : Pass<"mncc-schedule", "mlir::ModuleOp"> {
  let summary = "Orders kernels and their transfers (the scheduler option)";
  let description = [{
    `always_from_dram`: every kernel reads its inputs from DRAM and writes
    its outputs back (docs/codegen.md C1), in graph order. The other
    schedulers (`reuse_consecutive`, `spill_opt`, `auto_recompute_sa`) fall
    back to it until they exist; the schedule records the scheduler asked
    for and the one used.
  }];
  let options = [
    Option<"scheduler", "scheduler", "std::string", "\"reuse_consecutive\"",
           "always_from_dram, reuse_consecutive, spill_opt or "
           "auto_recompute_sa">,
  ];
}

def PlanAddresses : Pass<"mncc-plan-addresses", "mlir::ModuleOp"> {
  let summary = "Gives every buffer its DRAM address, reusing memory";
  let description = [{
    Allocates every buffer at the same long word address in each group it
    uses, 64-long-word aligned, first fit over the addresses free for the
    buffer's lifetime: graph inputs, outputs and constants for the whole
    program, a temporary from the kernel that writes it to the last kernel
    that reads it. An alias takes no memory of its own. The schedule records
    the DRAM each group needs (`dram_long_words`).
  }];
}

def EmitKernels : Pass<"mncc-emit-kernels", "mlir::ModuleOp"> {
  let summary = "Writes every kernel's MN-Core 2 assembly";
  let description = [{
    Runs each kernel's generator on its buffers (with their addresses) and
    keeps the assembly in the kernel's `vsm`, with the generator's `variant`
    and `parameters`.
  }];
}

def LinkProgram : Pass<"mncc-link-program", "mlir::ModuleOp"> {
  let summary = "Joins the kernels' assembly into one program";
  let description = [{
    Concatenates the kernels' assembly in schedule order, each preceded by a
    comment naming its graph node and a `#pragma mncc kernel` line (the
    kernel is self-contained, docs/codegen.md C1), into one `l3.program`:
    the program.vsm of the codegen_dir. A host node is a `# host node ...` line between the
    device programs. With `use-merge` (CODEGEN_USE_MERGE) the instruction
    streams of consecutive kernels would be merged (L1Merge); until that
    exists the kernels are concatenated.
  }];
  let options = [
    Option<"useMerge", "use-merge", "bool", "false", "CODEGEN_USE_MERGE">,
  ];
}

#endif // MNCC_PASSES_L3_PASSES_TD
