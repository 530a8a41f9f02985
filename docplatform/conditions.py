"""The conditions of adaptive content: a small expression language on a visitor's claims,
parsed and evaluated here, never by Python's ``eval``.

A page's ``condition`` and an ``adaptive`` fence's info string are written in it::

    visitor.claims.plan in ["pro", "team"] and not visitor.claims.trial == true

Grammar (README, "Adaptive content")::

    condition   := or
    or          := and ("or" and)*
    and         := not ("and" not)*
    not         := "not" not | comparison
    comparison  := operand [("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") operand]
    operand     := name | literal | list | "(" condition ")"
    name        := "visitor" "." "claims" ("." identifier)+
    literal     := string ('...' or "...") | number | "true" | "false" | "null"
    list        := "[" [literal ("," literal)* [","]] "]"

How it evaluates (never an error: a condition that cannot hold is false):

- a name is looked up in the claims, one mapping key per part (``visitor.claims.org.plan`` is
  ``claims["org"]["plan"]``; keys only, never an attribute); a claim that is not there makes
  every comparison it is part of false, and a bare name holding nothing false;
- ``==`` and ``!=`` compare values of the same type (``true`` is not ``1``, ``"1"`` is not
  ``1``); values of different types are unequal;
- ``<``, ``<=``, ``>``, ``>=`` compare two numbers or two strings; anything else is false;
- ``a in b``: membership when ``b`` is a list, a substring when both are strings, else false;
  ``a not in b`` is its negation where ``in`` applies, else false;
- a bare operand holds when its value is true, a non-empty string or list, or a non-zero
  number.

Conditions are bounded: MAX_LENGTH characters, MAX_DEPTH levels of nesting, MAX_LIST_ITEMS
items per list. A condition that cannot be parsed raises ConditionError naming the character
where it went wrong.
"""

import math
import re
from dataclasses import dataclass
from functools import lru_cache

MAX_LENGTH = 1000
MAX_DEPTH = 32
MAX_LIST_ITEMS = 100
MAX_NUMBER_LENGTH = 30
ROOT = ("visitor", "claims")

_COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t"}


class ConditionError(ValueError):
    """A condition that cannot be parsed: ``position`` is the offending character's index
    (from 0); the message names it from 1, as an editor counts."""

    def __init__(self, message: str, position: int):
        super().__init__(f"at character {position + 1}: {message}")
        self.position = position
        self.reason = message


class _Missing:
    """A claim that is not there."""

    def __repr__(self):
        return "<missing>"


MISSING = _Missing()


# --- Tokens ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "op", "string", "number", "word" (a keyword), "end"
    value: object
    position: int


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    at, length = 0, len(text)
    while at < length:
        char = text[at]
        if char in " \t\r\n":
            at += 1
        elif char in "\"'":
            value, end = _string(text, at)
            tokens.append(_Token("string", value, at))
            at = end
        elif char.isdigit() or (char == "-" and at + 1 < length and text[at + 1].isdigit()):
            found = _NUMBER.match(text, at)
            if found is None or len(found.group()) > MAX_NUMBER_LENGTH:
                raise ConditionError("a number too long or not written as 12, 1.5 or -3", at)
            number = float(found.group()) if any(c in found.group() for c in ".eE") else None
            if number is not None and not math.isfinite(number):
                raise ConditionError("a number too large", at)
            value = number if number is not None else int(found.group())
            tokens.append(_Token("number", value, at))
            at = found.end()
        elif char.isalpha() or char == "_":
            found = _IDENTIFIER.match(text, at)
            word = found.group()
            kind = "word" if word in _KEYWORDS else "name"
            tokens.append(_Token(kind, word, at))
            at = found.end()
        elif text.startswith(tuple(_COMPARISONS), at):
            op = next(op for op in _COMPARISONS if text.startswith(op, at))
            tokens.append(_Token("op", op, at))
            at += len(op)
        elif char in "()[],.":
            tokens.append(_Token("op", char, at))
            at += 1
        elif char == "=":
            raise ConditionError("a single '=': compare with '=='", at)
        else:
            raise ConditionError(f"unexpected character {char!r}", at)
    tokens.append(_Token("end", None, length))
    return tokens


def _string(text: str, start: int) -> tuple[str, int]:
    quote, at, out = text[start], start + 1, []
    while at < len(text):
        char = text[at]
        if char == quote:
            return "".join(out), at + 1
        if char == "\\":
            escaped = text[at + 1 : at + 2]
            if escaped not in _ESCAPES:
                raise ConditionError(
                    "an unknown escape in a string (\\\\, \\', \\\", \\n, \\t)", at
                )
            out.append(_ESCAPES[escaped])
            at += 2
            continue
        out.append(char)
        at += 1
    raise ConditionError("a string that is never closed", start)


# --- The tree ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Name:
    parts: tuple[str, ...]  # after visitor.claims

    def value(self, claims):
        current = claims
        for part in self.parts:
            if not isinstance(current, dict) or part not in current:
                return MISSING
            current = current[part]
        return current


@dataclass(frozen=True)
class _Literal:
    value: object


@dataclass(frozen=True)
class _Node:
    op: str  # "and", "or", "not", a comparison, "in", "not in", "truth"
    operands: tuple


def _value(operand, claims):
    if isinstance(operand, _Name):
        return operand.value(claims)
    if isinstance(operand, _Literal):
        return operand.value
    return _holds(operand, claims)  # a parenthesized condition is a boolean


def _holds(node, claims) -> bool:
    if not isinstance(node, _Node):
        return _truth(_value(node, claims))
    op, operands = node.op, node.operands
    if op == "and":
        return all(_holds(operand, claims) for operand in operands)
    if op == "or":
        return any(_holds(operand, claims) for operand in operands)
    if op == "not":
        return not _holds(operands[0], claims)
    left, right = (_value(operand, claims) for operand in operands)
    if left is MISSING or right is MISSING:
        return False
    return _compare(op, left, right)


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "other"


def _equal(left, right) -> bool:
    kind = _kind(left)
    if kind != _kind(right) or kind == "other":
        return False
    if kind == "list":
        return len(left) == len(right) and all(map(_equal, left, right))
    if kind == "object":
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    return left == right


def _compare(op: str, left, right) -> bool:
    if op == "==":
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    if op in ("in", "not in"):
        if _kind(right) == "list":
            found = any(_equal(left, item) for item in right)
        elif _kind(right) == "string" and _kind(left) == "string":
            found = left in right
        else:
            return False
        return found if op == "in" else not found
    kinds = _kind(left), _kind(right)
    if kinds not in (("number", "number"), ("string", "string")):
        return False
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    return left >= right


def _truth(value) -> bool:
    if value is MISSING or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | str | list | tuple | dict):
        return bool(value)
    return False


# --- The parser --------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0
        self.names: list[tuple[str, ...]] = []

    @property
    def token(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def is_(self, kind: str, value=None, *, ahead: int = 0) -> bool:
        token = self.tokens[min(self.at + ahead, len(self.tokens) - 1)]
        return token.kind == kind and (value is None or token.value == value)

    def expect(self, kind: str, value, what: str) -> _Token:
        if not self.is_(kind, value):
            raise ConditionError(f"expected {what}, found {self.describe()}", self.token.position)
        return self.take()

    def describe(self) -> str:
        token = self.token
        if token.kind == "end":
            return "the end of the condition"
        if token.kind == "string":
            return "a string"
        return repr(str(token.value))

    def nested(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConditionError(f"nested deeper than {MAX_DEPTH} levels", self.token.position)

    def parse(self):
        node = self.or_()
        if not self.is_("end"):
            raise ConditionError(
                f"expected 'and', 'or' or the end, found {self.describe()}", self.token.position
            )
        return node

    def or_(self):
        operands = [self.and_()]
        while self.is_("word", "or"):
            self.take()
            operands.append(self.and_())
        return operands[0] if len(operands) == 1 else _Node("or", tuple(operands))

    def and_(self):
        operands = [self.not_()]
        while self.is_("word", "and"):
            self.take()
            operands.append(self.not_())
        return operands[0] if len(operands) == 1 else _Node("and", tuple(operands))

    def not_(self):
        if self.is_("word", "not"):
            self.take()
            self.nested()
            node = _Node("not", (self.not_(),))
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self):
        left = self.operand()
        op = None
        if self.token.kind == "op" and self.token.value in _COMPARISONS:
            op = self.take().value
        elif self.is_("word", "in"):
            self.take()
            op = "in"
        elif self.is_("word", "not") and self.is_("word", "in", ahead=1):
            self.at += 2
            op = "not in"
        if op is None:
            return left
        return _Node(op, (left, self.operand()))

    def operand(self):
        token = self.token
        if token.kind == "op" and token.value == "(":
            self.take()
            self.nested()
            node = self.or_()
            self.depth -= 1
            self.expect("op", ")", "')'")
            return node
        if token.kind == "op" and token.value == "[":
            return _Literal(self.list_())
        if token.kind == "name":
            return self.name()
        return _Literal(self.literal())

    def literal(self):
        token = self.token
        if token.kind in ("string", "number"):
            return self.take().value
        if token.kind == "word" and token.value in ("true", "false", "null"):
            self.take()
            return {"true": True, "false": False, "null": None}[token.value]
        raise ConditionError(
            f"expected a claim (visitor.claims.…), a value or '(', found {self.describe()}",
            token.position,
        )

    def list_(self) -> tuple:
        start = self.take().position
        items = []
        while not self.is_("op", "]"):
            if self.is_("op", "["):
                raise ConditionError("a list holds strings, numbers, true, false or null", start)
            items.append(self.literal())
            if len(items) > MAX_LIST_ITEMS:
                raise ConditionError(f"a list of more than {MAX_LIST_ITEMS} items", start)
            if not self.is_("op", ","):
                break
            self.take()
        self.expect("op", "]", "',' or ']'")
        return tuple(items)

    def name(self) -> _Name:
        start = self.token.position
        parts = [self.take().value]
        while self.is_("op", "."):
            self.take()
            if self.token.kind not in ("name", "word"):  # a claim may be called "in"
                raise ConditionError(f"expected a name after '.', found {self.describe()}", start)
            parts.append(self.take().value)
        if tuple(parts[:2]) != ROOT or len(parts) < 3:
            raise ConditionError(
                f"unknown name {'.'.join(parts)!r}: conditions read visitor.claims.<name>", start
            )
        claim = tuple(parts[2:])
        self.names.append(claim)
        return _Name(claim)


@dataclass(frozen=True)
class Condition:
    """A parsed condition (``parse``): ``evaluate(claims)`` is whether it holds for a visitor
    with these claims (a JSON object)."""

    text: str
    _tree: object
    _names: tuple[tuple[str, ...], ...]

    def evaluate(self, claims) -> bool:
        return _holds(self._tree, claims if isinstance(claims, dict) else {})

    def names(self) -> list[str]:
        """The claims it reads (``plan``, ``org.plan``), each once, in order of appearance."""
        return list(dict.fromkeys(".".join(parts) for parts in self._names))


def parse(text: str) -> Condition:
    """The condition ``text`` says; ConditionError (a ValueError) naming where it is wrong."""
    if not isinstance(text, str):
        raise ConditionError("a condition is text", 0)
    if len(text) > MAX_LENGTH:
        raise ConditionError(f"a condition is at most {MAX_LENGTH} characters", MAX_LENGTH)
    if not text.strip():
        raise ConditionError("the condition is empty", 0)
    parser = _Parser(text)
    tree = parser.parse()
    return Condition(text=text, _tree=tree, _names=tuple(parser.names))


@lru_cache(maxsize=2048)
def compiled(text: str) -> Condition | None:
    """``parse(text)``, kept for the next visitor (a condition is parsed once per process);
    None for a condition that cannot be parsed (saved ones always can: they are checked)."""
    try:
        return parse(text)
    except ConditionError:
        return None


def holds(text: str, claims) -> bool:
    """Whether the condition ``text`` holds for ``claims``; no condition ("") always does, and
    one that cannot be parsed never does."""
    if not text:
        return True
    condition = compiled(text)
    return condition is not None and condition.evaluate(claims)
