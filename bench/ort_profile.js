#!/usr/bin/env node
'use strict';
/*
 * Per-operator time of onnxruntime-node on one model, to set beside `tosac run --profile`:
 *
 *   node bench/ort_profile.js MODEL.onnx IN.npy RUNS THREADS [--all]
 *
 * One session as bench/ort_time.js makes it (graph optimisation 'all', so the table shows ORT's
 * fused nodes), one warm-up run, then RUNS profiled runs. ORT's own trace (enableProfiling) is read
 * back, the warm-up's events dropped, and one line per operator type is printed: total microseconds
 * per run, node count, share; then the 25 slowest nodes (every node with --all). The trace file is removed.
 *
 * Exit status: 0 success; 1 failure; 2 bad usage.
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const { readNpy } = require('../tools/zoo/npy.js');
const { loadOrt } = require('../tools/zoo/ort_load.js');

async function main(argv) {
  const all = argv[4] === '--all';
  if (argv.length !== (all ? 5 : 4) || !(Number(argv[2]) >= 1) || !(Number(argv[3]) >= 1)) {
    process.stderr.write('usage: node bench/ort_profile.js MODEL.onnx IN.npy RUNS THREADS [--all]\n');
    return 2;
  }
  const ort = loadOrt('ort_profile');
  const runs = Math.floor(Number(argv[2])), threads = Math.floor(Number(argv[3]));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ortprof-'));
  try {
    const s = await ort.InferenceSession.create(argv[0], {
      executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
      enableProfiling: true, profileFilePrefix: path.join(dir, 'p'),
    });
    const a = readNpy(argv[1]);
    const feeds = { [s.inputNames[0]]: new ort.Tensor(a.type, a.data, a.dims) };
    for (let i = 0; i <= runs; i++) await s.run(feeds);
    s.endProfiling();
    await s.release();
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    if (files.length !== 1) throw new Error(`expected one profile in ${dir}, found ${files.length}`);
    const ev = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
    const nodes = ev.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time'));
    const perRun = nodes.length / (runs + 1);
    const kept = nodes.slice(perRun);
    const byType = new Map(), byNode = new Map();
    let total = 0;
    for (const e of kept) {
      const t = e.args.op_name;
      const n = e.name.replace(/_kernel_time$/, '');
      const r = byType.get(t) || { us: 0, n: new Set() };
      r.us += e.dur; r.n.add(n); byType.set(t, r);
      const q = byNode.get(n) || { us: 0, t };
      q.us += e.dur; byNode.set(n, q);
      total += e.dur;
    }
    const out = (s2) => process.stdout.write(s2 + '\n');
    out(`# ${argv[0]} threads=${threads} runs=${runs}: ${(total / runs).toFixed(0)} us per run in nodes`);
    for (const [t, r] of [...byType].sort((x, y) => y[1].us - x[1].us))
      out(`${t.padEnd(28)} ${(r.us / runs).toFixed(1).padStart(9)} us ${String(r.n.size).padStart(4)} nodes ` +
          `${(100 * r.us / total).toFixed(1).padStart(5)}%`);
    out('# slowest nodes');
    for (const [n, q] of [...byNode].sort((x, y) => y[1].us - x[1].us).slice(0, all ? undefined : 25))
      out(`${(q.us / runs).toFixed(1).padStart(9)} us ${q.t.padEnd(24)} ${n}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  process.stderr.write(`ort_profile: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
