"""Exit codes and the one error type the CLI turns into a single clear line."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1  # a check failed, or a generic error
EXIT_USAGE = 2  # bad arguments (argparse uses 2 too)
EXIT_CONNECT = 3  # the host could not be reached / authentication failed
EXIT_HOSTKEY = 4  # the host key is unknown (refused) or changed
EXIT_REFUSED = 5  # kill refused: the process identity (start time) does not match
EXIT_PERMISSION = 6  # kill: permission denied
EXIT_STILL_RUNNING = 7  # kill: the process is still running after the grace period
EXIT_NOT_FOUND = 8  # no such host / process / data


class CliError(Exception):
    """An error shown to the user as one line (no traceback), with an exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code
