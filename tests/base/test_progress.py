from mlirkit.base.progress import plural


def test_plurals_are_spelt_right():
    assert [plural(w) for w in ("query", "doc", "text", "batch", "system", "entry", "day")] == [
        "queries", "docs", "texts", "batches", "systems", "entries", "days"]
