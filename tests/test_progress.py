"""The toolkit's one progress bar: shown when asked, hidden by ``TQDM_DISABLE`` for nbval."""

import pytest

from toolkit.progress import progress_bar, shown


@pytest.mark.parametrize("value", ["1", "true", "True", "yes"])
def test_tqdm_disable_hides_every_bar(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TQDM_DISABLE", value)
    assert not shown(True)
    assert progress_bar(total=2, desc="x", unit="step", enabled=True).disable


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_bar_shows_when_asked_and_not_disabled(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TQDM_DISABLE", value)
    assert shown(True)
    assert not shown(False)
    bar = progress_bar(range(3), desc="x", unit="step", enabled=True)
    assert list(bar) == [0, 1, 2]
    assert bar.n == 3


def test_disabled_bar_still_iterates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert list(progress_bar(range(4), desc="x", unit="step", enabled=False)) == [0, 1, 2, 3]
