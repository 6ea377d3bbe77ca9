#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/**/*.md: every linked file exists and every
#anchor names a heading of the linked page (GitHub's heading ids). Prints each broken link and
exits 1 when there is one. Usage: scripts/check_doc_links.py [ROOT] (default: the checkout)."""
import glob
import os
import re
import sys

HEADING = re.compile(r"^(#+)\s+(.*?)\s*(\{#\w+\})?$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_id(text):
    # GitHub: lower case, punctuation dropped (letters, digits, '-', '_' and spaces stay),
    # spaces become hyphens; repeated ids get -1, -2, ...
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        ids, seen, fenced = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("```"):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line)
                if m:
                    base = heading_id(m.group(2))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    ids.add(base if n == 0 else f"{base}-{n}")
        cache[path] = ids
    return cache[path]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    pages = [os.path.join(root, "README.md")]
    pages += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    broken = 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)  # code blocks hold no links
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            rel = os.path.relpath(page, root)
            if not os.path.exists(dest):
                print(f"{rel}: link to a missing file: {target}")
                broken += 1
            elif anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                print(f"{rel}: link to a missing heading: {target}")
                broken += 1
    print(f"doc links: {len(pages)} pages, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
