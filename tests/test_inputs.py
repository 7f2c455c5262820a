"""The input kinds beyond Python modules, through the real command: notebooks, shell scripts,
Dockerfiles, CI workflows, DeepSpeed JSON configs and (opt-in) documentation."""
from __future__ import annotations

import subprocess

import ast
import json
import textwrap
from pathlib import Path

import pytest

from helpers import COMMAND, run_command

from flake8_no_apex.inputs import KINDS, kind_of, kinds


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_command([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, check=False)


def lines(result: subprocess.CompletedProcess):
    """(place, code) of each finding line of `check`'s concise output."""
    found = []
    for line in result.stdout.splitlines():
        place, _, message = line.partition(": ")
        found.append((place, message.split()[0]))
    return found


# --- the registry ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kind", [
    ("train.py", "python"), ("script", "python"), ("nb.ipynb", "notebook"), ("ds_config.json", "json"),
    ("install.sh", "shell"), ("Dockerfile", "shell"), ("docker/train.Dockerfile", "shell"),
    (".github/workflows/ci.yml", "shell"), (".gitlab-ci.yml", "shell"), ("conf/trainer/default.yaml", "yaml"),
    ("environment.yml", "yaml"), ("requirements-dev.txt", "dependencies"), ("pyproject.toml", "dependencies"),
    ("README.md", "docs"), ("docs/guide.rst", "docs"), ("notes.txt", "python"),
])
def test_each_file_is_read_by_the_first_kind_that_claims_it(name, kind):
    assert kind_of(Path(name)).name == kind


def test_every_kind_in_the_registry_is_one_module_with_one_kind():
    assert [kind.__class__.__module__.rsplit(".", 1)[-1] for kind in kinds()] == list(KINDS)
    assert len({kind.name for kind in kinds()}) == len(KINDS)


# --- notebooks ---------------------------------------------------------------------------------
def code_cell(source, outputs=()):
    return {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["x"]}, "outputs": list(outputs),
            "source": source.splitlines(True) if isinstance(source, str) else source}


def notebook(*cells, language="python"):
    kernel = {"display_name": "Python 3", "language": language, "name": "python3"}
    return {"cells": list(cells), "metadata": {"kernelspec": kernel},
            "nbformat": 4, "nbformat_minor": 5}


def nbformat_text(nb) -> str:
    """A notebook as Jupyter (nbformat) writes it."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


MARKDOWN = {"cell_type": "markdown", "metadata": {}, "source": ["# Training with `from apex import amp`\n"]}
OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["loss 0.5 — é\n"]}


def test_a_notebook_is_checked_cell_by_cell_at_rufs_positions(tmp_path):
    nb = notebook(MARKDOWN,
                  code_cell("%pip install apex\n!git clone https://github.com/NVIDIA/apex\n%matplotlib inline"),
                  code_cell("import torch\nfrom apex import amp", [OUTPUT]),
                  code_cell("%%time\nscaler = torch.cuda.amp.GradScaler()\nx = !ls\ntorch.cuda.amp.autocast?"),
                  code_cell("%%bash\npip install git+https://github.com/NVIDIA/apex\n"),
                  code_cell("%%html\n<p>pip install apex</p>"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    result = run(tmp_path, "check", "nb.ipynb")
    assert result.returncode == 1, result.stderr
    assert lines(result) == [("nb.ipynb:cell 2:1:14", "APX109"), ("nb.ipynb:cell 2:2:12", "APX109"),
                             ("nb.ipynb:cell 3:2:18", "APX001"), ("nb.ipynb:cell 4:2:10", "APX203"),
                             ("nb.ipynb:cell 5:2:13", "APX109")]
    full = run(tmp_path, "check", "--output-format", "full", "nb.ipynb").stdout
    assert "1 | %pip install apex\n" in full and "2 | scaler = torch.cuda.amp.GradScaler()\n" in full
    rows = json.loads(run(tmp_path, "check", "--output-format", "json", "nb.ipynb").stdout)
    assert [(r["cell"], r["line"], r["column"]) for r in rows][2:4] == [(3, 2, 18), (4, 2, 10)]
    assert rows[3]["fix"]["edits"][0]["start"] == {"cell": 4, "line": 2, "column": 10}
    sarif = json.loads(run(tmp_path, "check", "--output-format", "sarif", "nb.ipynb").stdout)
    results = sarif["runs"][0]["results"]
    assert [r["properties"]["cell"] for r in results] == [2, 2, 3, 4, 5] and not any("fixes" in r for r in results)


def test_fix_rewrites_the_cells_and_keeps_every_other_byte_of_the_notebook(tmp_path):
    nb = notebook(MARKDOWN, code_cell("import torch\n", [OUTPUT]),
                  code_cell("with torch.cuda.amp.autocast():\n    y = 1  # é\nscaler = torch.cuda.amp.GradScaler()"),
                  code_cell("!pip install apex"))
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat_text(nb))
    result = run(tmp_path, "fix", "nb.ipynb")
    assert result.returncode == 1 and "nb.ipynb:cell 4:1:14: APX109" in result.stdout, result.stdout + result.stderr
    nb["cells"][2]["source"] = ['with torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):\n',
                                "    y = 1  # é\n", 'scaler = torch.amp.GradScaler("cuda")']
    assert path.read_text() == nbformat_text(nb)


def test_a_notebook_in_another_layout_keeps_it(tmp_path):
    """Two-space indentation, keys in their own order, a source that is one string, ASCII escapes."""
    nb = {"nbformat": 4, "nbformat_minor": 2, "metadata": {},
          "cells": [{"source": "import torch\nscaler = torch.cuda.amp.GradScaler()  # \u00e9\n",
                     "cell_type": "code", "outputs": [], "metadata": {}, "execution_count": None}]}
    text = json.dumps(nb, indent=2)
    (tmp_path / "nb.ipynb").write_text(text)
    run(tmp_path, "fix", "nb.ipynb")
    nb["cells"][0]["source"] = 'import torch\nscaler = torch.amp.GradScaler("cuda")  # \u00e9\n'
    assert (tmp_path / "nb.ipynb").read_text() == json.dumps(nb, indent=2)


def test_the_apex_loop_across_cells_migrates(tmp_path):
    nb = notebook(code_cell("import torch\nimport torch.nn.functional as F\nfrom apex import amp"),
                  code_cell("model = torch.nn.Linear(10, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                            'model, optimizer = amp.initialize(model, optimizer, opt_level="O1")'),
                  code_cell("%%time\nfor step in range(3):\n    x = torch.randn(4, 10)\n    optimizer.zero_grad()\n"
                            "    loss = F.mse_loss(model(x), x.sum(1, keepdim=True))\n"
                            "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
                            "        scaled_loss.backward()\n    optimizer.step()"))
    (tmp_path / "train.ipynb").write_text(nbformat_text(nb))
    result = run(tmp_path, "fix", "--unsafe-fixes", "train.ipynb")
    assert "migrated  train.ipynb" in result.stderr + result.stdout, result.stdout + result.stderr
    fixed = json.loads((tmp_path / "train.ipynb").read_text())
    sources = ["".join(cell["source"]) for cell in fixed["cells"]]
    assert sources[0] == "import torch\nimport torch.nn.functional as F"
    assert sources[1].endswith('scaler = torch.amp.GradScaler("cuda")')
    assert sources[2].startswith("%%time\n") and "scaler.scale(loss).backward()" in sources[2]
    ast.parse("\n".join(source.replace("%%time", "") for source in sources))
    assert run(tmp_path, "check", "train.ipynb").returncode == 0


def test_noqa_and_add_noqa_in_cells(tmp_path):
    nb = notebook(code_cell("import torch\nscaler = torch.cuda.amp.GradScaler()  # noqa: APX203"),
                  code_cell("with torch.cuda.amp.autocast():\n    pass\n!pip install apex"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    assert [code for _, code in lines(run(tmp_path, "check", "nb.ipynb"))] == ["APX201", "APX109"]
    result = run(tmp_path, "check", "--add-noqa", "nb.ipynb")
    assert "Added 2 noqa directives to 1 file." in result.stderr, result.stderr
    cell = json.loads((tmp_path / "nb.ipynb").read_text())["cells"][1]["source"]
    assert cell == ["with torch.cuda.amp.autocast():  # noqa: APX201\n", "    pass\n",
                    "!pip install apex  # noqa: APX109"]
    assert run(tmp_path, "check", "nb.ipynb").returncode == 0


def test_a_baseline_knows_a_notebooks_findings(tmp_path):
    nb = notebook(code_cell("import torch\nscaler = torch.cuda.amp.GradScaler()"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    assert run(tmp_path, "check", "--baseline", "b.json", "--update-baseline").returncode == 0
    nb["cells"].insert(0, code_cell("print(1)"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    assert run(tmp_path, "check", "--baseline", "b.json").returncode == 0
    nb["cells"].append(code_cell("with torch.cuda.amp.autocast():\n    pass"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    assert lines(run(tmp_path, "check", "--baseline", "b.json")) == [("nb.ipynb:cell 3:1:6", "APX201")]


def test_a_cell_that_does_not_parse_is_the_notebooks_error_at_its_place(tmp_path):
    nb = notebook(code_cell("import torch\n"), code_cell("from apex import amp\nprint 'old'"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    result = run(tmp_path, "check", "nb.ipynb")
    assert result.returncode == 2 and "nb.ipynb:cell 2:2:" in result.stderr and "cannot parse" in result.stderr


def test_notebooks_of_other_kernels_and_malformed_ones(tmp_path):
    (tmp_path / "r.ipynb").write_text(nbformat_text(notebook(code_cell("library(apex)\nfrom apex import amp"),
                                                             language="R")))
    assert run(tmp_path, "check", "r.ipynb").returncode == 0
    (tmp_path / "bad.ipynb").write_text('{"cells": [')
    result = run(tmp_path, "check", "bad.ipynb")
    assert result.returncode == 2 and "bad.ipynb: cannot parse as a notebook" in result.stderr


def test_a_walk_finds_notebooks(tmp_path):
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "a.ipynb").write_text(nbformat_text(notebook(code_cell("from apex import amp"))))
    assert lines(run(tmp_path, "check")) == [("nbs/a.ipynb:cell 1:1:18", "APX001")]


# --- shell scripts, Dockerfiles, CI ------------------------------------------------------------
SCRIPT = """\
#!/bin/bash
set -ex
git clone https://github.com/NVIDIA/apex
cd apex && pip install -v --no-cache-dir --global-option="--cpp_ext" ./
sudo -H pip3 install apex
python -m pip install -r requirements.txt 'apex @ git+https://github.com/NVIDIA/apex'
conda install -y -c conda-forge nvidia-apex
accelerate launch --num_processes 2 --fp16 train.py --fp16
python train.py --amp_backend apex \\
    --gpus 2
CUDA_VISIBLE_DEVICES=0 torchrun --nproc_per_node 2 run_glue.py --fp16 --fp16_opt_level O1
"""
LOOK_ALIKES = """\
# pip install apex
echo "pip install apex"
pip install apex-tools apexpy 'apex-utils>=1'
git clone https://github.com/someone/apex-tools
python train.py --fp16 --opt_level O1
accelerate launch train.py --fp16
pip download apex
"""


def test_shell_scripts(tmp_path):
    (tmp_path / "install.sh").write_text(SCRIPT)
    (tmp_path / "clean.sh").write_text(LOOK_ALIKES)
    assert lines(run(tmp_path, "check")) == [
        ("install.sh:3:11", "APX109"), ("install.sh:5:22", "APX109"), ("install.sh:6:43", "APX109"),
        ("install.sh:7:33", "APX109"), ("install.sh:8:37", "APX405"), ("install.sh:9:17", "APX002"),
        ("install.sh:11:71", "APX303")]
    result = run(tmp_path, "fix", "install.sh")
    assert result.returncode == 1
    assert "accelerate launch --num_processes 2 --mixed_precision fp16 train.py --fp16\n" in (
        tmp_path / "install.sh").read_text()


def test_noqa_goes_on_the_commands_last_line(tmp_path):
    (tmp_path / "run.sh").write_text("python train.py --amp_backend apex \\\n    --gpus 2\npip install apex\n")
    assert run(tmp_path, "check", "--add-noqa").returncode == 0
    assert (tmp_path / "run.sh").read_text() == (
        "python train.py --amp_backend apex \\\n    --gpus 2  # noqa: APX002\npip install apex  # noqa: APX109\n")
    assert run(tmp_path, "check").returncode == 0


def test_dockerfiles(tmp_path):
    (tmp_path / "Dockerfile").write_text(textwrap.dedent("""\
        FROM nvcr.io/nvidia/pytorch:23.04-py3
        ENV NOTE="pip install apex"
        LABEL description="git clone https://github.com/NVIDIA/apex"
        RUN git clone https://github.com/NVIDIA/apex && \\
            cd apex && \\
            pip install -v --no-cache-dir ./
        RUN ["pip", "install", "apex"]
        RUN --mount=type=cache,target=/root/.cache pip install "apex @ git+https://github.com/NVIDIA/apex"
        CMD ["python", "train.py", "--amp_level", "O2"]
        """))
    assert lines(run(tmp_path, "check")) == [("Dockerfile:4:15", "APX109"), ("Dockerfile:7:24", "APX109"),
                                             ("Dockerfile:8:56", "APX109"), ("Dockerfile:9:28", "APX003")]


def test_ci_workflows(tmp_path):
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "ci.yml").write_text(textwrap.dedent("""\
        name: pip install apex
        on: push
        jobs:
          test:
            runs-on: ubuntu-latest
            steps:
              - name: Install apex
                run: |
                  git clone https://github.com/NVIDIA/apex
                  cd apex && pip install -v ./
              - run: pip install "apex"  # noqa: APX109
              - run: 'pip install apex'
              - run: >
                  python train.py
                  --amp_backend apex
        """))
    (tmp_path / ".gitlab-ci.yml").write_text("test:\n  script:\n    - pip install git+https://github.com/NVIDIA/apex\n")
    assert lines(run(tmp_path, "check")) == [  # sorted by path, as flake8 prints
        (".github/workflows/ci.yml:9:21", "APX109"), (".github/workflows/ci.yml:12:27", "APX109"),
        (".github/workflows/ci.yml:15:11", "APX002"), (".gitlab-ci.yml:3:19", "APX109")]


# --- DeepSpeed JSON configs --------------------------------------------------------------------
def test_deepspeed_json_configs(tmp_path):
    (tmp_path / "ds_config.json").write_text('{\n  "train_batch_size": 8,\n  "amp": {\n    "enabled": true\n  }\n}\n')
    (tmp_path / "train_config.json").write_text('{"train_micro_batch_size_per_gpu": 2, "amp": {"opt_level": "O1"}}')
    (tmp_path / "zero2.json").write_text('{"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}')
    (tmp_path / "metrics.json").write_text('{"train_batch_size": 8, "amp": 0.5}')
    (tmp_path / "package.json").write_text('{"name": "site", "amp": {"enabled": true}}')
    assert lines(run(tmp_path, "check")) == [("ds_config.json:3:3", "APX601"), ("train_config.json:1:39", "APX601")]
    result = run(tmp_path, "check", "--add-noqa")
    assert "ds_config.json: 1 finding left: this kind of file holds no comments" in result.stderr
    assert run(tmp_path, "check", "--baseline", "b.json", "--update-baseline").returncode == 0
    assert run(tmp_path, "check", "--baseline", "b.json").returncode == 0
    (tmp_path / "ds_config.json").write_text("{not json")
    assert "ds_config.json: cannot parse as JSON" in run(tmp_path, "check").stderr


# --- documentation (opt-in) --------------------------------------------------------------------
README = """\
# Training

```bash
pip install git+https://github.com/NVIDIA/apex
```

```python
from apex import amp
import torch
```

```python
with torch.cuda.amp.autocast():
    loss = model(x)
```

```python
a fragment ... (
```

- In a list:

    ```py
    scaler = torch.cuda.amp.GradScaler()
    ```

```pycon
>>> scaler = torch.cuda.amp.GradScaler()
>>> scaler
<GradScaler>
```

```console
$ pip install \\
    apex
pip install apex: output, no command
```
"""


def test_docs_are_read_when_asked(tmp_path):
    (tmp_path / "README.md").write_text(README)
    (tmp_path / "guide.rst").write_text(".. code-block:: python\n   :linenos:\n\n   import torch\n"
                                        "   scaler = torch.cuda.amp.GradScaler()\n\n>>> from apex import amp\n")
    (tmp_path / "lib.py").write_text('def f():\n    """Example.\n\n    >>> import torch\n'
                                     '    >>> with torch.cuda.amp.autocast():\n    ...     pass\n    """\n')
    assert run(tmp_path, "check").returncode == 0
    assert lines(run(tmp_path, "check", "--check-docs")) == [
        ("README.md:4:13", "APX109"), ("README.md:8:18", "APX001"), ("README.md:13:6", "APX201"),
        ("README.md:24:14", "APX203"),
        ("README.md:28:14", "APX203"), ("README.md:35:5", "APX109"), ("guide.rst:5:13", "APX203"),
        ("guide.rst:7:22", "APX001"),
        ("lib.py:5:14", "APX201")]
    assert lines(run(tmp_path, "check", "README.md"))[1] == ("README.md:8:18", "APX001")  # named: read
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-no-apex]\ncheck-docs = true\n")
    assert len(lines(run(tmp_path, "check"))) == 9
    run(tmp_path, "fix", "README.md", "guide.rst", "lib.py")
    readme = (tmp_path / "README.md").read_text()
    assert 'with torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):\n    loss = model(x)\n' in readme
    assert '    ```py\n    scaler = torch.amp.GradScaler("cuda")\n    ```' in readme
    assert '>>> scaler = torch.amp.GradScaler("cuda")\n>>> scaler\n<GradScaler>\n' in readme
    assert '   import torch\n   scaler = torch.amp.GradScaler("cuda")\n' in (tmp_path / "guide.rst").read_text()
    assert "torch.cuda.amp.autocast" in (tmp_path / "lib.py").read_text()  # docstrings: reported, not rewritten


# --- what real files do (scripts/input_corpus.txt) ---------------------------------------------
def test_ipython_lines_real_notebooks_hold(tmp_path):
    """Shell escapes continued by backslashes, automagic `pip install`, a `%` operator that
    continues a Python line, a cell indented as a whole, `%%writefile` of a shell script, Hydra
    overrides of the Trainer on a `!python` line, and a cell that does not parse (its error said,
    the other cells read)."""
    nb = notebook(code_cell("!python train.py \\\n  --data_root data \\\n  trainer.precision=16"),
                  code_cell("pip install apex\nx = ('%s' \\\n     % 'y')\nz = (1\n     % 2)"),
                  code_cell("    import torch\n    scaler = torch.cuda.amp.GradScaler()"),
                  code_cell("%%writefile install.sh\ngit clone https://github.com/NVIDIA/apex\n"),
                  code_cell("CHECKPOINT = model--step=10.ckpt\nfrom apex import amp"),
                  code_cell("import pytorch_lightning as pl\ncfg.trainer.precision = 16 if gpu else 32"))
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb))
    result = run(tmp_path, "check", "nb.ipynb")
    assert lines(result) == [("nb.ipynb:cell 1:3:3", "APX008"), ("nb.ipynb:cell 2:1:13", "APX109"),
                             ("nb.ipynb:cell 3:2:14", "APX203"), ("nb.ipynb:cell 4:2:11", "APX109"),
                             ("nb.ipynb:cell 6:2:25", "APX008")], result.stderr
    assert result.returncode == 2 and "nb.ipynb:cell 5:1:" in result.stderr
    assert "the other cells were read" in result.stderr
    run(tmp_path, "fix", "nb.ipynb")
    cells = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_text())["cells"]]
    assert cells[2] == '    import torch\n    scaler = torch.amp.GradScaler("cuda")'
    assert cells[4] == "CHECKPOINT = model--step=10.ckpt\nfrom apex import amp"  # the unread cell as it was
    assert cells[5].endswith('cfg.trainer.precision = "16-mixed" if gpu else 32')


def test_shell_programs_do_not_run_into_each_other(tmp_path):
    """A quote left open in one Dockerfile instruction, workflow value or doc block ends there."""
    (tmp_path / "Dockerfile").write_text("RUN echo don't\nRUN pip install apex\nRUN <<EOF bash\n"
                                         "pip install 'apex @ git+https://github.com/NVIDIA/apex'\nEOF\n")
    (tmp_path / "README.md").write_text("```\nit's output\n```\n\n```bash\npython train.py trainer.precision=16\n```\n")
    found = lines(run(tmp_path, "check", "--check-docs"))
    assert found == [("Dockerfile:2:17", "APX109"), ("Dockerfile:4:13", "APX109"), ("README.md:6:17", "APX008")]
