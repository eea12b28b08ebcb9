#!/usr/bin/python3
"""Writes the C test data of emit_check_main.c: the inputs (.npy in the program's execution
storage) and the expected outputs (.npy written by `tosac run` on the host) as byte arrays.

usage: emit_testdata.py OUT.c --in X.npy ... --expect Y.npy ...
"""
import argparse

import numpy as np


def array(name, data, align=16):
    body = ",".join(str(b) for b in data) or "0"
    return f"static _Alignas({align}) const uint8_t {name}[{max(len(data), 1)}] = {{{body}}};\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--in", dest="inputs", nargs="*", default=[])
    ap.add_argument("--expect", nargs="+", required=True)
    a = ap.parse_args()
    ins = [np.ascontiguousarray(np.load(p)).tobytes() for p in a.inputs]
    exp = [np.ascontiguousarray(np.load(p)).tobytes() for p in a.expect]
    c = ["#include <stddef.h>\n#include <stdint.h>\n"]
    for i, b in enumerate(ins):
        c.append(array(f"in{i}", b))
    for k, b in enumerate(exp):
        c.append(array(f"expect{k}", b))
        c.append(f"static _Alignas(16) uint8_t out{k}[{max(len(b), 1)}];\n")
    c.append("const void *const test_in[] = {" + ", ".join(f"in{i}" for i in range(len(ins))) + ("" if ins else "0") + "};\n")
    c.append("const uint8_t *const test_expect[] = {" + ", ".join(f"expect{k}" for k in range(len(exp))) + "};\n")
    c.append("void *const test_out[] = {" + ", ".join(f"out{k}" for k in range(len(exp))) + "};\n")
    c.append("const size_t test_out_bytes[] = {" + ", ".join(str(len(b)) for b in exp) + "};\n")
    c.append(f"const unsigned test_n_out = {len(exp)};\n")
    with open(a.out, "w") as f:
        f.write("".join(c))


if __name__ == "__main__":
    main()
