"""Pictures of the autograd graph, for mini_autograd, PyTorch and the learner's own engine alike.

    from mini_autograd.instruments.viz import draw_graph, backward_steps, side_by_side
    draw_graph(loss)                      # the graph behind `loss`, as Jupyter shows it
    draw_graph(loss, params=dict(model.named_parameters()))
    draw_graph({"forward": y, "double backward": g})   # a create_graph=True gradient
    backward_steps(loss)                  # one picture per node that backward runs
    side_by_side(draw_graph(loss_ma), draw_graph(loss_torch))   # titled mini_autograd, torch

The learner's engine (`my_autograd.py`, once chapter 04 is done) is drawn the same way, freed
buffers included, and can sit next to PyTorch's picture of the same program:

    import my_autograd as mine
    x = mine.tensor([[1.0, 2.0]], requires_grad=True)
    loss = (x.exp() * x).sum()
    loss.backward()
    side_by_side(draw_graph(loss, params={"x": x}), draw_graph(loss_torch, params={"x": x_t}))
    backward_steps(another_loss)          # step by step, on the learner's engine too

The DOT text is written here (the same graph always gives the same text, so stored notebook
outputs compare cleanly); the `graphviz` package and its `dot` program are only needed to turn
it into SVG. Without them every picture shows its DOT text and one line on installing Graphviz.
torch is never imported: a graph is read only through attributes that all three engines have, as
PyTorch names them: `grad_fn`, a node's `name()` and `next_functions`, a leaf's `variable`, the
`_saved_*` attributes (reading a freed one raises PyTorch's "... a second time ..." error),
`register_prehook` and `register_hook` for the steps, and `detach().numpy()` for the values.
"""

import html

import numpy as np

from . import picture_output
from .graph_walk import graph_nodes
from .memory import as_numpy, is_tensor

COMPACT_ABOVE = 40  # graphs with more nodes are drawn compact unless told otherwise

_FREED_MARK = "second time"  # in PyTorch's message for a saved tensor that backward freed

_GRAPH_HEADER = [
    'graph [rankdir=TB, nodesep=0.2, ranksep=0.3, fontname="Helvetica", fontsize=10]',
    'node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", '
    "fontsize=10, height=0.3, margin=0.06]",
    'edge [arrowsize=0.6, fontname="Helvetica", fontsize=9]',
]
_STYLE = {
    "output": "fillcolor=darkolivegreen1, penwidth=2",
    "leaf": "fillcolor=lightblue",
    "running": "fillcolor=gold, penwidth=2",
    "done": "fillcolor=gray92, color=gray55, fontcolor=gray45",
    "alive": "fillcolor=moccasin, fontsize=8, height=0.2",
    "freed": 'style="rounded,dashed", color=gray60, fontcolor=gray50, fontsize=8, height=0.2',
    "modified": 'style="rounded,dashed", color=red, fontcolor=red, fontsize=8, height=0.2',
}
_SMALL_PRINT = {"alive": "darkorange3", "freed": "gray55", "modified": "red"}
_SAVED_STATES = {"freed": "FREED", "modified": "modified in place"}
_CLUSTER_COLORS = ["gray50", "firebrick", "royalblue", "darkgreen"]


# --- Reading a graph: the same attributes on mini_autograd and torch --------------------------


def _as_groups(roots):
    """{title or None: [tensors]}: a dict gives one titled cluster per entry."""
    if isinstance(roots, dict):
        return {title: _as_list(tensors) for title, tensors in roots.items()}
    return {None: _as_list(roots)}


def _as_list(tensors):
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _shape(tensor):
    return str(tuple(tensor.shape))


def _library(groups):
    """The top-level module the drawn tensors come from ("torch", "mini_autograd", "my_autograd")."""
    for tensors in groups.values():
        for tensor in tensors:
            return type(tensor).__module__.partition(".")[0]
    return None


def _nbytes(tensor):
    nbytes = getattr(tensor, "nbytes", None)  # torch has it; mini_autograd keeps numpy's
    return nbytes if nbytes is not None else as_numpy(tensor).nbytes


def _saved_names(node):
    """The names of the tensors a node saved, sorted; non-tensor values (dim, sizes) are left out."""
    if hasattr(node, "saved_tensors_info"):  # mini_autograd: also lists the freed ones
        return sorted({name for name, _ in node.saved_tensors_info()})
    names = []
    for attr in dir(node):
        if attr.startswith("_saved_"):
            try:
                value = getattr(node, attr)
            except RuntimeError:  # freed (or modified in place): it held a tensor
                names.append(attr[7:])
                continue
            if is_tensor(value) or (isinstance(value, tuple) and value and is_tensor(value[0])):
                names.append(attr[7:])
    return names


def saved_tensors(node):
    """[(label, state, tensor or None)] for what `node` saved; state is alive, freed or modified."""
    found = []
    for name in _saved_names(node):
        try:
            value = getattr(node, "_saved_" + name)
        except RuntimeError as error:
            found.append((name, "freed" if _FREED_MARK in str(error) else "modified", None))
            continue
        if isinstance(value, tuple):
            found.extend((f"{name}[{i}]", "alive", v) for i, v in enumerate(value) if v is not None)
        elif value is not None:
            found.append((name, "alive", value))
    return found


def _walk(start_nodes):
    """Every node reachable from `start_nodes`, breadth first (check 1.4 swaps in the learner's)."""
    return graph_nodes(start_nodes, breadth_first=True)


# --- Writing DOT ------------------------------------------------------------------------------


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node_line(node_id, label, style="", html_label=False):
    label = label if html_label else _quote(label)
    return f"{node_id} [label={label}{', ' + style if style else ''}]"


class _Marks:
    """What one step of backward_steps adds to a picture: the running node and its gradients."""

    def __init__(self, running=None, done=(), passed=None):
        self.running = running
        self.done = done
        self.passed = passed or {}  # {index in running.next_functions: summary of the gradient}


class _DotWriter:
    """Turns the graph behind some tensors into DOT text, naming nodes n0, n1... as met.

    Compact mode (for big graphs) writes saved tensors as small print inside their node and
    draws a leaf once per use, so shared weights do not pull long edges across the picture.
    """

    def __init__(self, params, show_saved, compact, marks):
        self.names = {id(t): name for name, t in (params or {}).items()}
        self.show_saved = show_saved
        self.compact = compact
        self.marks = marks or _Marks()
        self.ids = {}  # node -> "n<k>", in the order they are met
        self.clusters = {}  # title -> [statements]
        self.edges = []
        self.uses = {}  # compact mode: leaf node -> how many copies drawn so far
        self.saved_drawn = False
        self.outputs = 0

    def write(self, groups):
        """The DOT text for {title: [tensors]}."""
        count = sum(len(tensors) for tensors in groups.values())
        reached = []
        for title, tensors in groups.items():
            body = self.clusters.setdefault(title, [])
            out_ids = [self._output(tensor, body, count) for tensor in tensors]
            roots = [tensor.grad_fn for tensor in tensors]
            new = [node for node in _walk(reached + roots) if node not in self.ids]
            reached += roots
            for node in new:
                self.ids[node] = f"n{len(self.ids)}"
            self.edges += [f"{o} -> {self.ids[r]}" for o, r in zip(out_ids, roots) if r is not None]
            for node in new:
                self._node(node, body)
        return self._assemble()

    def _output(self, tensor, body, count):
        """Draw a root tensor (highlighted); return its DOT id."""
        number = self.outputs
        self.outputs += 1
        label = self.names.get(id(tensor)) or ("output" if count == 1 else f"output {number}")
        body.append(_node_line(f"o{number}", f"{label}\n{_shape(tensor)}", _STYLE["output"]))
        return f"o{number}"

    def _style(self, node):
        if node is self.marks.running:
            return _STYLE["running"]
        if node in self.marks.done:
            return _STYLE["done"]
        return _STYLE["leaf"] if hasattr(node, "variable") else ""

    def _node(self, node, body):
        node_id = self.ids[node]
        if hasattr(node, "variable"):
            if not self.compact:
                body.append(_node_line(node_id, self._leaf(node), self._style(node)))
            return
        saved = saved_tensors(node) if self.show_saved else []
        self.saved_drawn = self.saved_drawn or bool(saved)
        if self.compact:
            label = _html_label(node.name(), saved)
            body.append(_node_line(node_id, label, self._style(node), html_label=True))
        else:
            body.append(_node_line(node_id, node.name(), self._style(node)))
            body += _saved_nodes(node_id, saved)
        for i, (child, _) in enumerate(node.next_functions):
            if child is not None:
                self.edges.append(self._edge(node, node_id, i, child, body))

    def _edge(self, node, node_id, i, child, body):
        target = self.ids[child]
        if self.compact and hasattr(child, "variable"):
            use = self.uses[child] = self.uses.get(child, 0) + 1
            target = f"{target}_{use}"
            body.append(_node_line(target, self._leaf(child), self._style(child)))
        passed = self.marks.passed.get(i) if node is self.marks.running else None
        if passed is None:
            return f"{node_id} -> {target}"
        return (
            f"{node_id} -> {target} [label={_quote(passed)}, color=red, fontcolor=red, penwidth=2]"
        )

    def _leaf(self, node):
        return _leaf_label(node.variable, self.names)

    def _assemble(self):
        lines = ["digraph autograd {", *("\t" + h for h in _GRAPH_HEADER)]
        for k, (title, body) in enumerate(self.clusters.items()):
            if title is None:
                lines += ["\t" + s for s in body]
                continue
            color = _CLUSTER_COLORS[k % len(_CLUSTER_COLORS)]
            lines.append(f"\tsubgraph cluster_{k} {{")
            lines.append(
                f"\t\tlabel={_quote(title)}; style=dashed; color={color}; fontcolor={color}"
            )
            lines += ["\t\t" + s for s in body]
            lines.append("\t}")
        lines += ["\t" + edge for edge in self.edges]
        if self.saved_drawn:
            lines += ["\t" + s for s in (_compact_legend() if self.compact else _legend())]
        lines.append("}")
        return "\n".join(lines) + "\n"


def _saved_text(label, state, value, sep):
    if state == "alive":
        return f"{label}{sep}{_shape(value)} · {_nbytes(value)} B"
    return f"{label}{sep}{_SAVED_STATES[state]}"


def _saved_nodes(node_id, saved):
    """Each saved tensor as a small node in a row beside the node that saved it."""
    lines, row = [], [node_id]
    for k, (label, state, value) in enumerate(saved):
        saved_id = f"{node_id}_s{k}"
        lines.append(_node_line(saved_id, _saved_text(label, state, value, "\n"), _STYLE[state]))
        # Chained, not fanned out, so the row stays together and its dotted links stay short.
        lines.append(f"{row[-1]} -> {saved_id} [style=dotted, arrowhead=none]")
        row.append(saved_id)
    if saved:
        lines.append("{rank=same; " + "; ".join(row) + "}")
    return lines


def _html_label(title, saved):
    """A Graphviz HTML-like label: the node's name, then one small line per saved tensor."""
    rows = [html.escape(title)]
    for label, state, value in saved:
        text = html.escape(_saved_text(label, state, value, " "))
        rows.append(f'<FONT POINT-SIZE="8" COLOR="{_SMALL_PRINT[state]}">{text}</FONT>')
    return "<" + "<BR/>".join(rows) + ">"


def _leaf_label(variable, names):
    """A leaf is drawn as its variable: the name from `params`, else only its shape."""
    name = names.get(id(variable))
    return f"{name}\n{_shape(variable)}" if name else _shape(variable)


def _legend():
    return [
        "subgraph cluster_legend {",
        '\tlabel="saved tensors"; style=dotted; color=gray60; fontsize=8',
        "\t" + _node_line("legend_alive", "kept for backward\nshape · bytes", _STYLE["alive"]),
        "\t"
        + _node_line("legend_freed", "FREED by backward\n(retain_graph=False)", _STYLE["freed"]),
        "}",
    ]


def _compact_legend():
    alive, freed = _SMALL_PRINT["alive"], _SMALL_PRINT["freed"]
    return [
        'legend [shape=plaintext, style="", label=<<FONT POINT-SIZE="8">saved tensors:<BR/>'
        f'<FONT COLOR="{alive}">name shape · bytes</FONT>: kept for backward<BR/>'
        f'<FONT COLOR="{freed}">name FREED</FONT>: freed by backward</FONT>>]'
    ]


def _dot_source(roots, params=None, show_saved=True, compact=None, marks=None):
    groups = _as_groups(roots)
    if compact is None:
        compact = len(_walk([t.grad_fn for ts in groups.values() for t in ts])) > COMPACT_ABOVE
    return _DotWriter(params, show_saved, compact, marks).write(groups)


# --- Showing pictures -------------------------------------------------------------------------


class GraphPicture:
    """A drawn graph: `.source` is its DOT text; Jupyter shows it as SVG (or DOT without Graphviz).

    `.library` names the module its tensors came from (side_by_side's default title), or is None.
    """

    def __init__(self, source, library=None):
        self.source = source
        self.library = library
        self._drawn = {}

    @property
    def digraph(self):
        """A `graphviz.Source` of this picture (render, save or view it like a Digraph)."""
        import graphviz

        return graphviz.Source(self.source)

    def svg(self):
        """The picture as SVG text, or None when Graphviz is missing."""
        return self._draw("svg")

    def png(self):
        """The picture as PNG bytes, or None when Graphviz is missing."""
        return self._draw("png")

    def _draw(self, fmt):
        if fmt not in self._drawn:
            self._drawn[fmt] = picture_output.render(self.source, fmt)
        return self._drawn[fmt]

    def _repr_mimebundle_(self, include=None, exclude=None):
        return picture_output.bundle(self.source, self.svg(), self.png())

    def __str__(self):
        return self.source


def draw_graph(roots, params=None, show_saved=True, compact=None):
    """Draw the backward graph behind `roots` (a tensor, a list, or {cluster title: tensors}).

    The tensors may be mini_autograd's, torch's or those of the learner's engine.
    """
    return GraphPicture(
        _dot_source(roots, params, show_saved, compact), _library(_as_groups(roots))
    )


class SideBySide:
    """Pictures shown next to each other in Jupyter; their DOT texts one after the other elsewhere."""

    def __init__(self, pictures, titles):
        self.pictures = list(pictures)
        self.titles = list(titles)

    def _repr_mimebundle_(self, include=None, exclude=None):
        text = "".join(f"--- {t} ---\n{p.source}" for t, p in zip(self.titles, self.pictures))
        return _row_bundle(text, self.titles, self.pictures)


def _row_bundle(text, titles, pictures):
    """Jupyter's output for pictures in a row: one SVG and one PNG holding them all."""
    svgs, pngs = [p.svg() for p in pictures], [p.png() for p in pictures]
    if None in svgs or None in pngs:
        return picture_output.without_dot(text)
    row_svg = picture_output.svg_row(zip(titles, svgs))
    return picture_output.bundle(text, row_svg, picture_output.png_row(zip(titles, pngs)))


def side_by_side(*pictures, titles=None):
    """Show pictures next to each other: the same program in mini_autograd, torch, my_autograd...

    `titles` has one title per picture; by default each picture is titled with the library its
    tensors came from ("mini_autograd", "torch", or the learner's "my_autograd").
    """
    if titles is None:
        titles = [p.library or f"picture {k + 1}" for k, p in enumerate(pictures)]
    titles = list(titles)
    if len(titles) != len(pictures):
        raise ValueError(f"{len(titles)} titles for {len(pictures)} pictures")
    return SideBySide(pictures, titles)


# --- Backward, step by step -------------------------------------------------------------------


def _summary(grad):
    """A short text for a gradient: its shape, and its values when there are only a few."""
    if grad is None:
        return "None"
    values = np.asarray(as_numpy(grad), dtype=float).ravel()
    shown = ", ".join(f"{v:.3g}" for v in values[:3]) + (", …" if values.size > 3 else "")
    return f"{_shape(grad)} [{shown}]"


class Step:
    """One node of a backward pass: what it received and passed on, what it released, the picture."""

    def __init__(self, number, text, node_name, released, picture):
        self.number = number
        self.text = text
        self.node_name = node_name
        self.released = released  # labels of the saved tensors freed right after it ran
        self.picture = picture

    def describe(self):
        """One line: which node ran, what it did with the gradient, what it released."""
        released = ", ".join(self.released) or "nothing"
        return f"step {self.number}: {self.text}; releases {released}"


class _StepRecorder:
    """Node hooks that draw one picture after each node the engine runs."""

    def __init__(self, root, params, show_saved, compact):
        self.names = {id(t): name for name, t in (params or {}).items()}
        library = _library(_as_groups(root))
        self.draw = lambda marks: GraphPicture(
            _dot_source(root, params, show_saved, compact, marks), library
        )
        self.steps, self.done = [], set()
        self.node = None
        self.active = True  # off once backward has returned: a hook left behind then does nothing

    def before(self, node, grad_outputs):
        self.finish_step()
        self.node, self.received, self.passed_on = node, grad_outputs, ()
        self.alive_before = _alive_saved(node)

    def after(self, node, grad_inputs, grad_outputs):
        self.passed_on = grad_inputs

    def finish_step(self):
        """Draw the node that just ran, now that its saved tensors are released (or kept)."""
        node = self.node
        if node is None:
            return
        passed = {
            i: _summary(g)
            for i, ((child, _), g) in enumerate(zip(node.next_functions, self.passed_on))
            if child is not None
        }
        picture = self.draw(_Marks(node, self.done, passed))
        released = sorted(self.alive_before - _alive_saved(node))
        text = self._what_it_did(node, passed)
        self.steps.append(Step(len(self.steps) + 1, text, node.name(), released, picture))
        self.done.add(node)
        self.node = None

    def _what_it_did(self, node, passed):
        if hasattr(node, "variable"):
            into = self._one_line(node)
            return f"{node.name()} adds {_summary(self.received[0])} into .grad of {into}"
        sent = [f"{g} to {self._one_line(node.next_functions[i][0])}" for i, g in passed.items()]
        return f"{node.name()} passes {', '.join(sent) or 'nothing'}"

    def _one_line(self, node):
        if hasattr(node, "variable"):
            return "leaf " + _leaf_label(node.variable, self.names).replace("\n", " ")
        return node.name()


def _alive_saved(node):
    return {label for label, state, _ in saved_tensors(node) if state == "alive"}


class BackwardSteps:
    """The pictures of one backward pass: a strip of frames, or a slider where ipywidgets exists."""

    def __init__(self, steps):
        self.steps = steps

    def __len__(self):
        return len(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    def __iter__(self):
        return iter(self.steps)

    def text(self):
        """One line per step."""
        return "\n".join(step.describe() for step in self.steps)

    def _repr_mimebundle_(self, include=None, exclude=None):
        titles = [f"step {step.number}" for step in self.steps]
        return _row_bundle(self.text(), titles, [step.picture for step in self.steps])

    def slider(self):
        """A slider over the steps with ipywidgets; without it, this strip itself."""
        try:
            import ipywidgets
            from IPython.display import display
        except ImportError:
            return self

        def show(step):
            print(self.steps[step - 1].describe())
            display(self.steps[step - 1].picture)

        return ipywidgets.interact(show, step=ipywidgets.IntSlider(1, 1, len(self.steps)))


def backward_steps(
    root, params=None, show_saved=True, compact=None, gradient=None, retain_graph=None
):
    """Run `root.backward()`, drawing a picture after each node, in the order the engine runs them.

    Works on any engine whose nodes have PyTorch's `register_prehook` and `register_hook`.
    """
    recorder = _StepRecorder(root, params, show_saved, compact)
    hooks = []  # (node, what register_* returned, the hook)
    for node in _walk([root.grad_fn]):

        def before(grads, node=node):
            if recorder.active:
                recorder.before(node, grads)

        def after(grad_inputs, grad_outputs, node=node):
            if recorder.active:
                recorder.after(node, grad_inputs, grad_outputs)

        hooks.append((node, node.register_prehook(before), before))
        hooks.append((node, node.register_hook(after), after))
    try:
        root.backward(gradient, retain_graph=retain_graph)
    finally:
        recorder.active = False
        for node, handle, hook in hooks:
            _remove_hook(node, handle, hook)
    recorder.finish_step()
    return BackwardSteps(recorder.steps)


def _remove_hook(node, handle, hook):
    """Take a hook off its node: through its handle (torch, mini_autograd), else out of its list.

    An engine whose register_* returns no handle (the learner's keeps hooks in plain lists) has
    the hook taken out of whichever list of the node holds it; one that cannot be found stays,
    switched off.
    """
    if hasattr(handle, "remove"):
        handle.remove()
        return
    for value in getattr(node, "__dict__", {}).values():
        if isinstance(value, list) and any(item is hook for item in value):
            value[:] = [item for item in value if item is not hook]
