"""Write flake8_no_apex/_prefilter_words.py: what each rule of the table requires of a file's
words, so that the pre-filter runs without importing the table (see prefilter.py). Run it after
changing a rule's matchers; tests/test_prefilter.py fails while the file is stale."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flake8_no_apex.prefilter import Prefilter  # noqa: E402
from flake8_no_apex.rules import RULES  # noqa: E402

TARGET = ROOT / "flake8_no_apex" / "_prefilter_words.py"

if __name__ == "__main__":
    TARGET.write_text(Prefilter.of(RULES).written())
    print(f"wrote {TARGET}")
