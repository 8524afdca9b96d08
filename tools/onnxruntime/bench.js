// Times ONNX Runtime (onnxruntime-node, its native CPU library) on the
// models of make_models.py, as net_benchmark times scopeflow: inputs filled
// with 0.5, a few warm-up runs, then blocks of runs; prints the median and
// p90 of the blocks' time per run in milliseconds, a line of JSON per case.
// Usage: node bench.js MODEL_DIR THREADS [CASE ...]
//
// With --model, times any ONNX model as `scopeflow run --repeat` times a
// net (compare_models.py): feeds read from raw files, one warm-up run after
// the session is made, then runs for SECONDS, each timed on its own;
// prints the median and p90 per run in milliseconds as one line of JSON.
// Usage: node bench.js --model MODEL.onnx THREADS FEEDS.json SECONDS
// FEEDS.json: [{"name", "type" ("float32", "int64", ...), "dims", "file"}].
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const cases = {
  add_chain_1: {model: 'add_chain_1.onnx', dims: [1]},
  add_chain_1000: {model: 'add_chain_1000.onnx', dims: [1]},
  mlp_1: {model: 'mlp.onnx', dims: [1, 784]},
  mlp_64: {model: 'mlp.onnx', dims: [64, 784]},
  cnn_1: {model: 'cnn.onnx', dims: [1, 3, 64, 64]},
  cnn_16: {model: 'cnn.onnx', dims: [16, 3, 64, 64]},
};

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function timeCase(dir, threads, name) {
  const {model, dims} = cases[name];
  const session = await ort.InferenceSession.create(path.join(dir, model), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const size = dims.reduce((a, b) => a * b, 1);
  const feeds = {x: new ort.Tensor('float32', new Float32Array(size).fill(0.5), dims)};
  const blockSeconds = 0.1;
  const deadline = process.hrtime.bigint() + 500000000n;  // 0.5 s warm-up
  let runsPerBlock = 0;
  while (process.hrtime.bigint() < deadline) {
    await session.run(feeds);
    ++runsPerBlock;
  }
  runsPerBlock = Math.max(1, Math.round(runsPerBlock * blockSeconds / 0.5));
  const perRun = [];
  for (let block = 0; block < 20; ++block) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < runsPerBlock; ++i) await session.run(feeds);
    perRun.push(Number(process.hrtime.bigint() - start) / runsPerBlock / 1e6);
  }
  await session.release();
  perRun.sort((a, b) => a - b);
  return {median: quantile(perRun, 0.5), p90: quantile(perRun, 0.9)};
}

const typedArrays = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array,
  int64: BigInt64Array, uint8: Uint8Array, int8: Int8Array, bool: Uint8Array,
};

async function timeModel(model, threads, feedsPath, seconds) {
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const {name, type, dims, file} of JSON.parse(fs.readFileSync(feedsPath))) {
    const bytes = fs.readFileSync(file);
    // A copy: a small file's Buffer may start unaligned inside a pool.
    const data = new typedArrays[type](
        bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  await session.run(feeds);  // Warm-up, as scopeflow run's.
  const perRun = [];
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  while (perRun.length < 3 || process.hrtime.bigint() < deadline) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    perRun.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await session.release();
  perRun.sort((a, b) => a - b);
  return {runs: perRun.length, median: quantile(perRun, 0.5),
          p90: quantile(perRun, 0.9)};
}

async function main() {
  if (process.argv[2] === '--model') {
    const [model, threads, feedsPath, seconds] = process.argv.slice(3);
    const result = await timeModel(model, Number(threads), feedsPath,
                                   Number(seconds));
    console.log(JSON.stringify({model, threads: Number(threads), ...result}));
    return;
  }
  const [dir, threadsText, ...names] = process.argv.slice(2);
  const threads = Number(threadsText);
  const results = {};
  for (const name of names.length ? names : Object.keys(cases)) {
    results[name] = await timeCase(dir, threads, name);
    console.log(JSON.stringify({name, threads, ...results[name]}));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
