# SPDX-License-Identifier: Apache-2.0
"""The package's version is the C library's, and the header's in a checkout."""

import os
import re

import attnmeta

HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "include", "attnmeta", "attnmeta.h")


def test_version_matches_the_library():
    assert attnmeta.__version__ == attnmeta.version_string()
    major, minor, patch = (int(p) for p in attnmeta.__version__.split("."))
    assert attnmeta.version() == major * 10000 + minor * 100 + patch


def test_version_matches_the_header():
    if not os.path.exists(HEADER):
        return  # an installed package without its source tree
    with open(HEADER) as f:
        text = f.read()
    parts = [re.search(r"^#define ATTNMETA_VERSION_%s (\d+)" % p, text, re.M).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    assert attnmeta.__version__ == ".".join(parts)


def test_build_commit_is_the_library_s():
    commit = attnmeta.build_commit()
    assert commit == "unknown" or re.match(r"^[0-9a-f]{7,40}(-dirty)?$", commit), commit
