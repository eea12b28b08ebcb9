#!/usr/bin/env node
'use strict';
/*
 * Runs an ONNX model with onnxruntime-node (CPU, one thread, graph optimisations off so that the
 * result is ONNX's own semantics, not a fused rewrite) and writes every output as a .npy file:
 * the golden outputs the model zoo test compares tosac against.
 *
 *   node tools/zoo/ort_run.js MODEL.onnx IN.npy... OUTDIR
 *
 * Inputs are given in the order of the model's graph inputs; NAME=FILE.npy binds by name instead.
 * Each output goes to OUTDIR/<output name>.npy ('/' and other unsafe characters in the name
 * become '_'). float32, float64, int64, int32, int16, int8, uint8, uint16 and bool are supported.
 *
 * onnxruntime-node comes from package.json at the repository root (`npm install
 * --ignore-scripts`); it is looked up there first, then on the usual node path.
 *
 * Exit status: 0 success; 1 failure (missing onnxruntime-node, unreadable files, a run error);
 * 2 bad usage.
 */
const fs = require('fs');
const path = require('path');
const { readNpy, writeNpy } = require('./npy.js');

const { loadOrt } = require('./ort_load.js');

function safeName(n) {
  return n.replace(/[^A-Za-z0-9_.-]/g, '_');
}

async function main(argv) {
  if (argv.length < 2 || argv.includes('-h') || argv.includes('--help')) {
    process.stderr.write('usage: node tools/zoo/ort_run.js MODEL.onnx [IN.npy | NAME=IN.npy]... OUTDIR\n');
    return argv.includes('-h') || argv.includes('--help') ? 0 : 2;
  }
  const ort = loadOrt('ort_run');
  const model = argv[0];
  const outdir = argv[argv.length - 1];
  const ins = argv.slice(1, -1);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'disabled',
  });
  if (ins.length !== session.inputNames.length) {
    process.stderr.write(`ort_run: ${model} has ${session.inputNames.length} inputs ` +
                         `(${session.inputNames.join(', ')}), ${ins.length} given\n`);
    return 1;
  }
  const feeds = {};
  ins.forEach((arg, i) => {
    let name = session.inputNames[i];
    let file = arg;
    const eq = arg.indexOf('=');
    if (eq > 0 && !fs.existsSync(arg)) {
      name = arg.slice(0, eq);
      file = arg.slice(eq + 1);
    }
    const a = readNpy(file);
    feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  });
  const results = await session.run(feeds);
  fs.mkdirSync(outdir, { recursive: true });
  for (const name of session.outputNames) {
    const t = results[name];
    const file = path.join(outdir, safeName(name) + '.npy');
    writeNpy(file, t.type, t.dims.map(Number), t.data);
    process.stdout.write(`${file} ${t.type} [${t.dims.join(',')}]\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  process.stderr.write(`ort_run: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
