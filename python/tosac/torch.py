"""tosac.torch: compile a PyTorch module without touching ONNX files.

    import tosac, torch
    prog = tosac.torch.compile(model, (torch.randn(1, 3, 224, 224),), target="TOSA-1.0+INT",
                               calibration=[(x,) for x in batches])
    y = prog.run({"input0": x.numpy()})

The module is exported with torch.onnx.export (opset 17) into memory and compiled by
tosac.compile; input names are input0, input1, ... unless given.
"""

import io as _io

import numpy as np
import torch

import tosac

OPSET = 17


def _numpy(x):
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _sample(sample, names):
    """One calibration sample as {input name: ndarray}: a dict, a tuple/list in input order, or a
    tensor for a one-input module."""
    if isinstance(sample, dict):
        return {k: _numpy(v) for k, v in sample.items()}
    if isinstance(sample, (tuple, list)):
        if len(sample) != len(names):
            raise tosac._error(f"calibration sample with {len(sample)} tensors for a module with {len(names)} inputs "
                               f"({', '.join(names)})")
        return {n: _numpy(x) for n, x in zip(names, sample)}
    if len(names) != 1:
        raise tosac._error(f"calibration sample: give a tuple or dict for the {len(names)} inputs "
                           f"({', '.join(names)})")
    return {names[0]: _numpy(sample)}


def export(module, example_inputs, input_names=None, output_names=None):
    """The ONNX bytes of `module` traced on `example_inputs` (opset 17) and the input names."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    names = list(input_names) if input_names else [f"input{k}" for k in range(len(example_inputs))]
    buf = _io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, example_inputs, buf, opset_version=OPSET, input_names=names,
                          output_names=list(output_names) if output_names else None, do_constant_folding=True)
    return buf.getvalue(), names


def compile(module, example_inputs, target="TOSA-1.0+FP", calibration=None, io="float", input_names=None,
            output_names=None, **options):
    """Exports `module` on `example_inputs` (a tensor or a tuple of them) and compiles it with
    tosac.compile. calibration: an iterable of samples (tensors, tuples in input order, or dicts
    by input name), a folder, or "random". Returns a tosac.Program."""
    onnx, names = export(module, example_inputs, input_names, output_names)
    if calibration is not None and not isinstance(calibration, str) and not hasattr(calibration, "__fspath__"):
        calibration = [_sample(s, names) for s in calibration]
    options.setdefault("name", f"<{type(module).__name__}>")
    return tosac.compile(onnx, target=target, calibration=calibration, io=io, **options)
