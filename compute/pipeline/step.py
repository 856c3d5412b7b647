"""One validated pipeline step (:class:`Step`): what the stages and the model share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

__all__ = ["Step"]


@dataclass(frozen=True)
class Step:
    """One validated step: ``op`` and its parameters (as given and completed).

    Parameters
    ----------
    op : str
        ``"filter"``, ``"spectrogram"`` or a registry operator name.
    params : dict
        The parameters as given (JSON types), what the pipeline file holds.
    values : dict
        The parameters validated and completed with their defaults.
    index : int
        Position in the pipeline (``steps[index]`` in messages).
    inner : tuple of Step
        An ``edit`` step's own steps (operation ``filter``), validated.
    """

    op: str
    params: dict[str, Any]
    values: dict[str, Any] = field(repr=False, compare=False)
    index: int = 0
    inner: tuple[Step, ...] = field(default=(), repr=False, compare=False)

    @property
    def label(self) -> str:
        if self.op == "filter":
            return f"steps[{self.index}] (filter {self.values['design']})"
        return f"steps[{self.index}] ({self.op})"

    def error(self, msg: str) -> InputError:
        return InputError(f"{self.label}: {msg}")
