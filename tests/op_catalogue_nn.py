"""The op catalogue's convolutions, poolings, resamplings and losses: F.conv1d, F.conv2d, their
transposed forms, max/avg/adaptive pooling, F.interpolate, F.pad, nn.functional's losses and
distances, as `Op` entries run by the parity suite (tests/test_ops_parity.py).

A convolution is run with every input requiring grad, then with one at a time; a pooling has one
input; a loss runs on fixed arrays (probabilities, targets in [0, 1), class labels).
"""

import numpy as np
from op_catalogue import Op


def F(lib):
    """lib's nn.functional."""
    return lib.nn.functional


# id: (fn(lib, *leaves), shapes of the leaves: input, weight[, bias])
CONVS = {
    "conv2d": (lambda lib, x, w, b: F(lib).conv2d(x, w, b), ((2, 3, 7, 6), (4, 3, 3, 2), (4,))),
    "conv2d-no-bias": (lambda lib, x, w: F(lib).conv2d(x, w), ((2, 3, 6, 6), (4, 3, 3, 3))),
    "conv2d-stride-padding": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=2, padding=1),
        ((2, 3, 7, 8), (4, 3, 3, 3), (4,)),
    ),
    "conv2d-tuples": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, (2, 1), (1, 2), (1, 2)),
        ((1, 2, 8, 9), (3, 2, 3, 3), (3,)),
    ),
    "conv2d-dilation": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, dilation=2),
        ((2, 2, 9, 9), (3, 2, 3, 3), (3,)),
    ),
    "conv2d-groups": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, groups=2, padding=1),
        ((2, 4, 6, 5), (6, 2, 3, 3), (6,)),
    ),
    "conv2d-depthwise": (
        lambda lib, x, w: F(lib).conv2d(x, w, groups=3, stride=(1, 2)),
        ((2, 3, 6, 7), (3, 1, 2, 3)),
    ),
    "conv2d-same": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding="same"),
        ((2, 3, 5, 6), (4, 3, 3, 3), (4,)),
    ),
    "conv2d-same-even-kernel": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding="same"),
        ((2, 3, 5, 6), (4, 3, 2, 4), (4,)),
    ),
    "conv2d-valid": (
        lambda lib, x, w: F(lib).conv2d(x, w, padding="valid", stride=2),
        ((1, 3, 7, 7), (2, 3, 3, 3)),
    ),
    "conv2d-unbatched": (
        lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding=1),
        ((3, 5, 6), (4, 3, 3, 3), (4,)),
    ),
    "conv2d-1x1": (lambda lib, x, w, b: F(lib).conv2d(x, w, b), ((2, 3, 4, 4), (5, 3, 1, 1), (5,))),
    "torch.conv2d": (lambda lib, x, w: lib.conv2d(x, w, None, 1, 1), ((1, 2, 5, 5), (3, 2, 3, 3))),
    "conv1d": (lambda lib, x, w, b: F(lib).conv1d(x, w, b), ((2, 3, 9), (4, 3, 3), (4,))),
    "conv1d-stride-padding-dilation": (
        lambda lib, x, w, b: F(lib).conv1d(x, w, b, stride=2, padding=2, dilation=2),
        ((2, 3, 11), (4, 3, 3), (4,)),
    ),
    "conv1d-groups-same": (
        lambda lib, x, w: F(lib).conv1d(x, w, padding="same", groups=2),
        ((2, 4, 8), (4, 2, 4)),
    ),
    "conv1d-unbatched": (lambda lib, x, w: F(lib).conv1d(x, w), ((3, 9), (2, 3, 4))),
    "conv_transpose2d": (
        lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b),
        ((2, 3, 4, 5), (3, 4, 3, 2), (4,)),
    ),
    "conv_transpose2d-stride-padding-output_padding": (
        lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, 2, 1, 1),
        ((2, 3, 4, 3), (3, 2, 3, 3), (2,)),
    ),
    "conv_transpose2d-groups-dilation": (
        lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, (1, 2), 0, 0, 2, 2),
        ((1, 4, 3, 3), (4, 3, 2, 2), (6,)),
    ),
    "conv_transpose2d-unbatched-no-bias": (
        lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=2),
        ((3, 4, 4), (3, 2, 3, 3)),
    ),
    "conv_transpose1d": (
        lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, stride=3, padding=1),
        ((2, 3, 5), (3, 2, 4), (2,)),
    ),
}

# --- pooling -------------------------------------------------------------------------------------
B, U, L = (2, 3, 9, 8), (3, 9, 7), (2, 3, 8)  # batched, unbatched, 1-D inputs (8: the last
# window of a ceil-mode pooling with kernel 3, stride 2, padding 1 reaches past the padding)
POOLS = {
    "max_pool2d": (lambda lib, x: F(lib).max_pool2d(x, 2), B),
    "max_pool2d-tuple": (lambda lib, x: F(lib).max_pool2d(x, (2, 2)), B),
    "max_pool2d-stride-padding": (lambda lib, x: F(lib).max_pool2d(x, 3, stride=2, padding=1), B),
    "max_pool2d-rect-ceil-dilation": (
        lambda lib, x: F(lib).max_pool2d(x, (3, 2), (2, 1), 0, (2, 1), ceil_mode=True),
        B,
    ),
    "max_pool2d-ceil-drops-a-window-in-the-padding": (
        lambda lib, x: F(lib).max_pool2d(x, 2, 2, 1, ceil_mode=True),
        B,
    ),
    "max_pool2d-unbatched": (lambda lib, x: F(lib).max_pool2d(x, 2, ceil_mode=True), U),
    "max_pool2d-overlapping": (lambda lib, x: F(lib).max_pool2d(x, 3, 1), B),
    "torch.max_pool2d": (lambda lib, x: lib.max_pool2d(x, 3, 2, 1), B),
    "max_pool1d": (lambda lib, x: F(lib).max_pool1d(x, 3, 2, 1), L),
    "max_pool1d-unbatched-default-stride": (lambda lib, x: lib.max_pool1d(x, 2), L[1:]),
    "avg_pool2d": (lambda lib, x: F(lib).avg_pool2d(x, 2), B),
    "avg_pool2d-stride-padding": (lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1), B),
    "avg_pool2d-ceil-exclude-pad": (
        lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        B,
    ),
    "avg_pool2d-ceil-include-pad": (
        lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True),
        B,
    ),
    "avg_pool2d-ceil-drops-a-window-in-the-padding": (
        lambda lib, x: F(lib).avg_pool2d(x, 2, 2, 1, ceil_mode=True),
        B,
    ),
    "avg_pool2d-divisor-unbatched": (
        lambda lib, x: F(lib).avg_pool2d(x, (3, 2), divisor_override=4),
        U,
    ),
    "avg_pool1d": (lambda lib, x: lib.avg_pool1d(x, 3, 2, 1), L),
    "adaptive_avg_pool2d": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, 3), B),
    "adaptive_avg_pool2d-uneven": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (4, 5)), B),
    "adaptive_avg_pool2d-none": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (None, 2)), U),
    "adaptive_avg_pool2d-1x1": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, 1), B),
    "adaptive_avg_pool2d-larger": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (12, 7)), B),
}


# --- resampling -----------------------------------------------------------------------------------
RESAMPLES = {
    "interpolate-nearest": (lambda lib, x: F(lib).interpolate(x, scale_factor=2), B),
    "interpolate-nearest-size": (lambda lib, x: F(lib).interpolate(x, size=(5, 11)), B),
    "interpolate-nearest-fraction": (lambda lib, x: F(lib).interpolate(x, scale_factor=0.7), B),
    "interpolate-nearest-exact": (
        lambda lib, x: F(lib).interpolate(x, scale_factor=1.5, mode="nearest-exact"),
        B,
    ),
    "interpolate-nearest-1d": (lambda lib, x: F(lib).interpolate(x, 13), L),
    "interpolate-bilinear": (
        lambda lib, x: F(lib).interpolate(x, scale_factor=2, mode="bilinear"),
        B,
    ),
    "interpolate-bilinear-size-align-corners": (
        lambda lib, x: F(lib).interpolate(x, (4, 11), mode="bilinear", align_corners=True),
        B,
    ),
    "interpolate-bilinear-recompute": (
        lambda lib, x: F(lib).interpolate(
            x, scale_factor=(1.3, 0.5), mode="bilinear", recompute_scale_factor=True
        ),
        B,
    ),
    "interpolate-linear": (lambda lib, x: F(lib).interpolate(x, 5, mode="linear"), L),
    "interpolate-area": (lambda lib, x: F(lib).interpolate(x, (4, 3), mode="area"), B),
    "pad": (lambda lib, x: F(lib).pad(x, (1, 2)), B),
    "pad-two-dims-value-cut": (lambda lib, x: F(lib).pad(x, (1, -2, 0, 3), value=1.5), B),
}


def _all_then_each(n):
    """Every input requiring grad, then each input alone."""
    return ((True,) * n, *(tuple(i == j for j in range(n)) for i in range(n)))


CONV_OPS = [
    Op(name, fn, shapes, masks=_all_then_each(len(shapes))) for name, (fn, shapes) in CONVS.items()
]
POOL_OPS = [Op(name, fn, (shape,)) for name, (fn, shape) in POOLS.items()]
RESAMPLE_OPS = [Op(name, fn, (shape,)) for name, (fn, shape) in RESAMPLES.items()]


# --- losses ---------------------------------------------------------------------------------------
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))  # scores or logits
TARGET = RNG.random((4, 3))  # targets in [0, 1)
PROBS = 1 / (1 + np.exp(-RNG.standard_normal((4, 3))))  # probabilities in (0, 1)
LABELS = np.array([2, 0, 1, 2])
WEIGHT = RNG.random(3) + 0.5  # one weight per class (or per column)


def const(lib, array):
    """A tensor that needs no gradient (targets, weights), float64 for float arrays."""
    return lib.tensor(array, dtype=lib.float64) if array.dtype.kind == "f" else lib.tensor(array)


REDUCTIONS = ("mean", "sum", "none")
PAIRED_LOSSES = {  # id: (the function of F, its input), each compared with TARGET
    "mse_loss": ("mse_loss", X),
    "l1_loss": ("l1_loss", X),
    "bce": ("binary_cross_entropy", PROBS),
    "bce_with_logits": ("binary_cross_entropy_with_logits", X),
}
LOSSES = {}  # id: (fn(lib, *float leaves), float arrays)
for red in REDUCTIONS:
    for key, (name, first) in PAIRED_LOSSES.items():
        LOSSES[f"{key}-{red}"] = (
            lambda lib, x, t, r=red, name=name: getattr(F(lib), name)(x, t, reduction=r),
            [first, TARGET],
        )
    LOSSES[f"cross_entropy-{red}"] = (
        lambda lib, x, r=red: F(lib).cross_entropy(x, const(lib, LABELS), reduction=r),
        [X],
    )
    LOSSES[f"nll_loss-{red}"] = (
        lambda lib, x, r=red: F(lib).nll_loss(
            F(lib).log_softmax(x, 1), const(lib, LABELS), reduction=r
        ),
        [X],
    )
    LOSSES[f"cross_entropy-weight-ignore_index-{red}"] = (
        lambda lib, x, r=red: F(lib).cross_entropy(
            x, const(lib, LABELS), const(lib, WEIGHT), ignore_index=0, reduction=r
        ),
        [X],
    )
    LOSSES[f"bce-weight-{red}"] = (
        lambda lib, p, t, r=red: F(lib).binary_cross_entropy(p, t, const(lib, WEIGHT), reduction=r),
        [PROBS, TARGET],
    )
    LOSSES[f"bce_with_logits-weight-pos_weight-{red}"] = (
        lambda lib, x, t, r=red: F(lib).binary_cross_entropy_with_logits(
            x, t, const(lib, WEIGHT), reduction=r, pos_weight=const(lib, WEIGHT[::-1] * 2)
        ),
        [X, TARGET],
    )
LOSSES["bce_with_logits-pos_weight"] = (
    lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t, pos_weight=const(lib, WEIGHT)),
    [X, TARGET],
)
LOSSES["cross_entropy-unbatched"] = (
    lambda lib, x: F(lib).cross_entropy(x, const(lib, np.array(1))),
    [X[0]],
)
LOSSES["cross_entropy-every-row-ignored"] = (
    lambda lib, x: F(lib).cross_entropy(x, const(lib, np.array([1, 1, 1, 1])), ignore_index=1),
    [X],
)
LOSSES["l1_loss-broadcast-target"] = (
    lambda lib, x, t: F(lib).l1_loss(x, t[0]),
    [X, TARGET],
)
for red in REDUCTIONS:
    LOSSES[f"cross_entropy-label_smoothing-{red}"] = (
        lambda lib, x, r=red: F(lib).cross_entropy(
            x, const(lib, LABELS), reduction=r, label_smoothing=0.2
        ),
        [X],
    )
    LOSSES[f"cross_entropy-label_smoothing-weight-ignore_index-{red}"] = (
        lambda lib, x, r=red: F(lib).cross_entropy(
            x,
            const(lib, LABELS),
            const(lib, WEIGHT),
            ignore_index=0,
            reduction=r,
            label_smoothing=0.3,
        ),
        [X],
    )
LOSSES["kl_div-batchmean"] = (
    lambda lib, x: F(lib).kl_div(
        F(lib).log_softmax(x, 1), const(lib, PROBS), reduction="batchmean"
    ),
    [X],
)
LOSSES["kl_div-log_target-none"] = (
    lambda lib, x, t: F(lib).kl_div(x, t, reduction="none", log_target=True),
    [X, np.log(PROBS)],
)
for red in REDUCTIONS:
    LOSSES[f"triplet_margin_loss-{red}"] = (
        lambda lib, a, p, n, r=red: F(lib).triplet_margin_loss(a, p, n, 0.5, reduction=r),
        [X, TARGET, PROBS],
    )
LOSSES["triplet_margin_loss-p1-swap"] = (
    lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, p=1, swap=True),
    [X, TARGET, PROBS],
)
LOSSES["pairwise_distance"] = (lambda lib, a, b: F(lib).pairwise_distance(a, b), [X, TARGET])
LOSSES["pairwise_distance-p3-keepdim"] = (
    lambda lib, a, b: F(lib).pairwise_distance(a, b[0], 3, keepdim=True),
    [X, TARGET],
)
LOSSES["cosine_similarity"] = (lambda lib, a, b: F(lib).cosine_similarity(a, b), [X, TARGET])
LOSSES["cosine_similarity-broadcast-dim0"] = (
    lambda lib, a, b: lib.cosine_similarity(a, b[:, :1], dim=0),
    [X, TARGET],
)
LOSS_OPS = [
    Op(name, fn, tuple(a.shape for a in arrays), arrays=tuple(arrays))
    for name, (fn, arrays) in LOSSES.items()
]
