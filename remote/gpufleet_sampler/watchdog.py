"""The watchdog on the instance: stops paying for a dead job while the laptop sleeps.

When the user arms it, the daemon evaluates the idle rule itself on every sample, with the
definition used everywhere in gpufleet: a GPU is idle when its utilization is under 5 % and
its memory used under 10 % of capacity (a lost GPU counts as idle), the host when all its
GPUs are. Idle for ``idle_s`` (the ``idle_billed`` rule's 15 minutes by default), it emits a
``watchdog`` event into the stream (so a laptop sees it on reconnect), waits ``grace_s``
(cancellable), then acts exactly once:

- ``provider``: the provider's stop through the instance's own scoped credentials, where the
  provider puts them in the instance: RunPod's ``RUNPOD_POD_ID`` + ``RUNPOD_API_KEY`` (a
  pod-scoped key) → REST v2 ``POST /v2/pods/{id}/action`` ``{"action": "stop"}`` (REST v1's
  ``POST /v1/pods/{id}/stop`` only where v2 answers 404: v1 is 410 Gone since 2026-11-15);
  vast.ai's ``CONTAINER_ID`` + ``CONTAINER_API_KEY`` → ``PUT /api/v0/instances/{id}/``
  ``{"state": "stopped"}``. The
  user's account key is never needed here. Where the daemon's own environment lacks them
  (an SSH session does not always inherit the container's variables) they are read from
  the environment of PID 1, the container's entry process;
- ``shutdown``: ``shutdown -h now`` (where the user allows it: AutoDL and most platforms
  without an API stop GPU billing on power-off);
- ``command``: the user's own command (argv), with ``GPUFLEET_WATCHDOG_*`` variables.

``dry_run`` records what it would do instead. Phases: ``disarmed``, ``watching``, ``pending``
(warned, grace running), ``cancelled`` (until the host works again), ``acting``, ``done``
(acted once for this alert; arm again to watch again). The state lives in the state dir
(``watchdog-<key>.json``) and survives a daemon restart: the idle start and the deadline are
kept on the monotonic clock with the boot id (after a reboot the watch starts over), and
``acting`` is written before the action runs, so a crash mid-action never runs it twice;
an action whose ``acting`` mark cannot be written is not run at all. Arming writes the state
or fails with the reason (a full disk must not leave a watchdog that says "watching" and is
gone after a restart), and first checks that the action can run (``watchdog_ready``): a
watchdog that cannot act refuses to arm (a dry run arms and says so). The time a daemon was
down is never counted as idle time: on load, the idle start and the deadline move forward
by the time since the last heartbeat the daemon wrote.

While armed, ``hello`` and ``status`` carry the watchdog's state, so the laptop app skips
its own provider action for the same alert: the two never both act.

Python 3.8, stdlib only.
"""

import contextlib
import json
import os
import shlex
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from gpufleet_sampler import protocol, protocol_schema, watchdog_ready
from gpufleet_sampler.procs import procfs

if TYPE_CHECKING:
    import threading

IDLE_UTIL_PCT = 5.0
IDLE_MEM_FRAC = 0.10
DEFAULT_IDLE_S = 900.0  # the laptop's idle_billed rule: for_s = 900
DEFAULT_GRACE_S = 300.0
DEFAULT_CLEAR_S = 30.0  # the laptop's idle_billed rule: clear_for_s = 30
ACTIONS = ("provider", "shutdown", "command")
PHASES = ("disarmed", "watching", "pending", "cancelled", "acting", "done")
HTTP_TIMEOUT_S = 20.0
HTTP_TRIES = 3
COMMAND_TIMEOUT_S = 120.0
HEARTBEAT_S = 60.0  # while idle time accrues: how much a crash may leave uncounted


def _num(cfg: Dict[str, Any], key: str, default: float, low: float) -> float:
    v = cfg.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < low:
        raise ValueError("watchdog: `{}` must be a number >= {:g}, not {!r}".format(key, low, v))
    return float(v)


def parse_config(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """A validated copy of an arm request's config; ValueError with one clear line."""
    action = cfg.get("action", "provider")
    if action not in ACTIONS:
        raise ValueError(
            "watchdog: `action` must be one of {}, not {!r}".format(", ".join(ACTIONS), action)
        )
    command = cfg.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if action == "command":
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(x, str) for x in command)
        ):
            raise ValueError("watchdog: the `command` action needs a command to run")
    else:
        command = None
    api_url = cfg.get("api_url")
    if api_url is not None and (
        not isinstance(api_url, str) or not api_url.startswith(("http://", "https://"))
    ):
        raise ValueError("watchdog: `api_url` must be an http(s) URL, not {!r}".format(api_url))
    return {
        "action": action,
        "command": command,
        "idle_s": _num(cfg, "idle_s", DEFAULT_IDLE_S, 0.0),
        "grace_s": _num(cfg, "grace_s", DEFAULT_GRACE_S, 0.0),
        "clear_s": _num(cfg, "clear_s", DEFAULT_CLEAR_S, 0.0),
        "dry_run": bool(cfg.get("dry_run", False)),
        "api_url": api_url,
    }


def host_idle(rows: List[List[Any]], mem_totals: Dict[int, float]) -> Optional[bool]:
    """True when every GPU is idle, False when one works, None without evidence."""
    iu = protocol.ROW_POS["util_gpu_pct"]
    im = protocol.ROW_POS["mem_used_bytes"]
    il = protocol.ROW_POS["lost"]
    if not rows:
        return None
    for r in rows:
        if len(r) > il and r[il]:
            continue  # a lost GPU does no work
        util = r[iu] if len(r) > iu else None
        if util is None or util >= IDLE_UTIL_PCT:
            return False  # unknown utilization is no evidence of idleness
        mem = r[im] if len(r) > im else None
        total = mem_totals.get(int(r[0]))
        if mem is not None and total and mem >= IDLE_MEM_FRAC * total:
            return False
    return True


def _proc1_env() -> Dict[str, str]:
    try:
        with open("/proc/1/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    out = {}
    for item in raw.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep:
            out[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
    return out


def _http(method: str, url: str, body: Optional[bytes], key: str) -> Tuple[Optional[int], str]:
    """(status, outcome) of one call, with a few tries on 429, 5xx and network errors; never
    the key in the text."""
    status: Optional[int] = None
    what = ""
    for attempt in range(HTTP_TRIES):
        if attempt:
            time.sleep(2.0 * attempt)
        status, what = watchdog_ready.request(method, url, body, key)
        if status is not None and status != 429 and status < 500:
            return status, what
    return status, "{} after {} tries".format(what, HTTP_TRIES)


def provider_stop(calls: watchdog_ready.ProviderCalls) -> Tuple[bool, str]:
    """(ok, outcome) of the provider's stop of this instance."""
    verdict, what = watchdog_ready.ask(calls.label, calls.stop, calls.key, _http)
    if verdict == "refused":
        return False, what + " (the key was refused)"
    return verdict == "ok", what


class Watchdog(object):
    """The watchdog of one daemon: ``observe`` each sample, act at most once per alert."""

    def __init__(
        self,
        path: str,
        mem_totals: Optional[Dict[int, float]] = None,
        env: Optional[Dict[str, str]] = None,
    ) -> None:
        self.path = path
        self.mem_totals = dict(mem_totals or {})
        self.env = env
        self.boot_id = procfs.boot_id()
        self.state: Dict[str, Any] = {"phase": "disarmed"}
        # Events made by requests rather than by samples: the daemon sends them on its tick.
        self.queued: List[Dict[str, Any]] = []
        self._thread: Optional["threading.Thread"] = None
        self._result: Optional[Tuple[bool, str]] = None
        self.changed = False  # hello must be rebuilt
        # The periodic check that the action can still run (a revoked key, a changed API):
        # at the first sample after a (re)start, then every RECHECK_S, off the daemon's loop.
        self._checked_mono = -float("inf")
        self._check: Optional[Tuple["threading.Thread", List[Dict[str, Any]]]] = None
        self._beat_mono = -float("inf")
        self.load()

    # -- persistence --

    def load(self) -> None:
        try:
            with open(self.path, "r", encoding="utf-8") as f:
                st = json.load(f)
        except (OSError, ValueError):
            return
        if not isinstance(st, dict) or st.get("phase") not in PHASES:
            return
        if st.get("phase") == "acting":
            # The daemon died while acting: the action may have run. Never run it again.
            st["phase"] = "done"
            st["outcome"] = "unknown: the daemon stopped while the action ran"
        if st.get("boot_id") != self.boot_id and st["phase"] in (
            "watching",
            "pending",
            "cancelled",
        ):
            # Another boot: the monotonic times mean nothing now; watch from scratch.
            st["phase"] = "watching"
            st.pop("idle_since_mono", None)
            st.pop("deadline_mono", None)
            st.pop("busy_since_mono", None)
        self._skip_downtime(st)
        self.state = st

    def _skip_downtime(self, st: Dict[str, Any]) -> None:
        """Moves the idle start and the deadline forward by the time no daemon watched:
        nobody saw whether the host was idle then (same boot only; another boot starts
        over above)."""
        last = st.get("updated_mono")
        if st.get("boot_id") != self.boot_id or not isinstance(last, (int, float)):
            return
        gap = max(0.0, time.monotonic() - float(last))
        for k in ("idle_since_mono", "deadline_mono"):
            if isinstance(st.get(k), (int, float)):
                st[k] = float(st[k]) + gap
        if isinstance(st.get("deadline_t"), (int, float)):
            st["deadline_t"] = round(float(st["deadline_t"]) + gap, 3)

    def save(self, sync: bool = True) -> Optional[str]:
        """Atomically; ``sync`` (fsync) for phase changes, not for the idle start, which may
        change every few seconds on a host whose load comes and goes."""
        self.state["boot_id"] = self.boot_id
        self.state["updated_t"] = round(time.time(), 3)
        self.state["updated_mono"] = round(time.monotonic(), 3)
        tmp = "{}.{}.tmp".format(self.path, os.getpid())
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.state, f)
                if sync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            # The caller decides: arming fails, an action is not run; a tick carries on.
            return "{} ({})".format(e.strerror or type(e).__name__, self.path)
        finally:
            if sync:
                self.changed = True  # what hello shows changed (the idle start is not in it)
        return None

    # -- requests --

    @property
    def phase(self) -> str:
        return str(self.state.get("phase"))

    @property
    def armed(self) -> bool:
        return self.phase != "disarmed"

    def summary(self) -> Dict[str, Any]:
        """What hello and status carry (no secrets: the config has none)."""
        st = self.state
        cfg = st.get("config") or {}
        out = {
            "armed": self.armed,
            "phase": self.phase,
            "action": cfg.get("action"),
            "dry_run": cfg.get("dry_run"),
            "idle_s": cfg.get("idle_s"),
            "grace_s": cfg.get("grace_s"),
            "alert": st.get("alert"),
            "deadline_t": st.get("deadline_t"),
            "acted": st.get("acted"),
            "ready": st.get("ready"),
        }
        return {k: v for k, v in out.items() if v is not None}

    def arm(self, cfg: Dict[str, Any]) -> Dict[str, Any]:
        config = parse_config(cfg)
        ready = watchdog_ready.readiness(config, self._env())
        if not ready["ok"] and not config["dry_run"]:
            raise ValueError("watchdog: not armed: " + ready["reason"])
        previous = self.state
        self.state = {
            "phase": "watching",
            "config": config,
            "armed_t": round(time.time(), 3),
            "ready": ready,
        }
        self._checked_mono = time.monotonic()
        err = self.save()
        if err is not None:
            self.state = previous
            raise ValueError(
                "watchdog: not armed: its state could not be written: {}; free space in the "
                "state directory and arm again".format(err)
            )
        return self.summary()

    def disarm(self) -> Dict[str, Any]:
        if self.phase == "acting":
            raise ValueError("watchdog: the action is running; it cannot be disarmed now")
        was_pending = self.phase == "pending"
        self.state = {"phase": "disarmed", "acted": self.state.get("acted")}
        self.save()
        if was_pending:
            self.queued.append(self._event("disarmed before its deadline: nothing done"))
        return self.summary()

    def cancel(self) -> Dict[str, Any]:
        if self.phase != "pending":
            raise ValueError(
                "watchdog: nothing to cancel (phase {}): only a pending action can be "
                "cancelled".format(self.phase)
            )
        self.state["phase"] = "cancelled"
        self.state["cancelled_t"] = round(time.time(), 3)
        self.state.pop("deadline_mono", None)
        self.save()
        # Into the stream at the next tick: a laptop's warning ends now, not at the deadline.
        self.queued.append(self._event("cancelled: nothing will be done"))
        return self.summary()

    def take_queued(self) -> List[Dict[str, Any]]:
        """The events a request made (cancel, disarm while pending), for the stream."""
        out, self.queued = self.queued, []
        return out

    def request(self, cmd: str, cfg: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        if cmd == "arm":
            return self.arm(cfg or {})
        if cmd == "disarm":
            return self.disarm()
        if cmd == "cancel":
            return self.cancel()
        if cmd == "status":
            return self.summary()
        raise ValueError("watchdog: unknown command {!r} (arm, disarm, cancel, status)".format(cmd))

    # -- the watch --

    def _event(self, message: str, **fields: Any) -> Dict[str, Any]:
        own = {"phase": self.phase, "alert": self.state.get("alert")}  # type: Dict[str, Any]
        own.update(fields)
        ev = {"kind": protocol.KIND_EVENT}  # type: Dict[str, Any]
        ev.update(protocol_schema.event(protocol.EVENT_WATCHDOG, None, None, message, **own))
        return ev

    def observe(self, rows: List[List[Any]], mono: float, wall: float) -> List[Dict[str, Any]]:
        """One sample's rows; the events (without seq) to put into the stream."""
        phase = self.phase
        if phase in ("disarmed", "done"):
            return []
        if phase == "acting":
            return self._collect()
        cfg = self.state.get("config") or {}
        idle = host_idle(rows, self.mem_totals)
        if idle is True:
            self._heartbeat(mono)
        if phase in ("watching", "cancelled"):
            changed = self._recheck(cfg, mono)
            if changed:
                return changed
        if phase in ("pending", "cancelled"):
            # Like the laptop's rule (clear_for_s): the alert ends only once the host has
            # worked for clear_s, not on one busy sample (a daemon restart, a short test).
            if idle is False:
                busy = self.state.setdefault("busy_since_mono", mono)
                if mono - float(busy) >= float(cfg.get("clear_s", DEFAULT_CLEAR_S)):
                    self.state["phase"] = "watching"
                    for k in ("idle_since_mono", "deadline_mono", "busy_since_mono"):
                        self.state.pop(k, None)
                    self.save()
                    if phase == "pending":
                        return [self._event("the host is working again: nothing done")]
                return []
            self.state.pop("busy_since_mono", None)
        if phase == "cancelled":
            return []
        if phase == "pending":
            if idle is not True:
                return []  # busy, not for long enough yet, or no evidence: wait
            if mono >= float(self.state.get("deadline_mono", mono)):
                return self._start_action(cfg, wall)
            return []
        # watching
        if idle is not True:
            if "idle_since_mono" in self.state:
                self.state.pop("idle_since_mono")
                self.save(sync=False)
            return []
        since = self.state.get("idle_since_mono")
        if since is None:
            self.state["idle_since_mono"] = mono
            self.state["idle_since_t"] = round(wall, 3)
            self.save(sync=False)
            since = mono
        if mono - float(since) < float(cfg.get("idle_s", DEFAULT_IDLE_S)):
            return []
        grace = float(cfg.get("grace_s", DEFAULT_GRACE_S))
        self.state["phase"] = "pending"
        self.state["alert"] = "idle_billed@{}".format(self.state.get("idle_since_t"))
        self.state["deadline_mono"] = mono + grace
        self.state["deadline_t"] = round(wall + grace, 3)
        self.save()
        what = self.describe(cfg)
        return [
            self._event(
                "idle for {:.0f} s: {} in {:.0f} s unless cancelled".format(
                    mono - float(since), what, grace
                ),
                action=cfg.get("action"),
                deadline_t=self.state["deadline_t"],
                dry_run=bool(cfg.get("dry_run")),
            )
        ]

    def _heartbeat(self, mono: float) -> None:
        """While idle time accrues, the state's time at most HEARTBEAT_S old: what a restart
        subtracts as downtime (``_skip_downtime``)."""
        if mono - self._beat_mono >= HEARTBEAT_S:
            self._beat_mono = mono
            self.save(sync=False)

    def _recheck(self, cfg: Dict[str, Any], mono: float) -> List[Dict[str, Any]]:
        """An event when the action became impossible (or possible again) since the last
        check; the check itself runs in a thread (an HTTP call may take seconds)."""
        if self._check is not None:
            thread, result = self._check
            if thread.is_alive() or not result:
                return []
            self._check = None
            ready = result[0]
            before = self.state.get("ready") or {}
            self.state["ready"] = ready
            if bool(before.get("ok", True)) == bool(ready["ok"]):
                self.save(sync=False)
                return []
            self.save()
            head = "the action can run again: " if ready["ok"] else "the action can no longer run: "
            reason = str(ready["reason"])
            return [self._event(head + reason, ready=bool(ready["ok"]), outcome=reason)]
        if cfg.get("dry_run"):
            return []
        # Imported here: the re-check runs every half hour; threading only then.
        import threading

        if mono - self._checked_mono < watchdog_ready.RECHECK_S:
            return []
        self._checked_mono = mono
        out: List[Dict[str, Any]] = []
        env = self._env()
        thread = threading.Thread(
            target=lambda: out.append(watchdog_ready.readiness(cfg, env)), daemon=True
        )
        self._check = (thread, out)
        thread.start()
        return []

    def describe(self, cfg: Dict[str, Any]) -> str:
        action = cfg.get("action")
        if action == "shutdown":
            what = "power off (shutdown -h now)"
        elif action == "command":
            what = "run {}".format(" ".join(shlex.quote(x) for x in cfg.get("command") or []))
        else:
            calls = watchdog_ready.provider_calls(self._env(), cfg.get("api_url"))
            what = (
                "stop the instance through {} ({} {})".format(
                    calls.provider, calls.stop[0][0], calls.stop[0][1]
                )
                if calls
                else "stop the instance through its provider (no credentials found)"
            )
        return ("would " if cfg.get("dry_run") else "will ") + what

    def _env(self) -> Dict[str, str]:
        env = dict(self.env) if self.env is not None else dict(os.environ)
        if not any(k in env for k in ("RUNPOD_POD_ID", "CONTAINER_ID")):
            for k, v in _proc1_env().items():
                env.setdefault(k, v)
        return env

    def _start_action(self, cfg: Dict[str, Any], wall: float) -> List[Dict[str, Any]]:
        self.state["phase"] = "acting"
        self.state["acting_t"] = round(wall, 3)
        err = self.save()  # before acting: a crash from here on never acts twice
        if err is not None:
            # Without the mark a crash mid-action would run it again on restart: not run.
            self._result = (
                False,
                "not run: the watchdog could not record that it was acting ({}); free space "
                "in the state directory".format(err),
            )
            return self._collect()
        if cfg.get("dry_run"):
            self._result = (True, "dry run: " + self.describe(cfg))
            return self._collect()
        # threading and subprocess are imported only when an action runs: a daemon that
        # watches for days need not carry them.
        import threading

        run = self._runner(cfg)
        self._thread = threading.Thread(target=self._run, args=(run,), daemon=True)
        self._thread.start()
        return []

    def _runner(self, cfg: Dict[str, Any]) -> Callable[[], Tuple[bool, str]]:
        action = cfg.get("action")
        alert = str(self.state.get("alert"))
        if action == "provider":
            calls = watchdog_ready.provider_calls(self._env(), cfg.get("api_url"))
            if calls is None:
                return lambda: (
                    False,
                    "no provider credentials in the instance (RUNPOD_POD_ID + RUNPOD_API_KEY or "
                    "CONTAINER_ID + CONTAINER_API_KEY)",
                )
            found: watchdog_ready.ProviderCalls = calls  # narrowed, for the closure
            return lambda: provider_stop(found)
        argv = ["shutdown", "-h", "now"] if action == "shutdown" else list(cfg["command"])
        env = dict(os.environ)
        env.update({"GPUFLEET_WATCHDOG_ALERT": alert, "GPUFLEET_WATCHDOG_ACTION": str(action)})

        def run() -> Tuple[bool, str]:
            import subprocess

            try:
                p = subprocess.run(
                    argv,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    timeout=COMMAND_TIMEOUT_S,
                )
            except (OSError, subprocess.TimeoutExpired) as e:
                return False, "{}: {}".format(argv[0], e)
            tail = p.stdout.decode("utf-8", "replace").strip()[-300:]
            return p.returncode == 0, "exit status {}{}".format(
                p.returncode, ": " + tail if tail else ""
            )

        return run

    def _run(self, run: Callable[[], Tuple[bool, str]]) -> None:
        try:
            self._result = run()
        except Exception as e:  # a failing action is an outcome, not a dead daemon
            self._result = (False, repr(e))

    def _collect(self) -> List[Dict[str, Any]]:
        """Once the action finished: record it, persist, and say so in the stream."""
        if self._result is None:
            if self._thread is None:
                # Loaded as "acting" from a daemon that died: handled by load(). Here only
                # when the thread never started.
                self._result = (False, "the action did not start")
            else:
                return []
        ok, outcome = self._result
        self._result = None
        self._thread = None
        cfg = self.state.get("config") or {}
        self.state["phase"] = "done"
        self.state["acted"] = {
            "t": round(time.time(), 3),
            "action": cfg.get("action"),
            "ok": ok,
            "outcome": outcome,
            "dry_run": bool(cfg.get("dry_run")),
            "alert": self.state.get("alert"),
        }
        self.save()
        return [
            self._event(
                "{}: {}".format("done" if ok else "the action failed", outcome),
                action=cfg.get("action"),
                ok=ok,
                outcome=outcome,
                dry_run=bool(cfg.get("dry_run")),
            )
        ]

    def wait(self, timeout: float) -> None:
        """For the daemon's shutdown: let a running action finish (bounded)."""
        t = self._thread
        if t is not None:
            t.join(timeout)


def state_path(state_dir: str, key: str) -> str:
    return os.path.join(state_dir, "watchdog-{}.json".format(key))
