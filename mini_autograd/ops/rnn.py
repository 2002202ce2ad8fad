"""A whole LSTM layer as one operation, with its backward through time written by hand.

PyTorch runs `nn.LSTM` on the CPU as one fused oneDNN kernel per layer, recorded as one
`MkldnnRnnLayerBackward0` node. Doing the same here gives the same graph as PyTorch and
turns about 20 recorded operations per time step into one node per layer: the loops below
make a few numpy calls per step and no Python objects.
"""

import numpy as np

from ..engine import grad
from ..grad_mode import GradMode
from ..node import Node, edge_of
from ..saved import SavedTensor
from ..tensor import Tensor
from .recording import save, wants_grad
from .shape import stack


def _split_gates(array, n):
    """The four gates stacked along the last axis, in PyTorch's order: i, f, g, o (views)."""
    return tuple(array[..., k * n : (k + 1) * n] for k in range(4))


# PyTorch's names for what the node saves of its inputs, in the order of its edges.
_INPUT_NAMES = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_")

# What PyTorch's node also keeps besides tensors, for a one-direction LSTM with biases (mode 2).
_SETTINGS = {
    "batch_sizes": (),
    "bidirectional": False,
    "has_biases": True,
    "mode": 2,
    "reverse": False,
}


class MkldnnRnnLayerBackward0(Node):
    """out, hy, cy = lstm_layer(input, hx, cx, w_ih, w_hh, b_ih, b_hh):  gradients by backpropagation through time.

    Saved like PyTorch's node: the input, the four weights, hx and cx, the three results and a
    workspace (result3). PyTorch's workspace is oneDNN's own buffer; ours holds the activated
    gates, the cell state and its tanh for every step. The backward runs in numpy, except under
    create_graph=True, where it is recorded (see _recorded_backward).
    """

    __slots__ = ()

    def apply(self, grad_out, grad_hy=None, grad_cy=None):
        if GradMode.enabled:
            return self._recorded_backward(grad_out, grad_hy, grad_cy)
        x, w_ih, w_hh, hx, cx = (
            self.saved(name)._data for name in ("input", "weight0", "weight1", "hx_", "cx_")
        )
        out, workspace = self.saved("result0")._data, self.saved("result3")._data
        grads = lstm_backward(
            *(None if g is None else g._data for g in (grad_out, grad_hy, grad_cy)),
            x,
            hx,
            cx,
            w_ih,
            w_hh,
            out,
            workspace,
            need_input_grad=self.needs_input_grad(0),
        )
        return tuple(
            Tensor._make(g) if g is not None and self.needs_input_grad(k) else None
            for k, g in enumerate(grads)
        )

    def _recorded_backward(self, grad_out, grad_hy, grad_cy):
        """Under create_graph=True: the sequence recomputed step by step with recorded operations
        (nn.LSTMCell's step), and differentiated by autograd.grad, so the gradients have a graph."""
        from ..nn.layers import lstm_step  # nn.layers imports this module

        inputs = [self.saved(name) for name in _INPUT_NAMES]
        x, w_ih, w_hh, b_ih, b_hh, h, c = inputs
        outputs = []
        for x_t in x:
            h, c = lstm_step(x_t, (h, c), w_ih, w_hh, b_ih, b_hh)
            outputs.append(h)
        pairs = [
            (result, g) for result, g in zip((stack(outputs), h, c), (grad_out, grad_hy, grad_cy))
        ]
        pairs = [(result, g) for result, g in pairs if g is not None]
        wanted = [k for k in range(len(inputs)) if self.needs_input_grad(k)]
        grads = grad(
            [result for result, _ in pairs],
            [inputs[k] for k in wanted],
            [g for _, g in pairs],
            create_graph=True,
            allow_unused=True,
        )
        found = dict(zip(wanted, grads))
        return tuple(found.get(k) for k in range(len(inputs)))


def lstm_layer(x, hx, cx, w_ih, w_hh, b_ih, b_hh, num_layers=1, batch_first=False, train=True):
    """(out, hy, cy) of one LSTM layer over x (T, B, I) from the state (hx, cx), each (B, H).

    At every step t:  [i f g o] = x_t W_ih^T + b_ih + h W_hh^T + b_hh;
    c = sigmoid(f) * c + sigmoid(i) * tanh(g);  h = sigmoid(o) * tanh(c);  out[t] = h.
    The module's settings (num_layers, batch_first, train) are only recorded, as PyTorch does.
    """
    inputs = (x, w_ih, w_hh, b_ih, b_hh, hx, cx)
    out, workspace = lstm_forward(*(t._data for t in inputs))
    hy, cy = out[-1].copy(), _workspace_parts(workspace, *out.shape)[1][-1].copy()
    if not wants_grad(*inputs):
        return Tensor._make(out), Tensor._make(hy), Tensor._make(cy)
    saved = {name: save(t) for name, t in zip(_INPUT_NAMES, inputs)}
    saved |= _SETTINGS | {
        "batch_first": batch_first,
        "hidden_size": hx.shape[-1],
        "num_layers": num_layers,
        "train": train,
    }
    node = MkldnnRnnLayerBackward0(tuple([edge_of(t) for t in inputs]), saved)
    if node._origin is not None:
        node._origin.shape = out.shape
    results = tuple(Tensor._make(data, True, node, nr) for nr, data in enumerate((out, hy, cy)))
    for nr, result in enumerate(results):
        saved[f"result{nr}"] = SavedTensor(result, is_output=True)
    saved["result3"] = save(Tensor._make(workspace))
    return results


def lstm_forward(x, w_ih, w_hh, b_ih, b_hh, hx, cx):
    """numpy forward of one layer: the outputs (T, B, H) and the workspace.

    The workspace is one buffer holding, for every step, the four activated gates, the new cell
    state and its tanh (see `_workspace_parts`).
    """
    steps, batch, features = x.shape
    n = hx.shape[-1]
    workspace = np.empty(steps * batch * 6 * n, x.dtype)
    gates, cells, tanh_cells = _workspace_parts(workspace, steps, batch, n)
    # sigmoid(a) = (1 + tanh(a / 2)) / 2, so one tanh call activates all four gates (g: tanh(a)).
    # The halving is folded into the weights, once per sequence instead of once per step.
    scale = np.full(4 * n, 0.5, x.dtype)
    _split_gates(scale, n)[2][:] = 1
    shift = 1 - scale
    # The input part of every step's gates at once: one large matrix product.
    np.matmul(
        x.reshape(steps * batch, features),
        (w_ih * scale[:, None]).T,
        out=gates.reshape(steps * batch, 4 * n),
    )
    gates += (b_ih + b_hh) * scale
    out = np.empty((steps, batch, n), x.dtype)
    h, c, w_hh_t = hx, cx, (w_hh * scale[:, None]).T
    for t in range(steps):
        a = gates[t]
        a += h @ w_hh_t
        np.tanh(a, out=a)
        a *= scale
        a += shift
        i, f, g, o = _split_gates(a, n)
        c = np.multiply(f, c, out=cells[t])
        c += i * g
        h = np.multiply(o, np.tanh(c, out=tanh_cells[t]), out=out[t])
    return out, workspace


def _workspace_parts(workspace, steps, batch, n):
    """Views of the workspace: gates (T, B, 4H), cell states (T, B, H) and their tanh (T, B, H)."""
    gates_end, cells_end = steps * batch * 4 * n, steps * batch * 5 * n
    return (
        workspace[:gates_end].reshape(steps, batch, 4 * n),
        workspace[gates_end:cells_end].reshape(steps, batch, n),
        workspace[cells_end:].reshape(steps, batch, n),
    )


def lstm_backward(
    grad_out, grad_hy, grad_cy, x, hx, cx, w_ih, w_hh, out, workspace, need_input_grad=True
):
    """numpy backward through time: gradients for (x, w_ih, w_hh, b_ih, b_hh, hx, cx).

    Going back from the last step, with dh and dc the gradients reaching h and c of step t:
    dc += dh * o * (1 - tanh(c)^2);  the gradients of the activated gates are
    di = dc * g,  df = dc * c_prev,  dg = dc * i,  do = dh * tanh(c), times the activations'
    derivatives (s(1-s) for a sigmoid s, 1-g^2 for g); then dh_prev = d[i f g o] @ W_hh and
    dc_prev = dc * f. The weight gradients sum over all steps.
    """
    steps, batch, n = out.shape
    gates, cells, tanh_cells = _workspace_parts(workspace, steps, batch, n)
    # Everything that does not depend on the gradient flowing back is computed for all steps at once.
    i, f, g, o = _split_gates(gates, n)
    slope = gates * (1 - gates)
    _split_gates(slope, n)[2][:] = 1 - g * g
    dc_from_dh = o * (1 - tanh_cells * tanh_cells)

    d_gates = np.empty((steps, batch, 4 * n), x.dtype)
    dh = np.zeros((batch, n), x.dtype) if grad_hy is None else grad_hy
    dc = np.zeros((batch, n), x.dtype) if grad_cy is None else grad_cy
    for t in range(steps - 1, -1, -1):
        if grad_out is not None:
            dh = dh + grad_out[t]
        dc = dc + dh * dc_from_dh[t]
        di, df, dg, do = _split_gates(d_gates[t], n)
        np.multiply(dc, g[t], out=di)
        np.multiply(dc, cells[t - 1] if t else cx, out=df)
        np.multiply(dc, i[t], out=dg)
        np.multiply(dh, tanh_cells[t], out=do)
        d_gates[t] *= slope[t]
        dh = d_gates[t] @ w_hh
        dc = dc * f[t]
    d_all = d_gates.reshape(steps * batch, 4 * n)
    grad_x = (d_all @ w_ih).reshape(x.shape) if need_input_grad else None
    h_prev = np.concatenate([hx[None], out[:-1]]).reshape(steps * batch, n)
    grad_w_ih = d_all.T @ x.reshape(steps * batch, -1)
    grad_w_hh = d_all.T @ h_prev
    grad_b = d_all.sum(0)
    return grad_x, grad_w_ih, grad_w_hh, grad_b, grad_b.copy(), dh, dc  # two biases, two tensors
