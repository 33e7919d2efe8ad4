"""The input oracle on every scenario chain: fills on other chains, attested, for the escrow.

An :class:`InputOracle` sits at each scenario chain's ``oracle`` address (the Polymer oracle's,
the same on every chain in the registry). It follows OIF's ``BaseInputOracle`` and
``PolymerOracle`` (``openintentsframework/oif-contracts``, ``src/oracles/BaseInputOracle.sol``,
``src/oracles/polymer/PolymerOracle.sol``):

- attestations are kept as ``(remoteChainId, remoteOracle, application, payloadHash) → true``;
  ``isProven(remoteChainId, remoteOracle, application, dataHash)`` reads one;
  ``efficientRequireProven(proofSeries)`` reverts ``NotDivisible(uint256,uint256)`` when the
  series is not whole 128-byte groups and ``NotProven()`` unless every group is attested (an
  empty series is proven), which is what the escrow's ``finalise`` asks
  (:mod:`toolkit.world.evm.settlers`);
- ``receiveMessage`` takes a filled event, as Polymer's oracle does once its prover has
  validated a proof of the log: the event must be the output settler's ``OutputFilled``
  (``WrongEventSignature()``), its orderId is topic 1, its data gives the solver, timestamp
  and output, and the oracle records the payload hash of their fill description
  (:mod:`toolkit.codecs.proofs`) under the event's chain, **itself** as the remote oracle (as
  Polymer's stores proofs under ``address(this)``: orders name the origin's oracle in
  ``output.oracle``) and the emitting contract as the application, with ``OutputProven``.

The simulation does not verify a proof: the chains' contracts see only their own chain. The
attestation messenger's account (:data:`ATTESTER`, an off-chain actor like Polymer's or
Wormhole's relayers: :mod:`toolkit.world.messenger`) is the only sender accepted
(``UnknownAttester(address)``, our own error), and it sends only events it read from a
scenario chain's blocks.

>>> from toolkit.scenario import load_scenario
>>> [type(c).__name__ for c in InputOracle.build(load_scenario("single-pool"), 1)]
['InputOracle']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

import eth_abi
from eth_abi.exceptions import DecodingError
from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import OUTPUT_TYPE, MandateOutput
from toolkit.codecs.events import EVENTS
from toolkit.codecs.proofs import PROOF_WORDS, fill_description, payload_hash, read_series
from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import Contract, Message, Revert, register

__all__ = ["ATTESTER", "InputOracle"]

#: The attestation messenger's account (a simulation address, derived from a fixed phrase).
ATTESTER: Final = abi.hexstr(keccak(text="toolkit attestation messenger")[12:])
_FILLED: Final = EVENTS["outputSettler.OutputFilled"].topic0
_FILLED_DATA: Final = ["bytes32", "uint32", OUTPUT_TYPE, "uint256"]


class InputOracle(Contract):
    """OIF's ``BaseInputOracle`` with Polymer's ``receiveMessage`` (see the module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "inputOracle.isProven": "is_proven",
        "inputOracle.efficientRequireProven": "require_proven",
        "inputOracle.receiveMessage": "receive_message",
    }

    def __init__(self, address: str, chain_id: int) -> None:
        super().__init__(address)
        self.chain_id = chain_id
        #: ``(remoteChainId, remoteOracle, application, payloadHash)`` of every attestation.
        self.attestations: dict[tuple[int, bytes, bytes, bytes], bool] = {}

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        chain = scenario.chain(chain_id)
        taken = {chain.escrow.lower(), chain.output_settler.lower()}
        taken |= {t.address.lower() for t in scenario.tokens if t.chain == chain_id}
        if chain.oracle.lower() in taken:
            return []  # a scenario naming a settler or a token as its oracle keeps that contract
        return [cls(chain.oracle, chain_id)]

    def _proven(self, chain_id: int, oracle: bytes, application: bytes, digest: bytes) -> bool:
        return self.attestations.get((chain_id, oracle, application, digest), False)

    def is_proven(
        self,
        msg: Message,
        remoteChainId: int,
        remoteOracle: bytes,
        application: bytes,
        dataHash: bytes,
    ) -> tuple[Any, ...]:
        return (self._proven(remoteChainId, remoteOracle, application, dataHash),)

    def require_proven(self, msg: Message, proofSeries: bytes) -> tuple[Any, ...]:
        try:
            series = read_series(proofSeries)
        except InvalidValue:
            raise Revert.custom(
                "NotDivisible(uint256,uint256)", len(proofSeries), PROOF_WORDS
            ) from None
        if not all(self._proven(*proof) for proof in series):
            raise Revert.custom("NotProven()")
        return ()

    def receive_message(
        self, msg: Message, chainId: int, emitter: str, topics: list[bytes], data: bytes
    ) -> tuple[Any, ...]:
        if msg.sender != ATTESTER:
            raise Revert.custom("UnknownAttester(address)", msg.sender)
        if len(topics) != 2 or abi.hexstr(bytes(topics[0])) != _FILLED:
            raise Revert.custom("WrongEventSignature()")
        try:
            solver, timestamp, output, _ = eth_abi.decode(_FILLED_DATA, bytes(data))
            mandate = MandateOutput.from_abi(output)
            description = fill_description(
                abi.hexstr(solver), abi.hexstr(bytes(topics[1])), timestamp, mandate
            )
        except (DecodingError, InvalidValue, ValueError):
            raise Revert(b"", "malformed OutputFilled data") from None
        digest = bytes.fromhex(payload_hash(description)[2:])
        remote_oracle = bytes(12) + bytes.fromhex(self.address[2:])
        application = bytes(12) + bytes.fromhex(emitter[2:])
        msg.run.write(self.attestations, (chainId, remote_oracle, application, digest), True)
        msg.run.emit(
            self.address, "inputOracle.OutputProven", chainId, remote_oracle, application, digest
        )
        return ()


register(InputOracle)

assert all(key in gas.EXECUTION for key in InputOracle.functions)
