"""The GitHub Action's check step: annotations on the pull request, the whole report in the
job summary. GitHub shows at most 10 annotations of each type (error, warning, notice) per
step, so a run with more would hide findings; the summary lists every one.

Inputs come as environment variables, never as code: PATHS (one path per line, so a path may
hold spaces), ARGS (more arguments, split as a shell would split them, without running one).
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys

SUMMARY_LIMIT = 1_000_000  # GitHub takes up to 1 MiB of summary per step


def main() -> int:
    paths = [line.strip() for line in os.environ.get("PATHS", "").splitlines() if line.strip()] or ["."]
    args = shlex.split(os.environ.get("ARGS", ""))
    check = [sys.executable, "-m", "flake8_no_apex", "check", "--output-format", "github", *args, "--", *paths]
    status = subprocess.run(check).returncode
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        # the same run as text, answered by the cache the first run wrote
        text = [sys.executable, "-m", "flake8_no_apex", "check", "--output-format", "concise", *args,
                "--color", "never", "--exit-zero", "--", *paths]
        report = subprocess.run(text, capture_output=True, text=True)
        with open(summary, "a", encoding="utf-8") as stream:
            stream.write(markdown(report.stdout + report.stderr))
    return status


def markdown(report: str) -> str:
    if len(report) > SUMMARY_LIMIT:
        report = report[:SUMMARY_LIMIT].rsplit("\n", 1)[0] + "\n... (cut: run `flake8-no-apex check` for the rest)\n"
    fence = "````" if "```" in report else "```"
    return (f"### flake8-no-apex\n\nEvery finding (the annotations show at most 10 of each type):\n\n"
            f"{fence}text\n{report.rstrip()}\n{fence}\n")


if __name__ == "__main__":
    sys.exit(main())
