"""F.interpolate and the Upsample layers, as in torch.nn.functional and torch.nn.modules.upsampling:
the same argument checks and messages, the same output sizes, and the resampling of
ops/upsample.py (nearest, nearest-exact, linear, bilinear; area is adaptive average pooling)."""

import numbers

from ..ops import pooling
from ..ops.upsample import NODES, upsample
from .module import Module

_SPATIAL_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _is_integer(value):
    """An int (not a bool's float cousin), as torch.nn.functional._is_integer."""
    return isinstance(value, numbers.Integral)


def _output_size_and_scales(input, size, scale_factor, recompute_scale_factor, mode):
    """(output size, scale factors): exactly one of size and scale_factor, one per spatial dim."""
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = list(size)
        else:
            output_size = [size] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
                    "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = list(scale_factor)
        else:
            scales = [scale_factor] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(n * s) for n, s in zip(input.shape[2:], scales)]
        scales = None
    if output_size is None:  # the kernel's own size: the input size times the scale, truncated
        output_size = [int(n * float(s)) for n, s in zip(input.shape[2:], scales)]
    scales = [None] * dim if scales is None else [float(s) for s in scales]
    return output_size, scales


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """input (N, C, *spatial) resampled to `size`, or to the spatial sizes times scale_factor:
    nearest (out[i] = in[floor(i in/out)]), nearest-exact, (bi)linear, or area (average)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | "
                "bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    output_size, scales = _output_size_and_scales(
        input, size, scale_factor, recompute_scale_factor, mode
    )
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
            "a 4-D tensor as input"
        )
    dim = input.ndim - 2
    if mode == "area" and dim == 2:
        return pooling.adaptive_avg_pool2d(input, output_size)
    if (mode, dim) in NODES and not antialias:
        return upsample(NODES[mode, dim], input, output_size, scales, align_corners)
    wanted = _SPATIAL_MODES.get(mode)
    if wanted is not None and wanted != dim and dim in (1, 2, 3):
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {wanted + 2}D input"
        )
    if dim not in (1, 2, 3):
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
            f"trilinear | lanczos | area | nearest-exact (got {mode})"
        )
    raise NotImplementedError(
        f"mini_autograd's interpolate has the modes nearest, nearest-exact and area for 1-D and "
        f"2-D inputs, linear and bilinear; not mode='{mode}' on a {input.ndim}-D input"
        + (" with antialias=True" if antialias else "")
    )


class Upsample(Module):
    """interpolate(input, size or scale_factor, mode, align_corners) as a layer."""

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        """interpolate(input) with the layer's settings."""
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info
