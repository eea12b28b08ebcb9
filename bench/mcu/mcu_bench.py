#!/usr/bin/python3
"""Instructions per layer on QEMU's Cortex-M55: tosac's portable and Helium kernels vs CMSIS-NN.

usage: mcu_bench.py BUILD_DIR   (after cmake --build BUILD_DIR; needs qemu-system-arm)

Runs BUILD_DIR/bench/mcu/layers.elf with BUILD_DIR/tools/qemu_insn/libqemu_insn.so: each layer's
kernel call is counted between markers (portable first, then Helium); CMSIS-NN's counts are the
ones /work/shared/MCU.md measured on the same emulated M55 (kernel call only). Then the zoo's DS-CNN
(BUILD_DIR/tests/zoo/models/ds_cnn.onnx, made by the zoo tests) compiled to INT8 and invoked by the
runtime on the M55 (dscnn_rt.elf; second invoke counted).
"""
import os
import subprocess
import sys
import tempfile


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/gcc"
    elf = os.path.join(build, "bench/mcu/layers.elf")
    plugin = os.path.abspath(os.path.join(build, "tools/qemu_insn/libqemu_insn.so"))
    here = os.path.dirname(os.path.abspath(__file__))
    run = os.path.join(here, "..", "..", "tests", "mcu", "platform", "run.sh")
    with tempfile.TemporaryDirectory() as tmp:
        counts = os.path.join(tmp, "counts.txt")
        out = subprocess.run(["bash", run, "--timeout", "300", "--plugin", plugin + ",out=" + counts + ",top=0", elf],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("layers.elf failed (Helium and portable results differ?):\n" + out.stdout + out.stderr)
        regions = [int(l.split(":")[1]) for l in open(counts) if l.startswith("region")]
    layers = [l.split("|")[1:] for l in out.stdout.splitlines() if l.startswith("layer|")]
    print("| layer | MACs (pool: adds) | CMSIS-NN | tosac portable | tosac Helium | Helium / CMSIS-NN | Helium per MAC |")
    print("|---|---|---|---|---|---|---|")
    worse = 0
    for i, (name, macs, cmsis) in enumerate(layers):
        macs, cmsis = int(macs), int(cmsis)
        port, mve = regions[2 * i], regions[2 * i + 1]
        worse += mve > cmsis
        print("| %s | %d | %d | %d | %d | %.2f | %.2f |" % (name, macs, cmsis, port, mve, mve / cmsis, mve / macs))
    print("\n%d of %d layers above CMSIS-NN's count" % (worse, len(layers)))
    for line in out.stdout.splitlines():
        if line.startswith("dscnn|"):
            name, macs, cmsis = line.split("|")[1:]
            i = 2 * len(layers)
            port, mve = regions[i], regions[i + 1]
            print("\n%s: CMSIS-NN %s, tosac portable %d, tosac Helium %d (%.2f of CMSIS-NN, %.2f per MAC)"
                  % (name, cmsis, port, mve, mve / int(cmsis), mve / int(macs)))
    dscnn_runtime(build, run, plugin)


def dscnn_runtime(build, run, plugin):
    """The zoo's DS-CNN compiled to INT8 and invoked by the runtime on the M55 (dscnn_rt.elf)."""
    onnx = os.path.join(build, "tests/zoo/models/ds_cnn.onnx")
    if not os.path.exists(onnx):
        print("\n(DS-CNN through the runtime: %s missing; run the zoo tests first)" % onnx)
        return
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.tosa")
        subprocess.run([os.path.join(build, "tosac"), "compile", onnx, "-o", model, "--target", "TOSA-1.0+INT",
                        "--calibrate", "random", "--io-layout", "nhwc"], check=True, capture_output=True)
        counts = os.path.join(tmp, "counts.txt")
        out = subprocess.run(["bash", run, "--timeout", "300", "--plugin", plugin + ",out=" + counts + ",top=0",
                              os.path.abspath(os.path.join(build, "bench/mcu/dscnn_rt.elf"))],
                             capture_output=True, text=True, cwd=tmp)
        if out.returncode != 0:
            sys.exit("dscnn_rt.elf failed:\n" + out.stdout + out.stderr)
        regions = [int(l.split(":")[1]) for l in open(counts) if l.startswith("region")]
    print("\nDS-CNN (zoo ds_cnn, INT8, %s) invoked by the runtime: portable %d, Helium %d instructions"
          " (CMSIS-NN 1806963); %s" % ("tosac compile --calibrate random", regions[0], regions[1],
                                       out.stdout.strip()))


if __name__ == "__main__":
    main()
