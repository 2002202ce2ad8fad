"""Published PyTorch autograd programs run unchanged on mini_autograd and print the same.

Each program in tests/programs/ runs twice in a subprocess: as published under torch, and
with only its torch imports rewritten to mini_autograd ones. The test asserts that the torch
run works (the fixture itself is valid) and that mini_autograd prints the same output (see
tests/programs/harness.py for what "the same" allows). Programs that do not match yet are
listed in NOT_YET with what they still need: delete an entry once the program matches (a
strict xfail fails as soon as the program passes, to say so).

    .venv/bin/python -m tests.programs.harness -v [names...]

shows the same verdicts as a table.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.programs import harness

# program -> what mini_autograd still lacks for it: the first failure, then what the program
# uses further on that mini_autograd does not have yet.
NOT_YET = {}

PROGRAMS = harness.programs()
WORKERS = max(2, min(4, os.cpu_count() or 2))


def _param(name):
    marks = [pytest.mark.xfail(strict=True, reason=NOT_YET[name])] if name in NOT_YET else []
    return pytest.param(name, marks=marks, id=name)


class _Runs:
    """The two runs of each program, started in a thread pool and kept in memory only."""

    def __init__(self, workers):
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.futures = {}

    def start(self, name):
        if name not in self.futures:
            path = harness.program_path(name)
            self.futures[name] = [
                self.pool.submit(harness.run, path, library) for library in harness.LIBRARIES
            ]

    def get(self, name):
        """(torch run, mini_autograd run) of program `name`."""
        self.start(name)
        return tuple(future.result() for future in self.futures[name])


@pytest.fixture(scope="module")
def runs(request):
    """Both runs of every program, computed once per session. The runs of all the programs
    this session selected start at once, so that the subprocesses overlap; under pytest-xdist
    with another distribution than loadfile a worker starts only the programs it is given."""
    cache = _Runs(WORKERS)
    config = request.config
    if not hasattr(config, "workerinput") or config.getoption("dist", "no") == "loadfile":
        for item in request.session.items:
            if item.module is request.module and getattr(item, "callspec", None):
                if "name" in item.callspec.params:
                    cache.start(item.callspec.params["name"])
    yield cache
    cache.pool.shutdown(wait=False, cancel_futures=True)


def test_every_program_is_tested():
    assert len(PROGRAMS) >= 15
    assert set(NOT_YET) <= set(PROGRAMS), set(NOT_YET) - set(PROGRAMS)


@pytest.mark.parametrize("name", [_param(name) for name in PROGRAMS])
def test_program_prints_the_same(runs, name):
    torch_run, mini_run = runs.get(name)
    code, _, err = torch_run
    assert code == 0, f"{name} does not run under torch: {harness.last_error_line(err)}"
    status, detail, difference = harness.verdict(torch_run, mini_run)
    message = f"{status}: {detail}\n{difference}".strip()
    assert status == "SAME", message


# --- the harness itself ------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("import torch\n", "import mini_autograd as torch\n"),
        ("import torch.nn as nn\n", "import mini_autograd.nn as nn\n"),
        ("import torch.nn.functional as F\n", "import mini_autograd.nn.functional as F\n"),
        ("import torch.optim as optim\n", "import mini_autograd.optim as optim\n"),
        ("from torch import nn\n", "from mini_autograd import nn\n"),
        ("from torch import nn, optim\n", "from mini_autograd import nn, optim\n"),
        ("from torch.autograd import Function\n", "from mini_autograd.autograd import Function\n"),
        (
            "from torch.nn.parameter import Parameter\n",
            "from mini_autograd.nn.parameter import Parameter\n",
        ),
        ("    import torch  # indented\n", "    import mini_autograd as torch  # indented\n"),
        ("\timport torch as t\n", "\timport mini_autograd as t\n"),
        ("import math, torch\n", "import math, mini_autograd as torch\n"),
        ("import torch.onnx\n", "import mini_autograd.onnx, mini_autograd as torch\n"),
        ("import torchvision\n", "import torchvision\n"),
        ("from torchvision.models import resnet18\n", "from torchvision.models import resnet18\n"),
        ("x = torch.ones(2)  # import torch\n", "x = torch.ones(2)  # import torch\n"),
        ('y = eval("torch." + x)\n', 'y = eval("torch." + x)\n'),
        ("# import torch\n", "# import torch\n"),
        ("import torch", "import mini_autograd as torch"),
    ],
)
def test_rewrite_imports_one_line(line, expected):
    assert harness.rewrite_imports(line) == expected


def test_rewrite_imports_changes_only_the_import_lines():
    source = (
        '"""Doc."""\n'
        "import math\n"
        "import torch\n"
        "from torch.autograd import Function\n"
        "\n"
        "def f():\n"
        "    import torch.nn.functional as F\r\n"
        "    return torch.sin(torch.tensor(math.pi)), F\n"
    )
    rewritten = harness.rewrite_imports(source)
    assert rewritten == (
        '"""Doc."""\n'
        "import math\n"
        "import mini_autograd as torch\n"
        "from mini_autograd.autograd import Function\n"
        "\n"
        "def f():\n"
        "    import mini_autograd.nn.functional as F\r\n"
        "    return torch.sin(torch.tensor(math.pi)), F\n"
    )


@pytest.mark.parametrize(
    ("torch_out", "mini_out"),
    [
        ("<AddBackward0 object at 0x7f3a2c1b9e80>\n", "<AddBackward0 object at 0x55d0a1>\n"),
        ("<AddBackward0 object at 0x7f3a2c1b9e80>\n", "<AddBackward0 object #4>\n"),
        (
            "tensor([1., 2.], dtype=torch.float64)\n",
            "tensor([1., 2.], dtype=mini_autograd.float64)\n",
        ),
        ("torch.float32\n", "mini_autograd.float32\n"),
        ("tensor([0.1235, 2.0000])\n", "tensor([0.1234, 2.0000])\n"),
        ("tensor([ 1.0000e+02, -5.1765e-01])\n", "tensor([ 1.0000e+02, -5.1764e-01])\n"),
        ("1999 2234.37158203125\n", "1999 2234.3717\n"),
        ("loss  3.65 | ppl    38.31\n", "loss  3.66 | ppl    38.30\n"),
        ("tensor([ 1., -2.])\n", "tensor([1.,  -2.])\n"),
        ("x 1e-07\n", "x 0.0\n"),
        ("", ""),
    ],
)
def test_compare_outputs_same(torch_out, mini_out):
    same, difference = harness.compare_outputs(torch_out, mini_out)
    assert same, difference
    assert difference == ""


@pytest.mark.parametrize(
    ("torch_out", "mini_out", "where"),
    [
        ("a\n0.5\n", "a\n0.6\n", "line 2"),
        ("tensor([0.5000])\n", "tensor([0.6000])\n", "line 1"),
        ("tensor([0.1235])\n", "tensor([0.1232])\n", "line 1"),
        ("1999 10.5\n", "2000 10.5\n", "line 1"),
        ("tensor([1., 2.])\n", "tensor([1., 3.])\n", "line 1"),
        ("True\n", "False\n", "line 1"),
        ("grad_fn=<MulBackward0>\n", "grad_fn=<MulBackward>\n", "line 1"),
        ("a\nb\n", "a\n", "line 2"),
        ("a\n", "a\nb\n", "line 2"),
        ("tensor(nan)\n", "tensor(1.)\n", "line 1"),
    ],
)
def test_compare_outputs_differs(torch_out, mini_out, where):
    same, difference = harness.compare_outputs(torch_out, mini_out)
    assert not same
    assert where in difference
    assert "torch:" in difference and "mini_autograd:" in difference


def test_compare_outputs_names_both_lines():
    same, difference = harness.compare_outputs("ok\nvalue 0.5\n", "ok\nvalue 0.6\n")
    assert not same
    assert "torch line 2 vs mini_autograd line 2" in difference
    assert "value 0.5" in difference and "value 0.6" in difference


def test_verdicts():
    ok = (0, "x 1.0\n", "")
    assert harness.verdict(ok, ok)[0] == "SAME"
    assert harness.verdict(ok, (0, "x 2.0\n", ""))[0] == "DIFFERS"
    failed = (1, "", "Traceback (most recent call last):\n  ...\nAttributeError: no sin\n")
    assert harness.verdict(ok, failed)[:2] == ("FAILS", "AttributeError: no sin")
    assert harness.verdict(failed, ok)[:2] == ("TORCH FAILS", "AttributeError: no sin")
    message = "ValueError: bad\n  tensor([1.])\n"
    multi_line = (1, "", f"Traceback (most recent call last):\n  File x\n{message}")
    assert harness.verdict(ok, multi_line)[1] == "ValueError: bad"
    ignored = "Exception ignored in: <function f>\nTraceback (most recent call last):\nOSError: x\n"
    assert harness.verdict(ok, (1, "", multi_line[2] + ignored))[1] == "ValueError: bad"


def test_layout_difference_is_noted_but_same():
    torch_out = "tensor([0.1, 0.2],\n       grad_fn=<MulBackward0>)\n"
    mini_out = "tensor([0.1, 0.2], grad_fn=<MulBackward0>)\n"
    assert harness.compare_outputs(torch_out, mini_out) == (True, "")
    status, detail, _ = harness.verdict((0, torch_out, ""), (0, mini_out, ""))
    assert status == "SAME" and "line breaks differ" in detail
    assert harness.layout_difference(torch_out, torch_out) == ""


def test_run_uses_the_rewritten_source_in_a_temporary_directory(tmp_path):
    program = tmp_path / "tiny.py"
    program.write_text(
        "import os\nimport torch\n"
        "print(torch.__name__, os.path.basename(os.getcwd()).startswith('tiny-mini_autograd-'))\n"
        "print(os.environ['PYTHONHASHSEED'], sorted(os.listdir('.')))\n",
        encoding="utf-8",
    )
    code, out, err = harness.run(program, "mini_autograd")
    assert code == 0, err
    assert out.split() == ["mini_autograd", "True", "0", "['tiny.py']"]
    assert harness.run(program, "mini_autograd", timeout=60)[1] == out
    with pytest.raises(ValueError):
        harness.run(program, "numpy")
