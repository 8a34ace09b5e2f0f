"""The redaction table: every secret shape the sampler must hide before a command line leaves
the instance, each planted in a realistic command, and the harmless arguments it must keep."""

# ruff: noqa: E501 (a table reads best one shape a line)
from __future__ import annotations

import pytest
from gpufleet_sampler.procs.redact import REDACTED, is_secret_name, redact_cmdline

S = "Zq7Xv9Kp2Lm4"  # the planted secret: it must not survive in any shape

# (argv, what must still be there)
SHAPES: list[tuple[list[str], list[str]]] = [
    # short options of tools that take a password: attached and separate
    (["mysql", "-uroot", f"-p{S}", "db"], ["-uroot", "-p***", "db"]),
    (["mysql", "-u", "root", "-p", S, "-h", "db1"], ["-p ***", "-h db1"]),
    (["/usr/bin/mysqldump", f"-p{S}", "shop"], ["-p***", "shop"]),
    (["sshpass", "-p", S, "ssh", "host"], ["ssh host"]),
    (["redis-cli", "-h", "cache", "-a", S, "ping"], ["-a ***", "ping"]),
    (["redis-cli", f"-a{S}"], ["-a***"]),
    (["ldapsearch", "-x", "-w", S], ["-w ***"]),
    (["bash", "-c", f"mysql -p{S} -e 'select 1'"], ["-p***"]),
    (["env", "X=1", "redis-cli", "-a", S], ["-a ***"]),
    # after a generic program (a script's own options): attached, separate, -a
    (["python", "app.py", f"-p{S}"], ["python app.py -p***"]),
    (["java", "-jar", "tool.jar", "-p", S, "--verbose"], ["-p ***", "--verbose"]),
    (["/usr/bin/node", "srv.js", "-a", S], ["srv.js -a ***"]),
    (["mycli", f"-p{S}", "shop"], ["-p***"]),
    # user:password options
    (["curl", "-u", f"alice:{S}", "https://h/x"], ["alice:***"]),
    (["curl", f"--user=alice:{S}", "https://h/x"], ["--user=alice:***"]),
    (["smbclient", "//srv/share", "-U", f"bob%{S}"], ["bob%***"]),
    # webhook URLs whose path is the secret
    (["notify", f"https://hooks.slack.com/services/T0AB/B0CD/{S}"], ["hooks.slack.com/services/***"]),
    (["notify", f"--url=https://discord.com/api/webhooks/1234567/{S}"], ["discord.com/api/webhooks/***"]),
    (["notify", f"https://discordapp.com/api/webhooks/99/{S}"], ["webhooks/***"]),
    (["notify", f"https://acme.webhook.office.com/webhookb2/{S}"], ["webhook.office.com/***"]),
    (["notify", f"https://api.telegram.org/bot{S}/sendMessage"], ["api.telegram.org/bot***"]),
    (["python", "-c", f"requests.post('https://hooks.slack.com/services/T/B/{S}')"], ["hooks.slack.com"]),
    # --key and friends, every casing convention, = and separate value
    (["python", "train.py", "--key", S, "--lr", "0.1"], ["--key ***", "--lr 0.1"]),
    (["python", "train.py", f"--wandb-key={S}"], ["--wandb-key=***"]),
    (["python", "train.py", "--wandb_key", S], ["--wandb_key ***"]),
    (["python", "t.py", "--accessToken", S], ["--accessToken ***"]),
    (["python", "t.py", f"--authToken={S}"], ["--authToken=***"]),
    (["python", "t.py", "--clientSecret", S], ["--clientSecret ***"]),
    (["python", "t.py", f"--hfToken={S}"], ["--hfToken=***"]),
    (["python", "t.py", "--HFToken", S], ["--HFToken ***"]),
    (["python", "t.py", "--AccessToken", S], ["--AccessToken ***"]),
    (["python", "t.py", "--ACCESS-TOKEN", S], ["--ACCESS-TOKEN ***"]),
    (["python", "t.py", "--access.token", S], ["--access.token ***"]),
    (["python", "t.py", "--accesstoken", S], ["--accesstoken ***"]),
    (["python", "t.py", "--hftoken", S], ["--hftoken ***"]),
    (["python", "t.py", "--apiKey", S], ["--apiKey ***"]),
    (["python", "t.py", "--API_KEY", S], ["--API_KEY ***"]),
    (["python", "t.py", "-apikey", S], ["-apikey ***"]),
    (["python", "t.py", "--bearer", S], ["--bearer ***"]),
    (["python", "t.py", f"--bearer={S}"], ["--bearer=***"]),
    (["python", "t.py", "--db-password", S], ["--db-password ***"]),
    (["python", "t.py", f"--dbPassword={S}"], ["--dbPassword=***"]),
    (["python", "t.py", "--secret", S], ["--secret ***"]),
    (["python", "t.py", "--private-key", S], ["--private-key ***"]),
    # Java system properties
    (["java", f"-Djavax.net.ssl.keyStorePassword={S}", "-jar", "a.jar"], ["-Djavax.net.ssl.keyStorePassword=***", "-jar a.jar"]),
    (["java", f"-Dspring.datasource.password={S}", "App"], ["-Dspring.datasource.password=***"]),
    (["java", f"-DdbPassword={S}", "App"], ["-DdbPassword=***"]),
    (["java", f"-Dpassword={S}", "App"], ["-Dpassword=***"]),
    # URLs with credentials or tokens in the query
    (["git", "clone", f"https://alice:{S}@example.com/r.git"], ["alice:***@"]),
    (["psql", f"postgresql://app:{S}@db:5432/shop"], ["app:***@db"]),
    (["redis-server", f"redis://:{S}@cache:6379"], [":***@cache"]),
    (["dl", f"https://h/x?access_token={S}&page=2"], ["page=2"]),
    (["dl", f"https://h/x?apiKey={S}"], ["apiKey=***"]),
    # environment-style assignments
    (["env", f"HF_TOKEN={S}", "python", "t.py"], ["HF_TOKEN=***", "python t.py"]),
    (["env", f"X_TOKEN={S}"], ["X_TOKEN=***"]),
    (["env", f"MY_APP_SECRET={S}"], ["MY_APP_SECRET=***"]),
    (["env", f"WANDB_API_KEY={S}"], ["WANDB_API_KEY=***"]),
    (["env", f"SLACK_WEBHOOK={S}"], ["SLACK_WEBHOOK=***"]),
    (["env", f"DATABASE_PASSWORD={S}"], ["DATABASE_PASSWORD=***"]),
    (["env", f"AccessToken={S}"], ["AccessToken=***"]),
    (["bash", "-c", f"HF_TOKEN={S} python t.py"], ["HF_TOKEN=***"]),
    # headers and code
    (["curl", "-H", f"Authorization: Bearer {S}", "u"], ["Bearer ***"]),
    (["curl", "-H", f"X-Api-Key: {S}", "u"], ["X-Api-Key"]),
    (["python", "-c", f'login(token="{S}")'], ["login(token="]),
]  # fmt: skip

HARMLESS: list[list[str]] = [
    ["python", "train.py", "--max-tokens=100", "--tokenizer", "gpt2", "--lr", "1e-4"],
    ["torchrun", "--nproc_per_node=8", "--master_addr=10.0.0.1", "train.py"],
    ["python", "-m", "http.server", "--bind", "0.0.0.0:8000"],
    ["run", "--token", "--verbose"],
    ["mkdir", "-p", "/data/run1"],
    ["ssh", "-p", "2222", "host"],
    ["ls", "-a", "/tmp"],
    ["python", "serve.py", "-p", "8080"],
    ["python3", "serve.py", "-p8080", "-a", "--host", "0.0.0.0"],
    ["python", "t.py", "--key-file", "/etc/ssl/k.pem", "--token-limit", "512"],
    ["python", "t.py", "--password-stdin"],
    ["mysql", "-h", "db1", "-u", "root", "shop"],
    ["curl", "-u", "alice", "https://example.com/hook"],
    ["python", "t.py", "--num-keys", "4", "--monkey", "1"],
]


def test_the_table_covers_the_asked_shapes() -> None:
    text = repr(SHAPES)
    for shape in ("-p{", "'-p'", "'-a'", "hooks.slack.com", "discord.com", "'--key'",
                  "--wandb-key=", "-Djavax", "--accessToken", "--authToken", "--clientSecret",
                  "--hfToken", "--bearer", "alice:", "X_TOKEN="):  # fmt: skip
        assert shape.replace("{", "") in text.replace(S, ""), shape


@pytest.mark.parametrize(("argv", "kept"), SHAPES)
def test_every_secret_shape_is_hidden(argv: list[str], kept: list[str]) -> None:
    cmd = redact_cmdline(argv)
    assert S not in cmd, cmd
    assert REDACTED in cmd, cmd
    for k in kept:
        assert k in cmd, cmd


@pytest.mark.parametrize("argv", HARMLESS)
def test_harmless_arguments_are_kept(argv: list[str]) -> None:
    assert redact_cmdline(argv) == " ".join(argv)


@pytest.mark.parametrize(
    "name",
    ["--password", "--Password", "--PASSWORD", "--pass-word", "--db_password", "--dbPassword",
     "DBPASSWORD", "--api-key", "--apiKey", "--ApiKey", "--API-KEY", "--api.key", "--apikey",
     "-Dkeystore.password", "--client-secret", "--clientSecret", "--ClientSecret"],
)  # fmt: skip
def test_secret_names_in_every_casing(name: str) -> None:
    assert is_secret_name(name), name


@pytest.mark.parametrize(
    "name", ["--max-tokens", "--tokenizer", "--master-addr", "--key-file", "--lr", "--keep"]
)
def test_harmless_names(name: str) -> None:
    assert not is_secret_name(name), name
