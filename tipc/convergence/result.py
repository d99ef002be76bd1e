"""Outcomes as values: one check per (segment, step, metric, label), segment and test results."""

from __future__ import annotations

from dataclasses import dataclass, field

PASS = "PASS"
FAIL = "FAIL"


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


@dataclass(frozen=True)
class Check:
    step: int
    metric: str
    label: str
    op: str
    margin: float
    abs_margin: float
    expected: float | None  # recorded value (or band mean)
    lo: float | None  # widened bounds the operator used
    hi: float | None
    actual: float | None
    passed: bool
    reason: str = ""  # set when it could not be compared ("not observed", ...)
    band: tuple[float, float] | None = None  # the envelope before widening, when there is one

    @property
    def name(self) -> str:
        return f"{self.metric}[{self.label}]"

    def allowed(self) -> str:
        """What the operator accepted, in numbers: `in [a, b]`, `<= b`, ..."""
        return {
            "==": f"in [{fmt(self.lo)}, {fmt(self.hi)}]",
            "!=": f"outside [{fmt(self.lo)}, {fmt(self.hi)}]",
            "<=": f"<= {fmt(self.hi)}",
            "<": f"< {fmt(self.hi)}",
            ">=": f">= {fmt(self.lo)}",
            ">": f"> {fmt(self.lo)}",
        }[self.op]

    def describe(self) -> str:
        if self.reason:
            return f"step {self.step} {self.name}: {self.reason} (recorded {fmt(self.expected)})"
        allowed = self.allowed()
        base = (
            f"band [{fmt(self.band[0])}, {fmt(self.band[1])}]"
            if self.band
            else f"expected {fmt(self.expected)}"
        )
        return (
            f"step {self.step} {self.name}: actual {fmt(self.actual)}, {base}, operator {self.op!r} "
            f"margin {self.margin:g}{f' abs {self.abs_margin:g}' if self.abs_margin else ''}"
            f" -> allowed {allowed}"
        )


@dataclass
class SegmentResult:
    test: str
    start_step: int
    checkpoint: str
    status: str = PASS
    reasons: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    log_path: str = ""
    log_tail: list[str] = field(default_factory=list)
    # curves for the report: metric[label] -> [(step, value)]
    recorded: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    observed: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.test}::segment@{self.start_step}"

    @property
    def failed_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def failure_text(self) -> str:
        lines = [*self.reasons, *(c.describe() for c in self.failed_checks)]
        return "\n".join(lines)


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class

    name: str
    mode: str  # gather | run
    config_path: str
    manifest_path: str
    segments: list[SegmentResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # test-level failures (a gather run that failed, ...)

    @property
    def status(self) -> str:
        if self.errors or not self.segments or any(s.status != PASS for s in self.segments):
            return FAIL
        return PASS


@dataclass
class ConvergeResult:
    mode: str
    tests: list[TestResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.tests) and all(t.status == PASS for t in self.tests)

    @property
    def segments(self) -> list[SegmentResult]:
        return [s for t in self.tests for s in t.segments]
