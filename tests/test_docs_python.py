"""docs/python.md: its table lists every top-level name, and its session runs as written (blocks extracted
from the page and executed in order, in one namespace, as a notebook runs them)."""
from __future__ import annotations

import re

import pytest

import mlirkit as mk
from tests.helpers import REPO

PAGE = REPO / "docs" / "python.md"
SESSION_HEADING = "## A session"


def section(heading: str, page=PAGE) -> str:
    """The text from ``heading`` to the next heading of its level."""
    text = page.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end > 0 else None]


def session_blocks() -> list[str]:
    """The ```python blocks of the session, in order."""
    return re.findall(r"```python\n(.*?)```", section(SESSION_HEADING), re.S)


def test_the_page_documents_every_name_and_uses_no_other():
    text = PAGE.read_text(encoding="utf-8")
    table = section("## The names")
    listed = set(re.findall(r"^\| `([A-Za-z_]+)", table, re.M)) | set(re.findall(r"^\| `[^|]*?, `([A-Za-z_]+)", table, re.M))
    assert listed == set(mk.EXPORTS), f"undocumented: {set(mk.EXPORTS) - listed}, unknown: {listed - set(mk.EXPORTS)}"
    used = set(re.findall(r"\bmk\.([A-Za-z_]+)", text))
    assert used <= set(mk.__all__) | {"EXPORTS", "__all__"}, used - set(mk.__all__)
    blocks = session_blocks()
    assert len(blocks) >= 5 and "mk.fit_from_pairs" in "".join(blocks) and "to_ranx" in "".join(blocks)


@pytest.mark.slow
def test_the_session_runs_as_written(tmp_path, monkeypatch, caplog, users_backend):
    import numpy as np

    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    with caplog.at_level("WARNING"):
        for i, block in enumerate(session_blocks()):
            exec(compile(block, f"{PAGE.name} (python block {i + 1})", "exec"), namespace)
    # what the prose says: ko and sk filled from the corpus, cs (19 documents) left unshifted, told in
    # a Python caller's words and with the final paths
    record = namespace["filled"].meta["missing_languages"]
    assert set(record["filled"]) == {"ko", "sk"} and set(record["kept"]) == {"cs"}
    assert "missing='keep'" in caplog.text and "--missing" not in caplog.text and ".tmp-" not in caplog.text
    base, shifted, result = namespace["base"], namespace["shifted"], namespace["result"]
    assert isinstance(base, mk.SearchResults) and set(base) == set(namespace["qrels"])
    # SHIFT moves documents of other languages into the top 20: the English share falls towards the relevant one
    expected = result.table.loc["base", "samelang@20 (expected)"]
    assert expected < result.value("shift", "samelang@20") < 0.75 * result.value("base", "samelang@20")
    # ranx on the converted run = mlirkit's figure; the manually applied transform = the index's vectors
    ranx = pytest.importorskip("ranx")
    assert ranx.evaluate(ranx.Qrels(namespace["qrels"]), namespace["run"], "ndcg@20") == \
        pytest.approx(result.value("shift", "ndcg@20"), abs=1e-12)
    after = mk.DenseIndex("indexes/nb-e5-shift").indexed_vectors()
    assert np.abs(namespace["moved"] - after).max() < 1e-6
    # free text: the German query is identified as German and scored with the German-source shift
    found = namespace["found"]
    assert (found.language.lang, found.language.how) == ("de", "detected") and len(found.hits) == 5
    given = namespace["searcher"].search_text(found.text, k=5, langs="de")
    assert given.hits == found.hits
