"""CITATION.cff (the Citation File Format 1.2.0) and the project metadata in pyproject.toml:
the software at its current version, the paper and the note it implements, and the same
authors, licence, URLs and release date wherever the project states them."""

from __future__ import annotations

import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

import sparsity_gui

ROOT = Path(__file__).resolve().parents[2]
CFF = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
METAINFO = ET.parse(ROOT / "resources" / "io.github.sparsitygui.SparsityGui.metainfo.xml").getroot()


def _person_ok(person: dict) -> bool:
    return bool(person.get("name") or (person.get("family-names") and person.get("given-names")))


def test_the_file_has_the_formats_required_keys():
    assert CFF["cff-version"] == "1.2.0"
    assert CFF["type"] == "software"
    for key in ("message", "title", "authors"):
        assert CFF[key], key
    assert all(_person_ok(p) for p in CFF["authors"])
    for ref in CFF["references"]:
        assert ref["type"] and ref["title"] and ref["authors"] and all(_person_ok(p) for p in ref["authors"])


def test_the_software_is_cited_at_its_version_and_release():
    assert CFF["version"] == sparsity_gui.__version__
    release = next(r for r in METAINFO.iter("release") if r.get("version") == sparsity_gui.__version__)
    assert str(CFF["date-released"]) == release.get("date")  # the AppStream release of this version
    assert CFF["license"] == PROJECT["license"]
    assert [a["name"] for a in CFF["authors"]] == [a["name"] for a in PROJECT["authors"]]
    assert CFF["repository-code"] == PROJECT["urls"]["Source"]
    assert METAINFO.findtext("url[@type='homepage']") == PROJECT["urls"]["Homepage"]


def test_the_paper_and_the_note_are_cited_as_publications():
    by_type = {ref["type"]: ref for ref in CFF["references"]}
    paper = by_type["article"]
    assert "What Causes Polysemanticity?" in paper["title"]
    assert [a["family-names"] for a in paper["authors"]] == [
        "Lecomte",
        "Thaman",
        "Schaeffer",
        "Bashkansky",
        "Chow",
        "Koyejo",
    ]
    assert paper["year"] == 2023
    assert {"type": "doi", "value": "10.48550/arXiv.2312.03096"} in paper["identifiers"]
    assert paper["url"] == "https://arxiv.org/abs/2312.03096"
    note = by_type["unpublished"]
    assert "research note" in note["title"]
    # the README names the same paper
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "What Causes Polysemanticity?" in readme and "Lecomte" in readme


def test_no_local_path_is_cited():
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert "/work/" not in text and "file:" not in text and "/home/" not in text


def test_pyproject_describes_the_project_for_an_index():
    assert PROJECT["authors"] and all(a.get("name") or a.get("email") for a in PROJECT["authors"])
    assert set(PROJECT["urls"]) >= {"Homepage", "Source", "Issues", "Documentation"}
    assert all(url.startswith("https://") for url in PROJECT["urls"].values())
    classifiers = PROJECT["classifiers"]
    assert "Intended Audience :: Science/Research" in classifiers
    assert any(c.startswith("Topic :: Scientific/Engineering") for c in classifiers)
    python = PROJECT["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {python}" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the SPDX `license` says it
