"""qvalue.__format__: a scalar or a one-element tensor formats as its Python number."""

from __future__ import annotations

from typing import Any


def format_value(self: Any, format_spec: str) -> str:
    """qvalue.__format__: a scalar or one-element tensor formats as its Python number.

    An empty spec gives str(self); any other value with a spec raises TypeError, as
    ndarray.__format__ does.
    """
    if not format_spec:
        return str(self)
    kind = self.kind
    if kind == "scalar" or (kind == "tensor" and self.numel() == 1):
        return format(self.item(), format_spec)
    if kind == "string":
        return format(self.to_py(), format_spec)
    shape = f" of shape {tuple(self.shape)}" if kind == "tensor" else ""
    raise TypeError(
        f"unsupported format string passed to isthmus.qvalue.__format__ (a {kind}{shape}; "
        "only scalars and one-element tensors take a format spec)"
    )
