"""What ``write_report`` returns and raises (no heavy imports: the CLI loads this module)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.errors import StorageError

__all__ = ["ReportError", "ReportResult"]


class ReportError(StorageError):
    """The report cannot be written; the message names the path and what is missing.

    >>> str(ReportError("no collection runs in data/toolkit.duckdb"))
    'no collection runs in data/toolkit.duckdb'
    """


@dataclass(frozen=True)
class ReportResult:
    """The files a report wrote and the sections it left out.

    ``figures`` are PNG files, ``tables`` CSV files and ``markdown`` the summary page that
    links them; ``skipped`` says, per section left out, which table had no data.

    >>> result = ReportResult(Path("out"), (Path("out/fee_curve.png"),), (), Path("out/summary.md"))
    >>> [p.name for p in result.paths]
    ['fee_curve.png', 'summary.md']
    """

    out_dir: Path
    figures: tuple[Path, ...]
    tables: tuple[Path, ...]
    markdown: Path
    skipped: tuple[str, ...] = field(default=())

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file written: figures, then tables, then the Markdown summary."""
        return (*self.figures, *self.tables, self.markdown)

    def __str__(self) -> str:
        lines = [f"wrote {len(self.paths)} files to {self.out_dir}:"]
        lines += [f"  {path}" for path in self.paths]
        lines += [f"  skipped {reason}" for reason in self.skipped]
        return "\n".join(lines)
