"""YAML files: LightningCLI and Hydra configs (the Trainer arguments and classes the Python rules
know) and conda environments (apex pinned)."""
from __future__ import annotations


from . import Kind

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from ..engine import Analysis, Document, Session
    from ..fixer import FixResult

SUFFIXES = (".yaml", ".yml")


class YamlConfig(Kind):
    name = "yaml"

    def claims(self, name: str, folder: str) -> bool:
        return name.endswith(SUFFIXES)

    def analyse(self, session: "Session", document: "Document") -> "Analysis":
        from ..dependency_files import check_conda, drop_line, is_conda_environment
        from ..edits import Source
        from ..engine import Analysis, analysing
        from ..yaml_configs import check_yaml, is_trainer_group, looks_like_lightning_config

        floors = session.targets(document.path).floors
        source = Source(document.text)
        group = is_trainer_group(document.path)
        found = []
        with analysing():
            if group or looks_like_lightning_config(document.text):
                found = check_yaml(document.text, floors, session.index, group)
            if is_conda_environment(document.path.name, document.text):
                found += check_conda(document.text, floors)
        found = session.filtered(document.path, source, found)
        return Analysis(document, source, found, floors, lambda: [drop_line(source, f, "yaml") for f in found])

    def fix(self, session: "Session", document: "Document", unsafe: bool) -> "FixResult":
        return session.fix_lines(document, unsafe)


KIND = YamlConfig()
