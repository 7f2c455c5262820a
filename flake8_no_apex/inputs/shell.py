"""Shell scripts, Dockerfiles and CI workflows (GitHub Actions, GitLab CI and the other hosted CIs):
where apex is installed and training scripts are started with removed flags.

Each format becomes a shell text of the file's own length, with what is not a command blanked
(a Dockerfile's other instructions, a workflow's YAML structure), so a finding's offset is the
file's and a `# noqa` at the end of the command's last line works in all three.
"""
from __future__ import annotations

import re
from pathlib import PurePath

from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Iterable, List, Tuple
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult
    from ..report import Reported

SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh")
# CI configurations: (the folder a file must be in, or "", and its name pattern), compiled by
# `re` when a YAML file is first asked about (a walk of a tree without one compiles none)
_CI_FILES = ((".github/workflows", r".*\.ya?ml"), ("", r"\.gitlab-ci\.ya?ml"), (".gitlab/ci", r".*\.ya?ml"),
             ("", r"\.travis\.ya?ml"), ("", r"azure-pipelines\.ya?ml"), ("", r"bitbucket-pipelines\.ya?ml"),
             (".circleci", r"config\.ya?ml"), (".buildkite", r"pipeline\.ya?ml"), ("", r"action\.ya?ml"))


def is_dockerfile(name: str) -> bool:
    return name in ("Dockerfile", "Containerfile") or name.startswith("Dockerfile.") or name.endswith(
        (".Dockerfile", ".dockerfile"))


def is_ci_file(name: str, folder: str) -> bool:
    """Whether the file `name` in `folder` (its parts joined by `/`) is a hosted CI's configuration."""
    if not name.endswith((".yml", ".yaml")):  # every pattern's ending: most names stop here
        return False
    return any(re.fullmatch(pattern, name) and (not inside or folder.endswith(inside)) for inside, pattern in _CI_FILES)


class Shell(Kind):
    name = "shell"

    def claims(self, name: str, folder: str) -> bool:
        return name.endswith(SHELL_SUFFIXES) or is_dockerfile(name) or is_ci_file(name, folder)

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..edits import Source
        from ..engine import Analysis, analysing
        from ..shell_commands import noqa_on_command

        floors = session.targets(document.path).floors
        with analysing():
            located = _located(document.path, document.text, floors, session.index)
        source = Source(document.text)
        ends = {item.finding.line: item.end_line for item in located}
        kept = session.filtered(document.path, source, [item.finding for item in located],
                                noqa=noqa_on_command(source, ends))
        plans = {id(item.finding): item.plan for item in located}
        return Analysis(document, source, kept, floors, lambda: [plans[id(finding)] for finding in kept])

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        return session.fix_lines(document, unsafe)

    def add_noqa(self, text: str, found: Iterable["Reported"]) -> Tuple[str, int]:
        """The comment goes at the end of the command's last line: after a backslash it would end
        the continuation."""
        from ..checker import default_index
        from ..noqa import add_noqa

        found = list(found)
        path = PurePath(found[0].path) if found else PurePath("script.sh")
        ends = {item.finding.line: item.end_line for item in _located(path, text, {}, default_index())}
        return add_noqa(text, [(item.line, item.code) for item in found],
                        {line: (line, end) for line, end in ends.items()})


def _located(path: PurePath, text: str, floors, index):
    from ..shell_commands import findings

    if is_dockerfile(path.name):
        shell = dockerfile_commands(text)
    elif is_ci_file(path.name, path.parent.as_posix()):
        shell = yaml_commands(text)
    else:
        shell = text
    return findings(shell, text, floors, index)


# --- Dockerfiles -----------------------------------------------------------------------------
_INSTRUCTION = re.compile(r"[ \t]*([A-Za-z]+)\b")
_COMMAND_INSTRUCTIONS = ("RUN", "CMD", "ENTRYPOINT")


_HEREDOC = re.compile(r"<<-?[ \t]*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1")


def dockerfile_commands(text: str) -> str:
    """The Dockerfile with everything but its RUN, CMD and ENTRYPOINT commands blanked; an exec
    form (`RUN ["pip", "install", "apex"]`) reads as the words it lists, a heredoc (`RUN <<EOF`)
    as the script it holds. Each instruction is a shell program of its own."""
    from ..shell_commands import BREAK

    out: List[str] = []
    keep = continued = False
    heredocs: List[str] = []  # the delimiters of the instruction's heredocs, in order
    for number, line in enumerate(text.split("\n")):
        if heredocs and not continued:  # a heredoc's body, up to its delimiter line
            out.append(("\n" if number else "") + (_blank(line) if line.strip() == heredocs[0] else line))
            if line.strip() == heredocs[0]:
                heredocs.pop(0)
            continue
        starts = not continued
        if starts:
            match = _INSTRUCTION.match(line)
            keep = bool(match) and match.group(1).upper() in _COMMAND_INSTRUCTIONS
            if keep:
                line = _exec_form(line, match.end())
        comment = line.lstrip().startswith("#")
        separator = (BREAK if starts else "\n") if number else ""
        out.append(separator + (line if keep or comment and continued else _blank(line)))
        if keep and not comment:
            heredocs += [match.group(2) for match in _HEREDOC.finditer(line)]
        stripped = line.rstrip("\r")
        continued = stripped.endswith("\\") and not comment or continued and comment
    return "".join(out)


def _exec_form(line: str, after: int) -> str:
    rest = line[after:]
    if not rest.strip().startswith("["):
        return line
    import json

    try:
        json.loads(rest)
    except ValueError:
        return line
    blanked, quoted = [], False  # brackets and commas outside the strings are no words
    for ch in rest:
        if ch == '"':
            quoted = not quoted
        blanked.append(" " if not quoted and ch in "[]," else ch)
    return line[:after] + "".join(blanked)


def _blank(line: str) -> str:
    return re.sub(r"[^\s]", " ", line)


# --- CI workflows ----------------------------------------------------------------------------
# the keys whose values are commands, in GitHub Actions (`run`), GitLab (`script`...), CircleCI
# (`run`, `command`), Travis (`install`...), Azure Pipelines (`script`, `bash`...), Bitbucket, Buildkite
# (Buildkite); any case, and a reusable workflow's input named like one (`with: {SCRIPT: ...}`)
COMMAND_KEYS = frozenset({"run", "script", "before_script", "after_script", "command", "commands", "install",
                          "before_install", "after_success", "bash", "sh", "pwsh", "powershell", "inline",
                          "inlinescript", "entrypoint", "args"})


def _command_key(name) -> bool:
    name = str(name).lower()
    return name in COMMAND_KEYS or name.endswith(("script", "command", "commands", "cmd"))


def yaml_commands(text: str) -> str:
    """The workflow with only the string values of its command keys kept (`run:`, `script:`
    items, a `command:`), a step's `name:` among them left out: a folded value's line breaks are
    the spaces YAML reads them as."""
    import yaml

    from ..yaml_configs import compose

    root = compose(text)
    kept = [" " if ch not in "\r\n" else ch for ch in text]
    stack, seen = [(root, False)], set()
    while stack:
        node, command = stack.pop()
        if node is None or (id(node), command) in seen:
            continue
        seen.add((id(node), command))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = getattr(key, "value", None)
                if name != "name":
                    stack.append((value, command or _command_key(name)))
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, command) for item in node.value]
        elif command and isinstance(node, yaml.ScalarNode) and node.tag.endswith(":str"):
            _keep(text, kept, node)
    return "".join(kept)


def _keep(text: str, kept: List[str], node) -> None:
    from ..shell_commands import BREAK

    start, end = node.start_mark.index, node.end_mark.index
    region = text[start:end]
    if node.style in ("|", ">"):  # skip the indicator line
        newline = region.find("\n")
        start, region = (start + newline + 1, region[newline + 1:]) if newline >= 0 else (end, "")
    elif node.style in ("'", '"'):
        start, region = start + 1, region[1:-1]
    folded = node.style != "|"
    if start:  # a value is a program of its own
        kept[start - 1] = BREAK
    for offset, ch in enumerate(region):
        kept[start + offset] = " " if folded and ch == "\n" else ch


KIND = Shell()
