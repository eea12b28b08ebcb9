"""The tosac Python package against independent results: onnxruntime (tools/zoo/ort_run.js) for
what a model computes, and the `tosac` command (its own path through the library today) for what
the package's programs contain and how `tosac run` converts I/O."""

import os
import threading
import time

import numpy as np
import pytest

import tosac
from conftest import SMALL_CNN, SMALL_CNN_INPUT, ort_outputs, rel_l2, run_tosac, tosac_run_outputs


def calib_samples(n, seed=7):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(n)]


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def test_installed_package():
    # the package under test is the one installed into the venv, with its extension linked in
    assert "site-packages" in tosac.__file__
    assert tosac._tosac.__file__.endswith(".so")


def test_fp_matches_onnxruntime(tmp_path):
    x = np.load(SMALL_CNN_INPUT)
    prog = tosac.compile(SMALL_CNN)
    assert [t.name for t in prog.inputs] == ["x"] and prog.inputs[0].shape == (1, 3, 16, 16)
    assert prog.inputs[0].dtype == np.float32 and prog.inputs[0].qparams is None and prog.qparams == {}
    y = prog.run({"x": x})
    golden = ort_outputs(SMALL_CNN, {"x": x}, tmp_path / "ort")
    assert set(y) == set(golden) == {"y"}
    assert y["y"].dtype == np.float32 and y["y"].shape == golden["y"].shape
    assert rel_l2(y["y"], golden["y"]) < 5e-6
    # the model as bytes: the same program
    with open(SMALL_CNN, "rb") as f:
        prog2 = tosac.compile(f.read())
    assert np.array_equal(prog2.run({"x": x})["y"], y["y"])
    rep = prog.report
    assert rep["steps"][0]["name"] == "import" and rep["transposes_final"] >= 0 and "quantization" not in rep


def test_save_equals_cli(tmp_path, tosac_bin):
    tosac.compile(SMALL_CNN).save(tmp_path / "py.tosa")
    run_tosac(tosac_bin, "compile", SMALL_CNN, "-o", tmp_path / "cli.tosa")
    assert same_bytes(tmp_path / "py.tosa", tmp_path / "cli.tosa")
    assert not os.path.exists(tmp_path / "py.tosa.quant.json")


def test_calibration_from_numpy(tmp_path, tosac_bin):
    samples = calib_samples(4)
    seen = []
    prog = tosac.compile(SMALL_CNN, target="TOSA-1.0+INT", calibration=[{"x": s} for s in samples], report=True,
                         progress=lambda done, total: seen.append((done, total)))
    # calibration, then the report: each phase counts up to (4, 4). Only the calling thread reports,
    # so with two threads a phase may skip counts the other worker finished.
    assert seen and all(t == 4 for _, t in seen)
    cal = seen[:seen.index((4, 4)) + 1]
    rep_phase = seen[len(cal):]
    for phase in (cal, rep_phase):
        assert phase and phase[-1] == (4, 4) and all(a[0] < b[0] for a, b in zip(phase, phase[1:])), seen
    prog.save(tmp_path / "py.tosa")
    # the same samples as .npy files through the command: the same program and sidecar
    os.makedirs(tmp_path / "calib")
    for k, s in enumerate(samples):
        np.save(tmp_path / "calib" / f"s{k}.npy", s)
    run_tosac(tosac_bin, "compile", SMALL_CNN, "-o", tmp_path / "cli.tosa", "--target", "TOSA-1.0+INT",
              "--calibrate", tmp_path / "calib")
    assert same_bytes(tmp_path / "py.tosa", tmp_path / "cli.tosa")
    assert same_bytes(tmp_path / "py.tosa.quant.json", tmp_path / "cli.tosa.quant.json")
    # a folder, and arrays of a one-input model stacked as one batch: the same program again
    for calibration in (str(tmp_path / "calib"), np.stack(samples)):
        tosac.compile(SMALL_CNN, target="TOSA-1.0+INT", calibration=calibration).save(tmp_path / "again.tosa")
        assert same_bytes(tmp_path / "again.tosa", tmp_path / "cli.tosa")

    q = prog.qparams
    assert set(q) == {"x", "y"} and q["x"].type == "int8" and -128 <= q["x"].zero_point <= 127 and q["x"].scale > 0
    assert prog.inputs[0].dtype == np.int8
    rep = prog.report["quantization"]
    assert rep["samples"] == 4 and len(rep["layers"]) > 3
    # the int8 program stays close to onnxruntime's float result
    x = np.load(SMALL_CNN_INPUT)
    y = prog.run({"x": x})["y"]
    golden = ort_outputs(SMALL_CNN, {"x": x}, tmp_path / "ort")["y"]
    assert y.dtype == np.float32 and rel_l2(y, golden) < 0.2  # a sanity bound: the bytes are checked above


def test_uint8_io_like_tosac_run(tmp_path, tosac_bin):
    prog = tosac.compile(SMALL_CNN, target="TOSA-1.0+INT", calibration=calib_samples(3), io="uint8")
    prog.save(tmp_path / "u8.tosa")
    qx = prog.inputs[0].qparams
    assert prog.inputs[0].dtype == np.uint8 and qx.type == "uint8" and 0 <= qx.zero_point <= 255
    x = np.load(SMALL_CNN_INPUT)
    x[0, 0, 0, :3] = [np.nan, 1e9, -1e9]  # NaN gives the zero point, the others saturate
    y = prog.run({"x": x})["y"]
    ref = tosac_run_outputs(tosac_bin, tmp_path / "u8.tosa", {"x": x}, tmp_path / "run_f")["y"]
    assert y.dtype == ref.dtype == np.float32 and np.array_equal(y, ref)

    # uint8 codes, quantized here from the sidecar's scale and zero point (numpy rounds half to even)
    with np.errstate(invalid="ignore"):
        codes = np.clip(np.round(x.astype(np.float64) / qx.scale) + qx.zero_point, 0, 255)
    codes = np.where(np.isnan(codes), qx.zero_point, codes).astype(np.uint8)
    y8 = prog.run({"x": codes})["y"]
    ref8 = tosac_run_outputs(tosac_bin, tmp_path / "u8.tosa", {"x": codes}, tmp_path / "run_u8")["y"]
    assert np.array_equal(y8, ref8) and np.array_equal(y8, y)

    with pytest.raises(tosac.Error, match="takes uint8 codes"):
        prog.run({"x": codes.astype(np.int8)})
    # a loaded program reads the sidecar like `tosac run`
    loaded = tosac.load(tmp_path / "u8.tosa")
    assert loaded.qparams == prog.qparams and np.array_equal(loaded.run({"x": x})["y"], y)


def test_intfp_float_io(tmp_path, tosac_bin):
    # +INT+FP with calibration: the program quantizes its own float I/O
    prog = tosac.compile(SMALL_CNN, target="TOSA-1.0+INT+FP", calibration="random", calib_samples=4)
    assert prog.inputs[0].dtype == np.float32 and prog.inputs[0].qparams.type == "float32"
    prog.save(tmp_path / "f.tosa")
    run_tosac(tosac_bin, "compile", SMALL_CNN, "-o", tmp_path / "cli.tosa", "--target", "TOSA-1.0+INT+FP",
              "--calibrate", "random", "--calib-samples", "4")
    assert same_bytes(tmp_path / "f.tosa", tmp_path / "cli.tosa")
    x = np.load(SMALL_CNN_INPUT)
    ref = tosac_run_outputs(tosac_bin, tmp_path / "f.tosa", {"x": x}, tmp_path / "run")["y"]
    assert np.array_equal(prog.run({"x": x})["y"], ref)


def test_ethos_u_target(tmp_path, tosac_bin):
    """An Ethos-U target: the partition report, the artifact directory `tosac compile` writes
    (byte-identical segments and manifest), and run() equal to `tosac run` on the artifact."""
    p = tosac.compile(SMALL_CNN, target="ethos-u55-128", calibration=calib_samples(4))
    rep = p.partition_report
    assert rep is not None and rep["segments"], rep
    assert tosac.compile(SMALL_CNN).partition_report is None
    p.save(tmp_path / "art")
    for k in range(4):
        np.save(tmp_path / f"c{k}.npy", calib_samples(4)[k])
    run_tosac(tosac_bin, "compile", SMALL_CNN, "-o", tmp_path / "cli_art", "--target", "ethos-u55-128",
              "--calibrate", *[tmp_path / f"c{k}.npy" for k in range(4)])
    names = sorted(os.listdir(tmp_path / "cli_art"))
    assert names == sorted(os.listdir(tmp_path / "art")) and "manifest.json" in names
    for n in names:
        if n.endswith(".tosa") or n == "manifest.json":
            assert same_bytes(tmp_path / "art" / n, tmp_path / "cli_art" / n), n
    x = np.load(SMALL_CNN_INPUT)
    ref = tosac_run_outputs(tosac_bin, tmp_path / "art", {"x": x}, tmp_path / "run")["y"]
    assert np.array_equal(p.run({"x": x})["y"], ref)


def test_errors(tmp_path):
    with pytest.raises(tosac.Error) as e:
        tosac.compile(tmp_path / "missing.onnx")
    assert "missing.onnx" in str(e.value) and e.value.messages and e.value.status
    with pytest.raises(tosac.Error, match="needs calibration data"):
        tosac.compile(SMALL_CNN, target="TOSA-1.0+INT")
    bad = calib_samples(2)
    bad[1][0, 2, 3, 4] = np.inf
    with pytest.raises(tosac.Error, match=r"values for input 'x' are NaN or infinite \(the first: \+Inf at sample 1"):
        tosac.compile(SMALL_CNN, target="TOSA-1.0+INT", calibration=bad)
    with pytest.raises(tosac.Error, match="no input 'y'"):
        tosac.compile(SMALL_CNN, target="TOSA-1.0+INT", calibration=[{"y": bad[0]}])
    with pytest.raises(tosac.Error, match="needs calibration data"):
        tosac.compile(SMALL_CNN, target="ethos-u55-128")
    with pytest.raises(tosac.Error, match="apply to quantized"):
        tosac.compile(SMALL_CNN, io="uint8")
    with pytest.raises(tosac.Error):
        tosac.compile(SMALL_CNN, target="TOSA-9.9")
    with pytest.raises(TypeError, match="unknown option"):
        tosac.compile(SMALL_CNN, calibrate="random")
    with pytest.raises(tosac.Error, match="node|ONNX|malformed|protobuf"):
        tosac.compile(b"this is not an onnx model")

    prog = tosac.compile(SMALL_CNN)
    x = np.load(SMALL_CNN_INPUT)
    with pytest.raises(tosac.Error, match="no data for input 'x'"):
        prog.run({})
    with pytest.raises(tosac.Error, match="'z' is not an input"):
        prog.run({"x": x, "z": x})
    with pytest.raises(tosac.Error, match=r"shape \[1,16,16,3\] but the input has shape \[1,3,16,16\]"):
        prog.run({"x": x.transpose(0, 2, 3, 1)})
    # other element types are converted, as `tosac run` does: float64 rounds to the FP32 input,
    # a value beyond FP32's range is an error naming the input, the element and the value
    y32 = prog.run({"x": x})
    y64 = prog.run({"x": x.astype(np.float64)})
    for k in y32:
        assert np.array_equal(y32[k], y64[k])
    far = x.astype(np.float64)
    far[0, 1, 2, 3] = 1e300
    with pytest.raises(tosac.Error, match=r"input 'x'.*element 291 \(index \[0,1,2,3\]\) is 1e\+300"):
        prog.run({"x": far})

    (tmp_path / "junk.tosa").write_bytes(b"\0" * 64)
    with pytest.raises(tosac.Error, match="junk.tosa"):
        tosac.load(tmp_path / "junk.tosa")
    with pytest.raises(tosac.Error, match="junk.tosa"):
        tosac.inspect(tmp_path / "junk.tosa")


def test_validate_and_inspect(tmp_path):
    tosac.compile(SMALL_CNN).save(tmp_path / "fp.tosa")
    assert all(f.kind == "note" for f in tosac.validate(tmp_path / "fp.tosa"))
    assert isinstance(tosac.validate(tmp_path / "fp.tosa", profile="FP", extensions="none"), list)
    with pytest.raises(tosac.Error) as e:
        tosac.validate(tmp_path / "fp.tosa", profile="INT")
    assert e.value.findings and any(f.kind == "error" for f in e.value.findings)
    assert "profile" in str(e.value).lower() or "FP32" in str(e.value)
    info = tosac.inspect(tmp_path / "fp.tosa")
    ops = info["totals"]["ops_by_type"]
    assert info["regions"][0]["blocks"][0]["inputs"] == ["x"] and ops.get("CONV2D", 0) >= 1
    assert tosac.load(tmp_path / "fp.tosa").inspect() == info


# ---- the GIL ---------------------------------------------------------------------------------

def long_model(path, n=12, rows=1024, width=512):
    """x[rows, width] through n MatMuls with one shared weight: about n*rows*width^2*2 flops."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = (np.random.default_rng(3).standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x" if k == 0 else f"h{k}", "w"], [f"h{k + 1}" if k + 1 < n else "y"])
             for k in range(n)]
    g = helper.make_graph(nodes, "long", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, width])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, width])],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)
    return path


@pytest.fixture(scope="module")
def long_programs(tmp_path_factory):
    path = long_model(str(tmp_path_factory.mktemp("long") / "long.onnx"))
    x = np.random.default_rng(4).standard_normal((1024, 512)).astype(np.float32)
    a, b = tosac.compile(path), tosac.compile(path)
    t = time.perf_counter()
    ya = a.run({"x": x})["y"]
    return a, b, x, ya, time.perf_counter() - t


def test_gil_released_counter(long_programs):
    """A Python thread keeps counting while run() executes: with the GIL held it could not."""
    prog, _, x, want, _ = long_programs
    marks, stop = [], threading.Event()

    def count():
        n = 0
        while not stop.is_set():
            n += 1
            if n % 200 == 0:
                marks.append(time.perf_counter())

    th = threading.Thread(target=count)
    th.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    y = prog.run({"x": x})["y"]
    t1 = time.perf_counter()
    stop.set()
    th.join()
    assert np.array_equal(y, want)
    # the middle half of the run: far from the switches before and after the call
    mid = [t for t in marks if t0 + (t1 - t0) / 4 < t < t1 - (t1 - t0) / 4]
    assert t1 - t0 > 0.04, f"the model ran {t1 - t0:.3f} s: too short to tell"
    assert len(mid) >= 5, f"{len(mid)} counter marks during the {t1 - t0:.3f} s run"


def test_two_programs_concurrently(long_programs):
    """Two threads run two programs; a third sees both runs in flight at once over a long span
    (while either held the GIL it could not look at all)."""
    a, b, x, want, _ = long_programs
    state = {"a": 0, "b": 0}  # 1 running, 2 done
    results, both = {}, []

    def work(key, prog):
        state[key] = 1
        results[key] = prog.run({"x": x})["y"]
        state[key] = 2

    def watch():
        while state["a"] != 2 or state["b"] != 2:
            if state["a"] == 1 and state["b"] == 1:
                both.append(time.perf_counter())
            time.sleep(0.001)

    threads = [threading.Thread(target=work, args=("a", a)), threading.Thread(target=work, args=("b", b)),
               threading.Thread(target=watch)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    assert np.array_equal(results["a"], want) and np.array_equal(results["b"], want)
    assert both, "never saw both programs running"
    span = both[-1] - both[0]
    # held GIL: only the few switch intervals before the first run starts; released: until the
    # first run ends (a load that starves one thread still leaves a large share)
    assert span > 0.1 * wall, f"both in flight for {span:.3f} s of {wall:.3f} s"


def wide_cnn(path):
    """Conv 3x3 -> Relu -> Conv 3x3 on a 64x64 map: large enough for the runtime to start threads and
    for the calibration statistics to be split over them."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.2).astype(np.float32), n)
             for n, s in (("w1", (16, 8, 3, 3)), ("b1", (16,)), ("w2", (8, 16, 3, 3)), ("b2", (8,)))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Conv", ["r", "w2", "b2"], ["y"], pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 64, 64])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def test_threads(tmp_path, tosac_bin):
    model = wide_cnn(tmp_path / "wide.onnx")
    progs = {}
    for t in (1, 2, 3):
        progs[t] = tosac.compile(model, target="TOSA-1.0+INT", calibration="random", calib_samples=3, threads=t)
        progs[t].save(tmp_path / f"t{t}.tosa")
    # the command with --threads: the same program; every thread count: the same bytes
    run_tosac(tosac_bin, "compile", model, "-o", tmp_path / "cli.tosa", "--target", "TOSA-1.0+INT", "--calibrate",
              "random", "--calib-samples", "3", "--threads", "2")
    assert same_bytes(tmp_path / "t1.tosa", tmp_path / "cli.tosa")
    assert same_bytes(tmp_path / "t1.tosa", tmp_path / "t2.tosa") and same_bytes(tmp_path / "t1.tosa", tmp_path / "t3.tosa")
    # run(threads=): the runtime is rebuilt on that many threads, with the same results
    x = np.random.default_rng(5).standard_normal((1, 8, 64, 64)).astype(np.float32)
    p = progs[1]
    assert p._impl.set_threads(1) == 1 and p._impl.set_threads(3) == 3
    y3 = p.run({"x": x})["y"]
    y1 = p.run({"x": x}, threads=1)["y"]
    assert p._impl.set_threads(1) == 1
    assert np.array_equal(y1, y3) and np.array_equal(y1, p.run({"x": x}, threads=2)["y"])
    # load(threads=) and the FP program too
    q = tosac.load(tmp_path / "t2.tosa", threads=2)
    assert np.array_equal(q.run({"x": x})["y"], y1)
    fp = tosac.compile(model, threads=2)
    assert np.array_equal(fp.run({"x": x})["y"], fp.run({"x": x}, threads=1)["y"])
    with pytest.raises(ValueError):
        p.run({"x": x}, threads=65)


def test_winograd(tmp_path):
    """FP32 3x3 convolutions of 16+ channels run as Winograd by default; winograd=False keeps the
    direct path (other bits, both close to a float64 convolution), through load() and
    set_threads() as well."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(11)
    w = (rng.standard_normal((24, 16, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    g = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], "w3",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 20, 18])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 20, 18])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    path = tmp_path / "w3.onnx"
    with open(path, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    x = rng.standard_normal((1, 16, 20, 18)).astype(np.float32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 24, 20, 18)) + b.astype(np.float64)[None, :, None, None]
    for ky in range(3):
        for kx in range(3):
            ref += np.einsum("nchw,kc->nkhw", xp[:, :, ky:ky + 20, kx:kx + 18], w[:, :, ky, kx].astype(np.float64))
    fast = tosac.compile(path)
    direct = tosac.compile(path, winograd=False)
    yf, yd = fast.run({"x": x})["y"], direct.run({"x": x})["y"]
    assert np.allclose(yf, ref, rtol=1e-5, atol=1e-5) and np.allclose(yd, ref, rtol=1e-5, atol=1e-5)
    assert not np.array_equal(yf, yd)
    assert np.array_equal(direct.run({"x": x}, threads=2)["y"], yd) and np.array_equal(fast.run({"x": x}, threads=2)["y"], yf)
    direct.save(tmp_path / "w3.tosa")
    assert np.array_equal(tosac.load(tmp_path / "w3.tosa", winograd=False).run({"x": x})["y"], yd)
    assert np.array_equal(tosac.load(tmp_path / "w3.tosa").run({"x": x})["y"], yf)
