"""The toolkit's one progress bar: shown when someone watches or asks, hidden by
``TQDM_DISABLE`` for nbval, and never stored by a notebook a tool executes."""

import sys
import types

import pytest

from toolkit import progress
from toolkit.progress import interactive, progress_bar, shown


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> None:
    """An interactive session (stderr a terminal), whatever pytest's capture does."""
    monkeypatch.setattr(progress, "interactive", lambda: True)
    monkeypatch.delenv("TOOLKIT_PROGRESS", raising=False)


@pytest.mark.parametrize("value", ["1", "true", "True", "yes"])
def test_tqdm_disable_hides_every_bar(
    monkeypatch: pytest.MonkeyPatch, watched: None, value: str
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", value)
    assert not shown(True)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "1")
    assert not shown(True)
    assert progress_bar(total=2, desc="x", unit="step", enabled=True).disable


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_bar_shows_when_watched_and_not_disabled(
    monkeypatch: pytest.MonkeyPatch, watched: None, value: str
) -> None:
    monkeypatch.setenv("TQDM_DISABLE", value)
    assert shown(True)
    assert not shown(False)
    bar = progress_bar(range(3), desc="x", unit="step", enabled=True)
    assert list(bar) == [0, 1, 2]
    assert bar.n == 3


def test_no_bar_where_nobody_watches_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.delenv("TOOLKIT_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "interactive", lambda: False)
    assert not shown(True)
    monkeypatch.setenv("TOOLKIT_PROGRESS", "1")
    assert shown(True)


def _kernel(monkeypatch: pytest.MonkeyPatch, allow_stdin: bool) -> None:
    """A fake IPython whose kernel's frontend does (Jupyter) or does not (nbconvert) take input."""
    kernel = types.SimpleNamespace(_allow_stdin=allow_stdin)
    shell = types.SimpleNamespace(kernel=kernel)
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: False))


def test_a_notebook_open_in_jupyter_is_interactive(monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel(monkeypatch, allow_stdin=True)
    assert interactive()


def test_a_notebook_executed_by_a_tool_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel(monkeypatch, allow_stdin=False)
    assert not interactive()


def test_disabled_bar_still_iterates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert list(progress_bar(range(4), desc="x", unit="step", enabled=False)) == [0, 1, 2, 3]
