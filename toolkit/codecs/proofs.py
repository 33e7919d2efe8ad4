"""What an input oracle proves: OIF's fill description of a filled output, its payload hash and
the proof series the input settler asks the oracle about.

Follows the Open Intents Framework (``openintentsframework/oif-contracts``):

- ``MandateOutputEncodingLib.encodeFillDescription(solver, orderId, timestamp, output)``:
  ``solver`` (bytes32) ‖ ``orderId`` (bytes32) ‖ ``timestamp`` (uint32, 4 bytes) ‖
  ``output.token`` (bytes32) ‖ ``output.amount`` (uint256) ‖ ``output.recipient`` (bytes32) ‖
  ``uint16`` length ‖ ``callbackData`` ‖ ``uint16`` length ‖ ``context``, packed (lengths above
  65,535 bytes revert ``CallOutOfRange``/``ContextOutOfRange`` there, and are refused here).
  The output's ``amount`` is the order's, not the final amount a Dutch auction paid.
- The payload hash is ``keccak256`` of that description (``InputSettlerBase._proofPayloadHash``).
- ``InputSettlerBase._validateFills`` asks ``IInputOracle(order.inputOracle)
  .efficientRequireProven(proofSeries)`` with, per output in order, four words:
  ``output.chainId``, ``output.oracle``, ``output.settler``, the payload hash. The oracle
  (``BaseInputOracle``) reads each group as ``(remoteChainId, remoteOracle, application,
  dataHash)``; a series whose length is not a multiple of 128 reverts ``NotDivisible``.

>>> out = MandateOutput("0x" + "01" * 32, "0x" + "02" * 32, 8453, "0x" + "03" * 32, 5,
...                     "0x" + "04" * 32)
>>> description = fill_description("0x" + "aa" * 32, "0x" + "bb" * 32, 1_760_000_000, out)
>>> len(description), description[64:68].hex()
(168, '68e77800')
>>> len(proof_series([(out, payload_hash(description))])) // 128
1
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import MandateOutput

__all__ = ["PROOF_WORDS", "fill_description", "payload_hash", "proof_series", "read_series"]

#: Bytes per proof of a series: four 32-byte words.
PROOF_WORDS = 32 * 4
_UINT16_MAX = 2**16 - 1


def _word(value: str, field: str) -> bytes:
    return bytes.fromhex(abi.bytes32(value, field)[2:])


def fill_description(solver: str, order_id: str, timestamp: int, output: MandateOutput) -> bytes:
    """OIF's fill description of ``output`` filled by ``solver`` at ``timestamp`` (see the
    module docstring); ``solver`` and ``order_id`` are ``0x`` + 64 hex."""
    if not isinstance(output, MandateOutput):
        raise InvalidValue("output", "must be a MandateOutput")
    abi.uint(timestamp, 32, "timestamp")
    for name, value in (("callbackData", output.callback_data), ("context", output.context)):
        if len(value) > _UINT16_MAX:
            raise InvalidValue(name, "must be at most 65535 bytes (a uint16 length)")
    return b"".join(
        (
            _word(solver, "solver"),
            _word(order_id, "orderId"),
            timestamp.to_bytes(4, "big"),
            _word(output.token, "token"),
            output.amount.to_bytes(32, "big"),
            _word(output.recipient, "recipient"),
            len(output.callback_data).to_bytes(2, "big"),
            output.callback_data,
            len(output.context).to_bytes(2, "big"),
            output.context,
        )
    )


def payload_hash(description: bytes) -> str:
    """The payload hash of a fill description (``0x`` + 64 hex)."""
    return abi.hexstr(keccak(abi.data(description, "description")))


def proof_series(proofs: Sequence[tuple[MandateOutput, str]]) -> bytes:
    """The series ``efficientRequireProven`` takes for ``(output, payload hash)`` pairs, in
    order: ``output.chainId ‖ output.oracle ‖ output.settler ‖ payloadHash`` each."""
    out = []
    for i, (output, digest) in enumerate(proofs):
        out.append(output.chain_id.to_bytes(32, "big"))
        out.append(_word(output.oracle, f"proofs[{i}].oracle"))
        out.append(_word(output.settler, f"proofs[{i}].settler"))
        out.append(_word(digest, f"proofs[{i}].payloadHash"))
    return b"".join(out)


def read_series(series: bytes) -> list[tuple[int, bytes, bytes, bytes]]:
    """A proof series as ``(remoteChainId, remoteOracle, application, dataHash)`` groups;
    :class:`InvalidValue` when its length is not a multiple of 128 bytes.

    >>> read_series(bytes(127))
    Traceback (most recent call last):
    ...
    toolkit.codecs.errors.InvalidValue: proofSeries: length 127 is not a multiple of 128
    """
    raw = abi.data(series, "proofSeries")
    if len(raw) % PROOF_WORDS:
        raise InvalidValue("proofSeries", f"length {len(raw)} is not a multiple of 128")
    return [
        (
            int.from_bytes(raw[i : i + 32], "big"),
            raw[i + 32 : i + 64],
            raw[i + 64 : i + 96],
            raw[i + 96 : i + 128],
        )
        for i in range(0, len(raw), PROOF_WORDS)
    ]
