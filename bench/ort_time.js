#!/usr/bin/env node
'use strict';
/*
 * onnxruntime-node inference time, the reference for bench/vs_ort.py:
 *
 *   node bench/ort_time.js MODEL.onnx IN.npy RUNS THREADS
 *
 * One session (CPU, THREADS intra-op threads, one inter-op thread, default graph optimisation
 * level 'all': what a user gets), one warm-up run, then RUNS timed runs of session.run alone; prints
 * one JSON line {"model", "threads", "ms": [per-run milliseconds]}. The single input is IN.npy.
 *
 * Exit status: 0 success; 1 failure (onnxruntime-node missing, model error); 2 bad usage.
 */
const { readNpy } = require('../tools/zoo/npy.js');

const { loadOrt } = require('../tools/zoo/ort_load.js');

async function main(argv) {
  if (argv.length !== 4 || !(Number(argv[2]) >= 1) || !(Number(argv[3]) >= 1)) {
    process.stderr.write('usage: node bench/ort_time.js MODEL.onnx IN.npy RUNS THREADS\n');
    return 2;
  }
  const ort = loadOrt('ort_time');
  const runs = Math.floor(Number(argv[2])), threads = Math.floor(Number(argv[3]));
  const s = await ort.InferenceSession.create(argv[0], {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const a = readNpy(argv[1]);
  const feeds = { [s.inputNames[0]]: new ort.Tensor(a.type, a.data, a.dims) };
  await s.run(feeds);
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  await s.release();
  process.stdout.write(JSON.stringify({ model: argv[0], threads, ms }) + '\n');
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  process.stderr.write(`ort_time: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
