"""course/cuda_check.py (`make cuda-check`) on a machine without a GPU.

Without CUDA the check prints one line and exits 0. Its pieces that need no GPU run here on the
CPU: the runner that keeps a crashed or hung part from stopping the others, the pytest counts,
the collection and judging of CUDA cells on a small synthetic notebook, the doctor's seeds, and
the memory-growth loop with its measure passed in.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch

from course import cuda_check, seeds
from mini_autograd.instruments.graph_walk import graph_nodes

ROOT = Path(__file__).resolve().parent.parent


def test_without_cuda_it_prints_one_line_and_exits_0(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cuda_check.main(["--out", str(tmp_path / "report")]) == 0
    assert capsys.readouterr().out == cuda_check.NO_CUDA + "\n"
    assert not (tmp_path / "report").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_the_command_itself_without_cuda(tmp_path):
    command = [sys.executable, "-m", "course.cuda_check", "--out", str(tmp_path / "report")]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, cuda_check.NO_CUDA + "\n")
    assert not (tmp_path / "report").exists()


def test_the_makefile_target():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "cuda-check" in next(line for line in makefile.splitlines() if line.startswith(".PHONY"))
    assert "cuda-check: $(STAMP)\n\t$(BIN)/python -m course.cuda_check\n" in makefile


# The runner: every part in its own process; what goes wrong in one is reported, not raised.


def python_part(name, code, parts_dir, timeout_s=30):
    """A part that runs `code`, with the path of its result file as sys.argv[1]."""
    path = cuda_check.result_path(parts_dir, name)
    return cuda_check.Part(name, [sys.executable, "-c", code, str(path)], timeout_s)


def test_a_crashed_or_hung_part_is_reported_and_the_others_still_count(tmp_path):
    good = cuda_check.PartResult("anything", True, "all fine", ["a detail"])
    writes = f"import json, sys; open(sys.argv[1], 'w').write({json.dumps(good.__dict__)!r})"
    parts = [
        python_part("good part", writes, tmp_path),
        python_part("crashing part", "print('boom'); raise SystemExit(3)", tmp_path),
        python_part(
            "hung part",
            "import time; print('sleeping', flush=True); time.sleep(60)",
            tmp_path,
            timeout_s=1,
        ),
    ]
    good_result, crashed, hung = cuda_check.run_parts(parts, tmp_path)
    assert (good_result.name, good_result.ok, good_result.summary) == (
        "good part",
        True,
        "all fine",
    )
    assert not crashed.ok and crashed.summary.startswith("crashed (exit status 3)")
    assert "boom" in crashed.details
    assert not hung.ok and hung.summary == "ran out of time: stopped after 1 s"
    assert "sleeping" in hung.details


def test_a_part_that_raises_gives_a_failed_result():
    result = cuda_check.run_part("chapter", Path("unused"), "cpu", notebook=None)
    assert not result.ok and result.summary.startswith("raised ")
    assert result.details[0].startswith("Traceback")


def test_the_whole_check_writes_a_report_and_fails_when_a_part_fails(monkeypatch, tmp_path):
    def fake_parts(out_dir):
        parts_dir = out_dir / "parts"
        ok = cuda_check.PartResult("x", True, "fine", [])
        writes = f"import json, sys; open(sys.argv[1], 'w').write({json.dumps(ok.__dict__)!r})"
        return [python_part("fine", writes, parts_dir), python_part("broken", "1/0", parts_dir)]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *_: "Fake GPU")
    monkeypatch.setattr(cuda_check, "device_lines", lambda: ["GPU      Fake GPU"])
    monkeypatch.setattr(cuda_check, "planned_parts", fake_parts)
    assert cuda_check.main(["--out", str(tmp_path)]) == 1
    report = (tmp_path / "report.txt").read_text(encoding="utf-8")
    assert "1 of 2 parts passed in " in report
    assert "PASS  fine: fine\nFAIL  broken: crashed (exit status 1)" in report
    assert "ZeroDivisionError: division by zero" in report


def test_the_plan_has_one_part_per_chapter_with_cuda_cells_and_fits_in_five_minutes(tmp_path):
    write_notebook(tmp_path / "01_with.ipynb", ['print(compare(f, x, devices=("cuda",)))'])
    write_notebook(tmp_path / "02_without.ipynb", ["x = 1"])
    parts = cuda_check.planned_parts(tmp_path / "out", notebooks_dir=tmp_path)
    assert [part.name for part in parts] == ["tests", "chapter 01_with", "doctor", "memory"]
    assert max(part.timeout_s for part in parts) < 300  # they run at the same time
    chapters = [path.stem for path in cuda_check.chapters_with_cuda_cells(cuda_check.NOTEBOOKS)]
    assert "01_the_graph" in chapters and "07_capstone" in chapters
    assert "00_welcome" not in chapters  # its set-up cell asks about CUDA, but compares nothing


# The CUDA-marked tests: counts from pytest's JUnit file.


def test_marked_tests_are_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the tiny file needs no plugin
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.cuda\ndef test_passes():\n    pass\n\n"
        "@pytest.mark.cuda\ndef test_fails():\n    assert False\n\n"
        "@pytest.mark.cuda\n@pytest.mark.skip(reason='no')\ndef test_skips():\n    pass\n\n"
        "def test_not_marked():\n    pass\n",
        encoding="utf-8",
    )
    result = cuda_check.check_marked_tests(tmp_path / "work", paths=[tmp_path / "test_tiny.py"])
    assert not result.ok
    assert result.summary == "1 passed, 1 failed, 0 errors, 1 skipped (pytest -m cuda)"
    # (junit's class name for the test depends on the rootdir pytest picks, so match the name)
    assert any("test_fails" in line for line in result.details)


# The chapters: CUDA cells found, executed in a fresh kernel, and judged.

CUDA_AGREES = 'devices=("cuda",)\nprint("compare f: mini_autograd vs torch\\ncuda: agree")'
CUDA_DIFFERS = 'devices=("cuda",)\nprint("cuda, my_autograd: MISMATCH in grad w")'
NO_CUDA_HERE = 'devices=("cuda",)\nprint("cuda: not available on this machine")'


def write_notebook(path, sources):
    """A notebook of code cells with these sources, with a stale output in each."""
    cells = [nbformat.v4.new_markdown_cell("# A chapter")]
    for source in sources:
        cell = nbformat.v4.new_code_cell(source)
        cell.outputs = [nbformat.v4.new_output("stream", text="cuda: agree\n")]  # stored, stale
        cells.append(cell)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_cuda_cells_are_the_ones_that_pass_devices_cuda():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell('devices=("cuda",) in words'),
            nbformat.v4.new_code_cell('compare(f, x, devices=("cpu",))'),
            nbformat.v4.new_code_cell(CUDA_AGREES),
        ]
    )
    assert cuda_check.cuda_cell_indices(nb) == [2]


@pytest.mark.parametrize(
    "printed, verdict",
    [
        ("compare f: mini_autograd vs torch\ncuda: agree\n  forward  x\ncuda: agree", (True, "agree (2 of 2 checks)")),
        ("cuda: agree\ncuda: MISMATCH in node names", (False, "cuda: MISMATCH in node names")),
        ("every value agrees with PyTorch on CUDA: True", (True, "agree (1 of 1 checks)")),
        ("every value agrees with PyTorch on CUDA: False", (False, "every value agrees with PyTorch on CUDA: False")),
        ("first five losses on H200: max |diff| with mini_autograd 2.4e-07", (True, "agree (1 of 1 checks)")),
        ("first five losses on H200: max |diff| with mini_autograd 3.0e-02", (False, "first five losses on H200: max |diff| with mini_autograd 3.0e-02")),
        ("CUDA is not available on this machine: ...", (False, "did not compare: the kernel saw no CUDA device")),
        ("something else", (False, "no verdict in its output")),
    ],
)  # fmt: skip
def test_what_a_cuda_cell_printed_is_judged(printed, verdict):
    assert cuda_check.judge_cuda_output(printed) == verdict


def test_a_synthetic_chapter_is_executed_in_a_copy_and_each_cuda_cell_judged(tmp_path):
    sources = ["x = 1", CUDA_AGREES, CUDA_DIFFERS, NO_CUDA_HERE, "1 / 0", CUDA_AGREES]
    path = write_notebook(tmp_path / "09_synthetic.ipynb", sources)
    stored = path.read_text(encoding="utf-8")
    result = cuda_check.check_chapter(path, tmp_path / "executed")
    assert path.read_text(encoding="utf-8") == stored  # the chapter itself is never written
    assert not result.ok
    assert result.summary == (
        "4 CUDA cells: cell 2: agree (1 of 1 checks); cell 3: cuda, my_autograd: MISMATCH in "
        "grad w; cell 4: did not compare: the kernel saw no CUDA device; cell 6: did not run"
    )
    assert result.details[0].startswith("the run stopped: CellExecutionError")
    assert "  cuda: agree" in result.details
    executed = nbformat.read(tmp_path / "executed" / "09_synthetic.ipynb", as_version=4)
    assert executed.cells[5].outputs[0].ename == "ZeroDivisionError"


# The doctor, on the CPU: the same seeds and checks the GPU run makes.


def test_the_doctor_part_passes_on_the_cpu():
    result = cuda_check.check_doctor("cpu")
    assert result.ok, result.details
    assert result.summary == (
        "3 of 3 seed programs diagnosed by name on cpu, their 6 fixed loops silent"
    )
    report = "\n".join(result.details)
    assert "It is `y_train`." in report and "`model.hidden[0] (its value" in report


def test_a_diagnosis_that_misses_its_phrase_is_reported():
    seed = cuda_check.Seed(seeds.two_losses, ("It is `nothing`.",), "detach it")
    problems, text = cuda_check.diagnosis_problems(seed, "cpu")
    assert problems == [
        "the diagnosis does not say 'It is `nothing`.'",
        "its best fix is not 'detach it'",
    ]
    assert "Diagnosis (mini_autograd doctor):" in text


# Memory growth: the loop takes its measure as an argument, so the CPU can stand in for CUDA.


def test_the_loop_grows_only_with_blind_retain_graph():
    def node_count(loss):
        return len(graph_nodes(loss))

    counts = {
        variant: cuda_check.carried_state_loop(variant, "cpu", node_count, 5, batch=2, width=3)
        for variant in cuda_check.VARIANTS
    }
    blind = counts.pop("retain_graph")
    assert all(later > earlier for earlier, later in zip(blind, blind[1:]))
    assert all(len(set(curve)) == 1 for curve in counts.values()), counts


@pytest.mark.parametrize(
    "curves, verdict",
    [
        ({"retain_graph": [1, 5e6], "detach": [1, 1], "re-initialise": [2, 2]}, (True, "the blind loop grows by 5.0 MB, the fixes stay flat")),
        ({"retain_graph": [1, 1], "detach": [1, 1], "re-initialise": [1, 1]}, (False, "the blind loop's memory did not grow")),
        ({"retain_graph": [0, 10], "detach": [0, 1], "re-initialise": [0, 0]}, (False, "grows with a fix too: fix: h = h.detach()")),
    ],
)  # fmt: skip
def test_growth_verdict(curves, verdict):
    assert cuda_check.growth_verdict(curves) == verdict


def test_the_memory_part_on_the_cpu_plots_and_gives_its_figures(tmp_path):
    png = tmp_path / "plot" / cuda_check.PLOT_NAME
    result = cuda_check.check_memory_growth("cpu", png, iterations=8, batch=2, width=4)
    assert result.ok, result.summary
    assert png.read_bytes().startswith(b"\x89PNG")
    assert result.details[0] == "saved tensors the graph holds after each backward, 8 iterations"
    assert [line.split(":")[0] for line in result.details[1:4]] == [
        "blind retain_graph=True (h carried)",
        "fix",
        "fix",
    ]
    assert all(" -> " in line and " MB, " in line for line in result.details[1:4])
