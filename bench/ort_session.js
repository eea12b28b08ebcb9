#!/usr/bin/env node
'use strict';
/*
 * onnxruntime-node session creation time, the reference for bench/compile_bench.py:
 *
 *   node bench/ort_session.js MODEL.onnx RUNS
 *
 * Loads onnxruntime-node once, then creates RUNS sessions of MODEL (CPU, one intra-op and one
 * inter-op thread, default graph optimisation level 'all': what a user gets) and prints one JSON
 * line {"model", "runs", "ms": [per-session milliseconds]}. Only InferenceSession.create is timed:
 * node start-up and module loading are not. The session is released after each run.
 *
 * Exit status: 0 success; 1 failure (onnxruntime-node missing, model error); 2 bad usage.
 */

const { loadOrt } = require('../tools/zoo/ort_load.js');

async function main(argv) {
  if (argv.length !== 2 || !(Number(argv[1]) >= 1)) {
    process.stderr.write('usage: node bench/ort_session.js MODEL.onnx RUNS\n');
    return 2;
  }
  const ort = loadOrt('ort_session');
  const runs = Math.floor(Number(argv[1]));
  const opts = { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 };
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const s = await ort.InferenceSession.create(argv[0], opts);
    const t1 = process.hrtime.bigint();
    ms.push(Number(t1 - t0) / 1e6);
    await s.release();
  }
  process.stdout.write(JSON.stringify({ model: argv[0], runs, ms }) + '\n');
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  process.stderr.write(`ort_session: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
