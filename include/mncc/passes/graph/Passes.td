//===- Passes.td - MNGraph passes ---------------------------*- tablegen -*-===//

#ifndef MNCC_PASSES_GRAPH_PASSES_TD
#define MNCC_PASSES_GRAPH_PASSES_TD

include "mlir/Pass/PassBase.td"

def StripLayouts : Pass<"mngraph-strip-layouts", "mlir::ModuleOp"> {
  let summary = "Drops every MN-Core 2 layout, leaving a host-only graph";
  let description = [{
    Removes the `#mngraph.layout` encoding from every tensor type (values,
    block arguments and function signatures) and erases the
    `mngraph.layout_switch` ops that become identities. The result is the
    same computation in the host's dense order, which the host reference
    executor runs and compares against the device.

    Example:

    ```mlir
    func.func @f(%a: tensor<4xf32, #mngraph.layout<((4_PE:1))>>)
        -> tensor<4xf32, #mngraph.layout<((4_MAB:1))>> {
      %b = mngraph.layout_switch %a : tensor<4xf32, #mngraph.layout<((4_PE:1))>>
                                   -> tensor<4xf32, #mngraph.layout<((4_MAB:1))>>
      return %b : tensor<4xf32, #mngraph.layout<((4_MAB:1))>>
    }
    ```
    becomes
    ```mlir
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mncc::graph::GraphDialect"];
}

def PlanDtypes : Pass<"mncc-plan-dtypes", "mlir::ModuleOp"> {
  let summary = "Gives every floating tensor its device format (float_dtype)";
  let description = [{
    Decides the device format of each float32 tensor by `float_dtype` and
    inserts `onnx.Cast` where a format changes. In the graph stage and after,
    `f16` is MN-Core 2's half (1-6-9, docs/target/mncore2.md), not IEEE
    binary16.

    - `mixed`: the inputs and outputs of Gemm, MatMul and Conv are half;
      everything else single, but a Relu or Clip that is a product's only
      user, which stays in half with it (mncc-fuse-epilogues folds it into
      the product's kernel). A single value read by several products is cast
      to half once. An op that only selects or moves values (MaxPool,
      GlobalMaxPool, Relu, Max, Min, Identity, Reshape, Flatten, Squeeze,
      Unsqueeze, Transpose, Concat, Slice, Split) whose float inputs are
      half values widened for it alone runs in half and the widening Cast
      follows it: the results are the same to the bit, and the Cast back to
      half before the next product cancels.
    - `half` / `double`: every float32 tensor becomes half / double; the
      graph's inputs and outputs keep their host type, converted by the host
      when it stages them (the Casts at the boundary are folded into staging
      later).
    - `float`: nothing changes.

    A Cast of a constant is done by the host at staging; a Cast back to the
    format a value came from is removed.

    Example (`float-dtype=mixed`): `%y = onnx.Gemm(%x, %w, %b)` on f32
    becomes `%xh = onnx.Cast(%x) {to = 10}`, `%wh = onnx.Cast(%w)`, a Gemm on
    f16 operands with an f16 result, and `onnx.Cast(%y) {to = 1}` for its
    single users.
  }];
  let options = [
    Option<"floatDtype", "float-dtype", "std::string", "\"mixed\"",
           "mixed, half, float or double (the float_dtype option)">,
  ];
}

def PlanLocations : Pass<"mncc-plan-locations", "mlir::ModuleOp"> {
  let summary = "Decides which tensors live in DRAM and which stay in LM";
  let description = [{
    Marks the op producing each tensor with `mngraph.location = "dram"` or
    `"lm"`. The first schedulers keep every tensor in DRAM between kernels
    (docs/codegen.md C1), so today every tensor is `"dram"`; weights of
    GEMMs are `"dram"` whatever CODEGEN_GEMM_FORCE_WEIGHT_ON_DRAM says.
  }];
  let options = [
    Option<"gemmForceWeightOnDram", "gemm-force-weight-on-dram", "bool",
           "false", "CODEGEN_GEMM_FORCE_WEIGHT_ON_DRAM">,
  ];
}

def PlanLayouts : Pass<"mncc-plan-layouts", "mlir::ModuleOp"> {
  let summary = "Gives every device tensor its layout (the legacy planner)";
  let description = [{
    Chooses the DRAM form of every tensor (docs/codegen.md C2, C4): its DRAM
    order is the one its producer's kernel prefers, or for graph inputs and
    order-agnostic operators (element-wise, Cast) the one its consumers or
    operands have; `mngraph.layout_switch` moves a tensor between orders
    where a consumer wants another. Every tensor type then carries the
    `#mngraph.layout` of its form. Entries of `layout-spec` and
    `gemm-layout-spec` override the planner; an entry that matches no tensor
    is an error unless `allow-unused-layout-spec`.

    A node no kernel takes keeps the identity order; mncc-select-kernels
    reports it.
  }];
  let options = [
    Option<"layoutPlanner", "layout-planner", "std::string", "\"lpz\"",
           "lpz, bidi or legacy (today every planner is legacy)">,
    Option<"layoutSpec", "layout-spec", "std::string", "\"\"",
           "A layout_spec JSON file">,
    Option<"gemmLayoutSpec", "gemm-layout-spec", "std::string", "\"\"",
           "A gemm_layout_spec JSON file">,
    Option<"allowUnusedLayoutSpec", "allow-unused-layout-spec", "bool",
           "false", "CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC">,
    Option<"ignoreLayoutCheck", "ignore-layout-check", "bool", "false",
           "CODEGEN_IGNORE_LAYOUT_CHECK: skip validating layout_spec "
           "layouts against the hardware">,
  ];
  let dependentDialects = ["::mncc::graph::GraphDialect"];
}

def TimeSlice : Pass<"mncc-plan-time-slices", "mlir::ModuleOp"> {
  let summary = "Splits tensors too large for the memories into time slices";
  let description = [{
    With every tensor in DRAM between kernels (docs/codegen.md C1), a tensor
    needs slicing only if it does not fit its groups' DRAM: that is an error
    naming the tensor and its size. Kernels slice their own work over the
    on-chip memories. `max-time-slice` (CODEGEN_MAX_TIME_SLICE) bounds the
    slices a planner may create.
  }];
  let options = [
    Option<"maxTimeSlice", "max-time-slice", "int64_t", "256",
           "CODEGEN_MAX_TIME_SLICE">,
  ];
}

#endif // MNCC_PASSES_GRAPH_PASSES_TD
