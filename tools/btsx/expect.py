"""What a run must show: --expect outcomes by test name or glob, --expect-header lines.

The globs are the kernel's tests= globs, so that a selection and its expectations read alike.
"""

import re
from collections.abc import Iterable, Mapping

from btsx import ktap


def parse_expect(values: Iterable[str]) -> dict[str, str]:
    """'a=fail,b.*=skip' (repeatable) -> {'a': 'fail', 'b.*': 'skip'} in the order given."""
    expect: dict[str, str] = {}
    for value in values:
        for item in filter(None, value.split(",")):
            name, sep, outcome = item.partition("=")
            if not sep or not name or outcome not in ktap.OUTCOMES:
                raise ValueError(f"bad --expect item '{item}': want NAME=" + "|".join(ktap.OUTCOMES))
            if expect.get(name, outcome) != outcome:
                raise ValueError(f"--expect gives {name} twice: {expect[name]} and {outcome}")
            expect[name] = outcome
    return expect


def parse_expect_header(values: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """'apic=*(hpet;*' (repeatable, one item each: values may hold commas) -> ((key, glob),)."""
    wanted = []
    for item in values:
        key, sep, pattern = item.partition("=")
        if not sep or not key or not pattern:
            raise ValueError(f"bad --expect-header '{item}': want KEY=GLOB")
        wanted.append((key, pattern))
    return tuple(wanted)


def is_glob(pattern: str) -> bool:
    return "*" in pattern or "?" in pattern


def glob_matches(pattern: str, name: str) -> bool:
    """The kernel's tests= globs: '*' any run of characters (dots too), '?' exactly one."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, name, re.DOTALL) is not None


def expected_outcome(name: str, expect: Mapping[str, str]) -> str | None:
    """The outcome --expect requires of a test, None if it does not name it.
    An exact name wins; otherwise the first glob that matches, in the order given."""
    if name in expect:
        return expect[name]
    return next((out for pat, out in expect.items() if is_glob(pat) and glob_matches(pat, name)),
                None)


def acceptable(result: ktap.Result, expect: Mapping[str, str]) -> bool:
    """Whether a result is what --expect asks of it, or a pass or skip if it asks nothing."""
    want = expected_outcome(result.name, expect)
    if want is not None:
        return result.outcome == want
    return result.outcome in ("pass", "skip")
