"""A whole LSTM layer as one operation, with its backward through time written by hand.

PyTorch runs `nn.LSTM` on the CPU as one fused oneDNN kernel per layer, recorded as one
`MkldnnRnnLayerBackward0` node. Doing the same here gives the same graph as PyTorch and
turns about 20 recorded operations per time step into one node per layer: the loops below
make a few numpy calls per step and no Python objects.

nn.LSTMCell's step (`lstm_step`) lives here too: the same arithmetic recorded operation by
operation, which the fused node replays when its own backward must be differentiated.
"""

import numpy as np

from ..core import events
from ..core.backward_calls import grad
from ..core.grad_mode import GradMode
from ..core.node import Node, gradient_edge
from ..core.saved import SavedTensor
from ..core.tensor import Tensor
from .derivatives import sigmoid, tanh
from .linalg import addmm, matmul
from .recording import save, wants_grad
from .shape import _split, stack
from .unsafe_split import UnsafeSplitBackward0


# --- nn.LSTMCell's step, recorded operation by operation --------------------------------------
def _unsafe_chunk(gates, chunks):
    """gates (B, chunks * H) cut into `chunks` blocks (B, H) along dim 1, as PyTorch's cells do."""
    size = gates.shape[1] // chunks
    saved = {"dim": 1, "self_sym_sizes": gates._data.shape, "split_size": size}
    return _split(gates, 1, [size] * chunks, UnsafeSplitBackward0, saved)


def _linear(x, weight, bias):
    """x @ weight.T + bias for a 2-D x, recorded as F.linear records it: one addmm, or a matmul
    when there is no bias."""
    if bias is None:
        return matmul(x, weight.t())
    return addmm(bias, x, weight.t())


def lstm_step(x, state, w_ih, w_hh, b_ih, b_hh):
    """i, f, g, o = gates (PyTorch's order);  c' = sigmoid(f) * c + sigmoid(i) * tanh(g);
    h' = sigmoid(o) * tanh(c'), with gates = h @ W_hh.T + b_hh + x @ W_ih.T + b_ih."""
    h, c = state
    gates = _linear(h, w_hh, b_hh) + _linear(x, w_ih, b_ih)
    i, f, g, o = _unsafe_chunk(gates, 4)
    i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
    c_next = f * c + i * g
    return o * tanh(c_next), c_next


# --- the whole layer as one node ----------------------------------------------------------------
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
    node = MkldnnRnnLayerBackward0(tuple([gradient_edge(t) for t in inputs]), saved)
    results = tuple(Tensor._make(data, True, node, nr) for nr, data in enumerate((out, hy, cy)))
    if events.node_created:
        for observer in events.node_created:
            observer(node, results[0])
    for nr, result in enumerate(results):
        saved[f"result{nr}"] = SavedTensor(result, is_output=True)
    saved["result3"] = save(Tensor._make(workspace))
    return results


def lstm_forward(x, w_ih, w_hh, b_ih, b_hh, hx, cx):
    """numpy forward of one layer: the outputs (T, B, H) and the workspace.

    sigmoid(a) = 1 / (1 + exp(-a)) and tanh(a) = 2 / (1 + exp(-2a)) - 1, so one exp activates
    all four gates; the factors -1 and -2 are folded into the weights and biases (exact: powers
    of two). The workspace holds, for every step, the four activated gates, the new cell state
    and its tanh (see `_workspace_parts`).
    """
    steps, batch, features = x.shape
    n = hx.shape[-1]
    workspace = np.empty(steps * batch * 6 * n, x.dtype)
    gates, cells, tanh_cells = _workspace_parts(workspace, steps, batch, n)
    scale = np.full(4 * n, -1, x.dtype)
    _split_gates(scale, n)[2][:] = -2
    # The input part of every step's gates at once: one large matrix product.
    np.matmul(
        x.reshape(steps * batch, features),
        (w_ih * scale[:, None]).T,
        out=gates.reshape(steps * batch, 4 * n),
    )
    gates += (b_ih + b_hh) * scale
    w_hh_t = (w_hh * scale[:, None]).T
    out = np.empty((steps, batch, n), x.dtype)
    hidden, product = np.empty((batch, 4 * n), x.dtype), np.empty((batch, n), x.dtype)
    i, f, g, o = _split_gates(gates, n)
    h, c = hx, cx
    with np.errstate(over="ignore"):  # exp(large) = inf gives the right limit, 1 / inf = 0
        for t in range(steps):
            a = gates[t]
            a += np.matmul(h, w_hh_t, out=hidden)
            np.exp(a, out=a)
            a += 1
            np.divide(1, a, out=a)
            g_t = g[t]
            g_t *= 2
            g_t -= 1
            c = np.multiply(f[t], c, out=cells[t])
            c += np.multiply(i[t], g_t, out=product)
            h = np.multiply(o[t], np.tanh(c, out=tanh_cells[t]), out=out[t])
    return out, workspace


def _workspace_parts(workspace, steps, batch, n):
    """Views of the workspace: gates (T, B, 4H), cell states (T, B, H) and their tanh (T, B, H)."""
    gates_end, cells_end = steps * batch * 4 * n, steps * batch * 5 * n
    return (
        workspace[:gates_end].reshape(steps, batch, 4 * n),
        workspace[gates_end:cells_end].reshape(steps, batch, n),
        workspace[cells_end:].reshape(steps, batch, n),
    )


def _gate_factors(gates, cells, tanh_cells, cx):
    """For every step, what turns (dc, dc, dc, dh) into the gates' pre-activation gradients,
    and o * (1 - tanh(c)^2), the factor from dh to dc.

    d[i f g o] = [dc * g * i(1-i),  dc * c_prev * f(1-f),  dc * i * (1-g^2),  dh * tanh(c) * o(1-o)].
    None of it depends on the gradient flowing back, so it is computed for all steps at once.
    """
    n = cells.shape[-1]
    i, f, g, o = _split_gates(gates, n)
    factors = np.subtract(1, gates)
    factors *= gates  # s(1-s), the slope of a sigmoid s
    fi, ff, fg, fo = _split_gates(factors, n)
    np.multiply(g, g, out=fg)
    np.subtract(1, fg, out=fg)  # 1-g^2, the slope of tanh
    fi *= g
    ff[0] *= cx
    ff[1:] *= cells[:-1]
    fg *= i
    fo *= tanh_cells
    dc_from_dh = np.multiply(tanh_cells, tanh_cells)
    np.subtract(1, dc_from_dh, out=dc_from_dh)
    dc_from_dh *= o
    return factors, dc_from_dh


def lstm_backward(
    grad_out, grad_hy, grad_cy, x, hx, cx, w_ih, w_hh, out, workspace, need_input_grad=True
):
    """numpy backward through time: gradients for (x, w_ih, w_hh, b_ih, b_hh, hx, cx).

    Going back from the last step, with dh and dc the gradients reaching h and c of step t:
    dc += dh * o * (1 - tanh(c)^2);  d[i f g o] from (dc, dc, dc, dh) (see `_gate_factors`);
    then dh_prev = d[i f g o] @ W_hh and dc_prev = dc * f. The weight gradients are one product
    over all steps: dW_ih = d_all^T @ x_all, dW_hh = d_all^T @ h_prev_all, db = sum of d_all.
    """
    steps, batch, n = out.shape
    gates, cells, tanh_cells = _workspace_parts(workspace, steps, batch, n)
    # The factors become the gates' gradients, step by step, in place.
    d_gates, dc_from_dh = _gate_factors(gates, cells, tanh_cells, cx)
    blocks = d_gates.reshape(steps, batch, 4, n)
    forget = _split_gates(gates, n)[1]
    dh = np.zeros((batch, n), x.dtype) if grad_hy is None else grad_hy.astype(x.dtype, copy=True)
    dc = np.zeros((batch, n), x.dtype) if grad_cy is None else grad_cy.astype(x.dtype, copy=True)
    product = np.empty((batch, n), x.dtype)
    for t in range(steps - 1, -1, -1):
        if grad_out is not None:
            dh += grad_out[t]
        dc += np.multiply(dh, dc_from_dh[t], out=product)
        np.multiply(dc[:, None], blocks[t, :, :3], out=blocks[t, :, :3])
        np.multiply(dh, blocks[t, :, 3], out=blocks[t, :, 3])
        np.matmul(d_gates[t], w_hh, out=dh)
        dc *= forget[t]
    d_all = d_gates.reshape(steps * batch, 4 * n)
    grad_x = (d_all @ w_ih).reshape(x.shape) if need_input_grad else None
    h_prev = np.concatenate([hx[None], out[:-1]]).reshape(steps * batch, n)
    grad_w_ih = d_all.T @ x.reshape(steps * batch, -1)
    grad_w_hh = d_all.T @ h_prev
    grad_b = d_all.sum(0)
    return grad_x, grad_w_ih, grad_w_hh, grad_b, grad_b.copy(), dh, dc  # two biases, two tensors
