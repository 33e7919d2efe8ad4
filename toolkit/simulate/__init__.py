"""The simulation side's drivers: what plays other users on a service (the observation side,
:mod:`toolkit.collect`, :mod:`toolkit.report`, :mod:`toolkit.models` and :mod:`toolkit.store`,
imports nothing of it, nor of :mod:`toolkit.world`, :mod:`toolkit.engine` or
:mod:`toolkit.server`: the import-linter contract ``observation`` keeps it so).

:class:`Traffic` (:mod:`toolkit.simulate.traffic`) replays generated order, swap and credit flow
against an embedded or served service: the background market of ``make demo`` and
``toolkit serve --traffic``.
"""

from toolkit.simulate.traffic import Traffic

__all__ = ["Traffic"]
