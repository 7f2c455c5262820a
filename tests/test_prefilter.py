"""The pre-filter rules files out by whole words and never hides a finding."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from flake8_no_apex.checker import check_tree
from flake8_no_apex.prefilter import Prefilter, default as default_prefilter
from flake8_no_apex.rules import PYTHON_RULES

FIXTURES = Path(__file__).parent / "fixtures"


def test_partial_words_do_not_pass():
    prefilter = default_prefilter()
    assert not prefilter.may_match("example = sample(amplitude, camp)\nimport torch\n")
    assert not prefilter.may_match("autocast_helper = 1\nimport torch\n")
    assert not prefilter.may_match("import torch\nx = torch.ones(3)\n")


def test_a_name_without_its_library_does_not_pass():
    assert not default_prefilter().may_match("def autocast():\n    pass\nwith autocast():\n    pass\n")
    assert not default_prefilter().may_match("np.set_printoptions(precision=16)\n")


def test_every_example_and_fixture_with_findings_passes():
    sources = [s for rule in PYTHON_RULES for s in (rule.before, *rule.invalid)]
    sources += [path.read_text() for path in FIXTURES.glob("*.py")]
    with_findings = [source for source in sources if check_tree(ast.parse(source))]
    assert len(with_findings) > len(PYTHON_RULES)  # every rule's `before` at least
    for source in with_findings:
        assert default_prefilter().may_match(source), source


FRAGMENTS = [rule.before for rule in PYTHON_RULES] + [s for rule in PYTHON_RULES for s in rule.invalid]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4))
def test_combined_sources_with_findings_pass(parts):
    """Each fragment has findings on its own; put together (where a later fragment may shadow
    an earlier one's names), they still pass: the pre-filter only ever errs towards parsing."""
    assert default_prefilter().may_match("\n".join(parts))


def test_a_keyword_found_only_on_its_callees_needs_their_names():
    """`precision=16` is Lightning's only on a Trainer (or Fabric, LightningLite) call, and a
    module that calls one spells its name somewhere: in the import, even under an alias."""
    prefilter = default_prefilter()
    internals = "import lightning.pytorch as pl\n\ndef summarize(module, precision=16):\n    return precision\n"
    assert not prefilter.may_match(internals)
    aliased = "from lightning.pytorch import Trainer as T\n\nt = T(precision=16)\n"
    assert check_tree(ast.parse(aliased)) and prefilter.may_match(aliased)
    subclass = "import lightning.pytorch as pl\n\nclass Mine(pl.Trainer):\n    pass\n\nt = Mine(precision=16)\n"
    assert check_tree(ast.parse(subclass)) and prefilter.may_match(subclass)


@pytest.mark.parametrize("call", [
    "Trainer(precision=16)", "Trainer(precision  # half\n    = 16)", "Trainer(precision \\\n = 16)",
    "Trainer(**{'precision': 16})", 'Trainer(**{"precision"  # half\n : 16})',
])
def test_a_keyword_of_a_call_passes_however_it_is_spelled(call):
    source = f"from lightning.pytorch import Trainer\n\nt = {call}\n"
    assert check_tree(ast.parse(source)) and default_prefilter().may_match(source)


def test_a_keyword_name_not_written_as_one_does_not_pass():
    """The module names a Trainer and says `precision`, but passes it to no call as a keyword."""
    source = ("from lightning.pytorch import Trainer\n\ndef summary(trainer: Trainer):\n"
              "    return trainer.precision  # 16 or 32 bits\n")
    assert not default_prefilter().may_match(source)


def test_the_words_of_a_text_are_read_through_its_bytes_as_from_its_characters():
    """`present` translates a text's UTF-8 bytes: the same words as translating its characters
    gives, on the fixtures, a third of the standard library and non-ASCII texts (non-ASCII
    spaces, which split words as characters but not as bytes, and a lone surrogate)."""
    not_identifier = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})
    prefilter = default_prefilter()
    paths = [*sorted(FIXTURES.glob("*.py")), *sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[::3]]
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in paths]
    texts += ["import apex\u00a0amp\nfrom torch.cuda import amp  # caf\u00e9\n", "apex.amp\x1capex\x1famp\n",
              "import torch\u2028amp = torch.cuda\u3000amp\u0085autocast\n", "x = '\ud800'; import apex.amp\n",
              "GradScaler\u00e9 amp\u00e9 \u00e9torch torch\u2003apex\n"]
    assert sum(text.isascii() for text in texts) > 50 and sum(not text.isascii() for text in texts) > 5
    for text in texts:
        characters = prefilter.words.intersection(text.translate(not_identifier).split())
        assert prefilter.present(text) == characters


def test_the_written_requirements_are_the_tables():
    """`default()` reads `_prefilter_words.py`, not the rules: it must say what the table says
    now (after a rule's matchers change: `python scripts/prefilter_words.py`), and the same on
    every run, whatever the hash seed."""
    from flake8_no_apex.rules import RULES

    from flake8_no_apex import _prefilter_words

    worked_out = Prefilter.of(RULES)
    written = Path(_prefilter_words.__file__).read_text()  # the file the pre-filter loads
    assert written == worked_out.written(), "stale: run python scripts/prefilter_words.py"
    loaded = default_prefilter()
    assert (loaded.needs, loaded.gate, loaded.words) == (worked_out.needs, worked_out.gate, worked_out.words)
    patterns = {n: p.pattern for n, p in worked_out.spellings.items()}
    assert {n: p.pattern for n, p in loaded.spellings.items()} == patterns
    write = ("from flake8_no_apex.prefilter import Prefilter\nfrom flake8_no_apex.rules import RULES\n"
             "print(Prefilter.of(RULES).written(), end='')")
    other_seed = subprocess.run([sys.executable, "-c", write], capture_output=True, text=True,
                                env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True)
    assert other_seed.stdout == worked_out.written()


def test_a_file_without_a_rules_word_is_checked_without_the_rule_table(tmp_path):
    """The pre-commit hook's usual run (files that touch no AMP code): nothing of the table, its
    rules, the checker or the fixer is imported, and a file named that does not parse is still
    an error."""
    clean, broken = tmp_path / "clean.py", tmp_path / "broken.py"
    clean.write_text("import os\nprint(os.getcwd())\n")
    broken.write_text("def f(:\n")
    probe = ("import sys\nfrom flake8_no_apex.cli import main\ncode = main(sys.argv[1:])\n"
             "heavy = sorted(m for m in sys.modules if m.split('.')[1:2] in (['table'], ['rules'], ['checker'],"
             " ['fixer']))\nprint(code, heavy)\n")
    for path, expected in ((clean, "0 []"), (broken, "2 []")):
        run = subprocess.run([sys.executable, "-c", probe, "check", "--no-cache", str(path)],
                             capture_output=True, text=True, cwd=tmp_path)
        assert run.stdout.strip().splitlines()[-1] == expected, run.stdout + run.stderr
    assert "broken.py:1:" in run.stderr
