"""Secret redaction of process command lines, on the instance, before anything leaves it.

Command lines carry secrets in many shapes: ``--api-key=V``, ``--token V``, ``--accessToken V``
(flags in kebab, snake, camel, Pascal, upper or run-together case), ``HF_TOKEN=V`` (env-style
prefixes of ``env`` or ``sh -c``), ``-Djavax.net.ssl.keyStorePassword=V``, ``mysql -pV`` and
``redis-cli -a V`` (short options of tools known to take a password; ``-pV``, ``-p V`` and
``-a V`` after a script run by an interpreter, whose options nobody can know: a number, a
port, is kept), ``curl -u user:V``,
``https://user:V@host``, ``?token=V``, webhook URLs whose path is the secret (Slack, Discord,
Teams, Telegram), ``Authorization: Bearer V`` and tokens recognisable by their shape
(``hf_...``, ``sk-...``, ``ghp_...``, JWTs). What is found becomes ``***``; the rules err on
the side of hiding (a hidden harmless value costs less than a leaked key).

The sampler applies this to every command line it reads (``procfs``); the laptop never sees
the raw text. Python 3.8, stdlib only.
"""

import os
import re
from typing import Dict, FrozenSet, List, Optional

REDACTED = "***"
# Long command lines (a Python job with a hundred flags) are cut here; the client shows them
# in a table cell and the wire line must stay bounded.
DEFAULT_CMD_MAX = 1024

# A flag or variable name is secret-bearing when one of its words (split at - _ . and at
# camelCase humps) is one of these, or it names a key of some kind ("api_key", "wandb-key").
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "auth",
    "cookie",
    "signature",
    "sig",
    "key",
    "bearer",
    "webhook",
    "dsn",
)
_SECRET_NAME = re.compile(
    r"(^|_)(" + "|".join(_SECRET_WORDS) + r")($|_)"
    r"|(api|access|secret|private|auth|signing|encryption|master|client|account)_?key($|_)"
    # Run-together lower or upper case ("--hftoken", "ACCESSTOKEN", "--dbpassword").
    r"|(token|secret|password|passwd|passphrase|apikey|credentials?)$",
)
# Words that, right after a secret word, make the name one of a path or a setting, not of
# the secret itself: "--key-file x.pem", "--token-limit 100", "--password-stdin".
_NOT_SECRET_AFTER = re.compile(
    r"(^|_)(key|token|password|secret|auth|pass)_(file|path|dir|limit|len|length|count|type|"
    r"size|stdin|env|name|id|url|endpoint|server)s?$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

# Short options that take a password, by program (the basename of a word of the command):
# an option here hides its value whether attached ("-pV") or next ("-p V").
_SHORT_SECRET_OPTS: Dict[str, FrozenSet[str]] = {
    "mysql": frozenset("p"),
    "mysqldump": frozenset("p"),
    "mysqladmin": frozenset("p"),
    "mysqlimport": frozenset("p"),
    "mysqlshow": frozenset("p"),
    "mysqlcheck": frozenset("p"),
    "mariadb": frozenset("p"),
    "mariadb-dump": frozenset("p"),
    "mongo": frozenset("p"),
    "mongosh": frozenset("p"),
    "mongodump": frozenset("p"),
    "mongorestore": frozenset("p"),
    "sshpass": frozenset("p"),
    "redis-cli": frozenset("a"),
    "redis-benchmark": frozenset("a"),
    "valkey-cli": frozenset("a"),
    "keydb-cli": frozenset("a"),
    "rabbitmqadmin": frozenset("p"),
    "ldapsearch": frozenset("w"),
    "ldapmodify": frozenset("w"),
    "ldapadd": frozenset("w"),
    "mycli": frozenset("p"),
    "mysqlsh": frozenset("p"),
}
# A program that runs a script of the user's (python train.py, java -jar x.jar, node srv.js):
# the script's own -p / -a may well be a password; the value is hidden unless it is a number.
_INTERPRETER = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|java|ruby|perl|php|deno|bun)$")
_GENERIC_SHORT = frozenset("pa")
# Options whose value is "user:password" (or "user%password"): the part after it is hidden.
_USER_PASS_OPTS = {
    "curl": ("-u", "--user", "--proxy-user", "-U"),
    "wget": ("--user",),
    "smbclient": ("-U", "--user"),
    "rpcclient": ("-U", "--user"),
}

# Tokens recognisable by their shape wherever they appear.
_TOKEN_SHAPES = re.compile(
    r"\b(?:"
    r"hf_[A-Za-z0-9]{16,}"  # Hugging Face
    r"|sk-[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic style
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_\-]{16,}"  # GitLab
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|ASIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+"  # JWT
    r"|wandb_[A-Za-z0-9]{20,}"
    r"|npm_[A-Za-z0-9]{30,}"
    r"|pypi-[A-Za-z0-9_\-]{30,}"
    r"|r8_[A-Za-z0-9]{30,}"  # Replicate
    r")"
)
# Webhook URLs whose path is the credential: everything after the fixed prefix goes.
_WEBHOOK_URL = re.compile(
    r"(?i)(?P<pre>https?://(?:"
    r"hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:[a-z0-9\-]+\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/"
    r"|[a-z0-9\-]+\.webhook\.office\.com/"
    r"|api\.telegram\.org/bot"
    r"|[a-z0-9\-.]+/(?:api/)?webhooks?/"
    r"))(?P<val>[^\s'\"?#]+)"
)
# user:password@ or token@ in a URL.
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<info>[^/@\s]+)@")
# ?token=... / &api_key=... in a URL or query string.
_QUERY_SECRET = re.compile(r"(?P<pre>[?&;](?P<name>[A-Za-z0-9_.\-]+)=)(?P<val>[^&#\s;]*)")
# "Authorization: Bearer xyz", "Basic xyz", "token xyz" inside one argument (curl -H ...).
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=\-]+")
# name=value / "name": "value" inside code or config text (python -c "...", JSON in argv).
_TEXT_ASSIGN = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>['\"]?\s*[=:]\s*['\"]?)(?P<val>[^\s'\",;&)}]+)"
)
# NAME=value or --name=value / -name=value / -Dname=value.
_ASSIGN = re.compile(r"^(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>[=:])(?P<val>.*)$", re.S)


def _words(name: str) -> str:
    """A flag or variable name as lower-case words joined by "_": "--accessToken",
    "ACCESS-TOKEN", "access.token" and "-Djavax.ssl.keyStorePassword" all split."""
    bare = name.lstrip("-")
    if name.startswith("-D") and not name.startswith("--") and len(bare) > 1:
        bare = bare[1:]  # a Java system property: -Dname=value
    bare = _CAMEL.sub("_", bare)
    return re.sub(r"[\-.]", "_", bare).lower()


def is_secret_name(name: str) -> bool:
    """Whether a flag or variable named so carries a secret value."""
    norm = _words(name)
    if not norm or _SECRET_NAME.search(norm) is None:
        return False
    return _NOT_SECRET_AFTER.search(norm) is None


def _redact_url_userinfo(m: "re.Match[str]") -> str:
    info = m.group("info")
    if ":" in info:
        user = info.split(":", 1)[0]
        return "{}{}:{}@".format(m.group("scheme"), user, REDACTED)
    # A bare userinfo in https URLs is usually a token (https://ghp_xxx@github.com).
    if m.group("scheme").lower().startswith(("http", "git")):
        return "{}{}@".format(m.group("scheme"), REDACTED)
    return m.group(0)


def _redact_query(m: "re.Match[str]") -> str:
    if is_secret_name(m.group("name")) and m.group("val"):
        return m.group("pre") + REDACTED
    return m.group(0)


def _redact_text_assign(m: "re.Match[str]") -> str:
    if is_secret_name(m.group("name")) and m.group("val") != REDACTED:
        return m.group("name") + m.group("sep") + REDACTED
    return m.group(0)


def _redact_text(arg: str) -> str:
    """Shape-based redaction that applies anywhere inside one argument."""
    out = _WEBHOOK_URL.sub(lambda m: m.group("pre") + REDACTED, arg)
    out = _URL_USERINFO.sub(_redact_url_userinfo, out)
    if "=" in out:
        out = _QUERY_SECRET.sub(_redact_query, out)
    out = _AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + REDACTED, out)
    if "=" in out or ":" in out:
        out = _TEXT_ASSIGN.sub(_redact_text_assign, out)
    return _TOKEN_SHAPES.sub(REDACTED, out)


def _user_pass(value: str) -> str:
    for sep in (":", "%"):
        if sep in value:
            return value.split(sep, 1)[0] + sep + REDACTED
    return value


def _program(arg: str) -> Optional[str]:
    base = os.path.basename(arg)
    if base in _SHORT_SECRET_OPTS or base in _USER_PASS_OPTS:
        return base
    return None


def _generic_short(arg: str) -> Optional[str]:
    """For a script's arguments: "-p" / "-a" (the value is next) → "", "-pV" → "-p***"
    unless V is a number; None for anything else."""
    if len(arg) < 2 or arg[0] != "-" or arg[1] not in _GENERIC_SHORT or is_secret_name(arg):
        return None  # "-apikey V", "-password V": the secret-name rule hides V
    if len(arg) == 2:
        return ""
    return None if arg[2:].isdigit() else arg[:2] + REDACTED


def redact_argv(argv: List[str]) -> List[str]:
    """The argument list with secret values replaced by ``***`` (see the module docstring for
    the shapes). Errs on the side of hiding."""
    out: List[str] = []
    hide_next = False
    hide_unless_number = False
    user_pass_next = False
    prog: Optional[str] = None
    generic = False
    for arg in argv:
        if hide_unless_number:
            hide_unless_number = False
            if not arg.startswith("-") and not arg.isdigit():
                out.append(REDACTED)
                continue
        if hide_next:
            hide_next = False
            # "--token --verbose" has no value to hide; anything else after a secret flag does.
            if not arg.startswith("--"):
                out.append(REDACTED)
                continue
        if user_pass_next:
            user_pass_next = False
            out.append(_user_pass(arg))
            continue
        prog = _program(arg) or prog
        generic = generic or bool(_INTERPRETER.match(os.path.basename(arg)))
        if prog is None and generic:
            short_generic = _generic_short(arg)
            if short_generic is not None:
                hide_unless_number = short_generic == ""
                out.append(short_generic or arg)
                continue
        if prog is not None and arg.startswith("-") and not arg.startswith("--"):
            short = _SHORT_SECRET_OPTS.get(prog, frozenset())
            if len(arg) == 2 and arg[1] in short:
                hide_next = True
                out.append(arg)
                continue
            if len(arg) > 2 and arg[1] in short:
                out.append(arg[:2] + REDACTED)
                continue
        if prog is not None and prog in _USER_PASS_OPTS:
            opts = _USER_PASS_OPTS[prog]
            if arg in opts:
                user_pass_next = True
                out.append(arg)
                continue
            name, eq, value = arg.partition("=")
            if eq and name in opts:
                out.append(name + "=" + _user_pass(value))
                continue
            if len(arg) > 2 and arg[:2] in opts and not arg.startswith("--"):
                out.append(arg[:2] + _user_pass(arg[2:]))
                continue
        m = _ASSIGN.match(arg)
        if m is not None and is_secret_name(m.group("name")) and m.group("val"):
            out.append(m.group("name") + m.group("sep") + REDACTED)
            continue
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg):
            hide_next = True
            out.append(arg)
            continue
        if len(arg.split(None, 1)) > 1:
            # One argument holding a whole shell line (bash -c "...", python -c "..."): redact
            # each word of it the same way.
            # The whole text first ("Bearer xyz", '"password": "xyz"' span words), then word
            # by word for "--token xyz".
            arg = _redact_text(arg)
            out.append(" ".join(redact_argv(arg.split())))
            continue
        out.append(_redact_text(arg))
    return out


def redact_cmdline(argv: List[str], max_len: int = DEFAULT_CMD_MAX) -> str:
    """The redacted command line as one string, cut to ``max_len`` characters."""
    cmd = " ".join(redact_argv(argv))
    if len(cmd) > max_len:
        cmd = cmd[: max(0, max_len - 1)] + "…"
    return cmd
