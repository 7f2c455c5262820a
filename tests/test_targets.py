"""Version targets: the option, detection from project metadata, and what they change."""
from __future__ import annotations

import ast
import sys
import textwrap

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from flake8_no_apex import targets
from flake8_no_apex.checker import check_tree
from flake8_no_apex.fixer import fix_text
from flake8_no_apex.rules import PYTHON_RULES
from flake8_no_apex.targets import Detector, MetadataWarning, TargetError, lower_bound, parse_option
from helpers import COMMAND, messages, run_command

V = Version


# --- the option -------------------------------------------------------------------------------
def test_option_values():
    assert parse_option("auto") is None and parse_option("") is None
    assert parse_option("torch=2.1, pytorch-lightning=1.9,transformers=4.30").floors == {
        "torch": V("2.1"), "lightning": V("1.9"), "transformers": V("4.30"),
    }
    assert parse_option("lightning_fabric=2.0").floors == {"lightning": V("2.0")}


@pytest.mark.parametrize("text", ["tensorflow=2.1", "torch", "torch=2.x", "torch=>2.1"])
def test_bad_option_values(text):
    with pytest.raises(TargetError, match=r"expected LIBRARY=VERSION|is not a version"):
        parse_option(text)


# --- lower bounds -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "specifiers, floor",
    [(">=2.1", "2.1"), ("~=2.1", "2.1"), ("==2.1.*", "2.1"), ("==2.1.0", "2.1.0"), (">2.1", "2.1"),
     (">=1.8,<2", "1.8"), ("<3", None), ("!=2.0", None), ("", None)],
)
def test_lower_bound(specifiers, floor):
    assert lower_bound(SpecifierSet(specifiers)) == (V(floor) if floor else None)


def write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def floors(root):
    return targets.floors_of(targets.declarations(root)).floors


# --- detection per metadata format ------------------------------------------------------------
def test_pep621_dependencies_extras_and_markers(tmp_path):
    write(tmp_path, "pyproject.toml", """
        [project]
        name = "x"
        dependencies = ["torch>=2.1", "numpy", "pytorch-lightning[extra]>=1.8,<2"]
        [project.optional-dependencies]
        hf = ["transformers~=4.30"]
    """)
    assert floors(tmp_path) == {"torch": V("2.1"), "lightning": V("1.8"), "transformers": V("4.30")}


def test_poetry_tables(tmp_path):
    write(tmp_path, "pyproject.toml", """
        [tool.poetry.dependencies]
        python = "^3.9"
        torch = "^2.1"
        lightning = {version = "~2.2", optional = true}
        transformers = "^4.26 || ^5.0"
        [tool.poetry.group.dev.dependencies]
        lightning-fabric = ">=2.0,<3"
    """)
    # lightning-fabric's >=2.0 admits an older Lightning release than ~2.2: the lowest is the floor
    assert floors(tmp_path) == {"torch": V("2.1"), "lightning": V("2.0"), "transformers": V("4.26")}


def test_pdm_and_dependency_groups(tmp_path):
    write(tmp_path, "pyproject.toml", """
        [tool.pdm.dev-dependencies]
        test = ["torch==2.3.*"]
        [dependency-groups]
        train = ["lightning>=2.1.1"]
    """)
    assert floors(tmp_path) == {"torch": V("2.3"), "lightning": V("2.1.1")}


def test_setup_cfg(tmp_path):
    write(tmp_path, "setup.cfg", """
        [options]
        install_requires =
            torch>=1.13
            pytorch-lightning>=1.9
        [options.extras_require]
        hf = transformers>=4.13
    """)
    assert floors(tmp_path) == {"torch": V("1.13"), "lightning": V("1.9"), "transformers": V("4.13")}


def test_requirements_and_constraints_files(tmp_path):
    write(tmp_path, "requirements.txt", """
        # training
        --index-url https://example.invalid/simple
        -r requirements/base.txt
        transformers>=4.20 \\
            ; python_version >= "3.8"
        -e ./local_pkg
    """)
    write(tmp_path, "requirements/base.txt", "torch>=2.0  # cuda 12\n")
    write(tmp_path, "constraints.txt", "lightning==2.2.1\n")
    assert floors(tmp_path) == {"torch": V("2.0"), "transformers": V("4.20"), "lightning": V("2.2.1")}


def test_the_lowest_release_any_declaration_admits_is_the_floor(tmp_path):
    """A package declaring `pytorch-lightning>=1.6,<2` supports 1.6 even where requirements.txt pins
    1.9.5 for its own CI (issue 21: the pin made the safe rename to a 1.9-only class)."""
    write(tmp_path, "pyproject.toml", '[project]\ndependencies = ["torch>=2.0"]\n')
    write(tmp_path, "requirements.txt", "torch>=2.3\n")
    assert floors(tmp_path) == {"torch": V("2.0")}
    write(tmp_path, "pyproject.toml", '[project]\ndependencies = ["pytorch-lightning>=1.6,<2"]\n')
    write(tmp_path, "requirements.txt", "pytorch-lightning==1.9.5\n")
    assert floors(tmp_path) == {"lightning": V("1.6")}
    source = ("from pytorch_lightning.plugins import NativeMixedPrecisionPlugin\n"
              "p = NativeMixedPrecisionPlugin(16, 'cuda')\n")
    assert fix_text(source, floors(tmp_path)).text == source  # MixedPrecisionPlugin is not in 1.6-1.8
    write(tmp_path, "requirements.txt", "pytorch-lightning  # no bound: says nothing about the floor\n")
    assert floors(tmp_path) == {"lightning": V("1.6")}


def test_declarations_that_hold_only_under_markers(tmp_path):
    write(tmp_path, "requirements.txt", """
        torch>=1.13; python_version < "3.10"
        torch>=2.1; python_version >= "3.10"
    """)
    assert floors(tmp_path) == {"torch": V("1.13")}  # a supported environment gets only 1.13
    write(tmp_path, "requirements.txt", 'torch>=2.1\ntorch>=2.4; python_version >= "3.12"\n')
    assert floors(tmp_path) == {"torch": V("2.1")}


def test_no_lower_bound_means_newest(tmp_path):
    write(tmp_path, "requirements.txt", "torch\nlightning<3\n")
    assert floors(tmp_path) == {}


def test_malformed_file_is_ignored_with_a_warning(tmp_path):
    write(tmp_path, "pyproject.toml", "[project\ndependencies = [")
    write(tmp_path, "requirements.txt", "torch>=2.1\n")
    with pytest.warns(MetadataWarning, match="pyproject.toml"):
        assert floors(tmp_path) == {"torch": V("2.1")}


def test_root_is_the_nearest_directory_with_metadata(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\ndependencies = ["torch>=2.1"]\n')
    source = write(tmp_path, "src/pkg/deep/train.py", "")
    assert targets.project_root(source.parent) == tmp_path
    detect = Detector()
    found = detect(str(source))
    assert found.floors == {"torch": V("2.1")} and found.sources == (str(tmp_path / "pyproject.toml"),)
    assert detect(str(source)) is found  # read once per root
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=2.3"]\n')
    assert detect(str(source)) is found
    detect.forget()  # what a long-lived front end does when the metadata changes
    assert detect(str(source)).floors == {"torch": V("2.3")}


def test_links_are_followed_to_the_project_they_are_in(tmp_path, monkeypatch):
    """A linked directory is the directory it links to; a linked file belongs to the project of
    the file it links to, even beside files of another project (directories are resolved once)."""
    write(tmp_path, "a/pyproject.toml", '[project]\ndependencies = ["torch>=2.1"]\n')
    write(tmp_path, "b/pyproject.toml", '[project]\ndependencies = ["torch>=2.3"]\n')
    write(tmp_path, "a/train.py", "")
    write(tmp_path, "b/src/own.py", "")
    (tmp_path / "b" / "src" / "linked.py").symlink_to(tmp_path / "a" / "train.py")
    (tmp_path / "c").symlink_to(tmp_path / "b" / "src")
    detect = Detector()
    assert detect(str(tmp_path / "b" / "src" / "own.py")).floors == {"torch": V("2.3")}
    assert detect(str(tmp_path / "b" / "src" / "linked.py")).floors == {"torch": V("2.1")}
    assert detect(str(tmp_path / "c" / "own.py")).floors == {"torch": V("2.3")}
    monkeypatch.chdir(tmp_path / "a")
    assert detect("train.py").floors == {"torch": V("2.1")}


def test_a_linked_directory_below_a_resolved_one_is_resolved_itself(tmp_path):
    """Directories are resolved from their parent's real path, which a link among them breaks."""
    write(tmp_path, "a/pyproject.toml", '[project]\ndependencies = ["torch>=2.1"]\n')
    write(tmp_path, "b/pyproject.toml", '[project]\ndependencies = ["torch>=2.3"]\n')
    write(tmp_path, "a/lib/train.py", "")
    write(tmp_path, "b/src/own.py", "")
    write(tmp_path, "b/src/sub/deeper.py", "")
    (tmp_path / "b" / "src" / "lib").symlink_to(tmp_path / "a" / "lib")
    detect = Detector()
    assert detect(str(tmp_path / "b" / "src" / "own.py")).floors == {"torch": V("2.3")}
    assert detect(str(tmp_path / "b" / "src" / "sub" / "deeper.py")).floors == {"torch": V("2.3")}
    assert detect(str(tmp_path / "b" / "src" / "lib" / "train.py")).floors == {"torch": V("2.1")}
    assert detect.root_of(str(tmp_path / "b" / "src" / "sub" / ".." / "own.py")) == tmp_path / "b"


@pytest.mark.parametrize("marker, is_root", [
    ("requirements-dev.txt", True), ("constraints.txt", True), ("setup.py", True), ("setup.cfg", True),
    ("requirements.in", False), ("Requirements.txt", False), ("pyproject.toml/", False),
])
def test_what_makes_a_directory_a_project_root(tmp_path, marker, is_root):
    """The names `_kind_of_directory` reads from one listing: the metadata files (a directory of
    that name is none), and the requirement globs, case-sensitive as pathlib's."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    if marker.endswith("/"):
        (tmp_path / "repo" / "proj" / marker).mkdir(parents=True)
    else:
        write(tmp_path, f"repo/proj/{marker}", "torch>=2.1\n")
    source = write(tmp_path, "repo/proj/train.py", "")
    assert targets.project_root(source.parent) == (tmp_path / "repo" / "proj" if is_root else None)


def test_a_worktree_whose_git_is_a_file_is_a_repository_root(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\ndependencies = ["torch>=2.1"]\n')
    write(tmp_path, "worktree/.git", "gitdir: /elsewhere/.git/worktrees/x\n")
    source = write(tmp_path, "worktree/train.py", "")
    assert targets.project_root(source.parent) is None


def test_search_stops_at_the_repository_root(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\ndependencies = ["torch>=2.1"]\n')
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    source = write(tmp_path, "repo/train.py", "")
    assert targets.project_root(source.parent) is None
    assert Detector()(str(source)).floors == {}


# --- what the floors change ---------------------------------------------------------------------
def just_below(version: str) -> Version:
    major, minor, micro = (V(version).release + (0, 0))[:3]
    if micro:
        return V(f"{major}.{minor}.{micro - 1}")
    return V(f"{major}.{minor - 1}") if minor else V(f"{major - 1}.99")


GATED = [
    rule for rule in PYTHON_RULES
    if rule.timeline.library != "apex" and (rule.timeline.replacement_since or rule.timeline.deprecated_in)
]


@pytest.mark.parametrize("rule", GATED, ids=[f"{r.code}-{r.title}" for r in GATED])
def test_reported_from_the_release_its_replacement_exists_in(rule):
    threshold = rule.timeline.replacement_since or rule.timeline.deprecated_in
    library = rule.timeline.library
    tree = ast.parse(rule.before)

    def reported(floor):
        return any(f.rule is rule for f in check_tree(tree, floors={library: floor}))

    assert reported(V(threshold)), f"{library}={threshold}"
    assert not reported(just_below(threshold)), f"{library}={just_below(threshold)}"


def test_apex_rules_report_whatever_the_targets():
    old = {"torch": V("1.6"), "lightning": V("1.0"), "transformers": V("4.0")}
    for rule in (r for r in PYTHON_RULES if r.timeline.library == "apex"):
        assert any(f.rule is rule for f in check_tree(ast.parse(rule.before), floors=old)), rule.code


def test_message_says_deprecated_until_the_floor_reaches_the_removal():
    source = "import pytorch_lightning as pl\npl.Trainer(amp_backend='native')\n"
    assert "is deprecated since Lightning 1.9;" in messages(source, floors={"lightning": V("1.9.5")})[0]
    assert "was removed in Lightning 2.0;" in messages(source, floors={"lightning": V("2.0")})[0]
    assert "was removed in Lightning 2.0;" in messages(source)[0]


def test_suggestions_follow_the_targets():
    apex = "from apex import amp\nwith amp.scale_loss(loss, opt) as s:\n    s.backward()\n"
    old_torch = messages(apex, floors={"torch": V("2.1")})
    assert old_torch[0].endswith('use torch.amp.autocast("cuda") and torch.cuda.amp.GradScaler()')
    assert old_torch[1].endswith("with scaler = torch.cuda.amp.GradScaler()")
    oldest = messages(apex, floors={"torch": V("1.10")})
    assert oldest[0].endswith('use torch.autocast("cuda") and torch.cuda.amp.GradScaler()')
    assert messages(apex)[1].endswith('with scaler = torch.amp.GradScaler("cuda")')

    native = "from pytorch_lightning.plugins import NativeMixedPrecisionPlugin\n"
    assert messages(native, floors={"lightning": V("1.9")})[0].endswith("use MixedPrecisionPlugin")
    assert messages(native, floors={"lightning": V("2.2")})[0].endswith("use MixedPrecision")
    backend = "import pytorch_lightning as pl\npl.Trainer(amp_backend='apex')\n"
    assert messages(backend, floors={"lightning": V("1.9")})[0].endswith("and set precision=16")

    hf = "from transformers import TrainingArguments\nTrainingArguments('o', fp16_backend='auto')\n"
    assert messages(hf, floors={"transformers": V("4.30")})[0].endswith(
        "is deprecated since transformers 4.13; rename it to half_precision_backend (same values)"
    )
    assert "drop it" in messages(hf, floors={"transformers": V("5.0")})[0]


# --- through flake8 ---------------------------------------------------------------------------
SOURCE = "import torch\nwith torch.cuda.amp.autocast():\n    pass\nscaler = torch.cuda.amp.GradScaler()\n"


def flake8(cwd, *args):
    return run_command(
        [sys.executable, "-m", "flake8", "--select", "APX", "--format=%(code)s", *args],
        cwd=cwd, capture_output=True, text=True, check=False,
    )


def test_option_gates_findings(tmp_path):
    write(tmp_path, "train.py", SOURCE)
    assert flake8(tmp_path, "--apex-target-versions", "torch=2.1", "train.py").stdout.split() == ["APX201"]
    assert flake8(tmp_path, "--apex-target-versions", "torch=2.3", "train.py").stdout.split() == ["APX201", "APX203"]


def test_auto_detection_with_no_option_and_explicit_option_beats_it(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch>=2.1"]\n')
    write(tmp_path, "src/train.py", SOURCE)
    assert flake8(tmp_path, "src/train.py").stdout.split() == ["APX201"]
    explicit = flake8(tmp_path, "--apex-target-versions", "torch=2.4", "src/train.py")
    assert explicit.stdout.split() == ["APX201", "APX203"]
    verbose = flake8(tmp_path, "-v", "src/train.py").stderr
    assert "torch>=2.1 from " + str(tmp_path / "pyproject.toml") in verbose


def test_option_from_config_file(tmp_path):
    write(tmp_path, "setup.cfg", "[flake8]\napex-target-versions = torch=2.1\n")
    write(tmp_path, "train.py", SOURCE)
    assert flake8(tmp_path, "train.py").stdout.split() == ["APX201"]


def test_bad_configuration_is_an_option_error_not_a_traceback(tmp_path):
    write(tmp_path, "tox.ini", "[flake8]\napex-target-versions = tensorflow=2.1\n")
    write(tmp_path, "train.py", SOURCE)
    result = flake8(tmp_path, "train.py")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "argument --apex-target-versions: 'tensorflow=2.1': expected LIBRARY=VERSION" in result.stderr


def test_stdin_detects_targets_from_the_display_name(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch>=2.1"]\n')
    (tmp_path / "src").mkdir()
    result = run_command(
        [sys.executable, "-m", "flake8", "--select", "APX", "--format=%(code)s",
         "--stdin-display-name", "src/train.py", "-"],
        cwd=tmp_path, input=SOURCE, capture_output=True, text=True, check=False,
    )
    assert result.stdout.split() == ["APX201"]


LEGACY_PROJECT = """\
[project]
name = "legacy"
dependencies = ["pytorch-lightning>=1.6,<2", "torch>=1.13"]

[tool.flake8-no-apex]
apex-target-versions = "torch=2.4"
"""
LIGHTNING_TRAIN = ("import pytorch_lightning as pl\n"
                   "trainer = pl.Trainer(precision=16, amp_backend=\"native\")\n"
                   "import torch\nwith torch.cuda.amp.autocast():\n    pass\n")


def test_explicit_targets_override_only_the_libraries_they_name_and_say_where_they_come_from(tmp_path):
    """Issue 21: `apex-target-versions = "torch=2.4"` in pyproject discarded Lightning's declared 1.6
    (which then counted as the newest, and got `precision="16-mixed"`, a 2.0 value), and
    --show-targets named the command-line option as its source."""
    (tmp_path / "pyproject.toml").write_text(LEGACY_PROJECT)
    (tmp_path / "train.py").write_text(LIGHTNING_TRAIN)
    result = run_command([*COMMAND, "check", "--show-targets", "."], cwd=tmp_path, capture_output=True,
                         text=True)
    pyproject = tmp_path.resolve() / "pyproject.toml"
    assert (f"targets: lightning>=1.6 from {pyproject}, torch>=2.4 from apex-target-versions in {pyproject}"
            in result.stderr)
    assert "16-mixed" not in result.stdout and "APX201" in result.stdout
    given = run_command([*COMMAND, "check", "--show-targets", "--apex-target-versions", "lightning=2.0", "."],
                        cwd=tmp_path, capture_output=True, text=True)
    assert f"targets: lightning>=2.0 from --apex-target-versions, torch>=1.13 from {pyproject}" in given.stderr
    assert "16-mixed" in given.stdout


def test_findings_the_targets_hide_are_counted_on_one_line_with_the_option_that_shows_them(tmp_path):
    (tmp_path / "pyproject.toml").write_text(LEGACY_PROJECT)
    (tmp_path / "train.py").write_text(LIGHTNING_TRAIN)
    result = run_command([*COMMAND, "check", "."], cwd=tmp_path, capture_output=True, text=True)
    assert result.stderr.endswith("2 findings hidden by the version targets (lightning>=1.6); "
                                  "`--apex-target-versions lightning=2.0` shows them\n")
    shown = run_command([*COMMAND, "check", "--apex-target-versions", "lightning=2.0", "."], cwd=tmp_path,
                        capture_output=True, text=True)
    assert shown.stdout.count("APX00") == 2 and "hidden" not in shown.stderr
    quiet = run_command([*COMMAND, "check", "--output-format", "json", "."], cwd=tmp_path, capture_output=True,
                        text=True)
    assert "APX002" not in quiet.stdout  # hidden findings are never listed, in any format


def test_the_generic_autocast_state_functions_wait_for_a_torch_floor_of_2_4():
    """torch 2.3 has no device overloads (`torch.get_autocast_dtype` is missing, `is_autocast_enabled`
    takes no device): a project that still supports it keeps the per-device function."""
    from flake8_no_apex.fixer import fix_text

    source = "import torch\n\ndtype = torch.get_autocast_gpu_dtype()\n"
    assert fix_text(source, floors={"torch": V("2.3")}).text == source
    fixed = 'import torch\n\ndtype = torch.get_autocast_dtype("cuda")\n'
    assert fix_text(source, floors={"torch": V("2.4")}).text == fixed


def test_accelerate_is_a_target_its_rules_follow(tmp_path):
    """accelerate's floor comes from the project's metadata like torch's: `autocast(cache_enabled=...)`
    is reported once the floor has AutocastKwargs (0.22), `Accelerator(fp16=...)` once it has
    `mixed_precision` (0.6), and the message says "deprecated" below the removal."""
    write(tmp_path, "requirements.txt", "accelerate>=0.20\n")
    assert floors(tmp_path) == {"accelerate": V("0.20")}
    source = ("from accelerate import Accelerator\n\naccelerator = Accelerator(fp16=True)\n"
              "with accelerator.autocast(cache_enabled=True):\n    pass\n")
    found = {f.code: f.message for f in check_tree(ast.parse(source), floors={"accelerate": V("0.20")})}
    assert set(found) == {"APX401"} and "was removed in accelerate 0.16" in found["APX401"]
    found = {f.code: f.message for f in check_tree(ast.parse(source), floors={"accelerate": V("0.22")})}
    assert "APX403 accelerator.autocast(cache_enabled=...) is deprecated since accelerate 0.22" in found["APX403"]
    assert targets.parse_option("accelerate=0.22").floors == {"accelerate": V("0.22")}
