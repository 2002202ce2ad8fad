"""Count the call sites of torch names in the code learners copy.

Usage (the corpora are bare git directories, as the maintainers' `fetch` brings them):

    python -m tools.call_sites.scan tutorials=GITDIR d2l=GITDIR nn-zero-to-hero=GITDIR \
        examples=GITDIR [--note tutorials="..."] > tools/call_sites/call_sites.csv

The stored call_sites.csv names the corpora and commits it was made from in its header.
The corpus names choose which files are read (CORPORA). Every code unit (a .py file, a notebook
cell, a code block of a .md or .rst file) is parsed with `ast`; a unit that does not parse is
counted as skipped. Imports are resolved, so `nn.Linear`, `torch.nn.Linear` and `Linear` after
`from torch.nn import Linear` are all `torch.nn.Linear`. What counts as a site:

- a call whose function resolves to a torch name: `torch.cat(...)`, `F.relu(...)`, `nn.Linear(...)`;
- a class base or a bare decorator that resolves to a torch name (`class Net(nn.Module)`), since
  mini_autograd must provide it just the same;
- in code that imports torch, a method call `.name(...)` on anything that is not an imported
  module, named after its class:
  `Tensor.name` when `name` is a public method of torch.Tensor (AMBIGUOUS ones excluded);
  otherwise `Module.name` for a public nn.Module method, with the names nn.Module shares with
  torch.optim.Optimizer (zero_grad, state_dict, load_state_dict) counted as `Optimizer.name` when
  the receiver is named like an optimizer; `Optimizer.step` and `LRScheduler.step` only when the
  receiver is named like an optimizer or a scheduler (so `env.step()` is not counted).
  A name that is both a Tensor and a Module method (`.to`, `.float`, `.requires_grad_`) counts
  as `Tensor.name`.

Every name also gets its scope: "in", or the out-of-scope area (OUT_OF_SCOPE) it belongs to.
"""

import ast
import csv
import io
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import torch

# Public methods of torch.Tensor and nn.Module, and the optimizer-only methods that are counted.
TENSOR_METHODS = frozenset(n for n in dir(torch.Tensor) if not n.startswith("_"))
MODULE_METHODS = frozenset(
    n
    for n in dir(torch.nn.Module)
    if not n.startswith("_") and callable(getattr(torch.nn.Module, n))
)
OPTIMIZER_METHODS = frozenset(
    {"zero_grad", "step", "state_dict", "load_state_dict", "add_param_group"}
)
SCHEDULER_METHODS = frozenset({"step", "get_last_lr", "state_dict", "load_state_dict"})

# Tensor methods that are also common methods of builtins or of other libraries' objects, so
# that `.name(` says nothing about a tensor: str.split / bytes.split, str.index / list.index,
# list.sort, dict.values, set.add, PIL's Image.resize, queue.put. They are not counted.
AMBIGUOUS = frozenset({"split", "index", "sort", "values", "add", "resize", "put"})

# Receivers named like these are matplotlib axes or figures (`ax.scatter(...)`): not counted.
PLOT_RECEIVER = re.compile(r"^(ax|axs|axes|fig|figure|subplot)\d*$")
OPTIMIZER_RECEIVER = re.compile(r"optim|^opt|trainer|updater", re.IGNORECASE)
SCHEDULER_RECEIVER = re.compile(r"sched", re.IGNORECASE)

# Areas outside mini_autograd's scope, by name prefix (a prefix ends at a dot or is the name).
OUT_OF_SCOPE = {
    "cuda": (
        "torch.cuda torch.backends torch.mps torch.xpu torch.amp torch.autocast "
        "torch.accelerator Tensor.cuda Module.cuda Tensor.pin_memory Tensor.is_pinned "
        "Tensor.record_stream"
    ).split(),
    "distributed": (
        "torch.distributed torch.nn.parallel torch.nn.DataParallel torch.multiprocessing "
        "torch.utils.data.distributed torch.utils.data.DistributedSampler torch.futures "
        "Module.share_memory Tensor.share_memory_"
    ).split(),
    "jit/compile": (
        "torch.jit torch.compile torch.compiler torch._dynamo torch._inductor torch.library "
        "torch.ops torch._C torch._logging torch._check torch._higher_order_ops torch.classes "
        "torch.utils.cpp_extension Module.compile"
    ).split(),
    "onnx": "torch.onnx".split(),
    "quantization": (
        "torch.quantization torch.ao torch.nn.quantized torch.nn.intrinsic torch.nn.qat "
        "torch.quantize_per_tensor torch.quantize_per_channel Tensor.dequantize "
        "Tensor.int_repr Tensor.q_scale Tensor.q_zero_point"
    ).split(),
    "fx": "torch.fx".split(),
    "export": "torch.export".split(),
    "profiler": "torch.profiler torch.autograd.profiler torch.utils.benchmark torch.utils.bottleneck".split(),
    "hub/tensorboard": "torch.hub torch.utils.model_zoo torch.utils.tensorboard".split(),
}


@dataclass
class Corpus:
    """Which files of a repository are read, and how."""

    label: str
    include: re.Pattern
    tabbed_markdown: bool = False  # d2l: only the pytorch tab's code blocks of .md files


CORPORA = {
    # PyTorch's tutorials: the four published source folders (unstable/prototype ones left out).
    "tutorials": Corpus(
        "pytorch/tutorials",
        re.compile(r"^(beginner|intermediate|advanced|recipes)_source/.*\.(py|ipynb|rst|md)$"),
    ),
    "d2l": Corpus(
        "d2l-ai/d2l-en", re.compile(r"^(chapter_[^/]+/.*\.md|d2l/torch\.py)$"), tabbed_markdown=True
    ),
    # karpathy/micrograd is left out: its code calls its own Value class; only its test imports torch.
    "nn-zero-to-hero": Corpus("karpathy/nn-zero-to-hero", re.compile(r".*\.(py|ipynb)$")),
    "examples": Corpus("pytorch/examples", re.compile(r".*\.(py|ipynb)$")),
}


def scope(name):
    """The out-of-scope area a name belongs to, or "in"."""
    for area, prefixes in OUT_OF_SCOPE.items():
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + "."):
                return area
    return "in"


def canonical(path):
    """The public torch name for a resolved dotted path (`torch.nn.modules.linear.Linear` -> `torch.nn.Linear`)."""
    if path.startswith("torch.nn.modules."):
        return "torch.nn." + path.rsplit(".", 1)[1]
    if path.startswith("torch.functional."):
        return "torch." + path.rsplit(".", 1)[1]
    if path.startswith("torch.Tensor."):
        return "Tensor." + path[len("torch.Tensor.") :]
    return path


def strip_magics(source):
    """Blank out IPython magics and shell escapes (`%matplotlib`, `!pip`) at the start of a line."""
    lines = source.split("\n")
    return "\n".join("" if line.startswith(("%", "!")) else line for line in lines)


def notebook_cells(text):
    """The code cells of a notebook, in order."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            yield "".join(source) if isinstance(source, list) else source


def markdown_blocks(text, tabbed=False):
    """Python fenced code blocks of a markdown file; with tabbed, only d2l's pytorch (or all) tab."""
    for match in re.finditer(r"^```([^\n]*)\n(.*?)^```", text, re.S | re.M):
        info, body = match.group(1), match.group(2)
        if tabbed:
            if ".input" not in info:
                continue
            first = body.split("\n", 1)[0].strip()
            tab = re.match(r"^(%%tab|#@tab)\s*(.*)$", first)
            if not tab:
                continue  # a cell without a tab marker is not the pytorch tab's
            tabs = {t.strip() for t in re.split(r"[,\s]+", tab.group(2)) if t.strip()}
            if not tabs & {"pytorch", "all"}:
                continue
            yield body
        elif re.match(r"\s*(\{?\.?python|py\b|python3)", info):
            yield body


def rst_blocks(text):
    """The bodies of `.. code-block:: python` / `.. code:: python` directives of an .rst file."""
    lines = text.split("\n")
    directive = re.compile(r"^(\s*)\.\. (code-block|code|sourcecode)::\s*(python3?|py)\s*$")
    i = 0
    while i < len(lines):
        match = directive.match(lines[i])
        i += 1
        if not match:
            continue
        indent = len(match.group(1))
        body = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
        ):
            body.append(lines[i])
            i += 1
        code = [line for line in body if not re.match(r"^\s*:\w[\w-]*:", line)]
        nonblank = [line for line in code if line.strip()]
        if nonblank:
            margin = min(len(line) - len(line.lstrip()) for line in nonblank)
            yield "\n".join(line[margin:] for line in code)


def code_units(path, text, corpus):
    """The pieces of Python code in one file, in order (magics blanked out but in .py files)."""
    if path.endswith(".py"):
        return [text]
    if path.endswith(".ipynb"):
        units = notebook_cells(text)
    elif path.endswith(".md"):
        units = markdown_blocks(text, tabbed=corpus.tabbed_markdown)
    elif path.endswith(".rst"):
        units = rst_blocks(text)
    else:
        units = []
    return [strip_magics(unit) for unit in units]


def import_bindings(tree):
    """Local name -> dotted path for every import in a tree (wherever it is)."""
    env = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    env[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    env[root] = root
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    env[alias.asname or alias.name] = f"{module}.{alias.name}"
    return env


def dotted(node, env):
    """The dotted path an expression names when it is rooted at an imported name, else None."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = dotted(node.value, env)
        return f"{base}.{node.attr}" if base else None
    return None


def receiver_name(node):
    """The last identifier of a method call's receiver (`self.optim` -> `optim`), or ""."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def method_name(attr, receiver):
    """The name a `.attr(` call on an unknown receiver counts as, or None."""
    if attr in AMBIGUOUS or PLOT_RECEIVER.match(receiver):
        return None
    looks_optimizer = bool(OPTIMIZER_RECEIVER.search(receiver))
    looks_scheduler = bool(SCHEDULER_RECEIVER.search(receiver))
    if attr in TENSOR_METHODS:
        return f"Tensor.{attr}"
    if looks_scheduler and attr in SCHEDULER_METHODS:
        return f"LRScheduler.{attr}"
    if looks_optimizer and attr in OPTIMIZER_METHODS:
        return f"Optimizer.{attr}"
    if attr in MODULE_METHODS:
        return f"Module.{attr}"
    return None


def imports_torch(env):
    """Whether the imports seen so far bring in torch (or d2l's torch flavour)."""
    return any(
        path.split(".")[0] == "torch" or path.startswith("d2l.torch") for path in env.values()
    )


def callee_name(func, env, aliases):
    """The name a call's function counts as (a torch name, Tensor.x, Module.x ...), or None.

    Method calls count only in code that imports torch: elsewhere `.backward()` or `.relu()`
    belong to some other library (micrograd's Value, say)."""
    path = dotted(func, env)
    if path is not None:
        if path in aliases:
            return aliases[path]
        return canonical(path) if path.split(".")[0] == "torch" else None
    if isinstance(func, ast.Attribute) and imports_torch(env):
        return method_name(func.attr, receiver_name(func.value))
    return None


def tab_branch(node):
    """For d2l's `if tab.selected(...)`: the statements the pytorch tab keeps, else None."""
    test = node.test
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "selected"
        and isinstance(test.func.value, ast.Name)
        and test.func.value.id == "tab"
    ):
        tabs = {a.value for a in test.args if isinstance(a, ast.Constant)}
        return node.body if "pytorch" in tabs else node.orelse
    return None


def walk(node):
    """ast.walk in source order, following only the pytorch branch of `if tab.selected(...)`."""
    yield node
    children = tab_branch(node) if isinstance(node, ast.If) else None
    for child in children if children is not None else ast.iter_child_nodes(node):
        yield from walk(child)


def sites(tree, env, aliases):
    """The names counted in one parsed code unit, one entry per site."""
    found = []
    for node in walk(tree):
        if isinstance(node, ast.Call):
            name = callee_name(node.func, env, aliases)
            if name:
                found.append(name)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            refs = list(node.bases) if isinstance(node, ast.ClassDef) else []
            refs += [d for d in node.decorator_list if not isinstance(d, ast.Call)]
            for ref in refs:
                path = dotted(ref, env)
                if path and path.split(".")[0] == "torch":
                    found.append(canonical(path))
    return found


@dataclass
class Tally:
    """Counts for one scan: per name and corpus, files per name, and units parsed or skipped."""

    sites: dict = field(default_factory=lambda: defaultdict(Counter))
    files: dict = field(default_factory=lambda: defaultdict(set))
    files_read: Counter = field(default_factory=Counter)
    units_parsed: Counter = field(default_factory=Counter)
    units_skipped: Counter = field(default_factory=Counter)


def scan_file(tally, corpus_key, path, text, aliases=None):
    """Add one file's sites to the tally; imports carry over from one unit to the next."""
    corpus = CORPORA.get(corpus_key) or Corpus(corpus_key, re.compile(".*"))
    env = {}
    tally.files_read[corpus_key] += 1
    for unit in code_units(path, text, corpus):
        try:
            tree = ast.parse(unit)
        except (SyntaxError, ValueError):
            tally.units_skipped[corpus_key] += 1
            continue
        tally.units_parsed[corpus_key] += 1
        env.update(import_bindings(tree))
        for name in sites(tree, env, aliases or {}):
            tally.sites[name][corpus_key] += 1
            tally.files[name].add(f"{corpus_key}:{path}")


def count_source(source, path="sample.py", corpus_key="sample"):
    """Counter of the sites in one piece of code (for tests and quick looks)."""
    tally = Tally()
    scan_file(tally, corpus_key, path, source)
    return Counter({name: sum(c.values()) for name, c in tally.sites.items()})


def d2l_aliases(torch_py):
    """`d2l.torch.X` -> torch name, from d2l/torch.py's `X = torch.Y` and `X = lambda x: x.m()` lines."""
    tree = ast.parse(torch_py)
    env = import_bindings(tree)
    aliases = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if not isinstance(target, ast.Name):
            continue
        if isinstance(value, ast.Lambda) and isinstance(value.body, ast.Call):
            name = callee_name(value.body.func, env, {})
        else:
            path = dotted(value, env)
            name = canonical(path) if path and path.startswith("torch.") else None
        if name:
            aliases[f"d2l.torch.{target.id}"] = name
    return aliases


def git_files(git_dir, include):
    """(path, text) of the files at HEAD whose path matches include."""
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        if meta.split()[1] == "blob" and include.match(path):
            blob = subprocess.run(
                ["git", "--git-dir", git_dir, "cat-file", "blob", meta.split()[2]],
                capture_output=True,
            )
            if blob.returncode == 0:
                yield path, blob.stdout.decode("utf-8", errors="replace")
            else:  # a snapshot may lack its largest files
                print(f"absent from the snapshot: {path}", file=sys.stderr)


def head_commit(git_dir):
    """The commit HEAD names in a git directory."""
    return subprocess.run(
        ["git", "--git-dir", git_dir, "rev-parse", "HEAD"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.strip()


def scan(git_dirs):
    """Scan every corpus (key -> git directory) and return the tally."""
    tally = Tally()
    for key, git_dir in git_dirs.items():
        corpus = CORPORA[key]
        files = sorted(git_files(git_dir, corpus.include))
        aliases = {}
        for path, text in files:
            if key == "d2l" and path == "d2l/torch.py":
                aliases = d2l_aliases(text)
        for path, text in files:
            scan_file(tally, key, path, text, aliases)
    return tally


def write_csv(tally, git_dirs, notes, out):
    """The CSV: `# key: value` header lines, then name, call_sites, files, scope, one column a corpus."""
    keys = list(git_dirs)
    for key in keys:
        note = f" ({notes[key]})" if key in notes else ""
        out.write(f"# corpus {key}: {CORPORA[key].label} @ {head_commit(git_dirs[key])}{note}\n")
    for key in keys:
        out.write(
            f"# files {key}: {tally.files_read[key]} files read, {tally.units_parsed[key]} code"
            f" units parsed, {tally.units_skipped[key]} that do not parse skipped\n"
        )
    out.write(f"# torch: {torch.__version__} (its dir(torch.Tensor) and dir(nn.Module))\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "call_sites", "files", "scope", *keys])
    rows = sorted(tally.sites.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    for name, counts in rows:
        writer.writerow(
            [name, sum(counts.values()), len(tally.files[name]), scope(name)]
            + [counts[k] for k in keys]
        )


def main(argv):
    """Parse `key=GITDIR` and `--note key=TEXT` arguments, scan, print the CSV."""
    git_dirs, notes = {}, {}
    args = iter(argv)
    for arg in args:
        target = notes if arg == "--note" else git_dirs
        key, value = (next(args) if arg == "--note" else arg).split("=", 1)
        target[key] = value
    out = io.StringIO()
    write_csv(scan(git_dirs), git_dirs, notes, out)
    sys.stdout.write(out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
