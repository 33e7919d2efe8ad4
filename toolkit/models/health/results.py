"""Results as frozen dataclasses of typed figures, each a row of a frame on demand.

A risk run's figures are fields (``result.bad_debt_at_risk``), not keys of a ``dict[str, Any]``:
a typo fails at once, and types and docstrings say what each figure is. :meth:`Row.to_frame`
makes the one-row polars frame that runs over seeds or settings stack (``pl.concat``); pandas
users call ``.to_pandas()`` on it.
"""

from __future__ import annotations

import dataclasses

import polars as pl

__all__ = ["Row"]


@dataclasses.dataclass(frozen=True)
class Row:
    """A frozen result whose fields are figures; subclasses add the fields.

    >>> @dataclasses.dataclass(frozen=True)
    ... class Tally(Row):
    ...     accounts: int
    ...     debt: float
    >>> Tally(3, 1_500.0).to_frame().rows(named=True)
    [{'accounts': 3, 'debt': 1500.0}]
    """

    def as_dict(self) -> dict[str, object]:
        """The fields by name, in declaration order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def to_frame(self) -> pl.DataFrame:
        """The figures as a one-row polars frame, one column per field."""
        return pl.DataFrame([self.as_dict()])
