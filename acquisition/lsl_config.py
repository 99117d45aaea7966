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

#: The liblsl configurations a process can run in.
LSL_MODES = ("loopback", "lab")
#: The mode of every command and session file that does not name one: nothing leaves this
#: machine unless asked (a simulated or replayed stream never reaches another machine's
#: recorder), and it works without a network. Streams of other machines need ``"lab"``.
DEFAULT_LSL_MODE = "loopback"

_state: dict[str, str | None] = {"mode": None}


def configure_lsl(mode: str = DEFAULT_LSL_MODE) -> str:
    """Configure liblsl for this process.

    Parameters
    ----------
    mode : {"loopback", "lab"}
        ``"loopback"`` (the default, :data:`DEFAULT_LSL_MODE`) keeps every stream on this
        machine (127.0.0.1 only, IPv6 off): streams of other programs on this machine are
        found, nothing is announced to the network. ``"lab"`` leaves liblsl's own
        configuration (its ``lsl_api.cfg`` search path or ``$LSLAPICFG``) in charge, for
        streams of other machines on a lab network.

    Returns
    -------
    mode : str
        The mode in force.
    """
    if mode not in LSL_MODES:
        raise ValueError(f"Unknown LSL mode {mode!r}; expected one of {LSL_MODES}.")
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
