"""liblsl configuration, set in code before liblsl starts.

liblsl reads its configuration once, the first time it needs it (creating an outlet, an inlet or
resolving). :func:`configure_lsl` must therefore run before any of those; calling it later has
no effect on the running library and raises.
"""

from __future__ import annotations

import os

LOOPBACK_CONFIG = """\
[ports]
IPv6 = disable

[multicast]
ResolveScope = machine

[lab]
KnownPeers = {127.0.0.1}

[log]
level = -2
"""

_state: dict[str, str | None] = {"mode": None}


def configure_lsl(mode: str = "loopback") -> str:
    """Configure liblsl for this process.

    Parameters
    ----------
    mode : {"loopback", "lab"}
        ``"loopback"`` keeps every stream on this machine (127.0.0.1 only, IPv6 off): the mode
        of the tests and the demo. ``"lab"`` leaves liblsl's own configuration (its
        ``lsl_api.cfg`` search path or ``$LSLAPICFG``) in charge, for a lab network.

    Returns
    -------
    mode : str
        The mode in force.
    """
    if mode not in ("loopback", "lab"):
        raise ValueError(f"Unknown LSL mode {mode!r}; expected 'loopback' or 'lab'.")
    current = _state["mode"]
    if current is not None:
        if current != mode:
            raise RuntimeError(
                f"liblsl is already configured in {current!r} mode in this process; "
                f"it reads its configuration once and cannot switch to {mode!r}."
            )
        return mode
    if mode == "loopback" and "LSLAPICFG" not in os.environ:
        import pylsl

        pylsl.set_config_content(LOOPBACK_CONFIG)
    _state["mode"] = mode
    return mode
