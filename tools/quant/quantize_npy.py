#!/usr/bin/python3
"""Quantizes float data for an input of a quantized program with the numbers of its sidecar
(docs/QUANT.md), in numpy, independently of tosac:

  quantize_npy.py MODEL.tosa.quant.json IN.npy OUT.npy [--input NAME]

q = clip(round_half_even(x / scale) + zero_point) to [-128, 127] (int8 entries), [0, 255] (uint8)
or [-32767, 32767] (int16, --a16w8), saved as int8 / uint8 / int16. The entry is the input NAME, by default the first input;
its name is printed (for `NAME=OUT.npy` arguments).
"""
import argparse
import json

import numpy as np

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("sidecar")
ap.add_argument("src")
ap.add_argument("dst")
ap.add_argument("--input")
o = ap.parse_args()
entries = json.load(open(o.sidecar))["inputs"]
e = next(x for x in entries if x["name"] == o.input) if o.input else entries[0]
lo, hi, t = {"uint8": (0, 255, np.uint8), "int16": (-32767, 32767, np.int16)}.get(e["dtype"], (-128, 127, np.int8))
if e["dtype"] not in ("int8", "uint8", "int16"):
    raise SystemExit(f"quantize_npy: input '{e['name']}' takes {e['dtype']} data, not codes")
x = np.load(o.src).astype(np.float64)
np.save(o.dst, np.clip(np.rint(x / e["scale"]) + e["zero_point"], lo, hi).astype(t))
print(e["name"])
