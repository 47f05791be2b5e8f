// Runs an ONNX model with ONNX Runtime (the peer of pfvm:cpu, and of the
// emulator's speed) and prints the median latency; writes the first
// output's float32 data to OUT.
//   node ort_run.js MODEL.onnx INPUT.npy RUNS THREADS OUT.bin
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// The .npy element types the benches feed: float32 images, int64 token ids.
const NPY_TYPES = {
  "'<f4'": ['float32', Float32Array],
  "'<i8'": ['int64', BigInt64Array],
};

function readNpy(path) {
  const bytes = fs.readFileSync(path);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.toString('latin1', 10, 10 + headerLength);
  const type = Object.keys(NPY_TYPES).find((key) => header.includes(key));
  if (!type) throw new Error(path + ': neither float32 nor int64');
  const [ortType, ArrayType] = NPY_TYPES[type];
  const shape = header.match(/\(([^)]*)\)/)[1].split(',')
      .map((d) => d.trim()).filter((d) => d.length).map(Number);
  const start = 10 + headerLength;
  const data = new ArrayType(bytes.buffer.slice(
      bytes.byteOffset + start, bytes.byteOffset + bytes.length));
  return new ort.Tensor(ortType, data, shape);
}

async function main() {
  const [model, input, runs, threads, out] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {[session.inputNames[0]]: readNpy(input)};
  let result = await session.run(feeds); // warm-up
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const start = process.hrtime.bigint();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const output = result[session.outputNames[0]];
  fs.writeFileSync(out, Buffer.from(output.data.buffer));
  console.log('median_ms ' + times[Math.floor(times.length / 2)].toFixed(3));
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
