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

#endif // MNCC_PASSES_GRAPH_PASSES_TD
