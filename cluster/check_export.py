"""Checks an exported policy folder with the real libraries (issue #42).

    .venv-cluster/bin/python cluster/check_export.py DIR [--tol 1e-4]

DIR is what `e2e/bench/export-node.ts` wrote, or a run's export from the Runs view unzipped: the
Hugging Face model folder, logits.json (the page's logits on a few token sequences), tasks.jsonl,
greedy.jsonl (the page's greedy play of the held-out and generalisation tasks) and, from the
page, trajectories.jsonl and run-config.json. Loads the folder with transformers (GPT2LMHeadModel,
AutoTokenizer) and asserts: every weight loaded from the file (none missing, unexpected or
initialised at random), the head tied to the embedding exactly when the policy's is
(logits.json's model.tieEmbeddings), the tokenizer gives the page's token
ids for the page's text and back, the chat template renders each task's messages into its prompt,
the model's logits equal the page's within --tol (max abs difference, printed), `datasets` reads
tasks.jsonl (and tasks.parquet when present); greedy decoding under the page's legal-token masks
writes the page's programs on every greedy.jsonl task (whole episodes: after a `<run>` the page's
report is fed back, as the page fed it); and `sandbox_reward.py` pays every turn of every
trajectory what the page paid. Prints the figures; exits 1 naming each failed check (for the
greedy and reward checks, the first mismatch and the count).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import sandbox_reward as sr  # noqa: E402

# Everything is local: no hub look-ups (there is no network to answer them).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def read_jsonl(path: Path, **kw: Any) -> list[dict]:
    return [json.loads(line, **kw) for line in path.read_text().splitlines() if line.strip()]


def owned_turns(ids: list[int], mask: list[int], names: list[str]) -> list[tuple[list[str], str, int]]:
    """The policy's turns: (program tokens, control token, its position), in order."""
    out, program = [], []
    for p, (t, m) in enumerate(zip(ids, mask)):
        if not m:
            continue
        if names[t] in sr.CONTROLS:
            out.append((program, names[t], p))
            program = []
        else:
            program.append(names[t])
    return out


def check_greedy(model: Any, names: list[str], rows: list[dict], tol: float) -> dict:
    """Replays each greedy episode: at every policy token, the argmax of the model's logits over the
    ids the page allowed there must be the page's token. A different argmax whose logit is within
    2·tol of the page's token's is a tie that float rounding may break either way, counted apart."""
    import torch

    equal, ties, steps, first = 0, 0, 0, None
    for r in rows:
        ids, mask, legal = r["input_ids"], r["loss_mask"], r["legal"]
        owned = [p for p, m in enumerate(mask) if m]
        bad = None
        if len(legal) != len(owned):
            bad = f"{len(legal)} legal-id lists for {len(owned)} policy tokens"
        else:
            written = ["".join(prog) for prog, _, _ in owned_turns(ids, mask, names)]
            if written != r["programs"]:
                bad = f"its tokens write {written}, the row says {r['programs']}"
        if bad is None:
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0]
            for k, p in enumerate(owned):
                steps += 1
                allowed = torch.tensor(legal[k])
                row = logits[p - 1]
                ours = int(allowed[row[allowed].argmax()])
                if ours == ids[p]:
                    continue
                gap = float(row[ours] - row[ids[p]])
                if gap <= 2 * tol:
                    ties += 1
                    continue
                bad = (
                    f"policy token {k} (position {p}) is {names[ours]!r} in Python, {names[ids[p]]!r} on the page"
                    f" (logit gap {gap:.3g}); the page wrote {r['programs']}"
                )
                break
        if bad is None:
            equal += 1
        elif first is None:
            first = f"task {r['task_id']} ({r['split']}): {bad}"
    return {"equal": equal, "total": len(rows), "steps": steps, "ties": ties, "first_mismatch": first}


def as_doubles(task: dict) -> dict:
    """A row's task with its numbers as JavaScript reads them: doubles."""

    def doubles(examples: list[dict]) -> list[dict]:
        return [{"input": float(e["input"]), "output": float(e["output"])} for e in examples]

    return {**task, **{k: doubles(task[k]) for k in ("examples", "tests", "hidden")}}


def shown_examples(ids: list[int], task: dict, names: list[str]) -> list[dict]:
    """The examples the episode showed (and a `<run>` ran): as many as its observation holds."""
    sep = ids.index(names.index("<sep>"))
    return task["examples"][: sum(1 for t in ids[:sep] if names[t] == "f(")]


def check_trajectories(rows: list[dict], tasks: dict[str, dict], names: list[str], env: dict) -> dict:
    """Each policy turn of each stored episode scored by sandbox_reward.py: the reward the page put
    on its control token, to the bit (a `<run>` that ended the episode with its no-submit penalty).
    A relabelled episode (hindsight) is paid on the tests its row carries; one without them (its
    task's inputs not found) is counted apart."""
    equal, turns, runs, relabelled, carried, first = 0, 0, 0, 0, 0, None
    for r in rows:
        # A relabelled episode carries its task's tests (export-run.ts relabelledTask) when found.
        task = tasks.get(r["task_id"]) or (as_doubles(r["task"]) if r.get("task") else None)
        carried += r["task_id"] not in tasks and task is not None
        if task is None and r["task_id"].startswith("hindsight:"):
            relabelled += 1
            continue
        bad = None
        if task is None:
            bad = "its task is not in tasks.jsonl"
        else:
            kind = task["kind"]
            stored = env.get("reward") or (sr.TOOLUSE_REWARD if kind == "tooluse" else sr.DEFAULT_REWARD)
            weights = {k: float(v) for k, v in stored.items()}
            shown = task["tests"] if kind == "tooluse" and task["tests"] else shown_examples(r["input_ids"], task, names)
            played = owned_turns(r["input_ids"], r["loss_mask"], names)
            for j, (program, control, p) in enumerate(played):
                turns += 1
                runs += control == "<run>"
                text = " ".join([*program, control])
                got = sr.score_turn(
                    text,
                    task["hidden"],
                    shown,
                    kind,
                    weights,
                    max_tokens=int(env.get("maxTokensPerTurn", sr.MAX_TOKENS_PER_TURN)),
                    final_run=j == len(played) - 1,
                )
                page = r["token_rewards"][p]
                if got.reward != page:
                    bad = f"turn {j} {text!r} pays {got.reward!r} in Python, {page!r} on the page ({got})"
                    break
            if bad is None and played:
                solved = played[-1][1] == "<submit>" and got.passed == len(task["hidden"])
                if solved != r["solved"]:
                    bad = f"solved is {solved} in Python, {r['solved']} on the page"
        if bad is None:
            equal += 1
        elif first is None:
            first = f"trajectory {r.get('seq')} (task {r['task_id']}): {bad}"
    return {
        "equal": equal,
        "total": len(rows) - relabelled,
        "turns": turns,
        "runs": runs,
        "carried": carried,
        "relabelled": relabelled,
        "first_mismatch": first,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--tol", type=float, default=1e-4, help="largest max abs logit difference allowed")
    opts = parser.parse_args()
    folder: Path = opts.folder

    import torch
    from datasets import load_dataset
    from safetensors import safe_open
    from transformers import AutoTokenizer, GPT2LMHeadModel

    failures: list[str] = []
    passed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed
        if ok:
            passed += 1
        else:
            failures.append(what)
            print(f"FAIL {what}", file=sys.stderr)

    page = json.loads((folder / "logits.json").read_text())

    # The safetensors file as the reference library reads it.
    with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
        meta = f.metadata() or {}
        keys = list(f.keys())
    check(meta.get("format") == "pt", f"model.safetensors metadata format is {meta.get('format')!r}, not 'pt'")
    check("lm_head.weight" in keys and not any("value" in k for k in keys), f"model.safetensors keys: {keys}")

    model, info = GPT2LMHeadModel.from_pretrained(
        folder, output_loading_info=True, attn_implementation="eager", dtype=torch.float32
    )
    model.eval()
    for kind in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        got = [k for k in info.get(kind, []) if not str(k).endswith((".attn.bias", ".attn.masked_bias"))]
        check(not got, f"transformers loading: {kind} {got}")
    check(model.config.activation_function == "quick_gelu", f"activation {model.config.activation_function}")
    # A policy with tied embeddings exports tie_word_embeddings true; otherwise its head is its own.
    tied = model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr()
    want_tied = bool(page.get("model", {}).get("tieEmbeddings", False))
    check(
        tied == want_tied and bool(model.config.tie_word_embeddings) == want_tied,
        f"lm_head tied to the token embedding: {tied} (config {model.config.tie_word_embeddings}); the policy's: {want_tied}",
    )

    tok = AutoTokenizer.from_pretrained(folder)
    check(len(tok) == model.config.vocab_size, f"tokenizer has {len(tok)} tokens, config {model.config.vocab_size}")

    max_diff = 0.0
    for i, seq in enumerate(page["sequences"]):
        ids, text = seq["ids"], seq["text"]
        enc = tok(text, add_special_tokens=False)["input_ids"]
        check(enc == ids, f"sequence {i}: the tokenizer reads {text!r} as {enc}, the page's ids are {ids}")
        check(tok.decode(ids) == text, f"sequence {i}: the tokenizer decodes {ids} as {tok.decode(ids)!r}")
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        ours = torch.tensor(page["logits"][i], dtype=torch.float32)
        check(logits.shape == ours.shape, f"sequence {i}: logits {tuple(logits.shape)} vs page {tuple(ours.shape)}")
        if logits.shape == ours.shape:
            d = (logits - ours).abs().max().item()
            max_diff = max(max_diff, d)
            check(d <= opts.tol, f"sequence {i}: max abs logit difference {d:.3g} > {opts.tol}")
    # The same with transformers' default attention (sdpa), which a trainer would use.
    sdpa = GPT2LMHeadModel.from_pretrained(folder, attn_implementation="sdpa", dtype=torch.float32).eval()
    max_sdpa = 0.0
    for i, seq in enumerate(page["sequences"]):
        with torch.no_grad():
            logits = sdpa(torch.tensor([seq["ids"]])).logits[0]
        max_sdpa = max(max_sdpa, (logits - torch.tensor(page["logits"][i])).abs().max().item())
    check(max_sdpa <= opts.tol, f"sdpa attention: max abs logit difference {max_sdpa:.3g} > {opts.tol}")

    # Generation runs with the shipped generation config (a turn ends at <run> or <submit>).
    sep = tok.convert_tokens_to_ids("<sep>")
    seq0 = page["sequences"][0]["ids"]
    first = seq0[: seq0.index(sep) + 1] if sep in seq0 else seq0[:8]
    with torch.no_grad():
        out = model.generate(torch.tensor([first]), attention_mask=torch.ones(1, len(first), dtype=torch.long))
    check(out.shape[1] > len(first), "generate wrote no token")

    # The tasks: rows load with datasets, and the chat template renders each one's messages into its prompt.
    rows = load_dataset("json", data_files=str(folder / "tasks.jsonl"), split="train")
    check(len(rows) > 0, "tasks.jsonl has no rows")
    for row in rows.select(range(min(len(rows), 50))):
        rendered = tok.apply_chat_template(row["messages"], tokenize=False)
        check(rendered == row["prompt"], f"task {row['id']}: chat template gives {rendered!r}, prompt {row['prompt']!r}")
        check(
            tok(rendered, add_special_tokens=False)["input_ids"][-1] == tok.convert_tokens_to_ids("<sep>"),
            f"task {row['id']}: the rendered prompt does not end at <sep>",
        )
    parquet = folder / "tasks.parquet"
    if parquet.exists():
        verl = load_dataset("parquet", data_files=str(parquet), split="train")
        check(len(verl) == len(rows), f"tasks.parquet has {len(verl)} rows, tasks.jsonl {len(rows)}")
        r0 = verl[0]
        check(
            set(r0) >= {"data_source", "prompt", "ability", "reward_model", "extra_info"},
            f"tasks.parquet columns {sorted(r0)}",
        )
        check(r0["reward_model"]["style"] == "rule", f"reward_model {r0['reward_model']}")
        check(
            tok.apply_chat_template(r0["prompt"], tokenize=False) == rows[0]["prompt"],
            "tasks.parquet's first prompt does not render into tasks.jsonl's",
        )

    names = tok.convert_ids_to_tokens(list(range(model.config.vocab_size)))
    tasks = {r["id"]: r for r in read_jsonl(folder / "tasks.jsonl", parse_int=float)}

    # The page's greedy programs, decoded again under its legal-token masks.
    greedy = None
    if (folder / "greedy.jsonl").exists():
        greedy = check_greedy(model, names, read_jsonl(folder / "greedy.jsonl"), opts.tol)
        print(
            f"greedy: {greedy['equal']} tasks equal of {greedy['total']} ({greedy['steps']} policy tokens,"
            f" {greedy['ties']} ties within 2×tol)"
        )
        check(greedy["total"] > 0, "greedy.jsonl has no rows")
        check(
            greedy["first_mismatch"] is None,
            f"greedy: {greedy['total'] - greedy['equal']} of {greedy['total']} tasks differ; first: {greedy['first_mismatch']}",
        )
        missing = {t["id"] for t in tasks.values() if t["split"] != "train"} - {
            json.loads(line)["task_id"] for line in (folder / "greedy.jsonl").read_text().splitlines()
        }
        check(not missing, f"greedy.jsonl lacks {len(missing)} held-out tasks, e.g. {sorted(missing)[:3]}")
    else:
        print("greedy: no greedy.jsonl, not checked")

    # The page's rewards on every stored trajectory, paid again by sandbox_reward.py.
    traj = None
    if (folder / "trajectories.jsonl").exists():
        settings = json.loads((folder / "run-config.json").read_text()) if (folder / "run-config.json").exists() else {}
        # Numbers as JavaScript reads them: doubles (the tests' inputs and outputs).
        traj = check_trajectories(
            read_jsonl(folder / "trajectories.jsonl"), tasks, names, settings.get("env") or {}
        )
        print(
            f"trajectories: {traj['equal']} equal of {traj['total']} ({traj['turns']} turns, {traj['runs']} of"
            f" them runs; {traj['carried']} relabelled paid on their rows' tests,"
            f" {traj['relabelled']} relabelled left out)"
        )
        check(
            traj["first_mismatch"] is None,
            f"trajectories: {traj['total'] - traj['equal']} of {traj['total']} differ; first: {traj['first_mismatch']}",
        )
    else:
        print("trajectories: no trajectories.jsonl, not checked")

    summary = {
        "folder": str(folder),
        "page_backend": page.get("backend"),
        "sequences": len(page["sequences"]),
        "max_abs_diff": max_diff,
        "max_abs_diff_sdpa": max_sdpa,
        "tolerance": opts.tol,
        "tasks": len(rows),
        "greedy_equal": greedy and greedy["equal"],
        "greedy_tasks": greedy and greedy["total"],
        "greedy_ties": greedy and greedy["ties"],
        "trajectories_equal": traj and traj["equal"],
        "trajectories": traj and traj["total"],
    }
    print(json.dumps(summary))
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
