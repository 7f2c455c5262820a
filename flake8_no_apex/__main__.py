"""`python -m flake8_no_apex`: the same as the `flake8-no-apex` command."""
import sys

from .cli import command

sys.exit(command())
