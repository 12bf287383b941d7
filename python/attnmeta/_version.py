# SPDX-License-Identifier: Apache-2.0
"""The release of this package: the C header's ATTNMETA_VERSION_* macros,
copied (configuring the C library and the test version_sources_agree fail
when the two differ; setup.py gives the wheel the header's number)."""

__version__ = "0.3.0"
