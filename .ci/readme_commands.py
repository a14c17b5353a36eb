"""Print the commands of the README's opening bash block, one per line (CI runs them)."""

import re
import sys
from pathlib import Path

text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
block = re.search(r"```bash\n(.*?)```", text, re.S)
if block is None:
    sys.exit("README.md has no opening ```bash block")
for line in block.group(1).splitlines():
    if line.strip():
        print(line)
