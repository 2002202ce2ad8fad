"""The build track: the learner's engine file, its loader, and every exercise's check.

The complete engine passes every check; the unfilled one says "not done yet" for each; and
planted mistakes (wrong answers a learner could write) fail with a message that names them.
"""

import ast
import re

import pytest

from course import engine_file, track
from course.build_exercises import engine_text
from course.specs import TASKS

SOLUTION = engine_file.REFERENCE.read_text("utf-8")


def variant(tmp_path, *replacements):
    """A copy of the complete engine with (old, new) text replaced; each old must occur once."""
    source = SOLUTION
    for old, new in replacements:
        assert source.count(old) == 1, f"not found once in the solution: {old!r}"
        source = source.replace(old, new)
    path = tmp_path / "my_autograd.py"
    path.write_text(source, "utf-8")
    return path


def message(task_id, path):
    task = next(t for t in TASKS if t.id == task_id)
    return track.run(task, path)


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_complete_engine_passes(task):
    status, text = track.run(task, engine_file.REFERENCE)
    assert status == "done", text


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_unfilled_engine_is_not_done(task, capsys):
    assert not track.check(task.id, engine_file.LEARNER)
    out = capsys.readouterr().out
    assert out.startswith(f"Exercise {task.id}: not done yet — ") and out.count("\n") == 1


def test_every_stub_has_a_task_and_every_task_a_stub():
    stub_ids = set(engine_file.stubs(engine_file.LEARNER.read_text("utf-8")).values())
    assert stub_ids == {t.id for t in TASKS}


def test_each_function_holds_at_most_one_exercise_region():
    """The loader swaps whole functions, so a function must not mix two exercises."""
    source = (engine_file.ROOT / "exercises" / "sources" / "my_autograd.py").read_text("utf-8")
    lines = source.splitlines()
    for name, node in engine_file._functions(ast.parse(source)).items():
        body = lines[node.lineno - 1 : node.end_lineno]
        ids = re.findall(r"### BEGIN SOLUTION (\d+\.\d+)", "\n".join(body))
        assert len(ids) <= 1, f"{name} holds regions {ids}"


def test_generated_engine_files_are_current():
    assert engine_file.REFERENCE.read_text("utf-8") == engine_text(keep_solution=True)
    assert engine_file.LEARNER.read_text("utf-8") == engine_text(keep_solution=False)


def test_solution_engine_is_numpy_only():
    imports = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(SOLUTION))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert imports <= {"heapq", "itertools", "sys", "numpy"}


def test_other_stubs_are_answered_from_the_course(tmp_path):
    """An exercise is checked on its own: later chapters' stubs do not break it."""
    module, filled, pending = engine_file.load(engine_file.LEARNER, keep="2.1")
    assert pending == ["MulBackward0.apply"] and "2.4" in filled and "2.1" not in filled
    x = module.tensor([1.0, 2.0], requires_grad=True)
    (x.exp() * 1.0).sum()  # the operator table points at the answered functions
    with pytest.raises(NotImplementedError, match="Exercise 2.1"):
        (x * x).sum().backward()


def test_a_syntax_error_is_one_line(tmp_path, capsys):
    path = variant(tmp_path, ("def count_dependencies(roots):", "def count_dependencies(roots)"))
    assert not track.check("2.3", path)
    out = capsys.readouterr().out
    assert "my_autograd.py line" in out and "Traceback" not in out and out.count("\n") == 1


def test_a_crash_names_the_learners_line(tmp_path):
    path = variant(tmp_path, ("    counts = {}\n", "    counts = {}\n    counts.missing()\n"))
    status, text = message("2.3", path)
    assert status == "wrong" and "AttributeError" in text and "count_dependencies" in text


# --- Planted mistakes: each fails with a message that names it ---------------------------------

MISTAKES = {
    "1.1 ignores grad mode": (
        "1.1",
        [("return _GradMode.enabled and any(", "return any(")],
        "under no_grad",
    ),
    "1.2 a new AccumulateGrad each time": (
        "1.2",
        [("    return (t._grad_accumulator(), 0)\n", "    return (AccumulateGrad(t), 0)\n")],
        "one AccumulateGrad node",
    ),
    "1.3 detach without the version counter": (
        "1.3",
        [("        detached._version_box = self._version_box\n", "")],
        "_version",
    ),
    "1.7 __exit__ always turns grad mode on": (
        "1.7",
        [("        _GradMode.enabled = self.previous\n", "        _GradMode.enabled = True\n")],
        "nested",
    ),
    "2.1 no sum back to the input's shape": (
        "2.1",
        [
            (
                'grad_other = _sum_to(g * self.saved("self"), self._shapes[1])',
                'grad_other = g * self.saved("self")',
            )
        ],
        "shape",
    ),
    "2.2 transposes on the wrong side": (
        "2.2",
        [('grad_mat2 = self.saved("self").t() @ g', 'grad_mat2 = g.t() @ self.saved("self")')],
        "shape",
    ),
    "2.3 counts a node's edges once per visit, pushing nodes again": (
        "2.3",
        [("            if next_node not in seen:\n", "            if True:\n")],
        "count",
    ),
    "2.4 oldest node first": (
        "2.4",
        [
            (
                "                heapq.heappush(ready, (-next_node._sequence_nr, next(tie), next_node))",
                "                heapq.heappush(ready, (next_node._sequence_nr, next(tie), next_node))",
            )
        ],
        "at step",
    ),
    "2.6 a new .grad tensor on accumulation": (
        "2.6",
        [
            (
                "            variable.grad._data = variable.grad._data + grad._data",
                "            variable.grad = Tensor(variable.grad._data + grad._data)",
            )
        ],
        "same tensor",
    ),
    "3.1 saves both inputs always": (
        "3.1",
        [
            (
                'saved = [\n        ("self", self if _requires(other) else None),',
                'saved = [\n        ("self", self),',
            )
        ],
        "saves",
    ),
    "3.3 names the op with Backward0": (
        "3.3",
        [(".name().split('Backward')[0]", ".name()")],
        "output 0 of",
    ),
    "4.1 frees nothing": (
        "4.1",
        [("        saved.freed = True\n", "")],
        "freed",
    ),
    "4.6 retain_graph defaults to False": (
        "4.6",
        [
            (
                "tuple(tensors)\n    if retain_graph is None:\n        retain_graph = create_graph\n",
                "tuple(tensors)\n",
            )
        ],
        "create_graph=True",
    ),
    "5.1 forgets the incoming gradient g": (
        "5.1",
        [
            (
                "        return (g * result * (1 - result),)",
                "        return (result * (1 - result),)",
            )
        ],
        "it must use g",
    ),
    "5.1 computes in numpy": (
        "5.1",
        [
            (
                "        return (g * result * (1 - result),)",
                "        return (Tensor(g._data * result._data * (1 - result._data)),)",
            )
        ],
        "numpy leaves the graph",
    ),
    "5.6 runs the target's own node": (
        "5.6",
        [
            (
                " or node not in self.wanted",
                " or (node not in self.wanted and (node, 0) not in self.slots)",
            )
        ],
        "alive",
    ),
    "1.7 __exit__ swallows the exception": (
        "1.7",
        [
            (
                "        _GradMode.enabled = self.previous\n",
                "        _GradMode.enabled = self.previous\n        return True\n",
            )
        ],
        "does not swallow",
    ),
    "2.1 computes in numpy": (
        "2.1",
        [
            (
                'grad_self = _sum_to(g * self.saved("other"), self._shapes[0])',
                'grad_self = _sum_to(Tensor(g._data * self.saved("other")._data), self._shapes[0])',
            )
        ],
        "second derivative",
    ),
    "2.4 never frees": (
        "2.4",
        [("        if not retain_graph:\n            release_saved(node)\n", "")],
        "(alive); PyTorch's saves result (freed)",
    ),
    "2.6 adds into a gradient another leaf shares": (
        "2.6",
        [
            (
                "            variable.grad._data = variable.grad._data + grad._data",
                "            variable.grad._data += grad._data",
            )
        ],
        "a.grad after two backward calls",
    ),
    "3.5 uses the outermost hooks": (
        "3.5",
        [("pack, self.unpack_hook = _hook_stack[-1]", "pack, self.unpack_hook = _hook_stack[0]")],
        "which pack hook saved, nested",
    ),
    "5.5 returns a list": (
        "5.5",
        [("    return tuple(captured)\n", "    return list(captured)\n")],
        "'list'; PyTorch gives 'tuple'",
    ),
    "3.2 exp's backward without g": (
        "3.2",
        [('        return (g * self.saved("result"),)', '        return (self.saved("result"),)')],
        "x.grad",
    ),
    "4.5 its own words for the freed error": (
        "4.5",
        [
            (
                "            raise RuntimeError(FREED_MESSAGE)",
                '            raise RuntimeError("this graph was already freed")',
            )
        ],
        "the error's text differs from character 0",
    ),
    "6.5 w_hh not transposed": (
        "6.5",
        [("    pre = pre + hx @ w_hh.t()", "    pre = pre + hx @ w_hh")],
        "differs from PyTorch's",
    ),
    "7.5 no shift by the row maximum": (
        "7.5",
        [
            (
                "    shift = Tensor(input._data.max(axis=1, keepdims=True))",
                "    shift = Tensor(np.zeros((input.shape[0], 1), input.dtype))",
            )
        ],
        "large logits",
    ),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_planted_mistake_fails_with_a_message_naming_it(name, tmp_path):
    task_id, replacements, words = MISTAKES[name]
    status, text = message(task_id, variant(tmp_path, *replacements))
    assert status == "wrong", text
    assert words in text, text
    assert "Hint:" in text


def test_progress_table(capsys, tmp_path):
    rows = track.progress_rows(engine_file.REFERENCE)
    assert all(status == "done" for _, status, _ in rows)
    path = variant(tmp_path, ("            if next_node not in seen:\n", "            if True:\n"))
    rows = dict((i, s) for i, s, _ in track.progress_rows(path))
    assert rows["2.3"] == "wrong" and rows["2.1"] == "done"
    out = capsys.readouterr().out
    assert re.search(r"^Chapter 02: [234] of 5 done$", out, re.M)
    assert re.search(r"^  2\.3 .* wrong — .*count", out, re.M)


def test_a_mistake_in_another_piece_is_named_not_blamed_on_this_one(tmp_path):
    """MulBackward0.apply is right; the recording step it runs on forgets the saved tensors."""
    path = variant(
        tmp_path,
        (
            "            node._saved[name] = SavedTensor(_as_tensor(value, data.dtype), node)\n",
            "            pass\n",
        ),
    )
    status, text = message("2.1", path)
    assert status == "wrong" and "your Exercise 1.6 (_record) makes these programs" in text, text
    assert message("1.6", path)[0] == "wrong"


def test_the_readme_shows_a_real_progress_table(tmp_path, capsys):
    readme = (engine_file.ROOT / "README.md").read_text("utf-8")
    shown = re.search(r"```text\n(Chapter 02:.*?)```", readme, re.S)[1].splitlines()
    track.progress(
        variant(tmp_path, ("            if next_node not in seen:\n", "            if True:\n"))
    )
    printed = capsys.readouterr().out.splitlines()
    assert all(line in printed for line in shown), "rerun the README's example and paste it"


def test_a_deleted_function_is_one_line(tmp_path, capsys):
    path = variant(tmp_path, ("def count_dependencies(roots):", "def count_deps(roots):"))
    assert not track.check("2.4", path)
    out = capsys.readouterr().out
    assert "`count_dependencies` (Exercise 2.3) is missing" in out and out.count("\n") == 1
