"""Query groups from a file: ``qid<TAB>group`` per line (optionally gzipped; blank lines and lines
starting with ``#`` skipped), e.g. the question each translated query translates. A query listed twice,
an empty field or a line without exactly two tab-separated columns is an error naming file and line.
(Topics can carry the groups themselves: :mod:`mlirkit.io.topics`, ``group_id``.)"""
from __future__ import annotations

import os

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.io.fields import check_id
from mlirkit.io.files import iter_lines


def read_query_groups(path: str | os.PathLike) -> dict[str, str]:
    """``{qid: group}`` from a ``qid<TAB>group`` file."""
    out: dict[str, str] = {}
    for line_no, line in iter_lines(path, skip_comments=True):
        cols = line.split("\t")
        if len(cols) != 2:
            raise format_error(path, line_no, f"expected 2 tab-separated columns (qid, group), got {len(cols)}")
        where = f"{path}:{line_no}"
        qid, group = check_id(cols[0].strip(), where, "query id"), check_id(cols[1].strip(), where, "group")
        if qid in out:
            raise format_error(path, line_no, f"query {qid!r} listed twice")
        out[qid] = group
    if not out:
        raise MlirkitError(f"{path}: no query groups")
    return out


__all__ = ["read_query_groups"]
