"""Checks an exported policy folder with the real libraries (issue #42).

    .venv-cluster/bin/python cluster/check_export.py DIR [--tol 1e-4]

DIR is what `e2e/bench/export-node.ts` wrote: the Hugging Face model folder, logits.json (the
page's logits on a few token sequences) and tasks.jsonl. Loads the folder with transformers
(GPT2LMHeadModel, AutoTokenizer) and asserts: every weight loaded from the file (none missing,
unexpected or initialised at random), the head tied to the embedding exactly when the policy's is
(logits.json's model.tieEmbeddings), the tokenizer gives the
page's token ids for the page's text and back, the chat template renders each task's messages into
its prompt, the model's logits equal the page's within --tol (max abs difference, printed), and
`datasets` reads tasks.jsonl (and tasks.parquet when present). Exits 1 naming each failed check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

# Everything is local: no hub look-ups (there is no network to answer them).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


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
    first = page["sequences"][0]["ids"]
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

    summary = {
        "folder": str(folder),
        "page_backend": page.get("backend"),
        "sequences": len(page["sequences"]),
        "max_abs_diff": max_diff,
        "max_abs_diff_sdpa": max_sdpa,
        "tolerance": opts.tol,
        "tasks": len(rows),
    }
    print(json.dumps(summary))
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
