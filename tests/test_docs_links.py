"""Every relative link and image in README.md and docs/*.md leads somewhere: the file exists
(from the page's own folder), and a `#fragment` names a heading of the page it points to, as
GitHub and Help's viewer would find it. Moving text between pages breaks these first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(path: Path) -> list[str]:
    """The page's lines outside fenced code blocks (a `# comment` in a block is no heading)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (letters of any script,
    digits, `_` and `-` kept), each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose(path):
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    return [target for line in prose(path) for target in LINK.findall(line)]


def test_the_slug_is_githubs():
    assert slug("W(0) from real weights") == "w0-from-real-weights"
    assert slug("The `interference` and `sweep` commands (headless)") == (
        "the-interference-and-sweep-commands-headless"
    )
    assert slug("The note's constants across m and λ") == "the-notes-constants-across-m-and-λ"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, fragment = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.relative_to(ROOT)}")
    assert not broken, broken


def test_the_pages_link_to_something():
    # the test above checks something: the front door and the guide link to other pages
    assert len(links(ROOT / "README.md")) >= 15
    assert len(links(ROOT / "docs" / "guide.md")) >= 15
