"""JSON files: DeepSpeed configs (`ds_config.json`, or any JSON whose top level is one) with apex
AMP's `"amp"` section (APX601), which DeepSpeed 0.19.8 rejects. JSON holds no comments: a
finding a team keeps goes in a baseline (`check --baseline`)."""
from __future__ import annotations

import re

from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult

# a DeepSpeed config by its name (read as one whatever it holds, and an error if it is no JSON)
_DEEPSPEED_NAME = re.compile(r"(ds|deepspeed|zero)[_\-.]?.*\.json$", re.IGNORECASE)
# the top-level keys only DeepSpeed's config has (the batch sizes are required by it)
DEEPSPEED_KEYS = frozenset({"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                            "zero_optimization", "steps_per_print", "wall_clock_breakdown",
                            "zero_allow_untested_optimizer", "gradient_clipping", "activation_checkpointing",
                            "flops_profiler", "prescale_gradients", "fp16", "bf16"})
MAX_JSON_BYTES = 5_000_000  # a larger JSON file is data, not a config: left unread


class JsonConfig(Kind):
    name = "json"
    comment = None

    def claims(self, name: str, folder: str) -> bool:
        return name.endswith(".json")

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..edits import Source
        from ..engine import Analysis, analysing

        source = Source(document.text)
        floors = session.targets(document.path).floors
        with analysing():
            found = self._amp_sections(session, document, source, floors)
        found = session.filtered(document.path, source, found, noqa=lambda line, code: False)
        return Analysis(document, source, found, floors)

    def _amp_sections(self, session: "Session", document: "Document", source, floors) -> list:
        """The top-level "amp" key of a DeepSpeed config, where its object holds apex's options."""
        text = document.text
        named = bool(_DEEPSPEED_NAME.match(document.path.name))
        if not named and '"amp"' not in text or len(text) > MAX_JSON_BYTES and not document.named:
            return []
        from ..files import MalformedFile
        from ..json_positions import members
        from ..table import Site

        try:
            top = members(text, 0)
        except ValueError as error:
            if named:  # a DeepSpeed config that DeepSpeed could not read either
                raise MalformedFile(f"cannot parse as JSON: {error}") from None
            return []
        keys = {member.key for member in top}
        if not (named or keys & DEEPSPEED_KEYS):
            return []
        # the Python rule's row, whose section keys say what an apex section holds (a metric named
        # "amp" is none)
        matcher, rule = next((m, r) for m, r in session.index.dict_keys["amp"] if m.section_keys)
        found = []
        for member in top:
            if member.key == "amp" and isinstance(member.value, dict) and set(matcher.section_keys) & set(member.value):
                line, column = source.position(member.key_start)
                finding = rule.finding(Site(None, "amp", value=member.value), line, column - 1, floors, len('"amp"'))
                if finding is not None:
                    found.append(finding)
        return found

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        return session.fix_lines(document, unsafe)


KIND = JsonConfig()
