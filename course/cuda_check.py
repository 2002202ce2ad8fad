"""`make cuda-check`: every CUDA part of the course, run once on a machine with an NVIDIA GPU.

Usage: ``python -m course.cuda_check [--out build/cuda-report]``

Four kinds of part, each run in a process of its own, with its own time limit, all at once:

- tests: the CUDA-marked tests (``pytest -m cuda tests``), with their pass and fail counts;
- chapter NN_topic: each chapter that has a cell comparing with PyTorch on CUDA (a cell that
  passes ``devices=("cuda",)``), executed in a fresh kernel (a copy: notebooks/ is never
  written), and whether each such cell says the engines agree;
- doctor: the seeds' three programs built on CUDA under ``mini_autograd.doctor()``: the
  diagnosis follows torch's text and names what links the graphs (the target `y_train`, the
  carried `model.hidden`, or one graph with two backward calls), and the fixed loops run
  silently with the same numbers;
- memory: ``torch.cuda.memory_allocated()`` after each iteration of a loop that carries its
  hidden state with a blind ``retain_graph=True``, against the two fixes (detach,
  re-initialise), plotted.

The report is ``report.txt`` and ``memory_growth.png`` under --out, with the executed chapters
in ``notebooks/`` and each part's raw result (JSON) and log in ``parts/``. A part that fails,
crashes or runs out of time is reported as such, and the other parts still run. The exit status
is 0 when every part passed, 1 otherwise. Without CUDA the script prints one line, writes
nothing and exits 0.

One part alone, here and now (``--device cpu`` tries the doctor or memory part without a GPU):
``python -m course.cuda_check --part memory --device cpu``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
import traceback
import warnings
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

import mini_autograd as ma
from course import seeds
from mini_autograd.instruments.memory import saved_bytes

if TYPE_CHECKING:  # nbformat takes seconds to import: only the chapter parts need it
    from nbformat import NotebookNode

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "build" / "cuda-report"
NO_CUDA = "cuda-check: no CUDA device (torch.cuda.is_available() is False); nothing to check."
# Every part runs at the same time, so the whole check takes as long as its slowest part; the
# limits keep it under five minutes (the chapters take about a minute on 16 cores).
TIME_LIMITS_S = {"tests": 240, "chapter": 240, "doctor": 120, "memory": 120}
PLOT_NAME = "memory_growth.png"
MB = 10**6


# ---------------------------------------------------------------------------------------------
# Parts, and running them side by side


@dataclass
class PartResult:
    """What one part found: whether it passed, a one-line summary, and the lines of its details."""

    name: str
    ok: bool
    summary: str
    details: list[str] = field(default_factory=list)


@dataclass
class Part:
    """One part to run in a process of its own: its name, its command line, its time limit."""

    name: str
    command: list[str]
    timeout_s: float


def result_path(parts_dir: Path, name: str) -> Path:
    """Where the part called `name` writes its result (a file name made of its name)."""
    return parts_dir / (re.sub(r"[^\w.-]+", "-", name) + ".json")


def write_result(result: PartResult, path: Path) -> None:
    """Save `result` as JSON at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(result), indent=1, ensure_ascii=False), encoding="utf-8")


def read_result(path: Path) -> PartResult | None:
    """The result saved at `path`, or None when the part wrote none (it crashed, or was stopped)."""
    try:
        return PartResult(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def planned_parts(out_dir: Path, notebooks_dir: Path = NOTEBOOKS) -> list[Part]:
    """The parts of the check: the tests, one per chapter with CUDA cells, the doctor, memory."""
    parts_dir = out_dir / "parts"

    def part(name, kind, *extra):
        command = [sys.executable, "-m", "course.cuda_check", "--part", kind, "--out", str(out_dir)]
        command += ["--result", str(result_path(parts_dir, name)), *extra]
        return Part(name, command, TIME_LIMITS_S[kind])

    chapters = [
        part(f"chapter {path.stem}", "chapter", "--notebook", str(path))
        for path in chapters_with_cuda_cells(notebooks_dir)
    ]
    return [part("tests", "tests"), *chapters, part("doctor", "doctor"), part("memory", "memory")]


def run_parts(parts: list[Part], parts_dir: Path) -> list[PartResult]:
    """Start every part at once, each in its own process group; collect each within its limit."""
    parts_dir.mkdir(parents=True, exist_ok=True)
    env = shared_cores_env(len(parts))
    started = [(part, start_part(part, parts_dir, env), time.monotonic()) for part in parts]
    return [finish_part(part, process, since, parts_dir) for part, process, since in started]


def shared_cores_env(count: int) -> dict:
    """The environment for `count` parts at once: each gets its share of the CPU cores.

    Left alone, every process would start one thread per core for its CPU arithmetic (torch,
    numpy's BLAS), and many busy processes with that many threads each slow each other down.
    """
    threads = str(max(1, (os.cpu_count() or 1) // count))
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    return {**os.environ, **dict.fromkeys(names, threads)}


def start_part(part: Part, parts_dir: Path, env: dict) -> subprocess.Popen:
    """Start `part`'s command in a new process group, its output going to its log file."""
    with open(log_path(parts_dir, part.name), "w", encoding="utf-8") as log:
        return subprocess.Popen(
            part.command,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def log_path(parts_dir: Path, name: str) -> Path:
    """The file that receives what the part called `name` prints."""
    return result_path(parts_dir, name).with_suffix(".log")


def finish_part(part: Part, process: subprocess.Popen, since: float, parts_dir: Path) -> PartResult:
    """The part's result: what it wrote, or why it wrote nothing (out of time, or crashed)."""
    left = part.timeout_s - (time.monotonic() - since)
    try:
        process.wait(timeout=max(left, 0.0))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the part and what it started (pytest, a kernel)
        process.wait()
        summary = f"ran out of time: stopped after {part.timeout_s:.0f} s"
        return PartResult(part.name, False, summary, log_tail(parts_dir, part.name))
    result = read_result(result_path(parts_dir, part.name))
    if result is None:
        summary = f"crashed (exit status {process.returncode}) before writing its result"
        return PartResult(part.name, False, summary, log_tail(parts_dir, part.name))
    result.name = part.name
    return result


def log_tail(parts_dir: Path, name: str, lines: int = 30) -> list[str]:
    """The last lines the part printed, to show what it was doing when it stopped."""
    try:
        text = log_path(parts_dir, name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return ["last lines of its log:", *text.splitlines()[-lines:]]


def run_part(kind: str, out_dir: Path, device: str, notebook: Path | None) -> PartResult:
    """Run one part in this process; a part that raises gives a failed result, never a crash."""
    try:
        if kind == "tests":
            return check_marked_tests(out_dir / "parts")
        if kind == "chapter":
            return check_chapter(notebook, out_dir / "notebooks")
        if kind == "doctor":
            return check_doctor(device)
        return check_memory_growth(device, out_dir / PLOT_NAME)
    except Exception as error:
        summary = f"raised {type(error).__name__}: {first_line(error)}"
        return PartResult(kind, False, summary, traceback.format_exc().splitlines())


def first_line(error: BaseException) -> str:
    """The first line of an error's message."""
    return (str(error).strip().splitlines() or [""])[0]


# ---------------------------------------------------------------------------------------------
# Part 1: the CUDA-marked tests


def check_marked_tests(work_dir: Path, paths=("tests",), marker: str = "cuda") -> PartResult:
    """Run ``pytest -m MARKER PATHS``; it passes when some test ran and none failed."""
    work_dir.mkdir(parents=True, exist_ok=True)
    junit = work_dir / f"pytest-{marker}.xml"
    junit.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-m", marker, *map(str, paths), "-q"]
    command += ["-p", "no:cacheprovider", f"--junitxml={junit}"]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    output = (completed.stdout + completed.stderr).splitlines()
    if not junit.exists():
        summary = f"pytest gave no results (exit status {completed.returncode})"
        return PartResult("tests", False, summary, output[-30:])
    counts, failed_names = junit_counts(junit)
    summary = ", ".join(f"{n} {what}" for what, n in counts.items())
    ok = completed.returncode == 0 and counts["passed"] > 0
    details = [f"$ pytest -m {marker} {' '.join(map(str, paths))} -q"]
    details += [f"failed: {name}" for name in failed_names] + output[-30:]
    return PartResult("tests", ok, f"{summary} (pytest -m {marker})", details)


JUNIT_OUTCOMES = {"failure": "failed", "error": "errors", "skipped": "skipped"}


def junit_counts(junit: Path) -> tuple[dict, list[str]]:
    """({'passed', 'failed', 'errors', 'skipped': count}, names of the failed tests) of a JUnit file."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failed_names = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        tags = {child.tag for child in case}  # besides these: properties, system-out...
        outcome = next(
            (outcome for tag, outcome in JUNIT_OUTCOMES.items() if tag in tags), "passed"
        )
        counts[outcome] += 1
        if outcome in ("failed", "errors"):
            failed_names.append(f"{case.get('classname')}::{case.get('name')}")
    return counts, failed_names


# ---------------------------------------------------------------------------------------------
# Part 2: each chapter's CUDA comparison cells, executed

CUDA_MARKER = 'devices=("cuda",)'  # what every chapter's CUDA comparison cell passes to compare
LOSS_TOLERANCE = 1e-3  # chapter 07's five training losses on the GPU against mini_autograd's
# The lines of a CUDA cell's output that give a verdict, and how to read the verdict they hold.
VERDICTS = (
    # compare()'s line per device: "cuda: agree", "cuda, my_autograd: MISMATCH in grad w"
    (re.compile(r"^cuda[:\d]*(?:, [^:]+)?: (agree|MISMATCH in .+)$", re.M), lambda v: v == "agree"),
    # chapter 05's summary: "every value agrees with PyTorch on CUDA: True"
    (re.compile(r"^.*agrees? with PyTorch on CUDA: (True|False)$", re.M), lambda v: v == "True"),
    # chapter 07's training: "first five losses on <GPU>: max |diff| with mini_autograd 3.1e-07"
    (
        re.compile(r"^.*max \|diff\| with mini_autograd (\S+)$", re.M),
        lambda v: is_number(v) and float(v) <= LOSS_TOLERANCE,
    ),
)
NOT_ON_CUDA = re.compile(r"not available on this machine", re.IGNORECASE)


def cuda_cell_indices(nb: NotebookNode) -> list[int]:
    """The indices of the code cells that compare with PyTorch on CUDA (they pass the marker)."""
    return [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and CUDA_MARKER in cell.source
    ]


def chapters_with_cuda_cells(folder: Path) -> list[Path]:
    """The notebooks in `folder` that have at least one CUDA comparison cell, in order."""
    import nbformat

    paths = sorted(folder.glob("*.ipynb"))
    return [path for path in paths if cuda_cell_indices(nbformat.read(path, as_version=4))]


def without_outputs(nb: NotebookNode) -> NotebookNode:
    """A copy of `nb` with no outputs, so that no stored output passes for a new one."""
    fresh = copy.deepcopy(nb)
    for cell in fresh.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return fresh


def run_notebook(nb: NotebookNode, cwd: Path) -> tuple[NotebookNode, str | None]:
    """(nb executed in a fresh kernel, None), or (nb as far as it got, why it stopped)."""
    from course.execute import execute

    try:
        return execute(nb, cwd), None
    except Exception as error:  # a cell that raised, a timeout, a dead kernel: all reported
        return nb, f"{type(error).__name__}: {first_line(error)}"


def cell_output_text(cell: NotebookNode) -> str:
    """Everything a code cell printed or returned as text, and the error it raised, if any."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.data.get("text/plain", ""))
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}")
    return "\n".join(part.rstrip("\n") for part in parts)


def judge_cell(cell: NotebookNode) -> tuple[bool, str]:
    """(agrees, verdict in words) for one executed CUDA comparison cell."""
    errors = [output for output in cell.get("outputs", []) if output.output_type == "error"]
    if errors:
        return False, f"raised {errors[0].ename}: {first_line(errors[0].evalue)}"
    if cell.get("execution_count") is None and not cell.get("outputs"):
        return False, "did not run"
    return judge_cuda_output(cell_output_text(cell))


def judge_cuda_output(text: str) -> tuple[bool, str]:
    """(agrees, verdict in words) for what a CUDA comparison cell printed."""
    if NOT_ON_CUDA.search(text):
        return False, "did not compare: the kernel saw no CUDA device"
    found = [  # (line, agrees)
        (match[0], agrees(match[1]))
        for pattern, agrees in VERDICTS
        for match in pattern.finditer(text)
    ]
    if not found:
        return False, "no verdict in its output"
    bad = [line for line, agrees in found if not agrees]
    if bad:
        return False, "; ".join(bad)
    return True, f"agree ({len(found)} of {len(found)} checks)"


def is_number(text: str) -> bool:
    """True when `text` reads as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_chapter(path: Path, executed_dir: Path) -> PartResult:
    """Execute the chapter at `path` (a copy, saved in `executed_dir`) and judge its CUDA cells."""
    import nbformat

    from course.execute import dumps

    nb = without_outputs(nbformat.read(path, as_version=4))
    indices = cuda_cell_indices(nb)
    nb, stopped = run_notebook(nb, path.parent)
    executed_dir.mkdir(parents=True, exist_ok=True)
    (executed_dir / path.name).write_text(dumps(nb), encoding="utf-8")
    verdicts = [(i, *judge_cell(nb.cells[i])) for i in indices]
    cells = "; ".join(f"cell {i}: {verdict}" for i, _, verdict in verdicts)
    summary = f"{len(indices)} CUDA cell{'s' * (len(indices) != 1)}: {cells}"
    details = [f"the run stopped: {stopped}"] if stopped else []
    for i, _, _ in verdicts:
        output = cell_output_text(nb.cells[i]) or "(no output)"
        details += [f"cell {i} printed:", *("  " + line for line in output.splitlines())]
    ok = stopped is None and all(agrees for _, agrees, _ in verdicts)
    return PartResult(f"chapter {path.stem}", ok, summary, details)


# ---------------------------------------------------------------------------------------------
# Part 3: the doctor on the seeds' three programs, on CUDA

DIAGNOSIS_START = "\n\nDiagnosis (mini_autograd doctor):\n"


@dataclass
class Seed:
    """A seed program (course/seeds.py), what its diagnosis must say, the start of its best fix."""

    program: object
    says: tuple
    best_fix: str

    @property
    def fixes(self) -> tuple:
        """The names of the program's mended forms."""
        return seeds.FIXES[self.program.__name__]


SEEDS = {
    "two losses": Seed(
        seeds.two_losses,
        ("two backward calls over one graph",),
        "add the losses and call backward once",
    ),
    "target from an input that requires grad": Seed(
        seeds.target_from_input,
        ("It is `y_train`.", "It is data or a target, not a state"),
        "build it without recording",
    ),
    "LSTM whose hidden state is carried": Seed(
        seeds.lstm_carried,
        ("`model.hidden[0] (its value from the previous iteration)`", "a state carried"),
        "detach it where it is carried over",
    ),
}


def error_text(program, *args) -> str | None:
    """The text of the RuntimeError `program(*args)` raises, or None when it runs."""
    try:
        program(*args)
    except RuntimeError as error:
        return str(error)
    return None


def best_fix(diagnosis: str) -> str:
    """The first fix a diagnosis lists."""
    fixes = diagnosis.split("- Fixes, best first:\n", 1)[-1]
    return next((line[4:] for line in fixes.splitlines() if line.startswith("  * ")), "")


def diagnosis_problems(seed: Seed, device: str) -> tuple[list[str], str]:
    """(what is wrong with the doctor's diagnosis of `seed`, the text it raised)."""
    plain = error_text(seed.program, torch, None, device)
    with ma.doctor():
        text = error_text(seed.program, torch, None, device)
    if plain is None or text is None:
        return ["the program did not fail"], text or ""
    problems = (
        [] if text.startswith(plain + DIAGNOSIS_START) else ["no diagnosis after torch's text"]
    )
    problems += [
        f"the diagnosis does not say {phrase!r}" for phrase in seed.says if phrase not in text
    ]
    if not best_fix(text).startswith(seed.best_fix):
        problems.append(f"its best fix is not {seed.best_fix!r}")
    return problems, text


def fix_problems(seed: Seed, fix: str, device: str) -> list[str]:
    """What is wrong when the fixed loop runs under the doctor: an error, a warning, other numbers."""
    plain = seed.program(torch, fix, device)
    with warnings.catch_warnings(record=True) as caught, ma.doctor():
        warnings.simplefilter("always")
        try:
            doctored = seed.program(torch, fix, device)
        except RuntimeError as error:
            return [f"fix {fix!r} raised under the doctor: {first_line(error)}"]
    said = [
        str(w.message)
        for w in caught
        if str(w.message).startswith(ma.instruments.torch_doctor.TITLE)
    ]
    problems = [f"fix {fix!r}: the doctor warned: {message}" for message in said]
    if not np.allclose(doctored, plain, rtol=1e-5, atol=0):
        problems.append(f"fix {fix!r} gives other numbers under the doctor: {doctored} vs {plain}")
    return problems


def check_doctor(device: str = "cuda") -> PartResult:
    """The three seeds on `device` under the doctor: diagnosed by name, and their fixes silent."""
    details, failed = [], []
    for name, seed in SEEDS.items():
        problems, text = diagnosis_problems(seed, device)
        for fix in seed.fixes:
            problems += fix_problems(seed, fix, device)
        verdict = "; ".join(problems) or f"diagnosed, {len(seed.fixes)} fixed loops run silently"
        failed += [name] if problems else []
        details += [f"{name}: {verdict}", "  the error under the doctor:"]
        details += ["    " + line for line in text.splitlines()] + [""]
    fixes = sum(len(seed.fixes) for seed in SEEDS.values())
    summary = (
        f"{len(SEEDS) - len(failed)} of {len(SEEDS)} seed programs diagnosed by name on {device}, "
        f"their {fixes} fixed loops silent" + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return PartResult("doctor", not failed, summary, details)


# ---------------------------------------------------------------------------------------------
# Part 4: GPU memory across iterations, blind retain_graph=True against the fixes

VARIANTS = {  # variant: its label in the report and the plot
    "retain_graph": "blind retain_graph=True (h carried)",
    "detach": "fix: h = h.detach()",
    "re-initialise": "fix: h re-initialised",
}
FLAT = 0.05  # a fix's growth may be at most this fraction of the blind loop's
# About 1 MB more kept per iteration on a GPU (the input and h of each step); small on a CPU.
LOOP_SIZES = {"cuda": {"batch": 256, "width": 512}, "cpu": {"batch": 16, "width": 64}}


def carried_state_loop(variant, device, measure, iterations=100, batch=256, width=512) -> list:
    """Bytes in use (`measure(loss)`) after each iteration of an RNN loop that carries `h`.

    Without a fix the second backward raises the freed-graph error, which blind
    retain_graph=True silences: every graph is kept, and every backward goes back through all
    of them. There is no optimizer step: an in-place update of a weight those graphs saved would
    make the next backward raise "modified by an inplace operation" instead.
    """
    torch.manual_seed(0)
    w_ih, w_hh = (torch.randn(width, width, device=device) / width**0.5 for _ in range(2))
    w_ih.requires_grad_(), w_hh.requires_grad_()
    h = torch.zeros(batch, width, device=device)
    used = []
    for _ in range(iterations):
        if variant == "detach":
            h = h.detach()
        elif variant == "re-initialise":
            h = torch.zeros(batch, width, device=device)
        h = torch.tanh(torch.randn(batch, width, device=device) @ w_ih + h @ w_hh)
        loss = h.pow(2).mean()
        loss.backward(retain_graph=variant == "retain_graph")
        used.append(measure(loss))
    return used


def memory_measure(device: str) -> tuple:
    """(measure(loss) -> bytes, its name): CUDA's allocated bytes, or the graph's saved bytes."""
    if device.startswith("cuda"):
        return (lambda loss: torch.cuda.memory_allocated(device)), "torch.cuda.memory_allocated()"
    return saved_bytes, "saved tensors the graph holds"


def measure_variants(device: str, measure, **sizes) -> tuple[dict, dict]:
    """({variant: bytes per iteration}, {variant: seconds}) for every variant of the loop."""
    curves, seconds = {}, {}
    for variant in VARIANTS:
        gc.collect()
        start = time.perf_counter()
        curves[variant] = carried_state_loop(variant, device, measure, **sizes)
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        seconds[variant] = time.perf_counter() - start
    return curves, seconds


def growth_verdict(curves: dict) -> tuple[bool, str]:
    """(as expected, in words): the blind loop's memory grows, the fixes' stays flat."""
    growth = {variant: curve[-1] - curve[0] for variant, curve in curves.items()}
    blind = growth["retain_graph"]
    if blind <= 0:
        return False, "the blind loop's memory did not grow"
    growing = [VARIANTS[v] for v in VARIANTS if v != "retain_graph" and growth[v] > FLAT * blind]
    if growing:
        return False, f"grows with a fix too: {', '.join(growing)}"
    return True, f"the blind loop grows by {blind / MB:.1f} MB, the fixes stay flat"


def plot_memory_growth(curves: dict, measure_name: str, path: Path, device: str) -> None:
    """Save the bytes in use per iteration of each variant, in MB, as a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4), dpi=120)
    for (variant, curve), style in zip(curves.items(), ("-", "--", ":")):
        megabytes = np.array(curve) / MB
        axes.plot(range(1, len(curve) + 1), megabytes, style, label=VARIANTS[variant])
    axes.set_xlabel("iteration")
    axes.set_ylabel(f"{measure_name}, MB")
    axes.set_title(f"Memory per iteration on {device}: blind retain_graph=True against the fixes")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)


def check_memory_growth(device: str, png: Path, **sizes) -> PartResult:
    """Measure the loop's memory per iteration for each variant, plot it, and judge the growth."""
    measure, measure_name = memory_measure(device)
    sizes = sizes or LOOP_SIZES["cuda" if device.startswith("cuda") else "cpu"]
    curves, seconds = measure_variants(device, measure, **sizes)
    plot_memory_growth(curves, measure_name, png, device)
    ok, verdict = growth_verdict(curves)
    figures = [
        f"{VARIANTS[v]}: {curve[0] / MB:.2f} -> {curve[-1] / MB:.2f} MB, {seconds[v]:.2f} s"
        for v, curve in curves.items()
    ]
    iterations = len(next(iter(curves.values())))
    details = [f"{measure_name} after each backward, {iterations} iterations", *figures]
    details.append(f"plot: {png}")
    return PartResult("memory", ok, f"{verdict}: " + "; ".join(figures), details)


# ---------------------------------------------------------------------------------------------
# The whole check, and its report


def device_lines() -> list[str]:
    """The machine the check ran on: GPU, torch and CUDA versions, Python."""
    return [
        f"date     {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"GPU      {torch.cuda.get_device_name(0)} ({torch.cuda.device_count()} visible)",
        f"torch    {torch.__version__}, CUDA {torch.version.cuda}, "
        f"cuDNN {torch.backends.cudnn.version()}",
        f"python   {platform.python_version()} ({sys.executable})",
        f"machine  {platform.node()}, {os.cpu_count()} CPU cores",
    ]


def chapters_not_run_line(parts: list[Part], notebooks_dir: Path = NOTEBOOKS) -> str:
    """The line that names the chapters left out, for they have no CUDA comparison cell."""
    planned = {part.name.removeprefix("chapter ") for part in parts}
    left_out = [
        path.stem for path in sorted(notebooks_dir.glob("*.ipynb")) if path.stem not in planned
    ]
    return f"not run  {', '.join(left_out) or 'none'} (no CUDA comparison cell)"


def summary_lines(results: list[PartResult]) -> list[str]:
    """One line per part: PASS or FAIL, its name and its summary."""
    return [f"{'PASS' if r.ok else 'FAIL'}  {r.name}: {r.summary}" for r in results]


def report_text(results: list[PartResult], header: list[str], seconds: float) -> str:
    """report.txt: the machine, one line per part, then each part's details."""
    passed = sum(result.ok for result in results)
    lines = ["cuda-check report", *header, ""]
    lines += [f"{passed} of {len(results)} parts passed in {seconds:.0f} s", ""]
    lines += summary_lines(results)
    for result in results:
        lines += ["", f"== {result.name}: {'PASS' if result.ok else 'FAIL'}", result.summary]
        lines += result.details
    return "\n".join(lines) + "\n"


def clear_previous_report(out_dir: Path) -> None:
    """Remove what an earlier run wrote there (only the report's own files and folders)."""
    for name in ("report.txt", PLOT_NAME):
        (out_dir / name).unlink(missing_ok=True)
    for folder in ("parts", "notebooks"):
        for path in sorted((out_dir / folder).glob("*")):
            if path.is_file():
                path.unlink()


def check_everything(out_dir: Path) -> list[PartResult]:
    """Run every part at once, write the report under `out_dir`, print the summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    clear_previous_report(out_dir)
    parts = planned_parts(out_dir)
    header = [*device_lines(), chapters_not_run_line(parts)]
    longest = max(part.timeout_s for part in parts)
    print(f"cuda-check: {len(parts)} parts at once on {torch.cuda.get_device_name(0)}", end="")
    print(f" (each stopped after at most {longest:.0f} s) ...", flush=True)
    start = time.monotonic()
    results = run_parts(parts, out_dir / "parts")
    seconds = time.monotonic() - start
    (out_dir / "report.txt").write_text(report_text(results, header, seconds), encoding="utf-8")
    passed = sum(result.ok for result in results)
    print(f"cuda-check: {passed} of {len(results)} parts passed in {seconds:.0f} s")
    print("\n".join("  " + line for line in summary_lines(results)))
    plot = f", plot: {out_dir / PLOT_NAME}" if (out_dir / PLOT_NAME).exists() else ""
    print(f"report: {out_dir / 'report.txt'}{plot}")
    return results


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: the whole check (default), or one part with --part."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the report's folder")
    parser.add_argument("--part", choices=sorted(TIME_LIMITS_S), help="run only this part, here")
    parser.add_argument("--notebook", type=Path, help="the chapter, for --part chapter")
    parser.add_argument("--device", default="cuda", help="the device, for --part doctor|memory")
    parser.add_argument("--result", type=Path, help="where --part writes its result (JSON)")
    args = parser.parse_args(argv)
    if args.part:
        result = run_part(args.part, args.out, args.device, args.notebook)
        if args.result:
            write_result(result, args.result)
        else:
            print("\n".join([*summary_lines([result]), *result.details]))
        return 0 if result.ok else 1
    if not torch.cuda.is_available():
        print(NO_CUDA)
        return 0
    results = check_everything(args.out)
    return 0 if all(result.ok for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
