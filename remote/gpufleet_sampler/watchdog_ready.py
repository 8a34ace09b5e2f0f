"""Whether the watchdog's action can run, checked when it is armed and again while it watches.

A watchdog that arms for a stop it cannot carry out would report "watching" and fail while
the user sleeps. So arming first proves the action possible without doing it:

- ``provider``: the instance's scoped credentials are found (see ``watchdog``), and the
  provider accepts them on a harmless read of the same instance (RunPod ``GET
  /v1/pods/{id}``, vast.ai ``GET /api/v0/instances/{id}/``): a refused key (401/403) or a
  missing instance (404) means the stop would fail too;
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
from typing import Any, Dict, Optional, Tuple

RUNPOD_URL = "https://rest.runpod.io"
VAST_URL = "https://console.vast.ai"
RECHECK_S = 1800.0
CHECK_TIMEOUT_S = 10.0


def _get(url: str, key: str) -> Tuple[Optional[int], str]:
    """(HTTP status or None, what happened) of one GET; never the key in the text."""
    # Imported here: urllib.request pulls in http.client, email and ssl (megabytes of RSS a
    # daemon that watches for days carries only while it checks).
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, method="GET")
    req.add_header("Authorization", "Bearer " + key)
    req.add_header("User-Agent", "gpufleet-watchdog")
    try:
        with urllib.request.urlopen(req, timeout=CHECK_TIMEOUT_S) as r:
            return int(r.status), "HTTP {}".format(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code), "HTTP {}".format(e.code)
    except (urllib.error.URLError, OSError) as e:
        text = "{} ({})".format(type(e).__name__, getattr(e, "reason", e))
        return None, text.replace(key, "***")


def _provider(env: Dict[str, str], api_url: Optional[str]) -> Tuple[bool, str]:
    if env.get("RUNPOD_POD_ID") and env.get("RUNPOD_API_KEY"):
        name, key = "RunPod", env["RUNPOD_API_KEY"]
        url = "{}/v1/pods/{}".format((api_url or RUNPOD_URL).rstrip("/"), env["RUNPOD_POD_ID"])
    elif env.get("CONTAINER_ID") and env.get("CONTAINER_API_KEY"):
        name, key = "vast.ai", env["CONTAINER_API_KEY"]
        url = "{}/api/v0/instances/{}/".format(
            (api_url or VAST_URL).rstrip("/"), env["CONTAINER_ID"]
        )
    else:
        return False, (
            "no provider credentials in the instance (RUNPOD_POD_ID + RUNPOD_API_KEY on "
            "RunPod, CONTAINER_ID + CONTAINER_API_KEY on vast.ai): the provider stop cannot "
            "run; arm with the shutdown or command action instead"
        )
    status, what = _get(url, key)
    if status is not None and 200 <= status < 300:
        return True, "{} accepted the instance's key ({})".format(name, what)
    if status in (401, 403):
        return False, "{} refused the instance's key ({}): the stop would fail".format(name, what)
    if status == 404:
        return False, "{} does not know this instance ({}): the stop would fail".format(name, what)
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
