"""torch.utils' data loading (utils.data)."""

from . import data

__all__ = ["data"]
