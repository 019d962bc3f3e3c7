"""The README's examples run as written."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)


def _python_block_after(heading: str) -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_the_dask_example_runs_as_a_script(tmp_path):
    pytest.importorskip("distributed")
    script = tmp_path / "example.py"
    script.write_text(_python_block_after("## Dask"))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"\d+ pairs within 20 SNPs; \d+ CCC entries above 0\.7\n", done.stdout), done.stdout
