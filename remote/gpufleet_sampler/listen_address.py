"""Listen addresses as users write them (``HOST:PORT``, ``[V6]:PORT``, ``:PORT``), parsed the
same way by the sampler's exporter and the laptop's own listeners.

Python 3.8, stdlib only.
"""

from typing import Tuple

from gpufleet_sampler import metric_names as pn

DEFAULT_LISTEN = "127.0.0.1:{}".format(pn.DEFAULT_SAMPLER_PORT)


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def parse_listen(text: str) -> Tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``:PORT`` (loopback) -> (host, port); ValueError."""
    text = text.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ValueError("--listen {!r}: expected [ADDRESS]:PORT".format(text))
        port_text = rest[1:]
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            raise ValueError(
                "--listen {!r}: expected HOST:PORT, e.g. {}".format(text, DEFAULT_LISTEN)
            )
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError("--listen {!r}: the port must be a number".format(text)) from None
    if not 0 <= port <= 65535:
        raise ValueError("--listen {!r}: the port must be 0..65535".format(text))
    return host or "127.0.0.1", port
