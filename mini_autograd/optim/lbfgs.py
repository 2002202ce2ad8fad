"""L-BFGS, as torch.optim.LBFGS: a quasi-Newton method whose step(closure) re-evaluates the loss.

All parameters are handled as one flat vector (their gradients concatenated). Each iteration
turns the gradient into a direction with the last `history_size` pairs (s, y) of steps and
gradient changes (the two-loop recursion), then moves along it by lr, or by the step a strong
Wolfe line search finds. The arithmetic follows torch's, operation by operation, on numpy
arrays: scalars such as y.dot(s) keep the parameters' dtype, as torch's 0-d tensors do.
"""

import numpy as np

from ..core.grad_mode import enable_grad, no_grad
from ..core.tensor import Tensor
from ._pointwise import add, add_
from .optimizer import Optimizer


class LBFGS(Optimizer):
    """torch.optim.LBFGS: up to max_iter iterations (max_eval evaluations) per step(closure)."""

    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
    ):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        """The gradients as one flat array (zeros for a parameter without one)."""
        return np.concatenate(
            [
                np.zeros(p._data.size, p._data.dtype) if p.grad is None else p.grad._data.ravel()
                for p in self._params
            ]
        )

    def _add_grad(self, step_size, update):
        """Each parameter += step_size * its slice of the flat `update`."""
        offset = 0
        for p in self._params:
            numel = p._data.size
            add_(p, update[offset : offset + numel].reshape(p._data.shape), step_size)
            offset += numel

    def _directional_evaluate(self, closure, x, t, d):
        """(loss, flat gradient) at the parameters x + t * d; the parameters are x again after."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, data in zip(self._params, x):
            np.copyto(p._data, data)
            p._bump_version()
        return loss, flat_grad

    def step(self, closure):
        """Minimize for up to max_iter iterations; returns the loss closure() gave first."""
        with no_grad():
            return self._step(enable_grad()(closure))

    def _step(self, closure):
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= group["tolerance_grad"]:
            return orig_loss
        memory = _Memory(state)
        self._iterate(closure, group, state, memory, float(orig_loss), flat_grad)
        memory.save(state)
        return orig_loss

    def _iterate(self, closure, group, state, memory, loss, flat_grad):
        """The iterations of one step, from `loss` and its flat gradient; `memory` carries the
        direction, the step size and the stored pairs from iteration to iteration."""
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        current_evals, n_iter = 1, 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            memory.new_direction(flat_grad, state, group["history_size"])
            memory.prev_flat_grad, memory.prev_loss = flat_grad.copy(), loss
            # the first step is scaled down by the gradient's size, the others are lr
            first = state["n_iter"] == 1
            memory.t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if first else lr
            d = memory.d
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break
            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, memory.t, ls_func_evals = _strong_wolfe(
                    obj_func,
                    x_init,
                    memory.t,
                    d,
                    loss,
                    flat_grad,
                    gtd,
                    max_ls=max_eval - current_evals,
                )
                self._add_grad(memory.t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(memory.t, d)
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * memory.t).max() <= tolerance_change:
                break
            if abs(loss - memory.prev_loss) < tolerance_change:
                break


class _Memory:
    """What LBFGS carries from iteration to iteration and from step to step (in `state`, as
    tensors): the direction d, the step size t, the pairs (old_stps s, old_dirs y) with ro =
    1 / y.s, H_diag (the initial inverse-Hessian scale), and the previous gradient and loss."""

    def __init__(self, state):
        self.d, self.t = _array(state.get("d")), _number(state.get("t"))
        self.old_dirs = [_array(v) for v in state.get("old_dirs", [])]
        self.old_stps = [_array(v) for v in state.get("old_stps", [])]
        self.ro = [_number(v) for v in state.get("ro", [])]
        self.H_diag = _number(state.get("H_diag"))
        self.prev_flat_grad = _array(state.get("prev_flat_grad"))
        self.prev_loss = state.get("prev_loss")

    def new_direction(self, flat_grad, state, history_size):
        """d: the steepest descent at the first iteration; later the two-loop recursion's, after
        storing the last pair if it has positive curvature (forgetting the oldest past
        history_size)."""
        if state["n_iter"] == 1:
            self.d = -flat_grad
            self.old_dirs, self.old_stps, self.ro, self.H_diag = [], [], [], 1
            return
        y = flat_grad - self.prev_flat_grad
        s = self.d * self.t
        ys = y.dot(s)
        if ys > 1e-10:
            if len(self.old_dirs) == history_size:
                self.old_dirs.pop(0), self.old_stps.pop(0), self.ro.pop(0)
            self.old_dirs.append(y)
            self.old_stps.append(s)
            self.ro.append(1.0 / ys)
            self.H_diag = ys / y.dot(y)
        al = state.setdefault("al", [None] * history_size)
        self.d = _two_loop(-flat_grad, self.old_dirs, self.old_stps, self.ro, self.H_diag, al)

    def save(self, state):
        """Into the optimizer's state, as torch keeps it."""
        state["d"], state["t"] = _tensor(self.d), _tensor(self.t)
        state["old_dirs"] = [_tensor(v) for v in self.old_dirs]
        state["old_stps"] = [_tensor(v) for v in self.old_stps]
        state["ro"] = [_tensor(v) for v in self.ro]
        state["H_diag"] = _tensor(self.H_diag)
        state["prev_flat_grad"] = _tensor(self.prev_flat_grad)
        state["prev_loss"] = self.prev_loss


def _two_loop(q, old_dirs, old_stps, ro, H_diag, al):
    """The direction H @ q, H the inverse-Hessian estimate from the stored pairs (q: -gradient);
    al (the state's list) receives the first loop's coefficients, as 0-d tensors."""
    coefficients = [None] * len(old_dirs)
    for i in range(len(old_dirs) - 1, -1, -1):
        coefficients[i] = old_stps[i].dot(q) * ro[i]
        al[i] = _tensor(coefficients[i])
        q = add(q, old_dirs[i], -coefficients[i])
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r = add(r, old_stps[i], coefficients[i] - be_i)
    return r


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimum of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, within bounds
    (by default the interval between x1 and x2); its middle where there is no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else sorted((x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d meeting the strong Wolfe conditions (sufficient decrease, and a slope
    c2 times smaller): (loss, flat gradient, t, evaluations), as torch's line search. First an
    interval that holds such a step is bracketed, then it is zoomed in on."""
    search = _LineSearch(obj_func, x, d, f, gtd, c1, c2)
    f_new, g_new = search.evaluate(t)
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g.copy(), gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new])
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = _Bracket([t], [f_new], [g_new], []), True
            break
        if gtd_new >= 0:
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new])
            break
        # extrapolate
        bounds = (t + 0.01 * (t - t_prev), t * 10)
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds)
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = search.evaluate(t)
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # reached the limit: the interval is [0, t]
        bracket = _Bracket([0, t], [f, f_new], [g, g_new], [])  # no zoom follows
    if not done:
        search.zoom(bracket, ls_iter, max_ls, np.abs(d).max(), tolerance_change)
    low = bracket.low
    return bracket.f[low], bracket.g[low], bracket.t[low], search.evals


class _Bracket:
    """An interval of step sizes t, with the loss f, flat gradient g and slope gtd at each end;
    `low` indexes the end with the lower loss."""

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, [v.copy() for v in g], gtd
        self.order()

    def order(self):
        """low, high: the ends with the lower and the higher loss (the first one on a tie)."""
        self.low, self.high = (0, 1) if self.f[0] <= self.f[-1] else (1, 0)

    def set(self, end, t, f, g, gtd):
        """End `end` (an index) becomes step t with its loss, gradient and slope."""
        self.t[end], self.f[end], self.g[end], self.gtd[end] = t, f, g, gtd


class _LineSearch:
    """The evaluations of a strong Wolfe line search from x along d (loss f, slope gtd at 0)."""

    def __init__(self, obj_func, x, d, f, gtd, c1, c2):
        self.obj_func, self.x, self.d, self.f, self.gtd = obj_func, x, d, f, gtd
        self.c1, self.c2 = c1, c2
        self.evals = 0

    def evaluate(self, t):
        """(loss, flat gradient) at x + t * d."""
        self.evals += 1
        return self.obj_func(self.x, t, self.d)

    def zoom(self, bracket, ls_iter, max_ls, d_norm, tolerance_change):
        """Shrink the bracket until its low end meets the conditions (or the evaluations run
        out, or it is too narrow): each trial step is the cubic's minimum, kept away from the
        ends unless the previous trials made too little progress."""
        insuf_progress = False
        while ls_iter < max_ls:
            if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
                break
            t = _cubic_interpolate(
                bracket.t[0],
                bracket.f[0],
                bracket.gtd[0],
                bracket.t[1],
                bracket.f[1],
                bracket.gtd[1],
            )
            t, insuf_progress = _away_from_the_ends(t, bracket.t, insuf_progress)
            f_new, g_new = self.evaluate(t)
            gtd_new = g_new.dot(self.d)
            ls_iter += 1
            low, high = bracket.low, bracket.high
            if f_new > (self.f + self.c1 * t * self.gtd) or f_new >= bracket.f[low]:
                bracket.set(high, t, f_new, g_new.copy(), gtd_new)
                bracket.order()
                continue
            if abs(gtd_new) <= -self.c2 * self.gtd:
                bracket.set(low, t, f_new, g_new.copy(), gtd_new)
                return
            if gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.set(high, bracket.t[low], bracket.f[low], bracket.g[low], bracket.gtd[low])
            bracket.set(low, t, f_new, g_new.copy(), gtd_new)


def _away_from_the_ends(t, ends, insuf_progress):
    """(t, insuf_progress): a trial step within 10% of the interval's width from an end is
    moved to that distance, if the last trial was also that close or t is outside."""
    high, low = max(ends), min(ends)
    eps = 0.1 * (high - low)
    if min(high - t, t - low) >= eps:
        return t, False
    if insuf_progress or t >= high or t <= low:
        return (high - eps if abs(t - high) < abs(t - low) else low + eps), False
    return t, True


def _tensor(value):
    """A state value as torch keeps it: arrays and numpy scalars as tensors, numbers as they are."""
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._make(np.asarray(value))
    return value


def _array(value):
    """A state tensor's values (None stays None)."""
    return value._data if isinstance(value, Tensor) else value


def _number(value):
    """A 0-d state tensor as a numpy scalar of its dtype (numbers stay as they are)."""
    return value._data[()] if isinstance(value, Tensor) else value
