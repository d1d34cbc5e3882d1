"""LoCoMo loading for the recall benchmark (evaluation data only, never copied into the repo).

The dataset (CC BY-NC 4.0, evaluation only) is read straight from its zip, found as
docs/BENCHMARK-DATA.md says: `$LTM_LOCOMO_ZIP`, else `bench/data/locomo10.zip`. Nothing is
extracted to disk.

- every dialogue turn is one `Turn` (dia_id `D<session>:<turn>`), stamped with its
  session's date (LoCoMo dates carry no zone: read as UTC) plus one second per turn,
  so timestamps are unique and in dialogue order;
- evidence ids are normalized: `"D8:6; D9:17"` and `"D9:1 D4:4"` are split,
  `"D:11:26"` becomes `D11:26`, `"D30:05"` becomes `D30:5`; ids that name no turn of
  the conversation are dropped and counted (`QA.dropped_evidence`).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ZIP = Path(os.environ.get("LTM_LOCOMO_ZIP") or REPO_ROOT / "bench" / "data" / "locomo10.zip")
INNER_DIR = "data/multimodal_dialog/locomo10_v2"

TUNING = (26, 30, 41, 42, 43)
HELDOUT = (44, 47, 48, 49, 50)
SPLITS = {"tuning": TUNING, "heldout": HELDOUT, "all": TUNING + HELDOUT}
SCORED_CATEGORIES = (1, 2, 3, 4)

_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    timestamp: str  # ISO-8601 UTC

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class QA:
    index: int
    question: str
    category: int
    evidence: tuple[str, ...]
    dropped_evidence: tuple[str, ...] = ()


@dataclass
class Conversation:
    conv_id: int
    speaker_a: str
    speaker_b: str
    turns: list[Turn]
    qas: list[QA] = field(default_factory=list)
    skipped_qas: int = 0  # categories 1-4 questions without any valid evidence id


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime."""
    moment = datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    return moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def normalize_evidence(raw: list[str], known: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    kept: list[str] = []
    dropped: list[str] = []
    for item in raw:
        found = _EVIDENCE.findall(str(item))
        if not found:
            dropped.append(str(item))
            continue
        for session, turn in found:
            dia = f"D{int(session)}:{int(turn)}"
            if dia in known:
                if dia not in kept:
                    kept.append(dia)
            else:
                dropped.append(dia)
    return tuple(kept), tuple(dropped)


def load_conversation(archive: zipfile.ZipFile, conv_id: int) -> Conversation:
    data = json.loads(archive.read(f"{INNER_DIR}/{conv_id}.json"))
    sessions = sorted(int(m.group(1)) for k in data if (m := _SESSION.fullmatch(k)))
    turns: list[Turn] = []
    for number in sessions:
        start = parse_session_date(data[f"session_{number}_date_time"])
        for position, raw in enumerate(data[f"session_{number}"]):
            turns.append(Turn(
                dia_id=str(raw["dia_id"]).strip(),
                session=number,
                speaker=str(raw["speaker"]).strip(),
                text=str(raw.get("text") or "").strip(),
                timestamp=_iso(start + timedelta(seconds=position)),
            ))
    known = {t.dia_id for t in turns}
    conv = Conversation(conv_id, data["speaker_a"], data["speaker_b"], turns)
    for index, qa in enumerate(data["qa"]):
        category = int(qa["category"])
        if category not in SCORED_CATEGORIES:
            continue
        evidence, dropped = normalize_evidence(list(qa.get("evidence") or []), known)
        if not evidence:
            conv.skipped_qas += 1
            continue
        conv.qas.append(QA(index, str(qa["question"]).strip(), category, evidence, dropped))
    return conv


def load_split(split: str, *, zip_path: Path = DEFAULT_ZIP, limit: int | None = None) -> list[Conversation]:
    ids = SPLITS[split]
    if limit is not None:
        ids = ids[:limit]
    if not zip_path.exists():
        raise SystemExit(f"LoCoMo not found at {zip_path}: set LTM_LOCOMO_ZIP or put locomo10.zip in bench/data/ "
                         "(docs/BENCHMARK-DATA.md)")
    with zipfile.ZipFile(zip_path) as archive:
        return [load_conversation(archive, conv_id) for conv_id in ids]
