"""Embedding: a table of vectors looked up by index, as in torch.nn.Embedding."""

from ..core.grad_mode import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """y = weight[x]: row x of a (num_embeddings, embedding_dim) table, initialised from N(0, 1)."""

    def __init__(
        self, num_embeddings, embedding_dim, padding_idx=None, _weight=None, device=None, dtype=None
    ):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = F._padding_index(padding_idx, num_embeddings)
        if _weight is not None:  # from_pretrained: the given table, shared
            self.weight = Parameter(_weight)
            return
        self.weight = init._empty_parameter((num_embeddings, embedding_dim), dtype, device)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw the table from N(0, 1) in place (the padding row zero again)."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        """An Embedding whose table is `embeddings` (shared, not copied), frozen unless freeze=False."""
        rows, cols = embeddings.shape
        embedding = cls(rows, cols, padding_idx, _weight=embeddings)
        embedding.weight.requires_grad_(not freeze)
        return embedding

    def forward(self, input):
        """weight[input]."""
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"
