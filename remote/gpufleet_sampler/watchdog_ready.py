"""Whether the watchdog's action can run, checked when it is armed and again while it watches.

A watchdog that arms for a stop it cannot carry out would report "watching" and fail while
the user sleeps. So arming first proves the action possible without doing it:

- ``provider``: the instance's scoped credentials are found (see ``watchdog``), and the
  provider accepts them on a harmless read of the same instance (RunPod REST v2 ``GET
  /v2/pods/{id}``, vast.ai ``GET /api/v0/instances/{id}/``): a refused key (401/403) means the
  stop would fail too. The instance asks about itself, so a 404 or 410 is no missing instance
  but an API that moved: said as "the provider's API changed (endpoint, what it said); update
  gpufleet" (RunPod retired REST v1, ``rest.runpod.io/v1``, on 2026-11-15: it answers 410
  Gone; v1 is asked only where v2 answers 404, as the laptop's adapter does);
- ``shutdown``: ``shutdown`` is on PATH and the daemon runs as root (nobody else may power
  the instance off);
- ``command``: a dry run of the argv: its program is found and executable (it is not run:
  a user's command has effects).

An armed watchdog repeats the check every ``RECHECK_S`` (a revoked key, a changed API): an
action become impossible is a ``watchdog`` event the laptop turns into an alert.

Python 3.8, stdlib only.
"""

import os
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

RUNPOD_URL = "https://api.runpod.io"  # REST v2
RUNPOD_V1_URL = "https://rest.runpod.io"  # REST v1: 410 Gone since 2026-11-15
VAST_URL = "https://console.vast.ai"
RECHECK_S = 1800.0
CHECK_TIMEOUT_S = 10.0
SAID_MAX = 160  # characters of an error body quoted in a reason

# (method, url, JSON body or None): one HTTP call; a list of them is tried in order, the next
# only where one answers 404 (RunPod's v1 behind its v2).
Attempt = Tuple[str, str, Optional[bytes]]
Call = Callable[[str, str, Optional[bytes], str], Tuple[Optional[int], str]]


class ProviderCalls(NamedTuple):
    """What this instance's own provider is asked: the harmless read and the stop."""

    provider: str  # "runpod", "vast"
    label: str  # as the provider calls itself
    key: str
    read: List[Attempt]
    stop: List[Attempt]


def provider_calls(env: Dict[str, str], api_url: Optional[str]) -> Optional[ProviderCalls]:
    """The calls for this instance, from its scoped credentials; None without them. An
    ``api_url`` (a proxy, a test server) serves both of RunPod's generations."""
    if env.get("RUNPOD_POD_ID") and env.get("RUNPOD_API_KEY"):
        v2 = "{}/v2/pods/{}".format((api_url or RUNPOD_URL).rstrip("/"), env["RUNPOD_POD_ID"])
        v1 = "{}/v1/pods/{}".format((api_url or RUNPOD_V1_URL).rstrip("/"), env["RUNPOD_POD_ID"])
        stop = b'{"action": "stop"}'
        return ProviderCalls(
            "runpod",
            "RunPod",
            env["RUNPOD_API_KEY"],
            [("GET", v2, None), ("GET", v1, None)],
            [("POST", v2 + "/action", stop), ("POST", v1 + "/stop", None)],
        )
    if env.get("CONTAINER_ID") and env.get("CONTAINER_API_KEY"):
        url = "{}/api/v0/instances/{}/".format(
            (api_url or VAST_URL).rstrip("/"), env["CONTAINER_ID"]
        )
        body = b'{"state": "stopped"}'
        return ProviderCalls(
            "vast", "vast.ai", env["CONTAINER_API_KEY"], [("GET", url, None)], [("PUT", url, body)]
        )
    return None


def _said(raw: bytes) -> str:
    """What an error body says, short: a JSON ``detail``/``error``/``message``/``title``, else
    the text itself."""
    import json

    text = raw.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        for k in ("detail", "error", "message", "title"):
            if isinstance(doc.get(k), str) and doc[k].strip():
                text = doc[k].strip()
                break
    text = " ".join(text.split())
    return text if len(text) <= SAID_MAX else text[: SAID_MAX - 1] + "…"


def request(method: str, url: str, body: Optional[bytes], key: str) -> Tuple[Optional[int], str]:
    """(HTTP status or None, what happened: "HTTP 410: Gone") of one call; never the key."""
    # Imported here: urllib.request pulls in http.client, email and ssl (megabytes of RSS a
    # daemon that watches for days carries only while it checks or acts).
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("Authorization", "Bearer " + key)
    req.add_header("User-Agent", "gpufleet-watchdog")
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=CHECK_TIMEOUT_S) as r:
            return int(r.status), "HTTP {}".format(r.status)
    except urllib.error.HTTPError as e:
        try:
            said = _said(e.read(4096))
        except OSError:
            said = ""
        what = "HTTP {}".format(e.code) + (": " + said if said else "")
        return int(e.code), what.replace(key, "***")
    except (urllib.error.URLError, OSError) as e:
        text = "{} ({})".format(type(e).__name__, getattr(e, "reason", e))
        return None, text.replace(key, "***")


def _endpoint(method: str, url: str) -> str:
    """ "GET /v2/pods/abc": the path a reason names (the host is the provider's)."""
    import urllib.parse

    return "{} {}".format(method, urllib.parse.urlsplit(url).path)


def api_changed(label: str, said: List[str]) -> str:
    return "{}: the provider's API changed ({}); update gpufleet".format(label, "; ".join(said))


def ask(label: str, attempts: List[Attempt], key: str, call: Call) -> Tuple[str, str]:
    """(verdict, text) of a call tried in order (the next only on a 404): ``ok``,
    ``refused`` (401/403), ``changed`` (404 or 410 on the last one asked: the endpoint moved
    or is gone; text names every endpoint and what it said), ``error`` (anything else)."""
    said: List[str] = []
    for i, (method, url, body) in enumerate(attempts):
        status, what = call(method, url, body, key)
        said.append("{}: {}".format(_endpoint(method, url), what))
        if status == 404 and i + 1 < len(attempts):
            continue
        if status is not None and 200 <= status < 300:
            return "ok", what if i == 0 else "; ".join(said)
        if status in (401, 403):
            return "refused", what
        if status in (404, 410):
            return "changed", api_changed(label, said)
        return "error", what
    return "error", "nothing asked"


def _provider(env: Dict[str, str], api_url: Optional[str]) -> Tuple[bool, str]:
    calls = provider_calls(env, api_url)
    if calls is None:
        return False, (
            "no provider credentials in the instance (RUNPOD_POD_ID + RUNPOD_API_KEY on "
            "RunPod, CONTAINER_ID + CONTAINER_API_KEY on vast.ai): the provider stop cannot "
            "run; arm with the shutdown or command action instead"
        )
    name = calls.label
    verdict, what = ask(name, calls.read, calls.key, request)
    if verdict == "ok":
        return True, "{} accepted the instance's key ({})".format(name, what)
    if verdict == "refused":
        return False, "{} refused the instance's key ({}): the stop would fail".format(name, what)
    if verdict == "changed":
        return False, what + ": the stop would fail"
    return False, "{} could not be asked whether the stop would work: {}".format(name, what)


def _program(argv: Any) -> Tuple[bool, str]:
    if not isinstance(argv, list) or not argv:
        return False, "no command to run"
    import shutil  # only when arming or re-checking: the daemon need not carry it

    prog = str(argv[0])
    found = shutil.which(prog)
    if found is None:
        where = "is not executable" if os.path.exists(prog) else "is not found on PATH"
        return False, "{} {}: the command cannot run".format(prog, where)
    return True, "dry run: {} would run".format(found)


def check(cfg: Dict[str, Any], env: Dict[str, str]) -> Tuple[bool, str]:
    """(ready, reason) of a parsed config's action, as it stands now."""
    action = cfg.get("action")
    if action == "provider":
        return _provider(env, cfg.get("api_url"))
    if action == "shutdown":
        if not _program(["shutdown"])[0]:
            return False, "shutdown is not found on PATH: the instance cannot be powered off"
        if os.geteuid() != 0:
            return False, "the sampler does not run as root: shutdown would be refused"
        return True, "shutdown is available and the sampler runs as root"
    return _program(cfg.get("command"))


def readiness(cfg: Dict[str, Any], env: Dict[str, str]) -> Dict[str, Any]:
    """What ``summary`` carries: ready, the reason, and when it was checked."""
    ok, reason = check(cfg, env)
    return {"ok": ok, "reason": reason, "t": round(time.time(), 3)}
