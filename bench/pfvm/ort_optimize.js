// Writes ONNX Runtime's own optimized graph of a model (the peer of the
// pfvm phase): a CPU session with extended graph optimizations and
// optimizedModelFilePath.
//   node ort_optimize.js MODEL.onnx OUT.onnx
'use strict';
const ort = require('onnxruntime-node');

async function main() {
  const [model, out] = process.argv.slice(2);
  const start = process.hrtime.bigint();
  await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'extended',
    optimizedModelFilePath: out,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log('session_ms ' + ms.toFixed(1));
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
