"""tosac: compile ONNX (and PyTorch) models to TOSA 1.0 programs, quantize them and run them.

    import tosac
    prog = tosac.compile("model.onnx", target="TOSA-1.0+INT", calibration=samples, io="uint8")
    outputs = prog.run({"x": image})          # dict of numpy arrays in, dict out
    prog.save("model.tosa")                   # model.tosa + model.tosa.quant.json

The API reference is docs/PYTHON.md. Everything runs in tosac's C library (linked into the
extension tosac._tosac); errors raise tosac.Error carrying tosac's diagnostics.
"""

import collections
import json
import os

import numpy as np

from tosac import _tosac
from tosac._tosac import Error

__all__ = ["Error", "Program", "TensorInfo", "QParams", "Finding", "compile", "load", "validate", "inspect"]

QParams = collections.namedtuple("QParams", "scale zero_point type")
QParams.__doc__ = """Float <-> integer mapping of a quantized program's input or output:
real = scale * (code - zero_point); type is the sidecar's "int8", "uint8", "int16" or "float32"
(float32: the program quantizes inside, the codes are int8)."""

TensorInfo = collections.namedtuple("TensorInfo", "name shape dtype qparams")
TensorInfo.__doc__ = """A program input or output: name, shape (tuple), dtype (the numpy dtype of
the tensor's own data: int8/uint8/int16 codes of a quantized program, float32, ...) and qparams
(QParams, or None when the program is not quantized)."""

Finding = collections.namedtuple("Finding", "kind message")
Finding.__doc__ = """One validation message: kind is "note", "error" or "unpredictable"."""

_IO = {"float": 0, "int8": 1, "uint8": 2}
_CALIB_METHODS = {"minmax": 0, "percentile": 1, "mse": 2}
_RANDOM_DEFAULT = 16  # `tosac compile --calibrate random` without --calib-samples

# numpy dtype of the tensor data of each TOSA type (what run() takes without quantization)
_TOSA_NUMPY = {
    "BOOL": "bool", "INT4": "int8", "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT48": "int64",
    "SHAPE": "int64", "FP16": "float16", "FP32": "float32", "BF16": "float32", "FP8E4M3": "uint8",
    "FP8E5M2": "uint8",
}

# Options of compile() beyond target/calibration/io, and how each reaches the C driver.
_OPTIONS = {
    "input_shapes": "dict {input name: shape}: static shapes for the model's inputs",
    "bind": "dict {input name: ndarray}: inputs made constants",
    "io_layout": '"nchw" (the model\'s own, default) or "nhwc"',
    "calib_method": '"percentile" (default), "mse" or "minmax"',
    "calib_samples": "at most this many calibration samples (random: exactly this many, default 16)",
    "threads": "threads of the calibration runs and of the returned program (0, default: one per processor); "
               "the same bytes for every count",
    "per_tensor": "one weight scale per tensor instead of per output channel",
    "a16w8": "int16 activations, int8 weights (target with +int16)",
    "preserve_io_quantization": "INT+FP targets: keep the I/O quantization out of the program",
    "lowering": "TOSAC_LOWER_* bits (include/tosac/quant.h)",
    "emit_qdq": "path: also write the quantized FP graph as QDQ ONNX",
    "report": "measure the per-layer SQNR of the quantized program (Program.report['quantization'])",
    "verify_each": "validate the graph after every pass",
    "progress": "callable(done, total) called after each calibration sample",
    "winograd": "False: the returned program's FP32 3x3 convolutions keep the direct path (TOSA's order of "
                "operations) instead of Winograd F(2x2,3x3) (default True; docs/RUNTIME.md)",
    "name": "label for messages when the model is given as bytes",
}


def _error(message, status="invalid argument"):
    """A tosac.Error raised by the Python layer, shaped like the ones from the C library."""
    e = Error(message)
    e.messages = [message]
    e.status = status
    return e


def _array(x, what):
    """(descr, shape, buffer) of a numpy array in the .npy vocabulary (little-endian, C order)."""
    a = np.asarray(x)
    if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
        raise TypeError(f"{what}: unsupported dtype {a.dtype}")
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    a = np.ascontiguousarray(a)
    return a.dtype.str.replace("=", "<"), tuple(int(d) for d in a.shape), a


def _is_random(calibration):
    return isinstance(calibration, str) and calibration == "random"


def _calibration(calibration, opts):
    """Adds the calibration sources of `calibration` to the driver options."""
    if calibration is None:
        return
    if _is_random(calibration):
        opts["calib_random"] = opts.pop("calib_samples", None) or _RANDOM_DEFAULT
        return
    if isinstance(calibration, (str, os.PathLike)):
        opts["calib_sources"] = [os.fspath(calibration)]
        return
    if isinstance(calibration, dict) and all(isinstance(v, (str, os.PathLike)) for v in calibration.values()):
        opts["calib_sources"] = [f"{k}={os.fspath(v)}" for k, v in calibration.items()]
        return
    # samples: dicts {input name: array}, or arrays of a one-input model; one array per input
    # (samples stacked in order) so that the C side sees each input's data once
    per_input = {}
    for k, sample in enumerate(calibration):
        items = sample.items() if isinstance(sample, dict) else [(None, sample)]
        for name, x in items:
            a = np.asarray(x, dtype=np.float32)
            per_input.setdefault(name, []).append(np.ascontiguousarray(a).reshape(-1))
    if not per_input:
        raise _error("calibration: no samples (an empty iterable)")
    opts["calib_arrays"] = [(name, np.concatenate(chunks)) for name, chunks in per_input.items()]


def compile(model, target="TOSA-1.0+FP", calibration=None, io="float", **options):
    """Compiles an ONNX model (a path, or its bytes) for `target` as `tosac compile` does.

    calibration (quantized targets): an iterable of input dicts {name: ndarray} (or arrays, for a
    one-input model), a folder or .npy file (a dict {name: folder} for several inputs), or
    "random". io: "float", "int8" or "uint8". Other options: see tosac._OPTIONS / docs/PYTHON.md.
    Returns a Program; raises tosac.Error with tosac's messages.
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"compile: unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(_OPTIONS))})")
    if io not in _IO:
        raise _error(f"unknown io '{io}' (float, int8 or uint8)")
    opts = {"target": target, "io": _IO[io]}
    method = options.get("calib_method")
    if method is not None:
        if method not in _CALIB_METHODS:
            raise _error(f"unknown calib_method '{method}' (minmax, percentile or mse)")
        opts["calib_method"] = _CALIB_METHODS[method]
    layout = options.get("io_layout")
    if layout is not None and layout.lower() not in ("nchw", "nhwc"):
        raise _error(f"unknown io_layout '{layout}' (nchw or nhwc)")
    opts["io_nhwc"] = layout is not None and layout.lower() == "nhwc"
    for key, to in (("calib_samples", "calib_samples"), ("threads", "threads"), ("per_tensor", "per_tensor"), ("a16w8", "a16w8"),
                    ("preserve_io_quantization", "preserve_io"), ("lowering", "lowering"), ("report", "report"),
                    ("verify_each", "verify_each")):
        if options.get(key) is not None:
            opts[to] = options[key]
    if options.get("progress") is not None:
        opts["progress"] = options["progress"]
    if options.get("winograd") is not None:
        opts["conv_direct"] = not options["winograd"]
    if options.get("emit_qdq") is not None:
        opts["emit_qdq"] = os.fspath(options["emit_qdq"])
    opts["shapes"] = [(n, tuple(int(d) for d in s)) for n, s in (options.get("input_shapes") or {}).items()]
    opts["binds"] = [(n,) + _array(v, f"bind '{n}'") for n, v in (options.get("bind") or {}).items()]
    _calibration(calibration, opts)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    name = options.get("name") or (model if isinstance(model, str) else "<model>")
    return Program(_tosac.compile(model, name, opts))


def load(path, threads=0, winograd=True):
    """A program written before (`tosac compile` or Program.save): PATH and PATH.quant.json;
    threads: the threads it runs on (0: one per processor); winograd=False: FP32 3x3 convolutions
    keep the direct path (TOSA's order of operations) instead of Winograd F(2x2,3x3)."""
    return Program(_tosac.load(os.fspath(path), threads, not winograd))


def _profiles(profile):
    mask = 0
    for tok in profile.replace("PRO-", "").replace("pro-", "").split("+"):
        bit = {"int": _tosac.PROFILE_INT, "fp": _tosac.PROFILE_FP}.get(tok.strip().lower())
        if bit is None:
            raise _error(f"bad profile '{profile}' (INT, FP or INT+FP)")
        mask |= bit
    return mask


def _extensions(extensions):
    if isinstance(extensions, str):
        if extensions.lower() == "all":
            return _tosac.EXT_ALL
        extensions = [e for e in extensions.split(",") if e.strip()] if extensions.lower() != "none" else []
    mask = 0
    for e in extensions:
        name = e.strip().lower()
        name = name[4:] if name.startswith("ext-") else name
        bit = _tosac.extension_bit(name)
        if not bit:
            raise _error(f"unknown extension '{e}'")
        mask |= bit
    return mask


def validate(path, profile=None, extensions=None, level="8K"):
    """Checks a .tosa file against TOSA 1.0 as `tosac validate` does.

    profile: "INT", "FP" or "INT+FP" (default both); extensions: a list or comma-separated names,
    "all" or "none" (default: all but dynamic; with a profile and no extensions: none); level: "8K"
    or "none". Returns the findings (notes) of a valid graph; raises tosac.Error listing the
    findings (.findings) of an invalid one.
    """
    profiles = _profiles(profile) if profile is not None else _tosac.PROFILE_INT | _tosac.PROFILE_FP
    if extensions is not None:
        ext = _extensions(extensions)
    else:
        ext = 0 if profile is not None else _tosac.EXT_ALL & ~_tosac.EXT_DYNAMIC
    if str(level).lower() not in ("8k", "eightk", "none"):
        raise _error(f"bad level '{level}' (8K or none)")
    status, findings = _tosac.validate(os.fspath(path), profiles, ext, str(level).lower() != "none")
    findings = [Finding(k, m) for k, m in findings]
    if status != "valid":
        bad = [f for f in findings if f.kind != "note"]
        err = Error("\n".join(f"{path}: {f.kind}: {f.message}" for f in bad) or f"{path}: {status}")
        err.messages = [f.message for f in bad]
        err.status = status
        err.findings = findings
        raise err
    return findings


def inspect(path):
    """The summary `tosac inspect --json` prints: version, regions, blocks, tensors, operators, totals."""
    return json.loads(_tosac.inspect(os.fspath(path)))


class Program:
    """A TOSA program ready to run: from compile() or load().

    run() takes and returns numpy arrays by input / output name (for an Ethos-U / Cortex-M target,
    the whole program: bit-identical to running its segments one after another). A quantized program's float
    inputs are quantized with its q-params and its outputs dequantized to float32, as `tosac run`
    does with the .quant.json sidecar; integer codes of the sidecar's type are taken as they are.
    """

    def __init__(self, impl):
        self._impl = impl
        self.inputs = [self._info(t) for t in impl.inputs()]
        self.outputs = [self._info(t) for t in impl.outputs()]

    @staticmethod
    def _info(t):
        name, tosa_type, shape, q = t
        dtype = q[2] if q is not None and q[2] != "float32" and tosa_type in ("INT8", "INT16") else \
            _TOSA_NUMPY.get(tosa_type, tosa_type.lower())
        return TensorInfo(name, shape, np.dtype(dtype), QParams(*q) if q is not None else None)

    @property
    def qparams(self):
        """{name: QParams} of every input and output of a quantized program ({} otherwise)."""
        return {t.name: t.qparams for t in self.inputs + self.outputs if t.qparams is not None}

    @property
    def report(self):
        """What compilation did: steps (name, ms, ops, changes), transposes, merged constants,
        stage times and, with report=True, "quantization" (per-layer SQNR, worst first). Empty for
        a loaded program."""
        return self._impl.report()

    def run(self, inputs, threads=None):
        """run({name: ndarray}) -> {name: ndarray}; the GIL is released while the program runs.
        threads: run on this many threads (0: one per processor) from now on: the runtime is
        rebuilt when its setting differs (results are the same bytes for every count)."""
        if threads is not None:
            self._impl.set_threads(threads)
        if not isinstance(inputs, dict):
            raise TypeError("run: a dict {input name: array} expected")
        names = [t.name for t in self.inputs]
        unknown = [n for n in inputs if n not in names]
        if unknown:
            raise _error(f"'{unknown[0]}' is not an input of the program (inputs: {', '.join(names)})")
        missing = [t for t in self.inputs if t.name not in inputs]
        if missing:
            t = missing[0]
            raise _error(f"no data for input '{t.name}' ({t.dtype}, shape {list(t.shape)})")
        outs = self._impl.run([_array(inputs[n], f"input '{n}'") for n in names])
        return {name: np.frombuffer(buf, dtype=np.dtype(descr)).reshape(shape) for name, descr, shape, buf in outs}

    @property
    def partition_report(self):
        """For an Ethos-U / Cortex-M target: where every ONNX node and TOSA operator runs, the rule
        that kept it off the NPU, the segments with their sizes (partition_report.json, see
        docs/TARGETS.md); None otherwise."""
        text = self._impl.partition()
        return None if text is None else json.loads(text)

    def save(self, path):
        """Writes PATH (.tosa) and, for a quantized program, PATH.quant.json. For an Ethos-U /
        Cortex-M target a PATH not ending in .tosa is the artifact directory (segments, manifest,
        partition report: what `tosac compile --target ethos-u55-128 -o DIR` writes); a .tosa PATH
        is the whole program lowered for the target, unpartitioned."""
        path = os.fspath(path)
        if self._impl.partition() is not None and not str(path).endswith(".tosa"):
            self._impl.save_artifact(path)
        else:
            self._impl.save(path)

    def inspect(self):
        """inspect() of this program."""
        return json.loads(self._impl.inspect())

    def __repr__(self):
        sig = lambda ts: ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in ts)
        return f"<tosac.Program ({sig(self.inputs)}) -> ({sig(self.outputs)})>"


def __getattr__(name):
    # tosac.torch imports torch (slow); loaded on first use
    if name == "torch":
        import importlib
        return importlib.import_module("tosac.torch")
    raise AttributeError(f"module 'tosac' has no attribute '{name}'")
