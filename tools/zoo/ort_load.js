'use strict';
/*
 * loadOrt(tool): onnxruntime-node from the project's node_modules (or the global one), or exit 1
 * naming `tool` and how to install it. Shared by tools/zoo/ort_run.js and bench/ort_*.js.
 */
const path = require('path');

function loadOrt(tool) {
  const root = path.resolve(__dirname, '..', '..');
  for (const p of [path.join(root, 'node_modules', 'onnxruntime-node'), 'onnxruntime-node']) {
    try {
      return require(p);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  process.stderr.write(`${tool}: onnxruntime-node is not installed (run \`npm install --ignore-scripts\` ` +
                       `in ${root}, or scripts/install-deps.sh)\n`);
  process.exit(1);
}

module.exports = { loadOrt };
