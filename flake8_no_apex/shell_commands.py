"""Shell command lines: apex installed (`pip install` of apex, `git clone` of NVIDIA/apex, conda's
nvidia-apex) and the removed flags given to a training entry point (`python train.py
--amp_backend apex`, `accelerate launch --fp16`), with the codes and messages of the Python rules.

The text is read as a POSIX shell reads words: quotes, backslash escapes and continuations,
comments, and the operators that end a command (`&&`, `||`, `;`, `|`, `&`, parentheses,
backticks, `$(`). Every word keeps its offsets in the text, so a finding is at the exact place
and a fix replaces exactly the word. A caller that reads shell out of another format (a
Dockerfile, a CI workflow, a notebook's `!` line) hands a text of the same length with what is
not shell blanked out.
"""
from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple

from .table import Finding, Floors, Grade, Keyword, Plan, Rule, Site, TextEdit, plan

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class syntax, without its compile of every field's annotation (records.py)
    from .records import NamedTuple


class Word(NamedTuple):
    text: str  # as the shell passes it on: quotes removed, escapes applied
    start: int  # offsets of the word as written
    end: int
    quoted: bool  # written with quotes or escapes: a fix leaves it alone


# BREAK stands where one shell program ends and the next begins (a Dockerfile's instructions, a
# workflow's values, a document's blocks): nothing, not even an open quote, goes on across it
BREAK = "\0"
_OPERATORS = ("&&", "||", ";;", "$(", ";", "|", "&", "(", ")", "`", "\n", BREAK)
_BLANK = " \t\r"


def commands(text: str) -> Iterator[List[Word]]:
    """The simple commands of a shell text, each as its words."""
    words: List[Word] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _BLANK:
            i += 1
        elif ch == "\\" and text.startswith("\n", i + 1):  # a continuation joins the lines
            i += 2
        elif ch == "#":  # a comment, where a word could start
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif any(text.startswith(op, i) for op in _OPERATORS):
            op = next(op for op in _OPERATORS if text.startswith(op, i))
            if words:
                yield words
                words = []
            i += len(op)
        else:
            word, i = _word(text, i)
            words.append(word)
    if words:
        yield words


def _word(text: str, i: int) -> Tuple[Word, int]:
    start, parts, quoted, n = i, [], False, len(text)
    while i < n:
        ch = text[i]
        if ch in _BLANK or ch in "\n;&|()`<>\0" or text.startswith("$(", i):
            if ch in "<>" and i == start:  # a redirection operator is a word of its own
                end = i + 1 + (i + 1 < n and text[i + 1] in "<>&")
                return Word(text[i:end], start, end, False), end
            break
        if ch == "'":
            close = text.find("'", i + 1)
            stop = text.find(BREAK, i + 1)
            close = n if close < 0 else close
            close = stop if 0 <= stop < close else close
            parts.append(text[i + 1:close])
            i, quoted = close + (close < n and text[close] == "'"), True
        elif ch == '"':
            i += 1
            while i < n and text[i] not in '"\0':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                    if text[i + 1] != "\n":
                        parts.append(text[i + 1])
                    i += 2
                else:
                    parts.append(text[i])
                    i += 1
            i, quoted = i + (i < n and text[i] == '"'), True
        elif ch == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                parts.append(text[i + 1])
            i, quoted = i + 2, True
        else:
            parts.append(ch)
            i += 1
    return Word("".join(parts), start, i, quoted), i


# --- what a command does ---------------------------------------------------------------------
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PREFIXES = {"sudo", "env", "time", "nohup", "exec", "command", "nice", "stdbuf", "srun", "mpirun", "mpiexec",
             "horovodrun", "xargs", "eval", "builtin", "RUN", "CMD", "ENTRYPOINT"}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?$|py$")
_PIP = re.compile(r"pip(\d+(\.\d+)?)?$")
# pip install's options that take a value: the value is no requirement
_PIP_VALUED = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
               "--find-links", "-t", "--target", "--prefix", "--root", "--src", "--config-settings", "-C",
               "--global-option", "--install-option", "--build-option", "--upgrade-strategy", "--platform",
               "--python-version", "--implementation", "--abi", "--progress-bar", "--log", "--cache-dir", "--proxy",
               "--timeout", "--retries", "--exists-action", "--trusted-host", "--cert", "--client-cert", "--no-binary",
               "--only-binary", "--report", "--python", "--root-user-action", "--keyring-provider"}
_CONDA_VALUED = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--override-channels"}
_LAUNCHERS = {"torchrun", "deepspeed", "accelerate", "lightning", "fabric"}


def _program(words: List[Word]) -> int:
    """The index of the program a command runs, past assignments and wrappers (`sudo`, `env X=1`)."""
    i = 0
    while i < len(words):
        text = words[i].text
        if _ASSIGNMENT.match(text) and not words[i].quoted:
            i += 1
        elif posixpath.basename(text) in _PREFIXES:
            i += 1
            while i < len(words) and words[i].text.startswith("-"):  # the wrapper's options (`sudo -H`)
                i += 1
        else:
            return i
    return i


class Hit(NamedTuple):
    rule: Rule
    site: Site
    word: Word
    plan: Optional[Plan] = None
    last: int = 0  # where the command ends: a `# noqa` goes on that line


# a repository of apex (NVIDIA's or a fork): its clone is the start of a build from source, and the
# build that follows (`cd apex && pip install .`) is that one finding, not another
_APEX_REPOSITORY = re.compile(r"/apex(\.git)?/?(#.*)?$", re.IGNORECASE)


class Reader:
    """Reads the commands of a shell text, with the Python rules' argument-vector rows."""

    def __init__(self, index):
        from .dependency_files import _DEPENDENCY_RULES

        self.argv_rows = index.argv
        self.trainer_settings = index.trainer_settings
        self.dependency_rules = _DEPENDENCY_RULES

    def read(self, text: str) -> List[Hit]:
        hits: List[Hit] = []
        for words in commands(text):
            at = _program(words)
            if at < len(words):
                hits += [hit._replace(last=words[-1].end) for hit in self._command(words[at:])]
        return hits

    def _command(self, words: List[Word]) -> List[Hit]:
        name = posixpath.basename(words[0].text)
        rest = words[1:]
        if _PYTHON.match(name) and len(rest) >= 2 and rest[0].text == "-m" and rest[1].text == "pip":
            name, rest = "pip", rest[2:]
        elif name == "uv" and rest and rest[0].text == "pip":
            name, rest = "pip", rest[1:]
        if _PIP.match(name) and rest and rest[0].text == "install":
            return self._pip_install(rest[1:])
        if name in ("conda", "mamba", "micromamba") and rest and rest[0].text == "install":
            return self._conda_install(rest[1:])
        if name == "git" and rest and rest[0].text == "clone":
            return self._git_clone(rest[1:])
        return self._launch(words)

    def _pip_install(self, words: List[Word]) -> List[Hit]:
        from .dependency_files import _dependency

        hits = []
        for word in _operands(words, _PIP_VALUED):  # `-e URL` too: the URL is an operand
            found = _dependency(word.text.strip())
            if found:
                rule, shown, kind = found
                hits.append(Hit(rule, Site(None, repr(shown), value=kind), word))
        return hits

    def _conda_install(self, words: List[Word]) -> List[Hit]:
        from .dependency_files import _conda_package

        return [Hit(rule, Site(None, repr(word.text), value="source"), word)
                for word in _operands(words, _CONDA_VALUED)
                for matcher, rule in self.dependency_rules if _conda_package(word.text) in matcher.conda_names]

    def _git_clone(self, words: List[Word]) -> List[Hit]:
        """A clone of apex: apex is about to be built from source."""
        for word in words:
            if ("://" in word.text or word.text.startswith("git@")) and _APEX_REPOSITORY.search(word.text):
                rule = self.dependency_rules[0][1]
                return [Hit(rule, Site(None, repr(word.text), value="source"), word)]
        return []

    def _launch(self, words: List[Word]) -> List[Hit]:
        """The removed flags of a command that starts a training script (`python train.py ...`,
        `torchrun -m pkg.train ...`, `accelerate launch --fp16 train.py`): a flag before the script
        belongs to the launcher, one after it to the script."""
        name = posixpath.basename(words[0].text)
        if not (_PYTHON.match(name) or name in _LAUNCHERS):
            return []
        script = next((i for i, w in enumerate(words) if i and (w.text.endswith(".py") or words[i - 1].text == "-m")),
                      None)
        if script is None:
            return []
        launcher = (name, words[1].text) if len(words) > 1 else (name,)
        hits = []
        for i, word in enumerate(words):
            override = _HYDRA_TRAINER.match(word.text) if i > script else None
            if override:  # Hydra's `trainer.precision=16`: the Trainer argument of the script's config
                hits += self._setting(self.trainer_settings.get(override.group(1), ()), override.group(1),
                                      override.group(2), word)
            if not word.text.startswith("--"):
                continue
            flag, eq, inline = word.text[2:].partition("=")
            flag = flag.rsplit(".", 1)[-1]  # LightningCLI: --trainer.amp_backend
            following = words[i + 1].text if i + 1 < len(words) else None
            for matcher, rule in self.argv_rows.get(flag, ()):
                if matcher.launcher and (matcher.launcher != launcher or i > script):
                    continue
                value = inline if eq else following
                replacement = _value_replacement(matcher, value)
                if replacement is None:
                    continue
                site = Site(None, matcher.name, replacement, value=value)
                fix = None
                if matcher.launcher and not word.quoted and not eq and rule.fix.grade is Grade.SAFE:
                    fix = plan([TextEdit(word.start, word.end, "--mixed_precision fp16")], Grade.SAFE)
                hits.append(Hit(rule, site, word, fix))
        return hits

    @staticmethod
    def _setting(rows, name: str, value: str, word: Word) -> List[Hit]:
        for matcher, rule in rows:
            replacement = _value_replacement(matcher, value)
            if replacement is not None and (replacement or matcher.values is None):
                return [Hit(rule, Site(None, name, replacement, value=_typed(value)), word)]
        return []


_HYDRA_TRAINER = re.compile(r"\+{0,2}trainer\.(\w+)=(.*)")


def _operands(words: List[Word], valued) -> Iterator[Word]:
    """The words of an install command that are no option, nor the value of one in `valued`."""
    i = 0
    while i < len(words):
        if words[i].text in valued:
            i += 2
            continue
        if not words[i].text.startswith("-"):
            yield words[i]
        i += 1


def _value_replacement(matcher: Keyword, value: object) -> Optional[str]:
    """As the checker matches a keyword's value: "" when any value matches, None when this one
    does not (shell values are strings: "true" is a Lightning flag's True)."""
    if matcher.values is None:
        return None if value in matcher.other_values else ""
    for candidate in (value, _typed(value)):
        try:
            found = matcher.values.get(candidate)
        except TypeError:
            continue
        if found is not None:
            return found
    return None


def _typed(value: object) -> object:
    """A flag's string as the Python literal an argument parser would give the library."""
    if not isinstance(value, str):
        return value
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


class Located(NamedTuple):
    finding: Finding
    plan: Optional[Plan]
    end_line: int  # the command's last line


def findings(shell: str, text: str, floors: Floors, index) -> List[Located]:
    """The findings of a shell text, at their lines and columns (characters) in `text`, the file
    it was read out of (of the same length: only blanks differ); `index`: the rules' RuleIndex."""
    from .edits import Source

    source = Source(text)
    located = []
    for hit in Reader(index).read(shell):
        line, column = source.position(hit.word.start)
        finding = hit.rule.finding(hit.site, line, column - 1, floors, hit.word.end - hit.word.start)
        if finding is not None:
            located.append(Located(finding, hit.plan, source.position(hit.last)[0]))
    return located


def noqa_on_command(source, ends: Dict[int, int]):
    """flake8's `# noqa` rule, read on the lines of the command a finding is in (`ends`: a
    finding's line -> its command's last line)."""
    from .noqa import noqa_pattern

    if "noqa" not in source.text.lower():
        return lambda line, code: False
    pattern = noqa_pattern()

    def suppressed(line: int, code: str) -> bool:
        for number in range(line, ends.get(line, line) + 1):
            match = pattern.search(source.line(number))
            if match:
                codes = match.group("codes")
                return codes is None or any(code.startswith(c) for c in re.split(r"[,\s]+", codes) if c)
        return False

    return suppressed
