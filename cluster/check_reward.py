"""Holds cluster/sandbox_reward.py to the page: for each case e2e/bench/reward-parity.ts wrote (a turn
the page's Episode played with QuickJS), the same outputs, error kind, tests passed and reward,
to the last bit; a program the page cannot write must be refused without being run.

    python cluster/check_reward.py bench-results/export/reward-cases.jsonl
"""

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import sandbox_reward as sr  # noqa: E402


def main(path: str) -> None:
    counts, failures = Counter(), []
    for line in Path(path).read_text().splitlines():
        case = json.loads(line, parse_int=float)  # numbers as JavaScript reads them: doubles
        control = "<run>" if case["action"] == "run" else "<submit>"
        text = " ".join(case["program"]) + " " + control  # as the tokenizer decodes a turn
        # The parity turns may hold up to 40 program tokens (the page's default is 11).
        turn = sr.score_turn(text, case["hidden"], case["shown"], case["kind"], max_tokens=41)
        # The engines' hooks pay the same (TRL's columns, verl's extra_info), at the page's budget.
        if len(case["program"]) < sr.MAX_TOKENS_PER_TURN:
            run_key = "tests" if case["kind"] == "tooluse" else "examples"
            hidden, shown = json.dumps(case["hidden"]), json.dumps(case["shown"])
            verl = sr.compute_score(f"sandbox-rl-lab/{case['kind']}", text, hidden, {"kind": case["kind"], run_key: shown})
            trl = sr.reward_func([""], [text], label=[hidden], kind=[case["kind"]], **{run_key: [case["shown"]]})
            if verl != turn.reward or trl != [turn.reward]:
                failures.append(f"{case['program']!r}: compute_score {verl}, reward_func {trl}, turn {turn.reward}")
            counts["hooks"] += 1
        if not case["legal"]:
            ok = turn.action == "illegal"
            counts["refused"] += 1
        else:
            got = (turn.outputs, turn.error, turn.passed, turn.reward)
            want = (case["outputs"], case["error"], case["passed"], case["reward"])
            ok = turn.action == case["action"] and got == want
            counts[f"{case['action']} {case['error'] or 'ok'}"] += 1
        # The grammar mask: the page's legal tokens before each token (<run> aside: one-turn GRPO has none).
        state = sr.START
        for j, m in enumerate(case.get("masks", [])):
            page = set(m["legal"]) - {"<run>"}
            if set(sr.legal_tokens(state, int(m["budget"]))) != page:
                failures.append(f"{case['program']!r}: mask after {j} tokens differs from the page's {sorted(page)}")
            counts["masks"] += 1
            if j < len(case["program"]):
                state = sr.advance(state, case["program"][j])
        if not ok:
            failures.append(f"{case['program']!r} {case['action']} ({case['kind']}): python {turn}, page {case}")
    for f in failures[:10]:
        print("MISMATCH", f[:400])
    total = sum(n for k, n in counts.items() if k not in ("hooks", "masks"))
    print(json.dumps({"cases": total, "mismatches": len(failures), **counts}))
    if failures or total == 0:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-results/export/reward-cases.jsonl")
