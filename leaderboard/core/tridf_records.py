"""The TriDF authors' inference outputs as prediction rows, aligned by the authors' own keys.

``run_perception_tf_ver2`` and ``run_perception_mc`` (j1anglin/TriDF at f041a19,
``3_Benchmark/inference/runner/tf_eval.py``, ``mc_eval.py``) write one JSONL file per question
file, one record per question: ``{"model_id", "sample": {"sample_id": "<stem>-<index>", ...},
"response", "question_file": "<path of the question file>", "question_index": <index>, ...}``.
``score_perception_original.py`` (``extract_prediction_key``) finds each record's question by
(``question_file``'s base name, ``int(question_index)``) when both are given, else by
``sample.sample_id``, else by ``question_id``; this module does the same. The pack's question ids
are the authors' ``<stem>-<index>`` and the pack remembers its question files' names
(``question_files`` in ``benchmark.yaml``), so a record names one question or none: a record
that names no question of the pack, or names it in a way that cannot be read, is an error
naming why (the authors' scorer would skip it silently), never a guess. A record for a question
of another split of the same pack is skipped (the authors' run covers every question).
For a pack built from the TRIDENT data (no ``question_files``), records are found as the kit's
``_extract_question_id`` finds them: ``question_id``, ``sample.question_id``, ``sample.sample_id``.
"""
from __future__ import annotations

#: rows produced from an authors' record carry only these fields
KEPT = ("response",)


def is_authors_record(row: dict) -> bool:
    """Whether a row without ``id`` is one of the authors' inference records."""
    return "response" in row and ("question_file" in row or "sample" in row
                                  or "question_id" in row or "sample_id" in row)


class AuthorsRecords:
    """Maps the authors' records onto item ids of one split of a TriDF pack."""

    def __init__(self, pack, split: str):
        files = pack.meta.extras.get("question_files")
        self.files = set(files) if isinstance(files, list) else None
        self.here = pack.items(split).index
        self._names: dict[str, tuple[str, str]] = {}
        self.elsewhere: set[str] = set()
        for other in pack.splits:
            if other != split:
                self.elsewhere.update(pack.items(other).ids.tolist())

    def convert(self, row: dict) -> tuple[dict | None, str | None]:
        """(``{"id", "response"}``, None); (None, None) for another split's question; or
        (None, why) when the record cannot be aligned."""
        rid, why = self._id(row)
        if why:
            return None, why
        if rid not in self.here:
            if rid in self.elsewhere:
                return None, None
            return None, f"names question {rid!r}, which is not in this TriDF pack"
        return {"id": rid, **{k: row[k] for k in KEPT if k in row}}, None

    def _name(self, path: str) -> tuple[str, str]:
        """(base name, stem) of a question file path, ``/`` or ``\\`` separated (cached: an
        output has one path per question file)."""
        if path not in self._names:
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            dot = name.rfind(".")
            self._names[path] = (name, name[:dot] if 0 < dot < len(name) - 1 else name)
        return self._names[path]

    def _id(self, row: dict) -> tuple[str | None, str | None]:
        sample = row.get("sample") if isinstance(row.get("sample"), dict) else {}
        if self.files is None:  # TRIDENT: the kit's _extract_question_id order
            keys = (row.get("question_id"), sample.get("question_id"), sample.get("sample_id"))
        else:
            qfile, qindex = row.get("question_file"), row.get("question_index")
            if qfile is not None and qindex is not None:
                try:
                    name, stem = self._name(str(qfile))
                    index = int(qindex)
                except (TypeError, ValueError):
                    name = None
                if name is not None:
                    if name not in self.files:
                        return None, (f"question_file {name!r} is not one of this pack's "
                                      f"question files (e.g. {sorted(self.files)[:3]})")
                    return f"{stem}-{index}", None
            keys = (sample.get("sample_id"), row.get("question_id"))
        for key in keys:
            text = str(key or "").strip()
            if text:
                return text, None
        return None, ("cannot tell which question this record answers: it needs id, or "
                      "question_file and question_index (the authors' inference output)")
