//===- MnccxOps.td - An example dialect loaded as a plugin -*- tablegen -*-===//

#ifndef MNCCX_OPS_TD
#define MNCCX_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mnccx_Dialect : Dialect {
  let name = "mnccx";
  let cppNamespace = "::mnccx";
  let summary = "An example of a dialect that extends mncc from a plugin";
}

def Mnccx_DeviceBytesOp : Op<Mnccx_Dialect, "device_bytes", [Pure]> {
  let summary = "The bytes a placed tensor occupies on the device";
  let description = [{
    Its operand must carry an MN-Core 2 layout (`#mngraph.layout`): a plugin
    dialect builds on the attributes of mncc's own dialects.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs Index:$bytes);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

#endif // MNCCX_OPS_TD
