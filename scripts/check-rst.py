#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Parse reStructuredText files with docutils and fail on any warning.

Usage: check-rst.py FILE...

Sphinx-only directives and roles used by the kernel's documentation are
registered as no-ops, so that plain docutils judges the markup itself.
"""
import sys

import docutils.core
from docutils.parsers.rst import Directive, directives, roles


class Ignored(Directive):
    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = None

    def run(self):
        return []


for name in ("toctree", "kernel-doc", "only", "kernel-feat", "kernel-abi"):
    directives.register_directive(name, Ignored)
for name in ("ref", "doc", "c:func", "c:type", "c:macro"):
    roles.register_generic_role(name, docutils.nodes.literal)

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        docutils.core.publish_doctree(
            text, source_path=path,
            settings_overrides={"report_level": 2, "halt_level": 2,
                                "warning_stream": sys.stderr})
    except docutils.utils.SystemMessage as e:
        print(f"{path}: {e}", file=sys.stderr)
        bad = 1
sys.exit(bad)
