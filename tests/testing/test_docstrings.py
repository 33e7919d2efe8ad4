"""Every public name of toolkit.testing shows an example (make unit runs them all)."""

from __future__ import annotations


def test_every_public_function_has_an_example() -> None:
    import toolkit.testing as testing

    for name in (
        "VirtualClock",
        "FaultMix",
        "FaultProxy",
        "LogLimit",
        "WebhookReceiver",
        "assert_frame_close",
        "assert_rate_within",
        "embedded_service",
        "format_frame",
    ):
        doc = getattr(testing, name).__doc__ or ""
        assert ">>>" in doc, f"{name} has no example"
