#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ci/readme_block.py NAME [README]: prints the code block of README.md that
follows the line "<!-- ci/examples.sh: NAME -->" (ci/examples.sh builds and
runs the README's examples from these blocks)."""

import os
import re
import sys

if len(sys.argv) not in (2, 3):
    sys.exit(__doc__)
path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "..", "README.md")
with open(path) as f:
    text = f.read()
found = re.search(r"<!-- ci/examples\.sh: %s -->\n```[a-z]*\n(.*?)```\n" % re.escape(sys.argv[1]), text, re.S)
if not found:
    sys.exit("%s has no block %s" % (path, sys.argv[1]))
sys.stdout.write(found.group(1))
