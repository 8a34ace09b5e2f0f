"""The per-user sampler daemon and its clients: ``daemon``, ``attach`` and ``stop``.

One daemon per user per host and per (backend, scenario, seed), so several simulated hosts
can share one machine. It lives in a state dir (default ``~/.cache/gpufleet``, mode 0700; not
/tmp, not $XDG_RUNTIME_DIR, which logind empties at logout) holding, per key::

    daemon-<key>.lock   flock'ed for the daemon's whole life (and holds its pid)
    d-<hash>.sock       the Unix socket clients attach to (short name: sun_path is 108 bytes)
    daemon-<key>.json   state: pid, run_id, last seq, Xids seen (read by ``check``)
    daemon-<key>.log    the detached daemon's stdout / stderr

The daemon detaches from the SSH session that started it (a new session, stdio to its log),
so it keeps sampling while the laptop sleeps or the link is down. Everything it emits goes
into a ``Ring`` (an hour raw, a day thinned); ``attach --from-seq N`` streams ``hello``, every
held message after N (with a ``note`` event saying what is missing, if anything), then live,
until the client goes away. A restarted daemon has a new ``run_id`` and continues the
sequence numbers of the previous run, so a client's N from before the restart still means
"what came after", and the gap shows as such.

Cheap by construction: one thread, one ``select`` with a timeout up to the next tick (no busy
loop, no process spawned per tick); clients are fed from shared line objects through
non-blocking sockets; a client that does not keep up is dropped rather than ever blocking the
sampler.

Socket requests are one JSON line: ``{"op": "attach", "from_seq": N}`` (optionally with
``"watch_links": S``), ``{"op": "status"}``, ``{"op": "watch_links", "seconds": S}`` (the
per-link NVLink view is open: read per-link values every 5 s for S seconds, whatever the CPU
plan) or ``{"op": "stop"}``. An attached client may send more ``watch_links`` lines on its
connection (``attach`` passes on the request lines its client writes on its stdin: the
laptop renews its ask over the same SSH channel); anything else there is ignored.

Python 3.8, stdlib only.
"""
