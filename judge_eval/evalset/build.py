"""Bookkeeping for the judge evaluation set: parse hand-written batch files, validate, split, count.

Batch files: src/<img|vid|aud>_NN.txt. Each response starts with a header line
    @@ NNKK | F|A|- | codes claimed present (or -) | codes denied (or -)
followed by the response text (until the next header). NN must equal the batch number.
The script never writes text; it only checks labels and writes evalset.jsonl + stats.
"""
import collections, glob, hashlib, json, os, re, sys

CODES = {
    "blur": "blurriness", "block": "blockiness", "noise": "noise", "band": "banding",
    "color": "color_inconsistency", "blend": "blending_artifacts", "light": "lighting_inconsistency",
    "tex": "unnatural_texture", "temp": "temporal_artifacts", "flick": "flicker",
    "clip": "clipping", "hiss": "hiss", "buzz": "buzz", "pops": "pops",
    "refl": "reflection_inconsistency", "shad": "shadow_inconsistency", "spat": "spatial_incoherence",
    "bg": "unrealistic_background", "anat": "anatomical_inconsistency", "expr": "unnatural_expressions",
    "gaze": "unnatural_gaze", "move": "unnatural_movement", "obj": "object_integrity_flaws",
    "text": "unrecognizable_text", "pros": "unnatural_prosody", "sync": "audio_visual_desync",
    "emo": "emotional_contradiction",
}
VISUAL = ["blurriness", "blockiness", "noise", "banding", "color_inconsistency", "blending_artifacts",
          "lighting_inconsistency", "unnatural_texture", "reflection_inconsistency",
          "shadow_inconsistency", "spatial_incoherence", "unrealistic_background",
          "anatomical_inconsistency", "unnatural_expressions", "unnatural_gaze",
          "object_integrity_flaws", "unrecognizable_text"]
APPLIES = {
    "image": VISUAL,
    "video": VISUAL + ["temporal_artifacts", "flicker", "unnatural_movement", "unnatural_prosody",
                       "audio_visual_desync", "emotional_contradiction"],
    "audio": ["clipping", "hiss", "buzz", "pops", "unnatural_prosody", "emotional_contradiction"],
}
PREFIX = {"img": "image", "vid": "video", "aud": "audio"}
VERDICT = {"F": "fake", "A": "authentic", "-": None}
HEADER = re.compile(r"^@@ (\d{4}) \| ([FA-]) \| ([^|]*) \| ([^|]*)$")


def part_of(row_id):
    """Fixed split rule: dev iff sha256(id) mod 100 < 40, else heldout (stable when rows are added)."""
    return "dev" if int(hashlib.sha256(row_id.encode()).hexdigest(), 16) % 100 < 40 else "heldout"


def parse_codes(field, where):
    field = field.strip()
    if field == "-":
        return []
    out = []
    for c in field.split():
        if c not in CODES:
            sys.exit(f"{where}: unknown code {c!r}")
        out.append(CODES[c])
    if len(set(out)) != len(out):
        sys.exit(f"{where}: duplicate code in {field!r}")
    return out


def parse_file(path):
    pre, nn = re.match(r".*/(img|vid|aud)_(\d\d)\.txt$", path).groups()
    modality = PREFIX[pre]
    rows, cur = [], None
    for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith("@@"):
            m = HEADER.match(line)
            if not m:
                sys.exit(f"{path}:{lineno}: bad header {line!r}")
            num, v, art, den = m.groups()
            if num[:2] != nn:
                sys.exit(f"{path}:{lineno}: id {num} not in batch {nn}")
            where = f"{path}:{lineno}"
            arts, dens = parse_codes(art, where), parse_codes(den, where)
            for k in arts + dens:
                if k not in APPLIES[modality]:
                    sys.exit(f"{where}: {k} does not apply to {modality}")
            if set(arts) & set(dens):
                sys.exit(f"{where}: claimed and denied overlap")
            cur = {"id": f"{pre}-{num}", "modality": modality, "lines": [], "artifacts": arts,
                   "denied": dens, "verdict": VERDICT[v], "where": where}
            rows.append(cur)
        elif cur is not None:
            cur["lines"].append(line)
        elif line.strip():
            sys.exit(f"{path}:{lineno}: text before first header")
    for r in rows:
        r["response"] = "\n".join(r.pop("lines")).strip("\n")
        if not r["response"].strip():
            sys.exit(f"{r['where']}: empty response")
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    for path in sorted(glob.glob(os.path.join(here, "src", "*.txt"))):
        rows.extend(parse_file(path))
    ids = collections.Counter(r["id"] for r in rows)
    texts = collections.Counter(r["response"] for r in rows)
    dup = [i for i, c in ids.items() if c > 1] + [t[:60] for t, c in texts.items() if c > 1]
    if dup:
        sys.exit(f"duplicates: {dup}")
    order = {"image": 0, "video": 1, "audio": 2}
    rows.sort(key=lambda r: (order[r["modality"]], r["id"]))
    with open(os.path.join(here, "evalset.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            out = {"id": r["id"], "modality": r["modality"], "response": r["response"],
                   "artifacts": sorted(r["artifacts"]), "denied": sorted(r["denied"]),
                   "verdict": r["verdict"], "part": part_of(r["id"])}
            f.write(json.dumps(out, ensure_ascii=False) + "\n")
    stats(rows, "--md" in sys.argv)


def stats(rows, md):
    parts = ("dev", "heldout")
    print("| modality | dev | heldout | total | empty (nothing claimed) | authentic | fake | no verdict | words (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in APPLIES:
        rs = [r for r in rows if r["modality"] == m]
        if not rs:
            continue
        c = collections.Counter(part_of(r["id"]) for r in rs)
        v = collections.Counter(r["verdict"] for r in rs)
        words = sorted(len(r["response"].split()) for r in rs)
        print(f"| {m} | {c['dev']} | {c['heldout']} | {len(rs)} | {sum(not r['artifacts'] for r in rs)} | "
              f"{v['authentic']} | {v['fake']} | {v[None]} | {words[len(words)//2]} |")
    print("\n| modality | part | rows | nothing claimed | some artifact denied | positive labels | denied labels |")
    print("|---|---|---|---|---|---|---|")
    for m in APPLIES:
        for part in parts:
            rs = [r for r in rows if r["modality"] == m and part_of(r["id"]) == part]
            print(f"| {m} | {part} | {len(rs)} | {sum(not r['artifacts'] for r in rs)} | "
                  f"{sum(bool(r['denied']) for r in rs)} | {sum(len(r['artifacts']) for r in rs)} | "
                  f"{sum(len(r['denied']) for r in rs)} |")
    for m, keys in APPLIES.items():
        rs = [r for r in rows if r["modality"] == m]
        if not rs:
            continue
        print(f"\n{m}:\n\n| artifact | present dev | present heldout | present total | denied dev | denied heldout | denied total |")
        print("|---|---|---|---|---|---|---|")
        for k in keys:
            p = collections.Counter(part_of(r["id"]) for r in rs if k in r["artifacts"])
            d = collections.Counter(part_of(r["id"]) for r in rs if k in r["denied"])
            print(f"| {k} | {p['dev']} | {p['heldout']} | {sum(p.values())} | {d['dev']} | {d['heldout']} | {sum(d.values())} |")


if __name__ == "__main__":
    main()
