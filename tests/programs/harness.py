"""Run published PyTorch programs under torch and under mini_autograd, and compare their output.

The programs in this folder are public PyTorch autograd teaching programs, copied with the
changes their headers list. `run(path, "mini_autograd")` runs a program with its torch
imports rewritten to mini_autograd ones (`rewrite_imports`) and nothing else changed;
`compare_outputs` says whether the two printed outputs agree, up to object addresses, the
library's own name in reprs, and float rounding.

    .venv/bin/python -m tests.programs.harness [-v] [names...]

prints one line per program: SAME, DIFFERS, FAILS (mini_autograd's last error line), or
TORCH FAILS (the program itself does not run under torch).
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LIBRARIES = ("torch", "mini_autograd")
TIMEOUT_S = 120
NOT_PROGRAMS = {"__init__.py", "harness.py"}

# One import statement at the start of a line (any indentation), with an optional comment.
_IMPORT = re.compile(r"^(?P<indent>[ \t]*)import[ \t]+(?P<names>[^#\n]*?)(?P<tail>[ \t]*(#.*)?)$")
_FROM = re.compile(
    r"^(?P<indent>[ \t]*)from[ \t]+(?P<module>torch(\.[\w.]+)?)(?P<rest>[ \t]+import\b.*)$"
)
_ITEM = re.compile(r"^(?P<module>[\w.]+)(?:[ \t]+as[ \t]+(?P<alias>\w+))?$")


def programs():
    """The program names (file stems) in this folder, sorted."""
    return sorted(p.stem for p in HERE.glob("*.py") if p.name not in NOT_PROGRAMS)


def program_path(name):
    """The path of program `name` (a stem such as "polynomial_nn", or a path)."""
    path = Path(name)
    if path.suffix == ".py" and path.exists():
        return path.resolve()
    return HERE / f"{Path(name).stem}.py"


def _rewrite_item(item):
    """One `import` item: torch -> mini_autograd, keeping the names the item binds."""
    match = _ITEM.match(item.strip())
    if match is None:
        return item.strip()
    module, alias = match["module"], match["alias"]
    if module != "torch" and not module.startswith("torch."):
        return item.strip()
    mini = "mini_autograd" + module[len("torch") :]
    if alias:
        return f"{mini} as {alias}"
    if module == "torch":
        return "mini_autograd as torch"
    # `import torch.nn` binds `torch`: import the submodule, then bind `torch`.
    return f"{mini}, mini_autograd as torch"


def rewrite_imports(source):
    """The source with its torch import statements turned into mini_autograd ones.

    `import torch` -> `import mini_autograd as torch`, `import torch.nn as nn` ->
    `import mini_autograd.nn as nn`, `from torch.X import Y` -> `from mini_autograd.X
    import Y`, and so on. Only import statements that start a line (after any
    indentation) change; nothing else in the source does.
    """
    lines = source.splitlines(keepends=True)
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        match = _FROM.match(body)
        if match:
            module = "mini_autograd" + match["module"][len("torch") :]
            body = f"{match['indent']}from {module}{match['rest']}"
        else:
            match = _IMPORT.match(body)
            if match and re.search(r"\btorch\b", match["names"]) and ";" not in match["names"]:
                items = [_rewrite_item(item) for item in match["names"].split(",")]
                body = f"{match['indent']}import {', '.join(items)}{match['tail']}"
        out.append(body + ending)
    return "".join(out)


def _env():
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    # One thread: the same float summation order on every machine, and a quicker start.
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("PYTHONSTARTUP", None)
    return env


def run(program_path, library, timeout=TIMEOUT_S):
    """Run a program under `library` ("torch" or "mini_autograd"): (returncode, stdout, stderr).

    The program runs in a fresh temporary working directory, in a subprocess of this
    Python, with PYTHONHASHSEED=0. Under "mini_autograd" the program's source is first
    passed through rewrite_imports. A run past `timeout` seconds returns returncode -9 and
    a message in stderr.
    """
    if library not in LIBRARIES:
        raise ValueError(f"library must be one of {LIBRARIES}, got {library!r}")
    path = Path(program_path)
    source = path.read_text(encoding="utf-8")
    if library == "mini_autograd":
        source = rewrite_imports(source)
    with tempfile.TemporaryDirectory(prefix=f"{path.stem}-{library}-") as cwd:
        script = Path(cwd) / path.name
        script.write_text(source, encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, script.name],
                cwd=cwd,
                env=_env(),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as expired:
            out = expired.stdout or ""
            out = out.decode(errors="replace") if isinstance(out, bytes) else out
            return -9, out, f"TimeoutExpired: the program ran past {timeout} s"
        return done.returncode, done.stdout, done.stderr


# --- comparing outputs -------------------------------------------------------

_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+|(?<=\bobject )#\d+")
_PREFIX = re.compile(r"\bmini_autograd\.")
_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(rf"(?P<word>[A-Za-z_][A-Za-z0-9_.]*)|(?P<number>{_NUMBER})|(?P<other>\S)")
RTOL = 1e-4
ATOL = 1e-5
LAST_DIGITS = 1.5
MIN_DECIMALS = 2


def normalise(text):
    """Object addresses as `at 0x?`, and `mini_autograd.` as `torch.` (dtype reprs etc.).

    mini_autograd names a graph node by its sequence number where torch prints its address
    (`<MulBackward0 object #3>` for `<MulBackward0 object at 0x7f...>`); both become
    `object at 0x?`.
    """
    return _PREFIX.sub("torch.", _ADDRESS.sub("at 0x?", text))


def _tokens(text):
    """(line number, kind, text) for each token of each line; numbers are their own tokens."""
    tokens = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in _TOKEN.finditer(line):
            tokens.append((number, match.lastgroup, match.group()))
    return tokens


def _last_digit(token):
    """One unit of the last printed digit of a number token (0.0001 for '2.5000', 100 for
    '1.50e+04'), or 0 for a number printed with fewer than MIN_DECIMALS decimals: those
    ('3', '1.', '0.5') are exact values, not roundings to a fixed precision."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if decimals < MIN_DECIMALS:
        return 0.0
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_agree(a, b):
    """Whether two printed numbers agree: within relative 1e-4 or absolute 1e-5, or within
    1.5 units of the last digit when both are printed rounded to a fixed precision (torch
    prints tensors at 4 decimals, so 0.1235 and 0.1234 agree; 0.5 and 0.6 do not)."""
    x, y = float(a), float(b)
    if math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL):
        return True
    unit_a, unit_b = _last_digit(a), _last_digit(b)
    return bool(unit_a and unit_b) and abs(x - y) <= LAST_DIGITS * max(unit_a, unit_b)


def compare_outputs(torch_out, mini_out):
    """(same, first_difference) for two program outputs.

    After `normalise`, both are cut into tokens (words, numbers, single other characters;
    white space is not compared). Numbers must agree as in `numbers_agree`, every other
    token exactly. `first_difference` names the line numbers and quotes both lines ("" when
    the outputs are the same).
    """
    torch_text, mini_text = normalise(torch_out), normalise(mini_out)
    torch_tokens, mini_tokens = _tokens(torch_text), _tokens(mini_text)
    torch_lines, mini_lines = torch_text.splitlines(), mini_text.splitlines()

    def line(lines, number):
        return lines[number - 1] if 0 < number <= len(lines) else "<end of output>"

    for i in range(max(len(torch_tokens), len(mini_tokens))):
        t = torch_tokens[i] if i < len(torch_tokens) else None
        m = mini_tokens[i] if i < len(mini_tokens) else None
        if t and m:
            if t[1] == m[1] == "number" and numbers_agree(t[2], m[2]):
                continue
            if t[1] == m[1] and t[2] == m[2]:
                continue
        t_line = t[0] if t else len(torch_lines) + 1
        m_line = m[0] if m else len(mini_lines) + 1
        what = f"{t[2]!r} vs {m[2]!r}" if t and m else ("output ends" if not m else "extra output")
        return False, (
            f"torch line {t_line} vs mini_autograd line {m_line} ({what}):\n"
            f"  torch:         {line(torch_lines, t_line)}\n"
            f"  mini_autograd: {line(mini_lines, m_line)}"
        )
    return True, ""


def layout_difference(torch_out, mini_out):
    """Where the line breaks differ although the tokens may agree ("" if nowhere): the
    first line, counting lines with tokens only, whose token count differs (for instance a
    tensor repr that puts `grad_fn=<...>)` on a line of its own in one library only).
    compare_outputs does not look at this."""

    def shape(text):
        lines = [line for line in normalise(text).splitlines() if line.strip()]
        return lines, [len(_TOKEN.findall(line)) for line in lines]

    (t_lines, t_counts), (m_lines, m_counts) = shape(torch_out), shape(mini_out)
    for i, (t, m) in enumerate(zip(t_counts, m_counts)):
        if t != m:
            return f"line breaks differ at {t_lines[i].strip()!r} vs {m_lines[i].strip()!r}"
    return ""


# --- verdicts ----------------------------------------------------------------


def last_error_line(stderr):
    """The exception line of the last traceback in stderr ("ValueError: ..."), or else the
    last non-empty line. Tracebacks of exceptions Python ignored (in __del__, say) do not
    count."""
    lines = stderr.splitlines()
    starts = [
        i
        for i, line in enumerate(lines)
        if line.startswith("Traceback (most recent call")
        and not (i and lines[i - 1].startswith("Exception ignored"))
    ]
    if starts:
        for line in lines[starts[-1] + 1 :]:
            if line.strip() and not line[0].isspace():
                return line.strip()
    rest = [line.strip() for line in lines if line.strip()]
    return rest[-1] if rest else "(no error message)"


def verdict(torch_result, mini_result):
    """(status, detail, difference) for the two runs of one program.

    status: SAME, DIFFERS, FAILS (mini_autograd exits non-zero) or TORCH FAILS (the
    program does not run under torch). detail: the failing run's exception line; for
    SAME, layout_difference's note when only the line breaks differ; else "".
    difference: compare_outputs' first difference ("" if none; for FAILS, the first
    difference in what mini_autograd printed before it failed).
    """
    t_code, t_out, t_err = torch_result
    m_code, m_out, m_err = mini_result
    if t_code != 0:
        return "TORCH FAILS", last_error_line(t_err), ""
    same, difference = compare_outputs(t_out, m_out)
    if m_code != 0:
        if "(output ends)" in difference:
            difference = ""  # mini_autograd stopped early but agreed up to there
        return "FAILS", last_error_line(m_err), difference
    if same:
        return "SAME", layout_difference(t_out, m_out), ""
    return "DIFFERS", "", difference


def run_both(name):
    """Run program `name` under both libraries at once: (torch result, mini_autograd result)."""
    path = program_path(name)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run, path, library) for library in LIBRARIES]
        return tuple(f.result() for f in futures)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "names", nargs="*", help="programs to run: names here, or paths of .py files (default: all)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show the first difference")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="programs run at once")
    args = parser.parse_args(argv)
    names = args.names or programs()
    unknown = [n for n in names if not program_path(n).exists()]
    if unknown:
        parser.error(f"no such program: {', '.join(unknown)} (have: {', '.join(programs())})")
    width = max(len(Path(n).stem) for n in names)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, results in zip(names, pool.map(run_both, names)):
            status, detail, difference = verdict(*results)
            print(f"{Path(name).stem:<{width}}  {status:<11}  {detail}".rstrip(), flush=True)
            if args.verbose and difference:
                for line in difference.splitlines():
                    print(f"{'':<{width}}  {'':<11}  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
