"""Continues an exported policy with TRL's GRPOTrainer (DESIGN §14): the Hugging Face GPT-2 folder
e2e/bench/export-node.ts writes, its tasks.jsonl, and the page's reward (sandbox_reward.py).

    python cluster/train_trl.py EXPORT_DIR OUT_DIR [--steps 20] [--level easy] [--cluster]

Defaults are tiny, for a CPU check: 20 GRPO steps of one task's 8 completions. `--cluster` takes
real settings (an accelerator, many tasks a step, more steps). A completion is one turn ending at
`<submit>`, sampled under the page's grammar mask (`--no-mask`: without it); the chat template
renders each task's observation. Writes OUT_DIR as a GPT-2 folder (eval-hf-node.ts reads it back) and
OUT_DIR/train_log.json (steps, seconds, rewards).
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from sandbox_reward import (  # noqa: E402
    MAX_TOKENS_PER_TURN,
    START,
    Illegal,
    advance,
    legal_tokens,
    parse,
    reward_func,
    split_turn,
)


class GrammarMask:
    """A logits processor for one generate call whose prompts are `start` tokens (left-padded):
    only the tokens the page's grammar allows next (`<submit>` where the program may end)."""

    def __init__(self, tokenizer, context: int, start: int):
        self.vocab, self.context, self.start = tokenizer.get_vocab(), context, start
        self.token = {i: t for t, i in self.vocab.items()}
        self.pad, self.submit = self.vocab["<pad>"], self.vocab["<submit>"]

    def __call__(self, input_ids, scores):
        mask = scores.new_full(scores.shape, float("-inf"))
        for row, ids in enumerate(input_ids.tolist()):
            written, state = ids[self.start :], START
            prompt = sum(1 for t in ids[: self.start] if t != self.pad)
            for t in written:
                state = advance(state, self.token[t]) if state else None
            if self.submit in written or state is None:
                mask[row] = 0  # finished (generate pads it) or off the grammar: leave it
                continue
            budget = min(MAX_TOKENS_PER_TURN - len(written), self.context - prompt - len(written))
            for tok in legal_tokens(state, budget):
                mask[row, self.vocab[tok]] = 0
        return scores + mask


def is_program(text: str) -> bool:
    """A turn the page could have written: a program of the grammar, then a control token."""
    try:
        tokens, control = split_turn(text)
        parse(tokens)
        return control is not None
    except Illegal:
        return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("export_dir")
    p.add_argument("out_dir")
    p.add_argument("--steps", type=int, default=None, help="GRPO steps (20 tiny, 2000 with --cluster)")
    p.add_argument("--level", default="easy", help="train on this level's training tasks ('all': every level)")
    p.add_argument("--cluster", action="store_true", help="real settings: accelerator, bigger batches, more steps")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-mask", action="store_true", help="sample without the page's grammar mask")
    a = p.parse_args()

    # Imported here so that --help answers without loading torch.
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(a.export_dir)
    pad, bos, run = tokenizer.convert_tokens_to_ids(["<pad>", "<bos>", "<run>"])
    rows = load_dataset("json", data_files=str(Path(a.export_dir) / "tasks.jsonl"), split="train")
    rows = rows.filter(lambda r: r["split"] == "train" and a.level in ("all", r["level"]))
    # Conversational prompts: the tokenizer's chat template renders them into the observation.
    rows = rows.remove_columns("prompt").rename_column("messages", "prompt")

    tiny = dict(per_device_train_batch_size=8, num_generations=8, learning_rate=1e-4, use_cpu=True)
    real = dict(per_device_train_batch_size=128, num_generations=16, learning_rate=1e-5, bf16=True)
    config = GRPOConfig(
        output_dir=str(Path(a.out_dir) / "checkpoints"),
        max_steps=a.steps or (2000 if a.cluster else 20),
        max_completion_length=MAX_TOKENS_PER_TURN,  # a turn's budget, the control token included
        temperature=1.0,
        beta=0.0,  # no reference model, as the page's trainer
        # One turn, no feedback: a turn ends at <submit> (the tokenizer's eos, after which TRL masks);
        # <run> is suppressed, as are <pad> and <bos>, which the page's policy never writes.
        generation_kwargs={"suppress_tokens": [pad, bos, run]},
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=a.seed,
        **(real if a.cluster else tiny),
    )
    seen = {"completions": 0, "illegal": 0}

    def turn_reward(prompts, completions, completion_ids, **columns):
        # TRL's `completions` lose <submit> (the eos is a special token): decode the ids in our vocabulary.
        texts = [tokenizer.decode(ids, skip_special_tokens=False) for ids in completion_ids]
        seen["completions"] += len(texts)
        seen["illegal"] += sum(not is_program(t) for t in texts)
        return reward_func(prompts, texts, **columns)

    model = AutoModelForCausalLM.from_pretrained(a.export_dir)
    if not a.no_mask:
        # TRL's generate takes no logits processor of its own: give this model's one, per call.
        generate = model.generate

        def masked_generate(*args, **kwargs):
            start = kwargs["input_ids"].shape[1]
            mask = GrammarMask(tokenizer, model.config.n_positions, start)
            return generate(*args, logits_processor=LogitsProcessorList([mask]), **kwargs)

        model.generate = masked_generate
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=turn_reward,
        args=config,
        train_dataset=rows,
        processing_class=tokenizer,
    )
    before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    t0 = time.time()
    trainer.train()
    seconds = time.time() - t0
    trainer.save_model(a.out_dir)
    tokenizer.save_pretrained(a.out_dir)

    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    log = {
        "steps": trainer.state.global_step,
        "seconds": round(seconds, 1),
        "tasks": len(rows),
        "completions_per_step": config.per_device_train_batch_size,
        "reward_first5": sum(rewards[:5]) / max(1, len(rewards[:5])),
        "reward_last5": sum(rewards[-5:]) / max(1, len(rewards[-5:])),
        "illegal_completions": seen["illegal"] / max(1, seen["completions"]),
        "max_weight_change": max((v - before[k]).abs().max().item() for k, v in trainer.model.state_dict().items()),
    }
    (Path(a.out_dir) / "train_log.json").write_text(json.dumps(log, indent=1))
    print(json.dumps(log))
    if not a.no_mask and seen["illegal"]:
        sys.exit(f"{seen['illegal']} completions broke the grammar mask")


if __name__ == "__main__":
    main()
