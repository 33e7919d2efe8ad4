"""Scenario keys renamed to the unit-suffix convention, old key path -> new key path.

One explicit table, used by the document validation only: an old key is an error that names
the new one (``windows.quote_seconds: renamed to windows.quote_s``), never an alias, so each
setting keeps one name. ``[]`` stands for any array index. Stored data is not concerned: no
store table or run parameter holds these keys.

>>> renamed_key("chains[2].confirmation_seconds")
'chains[2].confirmation_s'
>>> renamed_key("windows.quote_s") is None
True
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["RENAMED_KEYS", "renamed_key"]

RENAMED_KEYS: Final[dict[str, str]] = {
    "windows.quote_seconds": "windows.quote_s",
    "windows.order_seconds": "windows.order_s",
    "windows.borrow_quote_seconds": "windows.borrow_quote_s",
    "windows.exclusive_seconds": "windows.exclusive_s",
    "windows.open_seconds": "windows.open_s",
    "windows.same_chain_expiry_buffer_seconds": "windows.same_chain_expiry_buffer_s",
    "windows.cross_chain_expiry_buffer_seconds": "windows.cross_chain_expiry_buffer_s",
    "windows.settlement_delay_seconds": "windows.settlement_delay_s",
    "chains[].confirmation_seconds": "chains[].confirmation_s",
    "chains[].fill_seconds": "chains[].fill_s",
    "chains[].block_time": "chains[].block_time_s",
    "credit.revoke_delay_seconds": "credit.revoke_delay_s",
    "credit.billing_cycle_seconds": "credit.billing_cycle_s",
    "credit.grace_seconds": "credit.grace_s",
    "credit.collateral[].vault.redeem_delay_seconds": "credit.collateral[].vault.redeem_delay_s",
}

_INDEX: Final = re.compile(r"\[\d+\]")


def renamed_key(path: str) -> str | None:
    """The new key path of an old one (its indices kept); None when ``path`` was not renamed."""
    new = RENAMED_KEYS.get(_INDEX.sub("[]", path))
    if new is None:
        return None
    old_key, new_key = path.rsplit(".", 1)[-1], new.rsplit(".", 1)[-1]
    return path.removesuffix(old_key) + new_key
