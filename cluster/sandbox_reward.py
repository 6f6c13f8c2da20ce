"""The page's reward in Python (DESIGN §3, §14): a program of our grammar is parsed by a small
recursive-descent parser (never Python's eval) and run with JavaScript's number semantics, and a
turn is paid as src/lib/env/episode.ts pays it. Hooks: verl's `compute_score` and TRL's
`reward_func`. `cluster/check_reward.py` holds it to the QuickJS sandbox.

A completion is one turn as the exported tokenizer decodes it: space-separated tokens ending with
`<submit>` or `<run>` (`x * 2 + 1 <submit>`; source without spaces, `x*2+1`, reads the same). A
turn the page could not have written (a token outside the grammar, or no control token) is paid
as a turn that ran nothing and never submitted: -(turnCost + noSubmit).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

# src/lib/env/config.ts: DEFAULT_REWARD, and TOOLUSE_REWARD (no ranOk).
DEFAULT_REWARD = {"pass": 1.0, "ranOk": 0.05, "closeness": 0.2, "turnCost": 0.02, "noSubmit": 0.2}
TOOLUSE_REWARD = {**DEFAULT_REWARD, "ranOk": 0.0}
# DEFAULT_ENV_CONFIG.maxTokensPerTurn: program tokens plus the control token.
MAX_TOKENS_PER_TURN = 12
MAX_DIGITS = 3  # grammar.ts: the longest number literal
DIGITS = set("0123456789")
BINARY = set("+-*%<>")
PROGRAM_TOKENS = DIGITS | BINARY | set("x()?:")
CONTROLS = ("<run>", "<submit>")


class Illegal(Exception):
    """The text is not a program the page's grammar lets the policy write."""


# grammar.ts's GrammarState: (expect_operand, open groups, digits, zero, after_minus, length).
START = (True, (), 0, False, False, 0)


def advance(s: tuple, t: str) -> tuple | None:
    """grammar.ts `advance`: the state after token `t`, or None when `t` is not legal here."""
    expect, opened, digits, zero, after_minus, length = s
    length += 1
    if t in DIGITS:
        if expect:
            return (False, opened, 1, t == "0", False, length)
        if digits == 0 or zero or digits >= MAX_DIGITS:
            return None
        return (False, opened, digits + 1, False, False, length)
    if expect:
        if t == "x":
            return (False, opened, 0, False, False, length)
        if t == "(":
            return (True, opened + ("(",), 0, False, False, length)
        if t == "-" and not after_minus:
            return (True, opened, 0, False, True, length)
        return None
    if t in BINARY:
        return (True, opened, 0, False, t == "-", length)
    top = opened[-1] if opened else None
    if t == ")" and top == "(":
        return (False, opened[:-1], 0, False, False, length)
    if t == "?":
        return (True, opened + ("?",), 0, False, False, length)
    if t == ":" and top == "?":
        return (True, opened[:-1], 0, False, False, length)
    return None


def complete(s: tuple) -> bool:
    return not s[0] and not s[1]


def legal_tokens(s: tuple, budget: int) -> list[str]:
    """grammar.ts `legalProgramTokens`, then `<submit>` where the program may end (a one-turn episode)."""

    def min_to_finish(n: tuple) -> int:  # an operand, `)` or `: operand` per open group, the control token
        return (1 if n[0] else 0) + sum(1 if g == "(" else 2 for g in n[1]) + 1

    out = [t for t in PROGRAM_TOKENS if (n := advance(s, t)) and min_to_finish(n) <= budget - 1]
    return out + (["<submit>"] if complete(s) else [])


def check_grammar(tokens: list[str]) -> None:
    """grammar.ts `parseProgram`: raises Illegal naming the first illegal token."""
    s = START
    for i, t in enumerate(tokens):
        s = advance(s, t)
        if s is None:
            raise Illegal(f"token {i} ({t!r}) is not legal after {''.join(tokens[:i])!r}")
    if not complete(s):
        raise Illegal(f"program {''.join(tokens)!r} is incomplete")


# ---- parsing: JavaScript's precedence for our operators -------------------------------------
# An AST node is ("num", value) | ("x",) | ("neg", a) | (op, a, b) | ("?", test, yes, no).


class Parser:
    def __init__(self, tokens: list[str]):
        self.toks, self.i = tokens, 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        t = self.toks[self.i]
        self.i += 1
        return t

    def conditional(self):  # cmp ? conditional : conditional (right-associative)
        test = self.binary(0)
        if self.peek() != "?":
            return test
        self.take()
        yes = self.conditional()
        if self.take() != ":":
            raise Illegal("':' expected")
        return ("?", test, yes, self.conditional())

    LEVELS = (("<", ">"), ("+", "-"), ("*", "%"))

    def binary(self, level: int):  # left-associative levels, loosest first
        if level == len(self.LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek() in self.LEVELS[level]:
            node = (self.take(), node, self.binary(level + 1))
        return node

    def unary(self):
        t = self.take()
        if t == "-":
            return ("neg", self.unary())
        if t == "x":
            return ("x",)
        if t == "(":
            node = self.conditional()
            if self.take() != ")":
                raise Illegal("')' expected")
            return node
        number = t
        while self.peek() in DIGITS:
            number += self.take()
        return ("num", float(number))


def parse(tokens: list[str]):
    check_grammar(tokens)
    p = Parser(tokens)
    node = p.conditional()
    if p.i != len(tokens):
        raise Illegal("tokens left over")
    return node


# ---- evaluation: values are floats (doubles) or bools, as in JavaScript ----------------------


def to_number(v: float | bool) -> float:
    return float(v)  # ToNumber: true → 1, false → 0


def js_mod(a: float, b: float) -> float:
    """JavaScript's %: the sign of the dividend (math.fmod's), NaN where fmod raises."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return math.nan
    if math.isinf(b) or a == 0:
        return a
    return math.fmod(a, b)


def evaluate(node, x: float) -> float | bool:
    op = node[0]
    if op == "num":
        return node[1]
    if op == "x":
        return x
    if op == "neg":
        return -to_number(evaluate(node[1], x))
    if op == "?":
        t = evaluate(node[1], x)
        truthy = t if isinstance(t, bool) else not (t == 0 or math.isnan(t))
        return evaluate(node[2] if truthy else node[3], x)
    a, b = to_number(evaluate(node[1], x)), to_number(evaluate(node[2], x))
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "%":
        return js_mod(a, b)
    return a < b if op == "<" else a > b  # NaN compares false, as in JavaScript


# ---- a turn and its reward (episode.ts endTurn) ----------------------------------------------


@dataclass
class Turn:
    action: str  # "submit" | "run" | "illegal"
    program: str
    outputs: list[float] | None = None  # every output a finite number
    error: str | None = None  # the sandbox's kind: "output" for NaN, ±Infinity or a boolean
    passed: int = 0
    reward: float = 0.0


def split_turn(completion: str) -> tuple[list[str], str | None]:
    """Program tokens up to the first control token, and that token (None when there is none)."""
    tokens: list[str] = []
    for word in completion.split():
        if word in CONTROLS:
            return tokens, word[1:-1]
        for ch in word:
            if ch not in PROGRAM_TOKENS:
                raise Illegal(f"{ch!r} is not a program token")
            tokens.append(ch)
    return tokens, None


def run_program(node, inputs: list[float]) -> tuple[list[float] | None, str | None]:
    """Outputs when every call gives a finite number, else the error kind `output`."""
    outputs = []
    for x in inputs:
        y = evaluate(node, float(x))
        if isinstance(y, bool) or not math.isfinite(y):
            return None, "output"
        outputs.append(y + 0.0)  # -0 crosses the sandbox's JSON as 0
    return outputs, None


def js_mean(xs: list[float]) -> float:
    total = 0.0
    for v in xs:  # left to right, as reduce does (sum() compensates since Python 3.12)
        total += v
    return total / len(xs) if xs else 0.0


def score_turn(
    completion: str,
    hidden: list[dict],
    shown: list[dict],
    kind: str = "examples",
    weights: dict | None = None,
    max_tokens: int = MAX_TOKENS_PER_TURN,
    final_run: bool = True,
) -> Turn:
    """One turn of a one-turn episode: `<submit>` is scored on `hidden`; `<run>` runs `shown` (the
    run tests of a tool-use task) and ends the episode without a submit. With `final_run` False a
    `<run>` is a turn of a longer episode that goes on: no `noSubmit` penalty."""
    w = weights or (TOOLUSE_REWARD if kind == "tooluse" else DEFAULT_REWARD)
    try:
        tokens, action = split_turn(completion)
        if action is None or len(tokens) + 1 > max_tokens:
            raise Illegal("no control token within the turn's budget")
        node = parse(tokens)
    except Illegal:
        return Turn("illegal", completion.strip(), error="syntax", reward=-w["turnCost"] - w["noSubmit"])
    tests = hidden if action == "submit" else shown
    outputs, error = run_program(node, [t["input"] for t in tests])
    turn = Turn(action, "".join(tokens), outputs, error)
    total = 0.0  # summed in episode.ts's order, so the float is the same
    total += -w["turnCost"]
    if outputs is not None:
        total += w["ranOk"]
    if action == "submit":
        expected = [float(t["output"]) for t in tests]
        turn.passed = sum(1 for y, e in zip(outputs, expected) if y == e) if outputs is not None else 0
        close = js_mean([1 / (1 + abs(y - e)) for y, e in zip(outputs, expected)]) if outputs else 0.0
        total += (w["pass"] * turn.passed) / max(1, len(tests))
        total += w["closeness"] * close
    elif final_run:
        total += -w["noSubmit"]
    turn.reward = total
    return turn


def _tests(value) -> list[dict]:
    return json.loads(value) if isinstance(value, str) else list(value or [])


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None) -> float:
    """verl's hook: `ground_truth` the hidden tests as JSON; `extra_info` (export/datasets.ts) has
    the kind, and the examples and tool-use tests a `<run>` runs."""
    info = extra_info or {}
    kind = info.get("kind") or data_source.rsplit("/", 1)[-1]
    shown = _tests(info.get("tests" if kind == "tooluse" else "examples"))
    return score_turn(solution_str, _tests(ground_truth), shown, kind).reward


def completion_text(completion) -> str:
    """TRL passes text, or chat messages for conversational prompts."""
    if isinstance(completion, list):
        return "".join(m["content"] for m in completion if m.get("role") == "assistant")
    return completion


def reward_func(prompts, completions, label=None, kind=None, tests=None, examples=None, **_columns) -> list[float]:
    """TRL's hook: the JSONL columns (export/datasets.ts) arrive as lists, one item a completion."""
    out = []
    for i, c in enumerate(completions):
        k = kind[i] if kind else "examples"
        column = tests if k == "tooluse" else examples  # what a `<run>` runs
        out.append(score_turn(completion_text(c), _tests(label[i]), _tests(column[i] if column else []), k).reward)
    return out
