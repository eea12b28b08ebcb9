"""tosac.torch: PyTorch modules exported in memory and compiled, against the module's own output
and against `tosac run` on the saved program."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import tosac
import tosac.torch
from conftest import rel_l2


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x, bias):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.mean(dim=(2, 3))) + bias


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    m = Small().eval()
    with torch.no_grad():  # a BatchNorm with statistics of its own
        m.bn.running_mean.uniform_(-0.5, 0.5)
        m.bn.running_var.uniform_(0.5, 2.0)
    return m


def test_torch_fp(small):
    x, bias = torch.randn(1, 3, 12, 12), torch.randn(1, 5)
    prog = tosac.torch.compile(small, (x, bias))
    assert [t.name for t in prog.inputs] == ["input0", "input1"]
    with torch.no_grad():
        want = small(x, bias).numpy()
    (got,) = prog.run({"input0": x.numpy(), "input1": bias.numpy()}).values()
    assert got.shape == want.shape and rel_l2(got, want) < 1e-5


def test_torch_int8_calibration(small):
    torch.manual_seed(1)
    x, bias = torch.randn(1, 3, 12, 12), torch.randn(1, 5)
    calib = [(torch.randn(1, 3, 12, 12), torch.randn(1, 5)) for _ in range(8)]
    prog = tosac.torch.compile(small, (x, bias), target="TOSA-1.0+INT", calibration=calib,
                               input_names=["img", "b"], output_names=["logits"])
    assert prog.inputs[0].qparams is not None and prog.inputs[0].dtype == np.int8
    with torch.no_grad():
        want = small(x, bias).numpy()
    got = prog.run({"img": x.numpy(), "b": bias.numpy()})["logits"]
    assert rel_l2(got, want) < 0.1
    with pytest.raises(tosac.Error, match="2 inputs"):
        tosac.torch.compile(small, (x, bias), target="TOSA-1.0+INT", calibration=[x])


def test_torchvision_like_tosac_run(tmp_path):
    # a user's one-liner: squeezenet (random weights) compiled, run, and the saved program run by
    # `tosac run` on the same input gives the same numbers
    script = textwrap.dedent(f"""
        import numpy as np, tosac, torch, torchvision
        torch.manual_seed(0)
        m = torchvision.models.squeezenet1_1(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        prog = tosac.torch.compile(m, x)
        y = prog.run({{"input0": x.numpy()}})
        prog.save("{tmp_path}/sq.tosa")
        np.save("{tmp_path}/x.npy", x.numpy())
        (name, out), = y.items()
        np.save("{tmp_path}/py_" + name + ".npy", out)
        with torch.no_grad():
            np.save("{tmp_path}/torch.npy", m(x).numpy())
        print(name)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    name = r.stdout.strip().splitlines()[-1]
    tosac_bin = os.environ["TOSAC_BIN"]
    r = subprocess.run([tosac_bin, "run", tmp_path / "sq.tosa", "-i", f"input0={tmp_path}/x.npy", "-o",
                        tmp_path / "run"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    py = np.load(tmp_path / f"py_{name}.npy")
    ref = np.load(tmp_path / "run" / f"{name}.npy")
    assert py.shape == (1, 1000) and np.array_equal(py, ref)
    assert rel_l2(py, np.load(tmp_path / "torch.npy")) < 1e-4


def test_two_input_calibration_equals_cli(small, tmp_path):
    # samples pair up by position across inputs: numpy dicts, folders per input and the command agree
    from conftest import run_tosac
    onnx, names = tosac.torch.export(small, (torch.randn(1, 3, 12, 12), torch.randn(1, 5)))
    model = tmp_path / "two.onnx"
    model.write_bytes(onnx)
    rng = np.random.default_rng(5)
    samples = [{"input0": rng.standard_normal((1, 3, 12, 12)).astype(np.float32),
                "input1": rng.standard_normal((1, 5)).astype(np.float32)} for _ in range(3)]
    for n in names:
        os.makedirs(tmp_path / n)
        for k, s in enumerate(samples):
            np.save(tmp_path / n / f"{k:02d}.npy", s[n])
    run_tosac(os.environ["TOSAC_BIN"], "compile", model, "-o", tmp_path / "cli.tosa", "--target", "TOSA-1.0+INT",
              "--calibrate", f"input0={tmp_path}/input0", "--calibrate", f"input1={tmp_path}/input1")
    cli = (tmp_path / "cli.tosa").read_bytes(), (tmp_path / "cli.tosa.quant.json").read_bytes()
    for k, calibration in enumerate((samples, {n: tmp_path / n for n in names})):
        tosac.compile(model, target="TOSA-1.0+INT", calibration=calibration).save(tmp_path / f"py{k}.tosa")
        assert (tmp_path / f"py{k}.tosa").read_bytes() == cli[0]
        assert (tmp_path / f"py{k}.tosa.quant.json").read_bytes() == cli[1]
    with pytest.raises(tosac.Error, match="input 'input1' has 2 sample"):
        tosac.compile(model, target="TOSA-1.0+INT", calibration=samples[:2] + [{"input0": samples[2]["input0"]}])
