"""Starting ``pysse-relay`` or ``python build.py serve``: every check a start can fail, run
before the banner and before anything slow (``build.py serve`` builds the site after it,
for minutes).

Each failure is a :class:`~pysse.errors.ConfigError` whose message names the setting and
what to do; the commands print it as one line on stderr and exit with status 2
(``command_line.exit_with``), never a traceback. In the order a person fixes them: the
relay's settings (``config_from_args``: key and secret variables, the upstream URL, origins,
the store URL), then what those settings point at (the CA bundle, the store: the ``redis``
package, a Redis that answers), then the port and host to listen on.
"""

from __future__ import annotations

import argparse
import socket
import ssl
from dataclasses import dataclass

from ..errors import ConfigError
from .config import RelayConfig, config_from_args
from .forward import Forwarder, upstream_pool
from .serve import listen

__all__ = ["Startup", "start_relay", "start_server"]


@dataclass
class Startup:
    """What a checked start hands to the server: the relay (None: ``build.py serve`` without
    ``--upstream``, the demo only), its forwarder (pools, answers, store: made and checked
    once, then served), and the sockets already listening."""

    relay: RelayConfig | None
    forwarder: Forwarder | None
    sockets: list[socket.socket]


def start_relay(cfg: RelayConfig) -> Forwarder:
    """The relay's way upstream, made from ``cfg`` now rather than at the first request: a
    store whose package is missing or whose Redis does not answer, a CA bundle that cannot
    be read or holds no certificate is a ``ConfigError``."""
    answers = cfg.answers()
    if answers is not None:
        answers.store.check_at_start()
    try:
        pool = upstream_pool(cfg)
    except OSError as exc:
        if not cfg.ca_bundle:  # not a setting's fault: let it say what it is
            raise
        raise ConfigError(_unusable_ca_bundle(cfg.ca_bundle, exc)) from None
    return Forwarder(cfg, pool, answers)


def _unusable_ca_bundle(path: str, exc: OSError) -> str:
    fix = "give the PEM file of the authorities that signed the upstream's certificate"
    if isinstance(exc, ssl.SSLError):  # read, but not PEM certificates
        return f"--ca-bundle {path}: no certificate in it ({exc.reason or exc}): {fix}"
    return f"--ca-bundle {path}: cannot be read ({exc.strerror or exc}): {fix}"


def start_server(args: argparse.Namespace, relay: bool) -> Startup:
    """The checks of a start from parsed options (``--host``, ``--port`` and, with ``relay``,
    the relay's options of ``config.add_relay_arguments``). Sockets are made last: a start
    that fails earlier holds no port."""
    cfg = config_from_args(args) if relay else None
    forwarder = start_relay(cfg) if cfg is not None else None
    return Startup(cfg, forwarder, listen(args.host, args.port))
