"""Every apex claim of the rule table, read from NVIDIA apex's git history (apex is not on the
registry): each module and name a row reports existed; a row's `deprecated_in` tag is the first
whose source warns, `removed_in` the first without the module; `removed_on`/`deprecated_on` are
the days of the commits on apex's main branch that deleted it or added the warning; a part the
table calls maintained is still there. Skipped, saying so, where no clone of apex is available."""
from __future__ import annotations

from typing import List, Tuple

import pytest

import apex_history as history
from flake8_no_apex.rules import RULES
from flake8_no_apex.table import Modules, Symbols

pytestmark = pytest.mark.skipif(
    history.repository() is None,
    reason=f"no clone of NVIDIA apex's history: set FLAKE8_NO_APEX_APEX_GIT to one, or put one at {history.CLONE}")


def apex_parts(rule) -> List[Tuple[str, str]]:
    """(module, name or '') of every apex part a row reports."""
    parts = []
    for matcher in rule.match:
        if isinstance(matcher, Modules):
            parts += [(prefix, "") for prefix in matcher.prefixes if prefix.startswith("apex")]
        elif isinstance(matcher, Symbols) and matcher.module.startswith("apex"):
            parts += [(matcher.module, name) for name in matcher.names]
    return parts


APEX_ROWS = [rule for rule in RULES if apex_parts(rule)]
IDS = [f"{rule.code}-{rule.title}" for rule in APEX_ROWS]


def test_the_table_has_apex_rows_of_every_kind():
    kinds = {(bool(r.timeline.removed_in), bool(r.timeline.removed_on), r.default_off) for r in APEX_ROWS}
    assert {(True, False, False), (False, True, False), (False, False, True)} <= kinds


def _moved_name(module: str, name: str) -> bool:
    """A name that left its module before apex's first tag, or left a module apex keeps
    (`apex.optimizers.FP16_Optimizer`, moved to apex.contrib in 2019): dated by the commit that
    took the name out, not by one that deleted the module."""
    return bool(name) and (history.has_module("HEAD", module) or not history.has_module(history.tags()[0], module))


def last_revision_with(rule, module: str) -> str:
    """Where a part of a row must still be found: the tag before its removal, the parent of the
    commit that deleted it, or apex's newest commit for what is maintained."""
    timeline = rule.timeline
    if timeline.library == "apex" and timeline.removed_in:
        return history.previous_tag(timeline.removed_in)
    name = next((name for m, name in apex_parts(rule) if m == module), "")
    if timeline.library == "apex" and timeline.removed_on and _moved_name(module, name):
        return history.name_removing_commit(module, name)[0] + "^"
    if timeline.library == "apex" and timeline.removed_on:
        deleted = history.deleting_commit(module)
        assert deleted is not None, f"no commit deleted {module}"
        return deleted[0] + "^"
    return "HEAD"


@pytest.mark.parametrize("rule", APEX_ROWS, ids=IDS)
def test_every_part_a_row_reports_existed(rule):
    for module, name in apex_parts(rule):
        revision = last_revision_with(rule, module)
        assert history.has_module(revision, module), f"{module} at {revision}"
        if name:
            assert history.defines(revision, module, name), f"{module}.{name} at {revision}"


@pytest.mark.parametrize("rule", [r for r in APEX_ROWS if r.timeline.library == "apex" and r.timeline.removed_in],
                         ids=lambda r: f"{r.code}-{r.title}")
def test_removed_in_is_the_first_tag_without_the_module(rule):
    removed = rule.timeline.removed_in
    for module in {module for module, _ in apex_parts(rule)}:
        assert not history.has_module(removed, module), f"{module} still at {removed}"
        assert history.has_module(history.previous_tag(removed), module), f"{module} gone before {removed}"


@pytest.mark.parametrize("rule", [r for r in APEX_ROWS if r.timeline.library == "apex" and r.timeline.removed_on],
                         ids=lambda r: f"{r.code}-{r.title}")
def test_removed_on_is_the_day_the_main_branch_deleted_it(rule):
    for module, name in apex_parts(rule):
        if _moved_name(module, name):
            moved = history.name_removing_commit(module, name)
            assert moved is not None and moved[1] == rule.timeline.removed_on, (module, name, moved)
            assert history.defines(moved[0] + "^", module, name) and not history.defines(moved[0], module, name)
            assert not any(history.defines(tag, module, name) for tag in history.tags()), f"{module}.{name} at a tag"
            continue
        deleted = history.deleting_commit(module)
        assert deleted is not None and deleted[1] == rule.timeline.removed_on, (module, deleted)
        assert not history.has_module("HEAD", module)
        newest_tag = history.tags()[-1]
        assert history.has_module(newest_tag, module), f"{module} is gone from tag {newest_tag} already"


@pytest.mark.parametrize("rule", [r for r in APEX_ROWS if r.timeline.library == "apex" and r.timeline.deprecated_in],
                         ids=lambda r: f"{r.code}-{r.title}")
def test_deprecated_in_is_the_first_tag_whose_source_warns(rule):
    tag = rule.timeline.deprecated_in
    for module in {module for module, _ in apex_parts(rule)}:
        assert history.warns(tag, module), f"{module} does not warn at {tag}"
        assert not history.warns(history.previous_tag(tag), module), f"{module} warns before {tag}"


@pytest.mark.parametrize("rule", [r for r in APEX_ROWS if r.timeline.deprecated_on],
                         ids=lambda r: f"{r.code}-{r.title}")
def test_deprecated_on_is_the_day_the_warning_came_after_the_last_tag(rule):
    for module in {module for module, _ in apex_parts(rule)}:
        assert history.warned_from(module) == rule.timeline.deprecated_on, module
        assert not history.warns(history.tags()[-1], module), f"{module} warns at a tag: use deprecated_in"


@pytest.mark.parametrize("rule", [r for r in APEX_ROWS if r.default_off], ids=lambda r: f"{r.code}-{r.title}")
def test_what_the_table_calls_maintained_is_on_apex_main_branch_and_does_not_warn(rule):
    for module, name in apex_parts(rule):
        assert history.has_module("HEAD", module), module
        if name:
            assert history.defines("HEAD", module, name), f"{module}.{name}"


def test_names_the_table_once_had_wrong_never_existed():
    """Issue 21: APX108 matched `MixedFusedLayerNormAffineFunction`, a name no apex commit has."""
    for name in ("MixedFusedLayerNormAffineFunction", "MixedFusedRMSNormAffineFunction"):
        assert not history.git("log", "--all", "--format=%h", "-S", name, "--", "apex").strip(), name
