"""Jobs as tables - one row builder, rendered as text (``ptjob``, plain IPython) or as
HTML (a notebook's ``%ptjob``) - and log chunks as the terminal shows them."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..backends import JobInfo, LogChunk
from ..job.failure import JobFailure, JobWaiting
from ..job.progress import JobProgress
from .ansi import strip_ansi

if TYPE_CHECKING:  # the kinds' manifest code: `ptjob list` needs none of it
    from ..kinds.trainjob.runtimes import Runtime

CLEAR = "\x1b[K"  # a terminal's erase to the end of the line, after a redraw's \r
_STATE_COLOR = {
    "Succeeded": "var(--jp-success-color1, #388e3c)",
    "Failed": "var(--jp-error-color1, #d32f2f)",
    "Restarting": "var(--jp-warn-color1, #f57c00)",
    "Running": "var(--jp-brand-color1, #1976d2)",
}


def escape(text: str) -> str:
    """``html.escape``, the module loaded on first use: a terminal's tables (``ptjob
    list``) need none of its entity tables."""
    import html

    return html.escape(text)


def human_duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h01m``, ``-`` for none."""
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def state_html(state: str) -> str:
    """A job state in its colour (JupyterLab's theme variables)."""
    color = _STATE_COLOR.get(state, "inherit")
    return f'<span style="color: {color}; font-weight: bold">{escape(state)}</span>'


@dataclass(frozen=True)
class Table:
    """A header and rows of text; ``state_column`` is coloured in HTML."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    state_column: int | None = None

    def text(self) -> str:
        """Columns padded to their widest cell, two spaces apart."""
        rows = [self.header, *self.rows]
        widths = [max(len(row[i]) for row in rows) for i in range(len(self.header))]
        return "\n".join(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )

    def html(self) -> str:
        """An HTML table, every cell escaped."""
        head = "".join(f"<th>{escape(cell)}</th>" for cell in self.header)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{state_html(cell) if i == self.state_column else escape(cell)}</td>"
                for i, cell in enumerate(row)
            )
            + "</tr>"
            for row in self.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def number(value: float) -> str:
    """A metric as people read it: ``0.2301``, ``1.2e-05``, ``450``."""
    return f"{value:.4g}"


def metric(progress: JobProgress, name: str) -> str:
    """A metric's latest value as the script printed it (``0.0000``), else ``number``."""
    return progress.metric_texts.get(name) or number(progress.metrics[name])


def progress_cell(progress: JobProgress | None) -> str:
    """``45% loss 0.23``: the percent (else the step or epoch) and the key metric."""
    if progress is None:
        return "-"
    if progress.percent is not None:
        parts = [f"{progress.percent:.0f}%"]
    elif progress.step is not None:
        parts = [f"step {progress.step}"]
    elif progress.epoch is not None:
        parts = [f"epoch {number(progress.epoch)}"]
    else:
        parts = []
    key = progress.key_metric
    if key is not None:
        parts.append(f"{key} {metric(progress, key)}")
    return " ".join(parts) or "-"


def eta_cell(job: JobInfo) -> str:
    """The time left while the job runs (a finished job has none)."""
    if job.progress is None or job.state.finished or job.progress.eta_seconds is None:
        return "-"
    return human_duration(job.progress.eta_seconds)


def step_and_epoch(progress: JobProgress) -> list[str]:
    """``step 420/1000``, ``epoch 2/10``: each that is known."""
    where = []
    if progress.step is not None:
        total = f"/{progress.total_steps}" if progress.total_steps else ""
        where.append(f"step {progress.step}{total}")
    if progress.epoch is not None:
        total = f"/{number(progress.total_epochs)}" if progress.total_epochs else ""
        where.append(f"epoch {number(progress.epoch)}{total}")
    return where


def progress_lines(progress: JobProgress) -> list[str]:
    """``ptjob status``'s progress: where the job is, then every metric."""
    where = [] if progress.percent is None else [f"{progress.percent:.0f}%"]
    where += step_and_epoch(progress)
    if progress.eta_seconds is not None:
        where.append(f"ETA {human_duration(progress.eta_seconds)}")
    seen = time.strftime("%H:%M:%S", time.localtime(progress.updated))
    source = f"(from {progress.source.value}, {seen})"
    lines = [f"Progress: {', '.join(where)} {source}" if where else f"Progress: {source}"]
    if progress.metrics:
        width = max(len(name) for name in progress.metrics)
        lines.append("Metrics:")
        lines += [f"  {name:<{width}}  {metric(progress, name)}" for name in progress.metrics]
    return lines


def jobs_table(jobs: Sequence[JobInfo], now: float | None = None) -> Table:
    """``ptjob list`` / ``%ptjob list``."""
    now = time.time() if now is None else now
    rows = [
        [
            job.name,
            job.state.value,
            str(job.nodes),
            str(job.gpus * job.nodes),
            human_duration(now - job.created),
            human_duration(job.duration),
            progress_cell(job.progress),
            eta_cell(job),
        ]
        for job in jobs
    ]
    return Table(
        ["NAME", "STATE", "NODES", "GPUS", "AGE", "DURATION", "PROGRESS", "ETA"],
        rows,
        state_column=1,
    )


def replicas_table(job: JobInfo) -> Table:
    """The replicas of ``ptjob status`` / ``%ptjob status``."""
    rows = [
        [
            r.name,
            r.phase,
            str(r.restarts),
            "-" if r.exit_code is None else str(r.exit_code),
            " ".join(str(x) for x in (r.reason, r.message) if x),
        ]
        for r in job.replicas
    ]
    return Table(["REPLICA", "PHASE", "RESTARTS", "EXIT", "REASON"], rows)


def conditions_table(job: JobInfo) -> Table:
    rows = [[c.type, c.status, c.reason, c.message] for c in job.conditions]
    return Table(["CONDITION", "STATUS", "REASON", "MESSAGE"], rows)


# ClusterTrainingRuntimes serve every namespace, TrainingRuntimes their own.
_SCOPE = {"ClusterTrainingRuntime": "cluster", "TrainingRuntime": "namespace"}
NO_RUNTIMES = "no Kubeflow Trainer runtimes (this backend runs no TrainJobs here)"


def runtimes_table(runtimes: Sequence[Runtime]) -> Table:
    """``ptjob runtimes`` / ``%ptjob runtimes``: what ``--runtime`` may name."""
    rows = [
        [
            r.name,
            _SCOPE.get(r.kind, r.kind),
            r.framework or "-",
            str(r.nodes),
            r.image or "-",
            ("yes" if r.usable is None else f"no: {r.usable}")
            + (" (deprecated)" if r.deprecated else ""),
        ]
        for r in runtimes
    ]
    return Table(["NAME", "SCOPE", "FRAMEWORK", "NODES", "IMAGE", "USABLE"], rows)


def format_runtimes(runtimes: Sequence[Runtime]) -> str:
    return runtimes_table(runtimes).text() if runtimes else NO_RUNTIMES


def runtimes_html(runtimes: Sequence[Runtime]) -> str:
    return runtimes_table(runtimes).html() if runtimes else f"<p>{NO_RUNTIMES}</p>"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return number(value)
    return value if isinstance(value, str) else json.dumps(value)


def _when(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def run_tables(run: Mapping[str, Any]) -> list[tuple[str, Table | None]]:
    """``ptjob run`` / ``%ptjob run``: the run record's parts, each a titled table (None:
    nothing of that part)."""
    hparams = run.get("hparams") or {}
    final = (run.get("metrics") or {}).get("final") or {}
    modes = run.get("modes") or {}
    checkpoints = run.get("checkpoints") or []
    artifacts = run.get("artifacts") or []
    return [
        (
            "Hyperparameters",
            Table(["NAME", "VALUE"], [[k, _cell(v)] for k, v in hparams.items()])
            if hparams
            else None,
        ),
        (
            "Metrics",
            Table(
                ["NAME", "FINAL", "BETTER"],
                [[k, _cell(v), modes.get(k, "-")] for k, v in final.items()],
            )
            if final
            else None,
        ),
        (
            "Checkpoints",
            Table(
                ["STEP", "TIME", "METRICS", "PATH"],
                [
                    [
                        str(c["step"]) if c.get("step") is not None else "-",
                        _when(c.get("time")),
                        " ".join(f"{k}={number(v)}" for k, v in (c.get("metrics") or {}).items())
                        or "-",
                        c["path"],
                    ]
                    for c in checkpoints
                ],
            )
            if checkpoints
            else None,
        ),
        (
            "Artifacts",
            Table(
                ["NAME", "TIME", "PATH"],
                [[a["name"], _when(a.get("time")), a["path"]] for a in artifacts],
            )
            if artifacts
            else None,
        ),
    ]


def _nothing_reported(name: str) -> str:
    return f"{name} reported no hyperparameters, metrics, checkpoints or artifacts yet"


def format_run(name: str, run: Mapping[str, Any]) -> str:
    parts = [f"{title}:\n{table.text()}" for title, table in run_tables(run) if table is not None]
    if not parts:
        return _nothing_reported(name)
    if run.get("dropped"):
        parts.append(f"({run['dropped']} reported items left out: over a limit or not valid)")
    if any(c.get("source") == "report" for c in run.get("checkpoints") or []) or run.get(
        "checkpoints"
    ):
        parts.append(f"resume from one: ptjob clone {name} --from-checkpoint PATH")
    return "\n\n".join(parts)


def run_html(name: str, run: Mapping[str, Any]) -> str:
    parts = [
        f"<h4>{escape(title)}</h4>{table.html()}"
        for title, table in run_tables(run)
        if table is not None
    ]
    if not parts:
        return f"<p>{escape(_nothing_reported(name))}</p>"
    return "".join(parts)


def format_jobs(jobs: Sequence[JobInfo]) -> str:
    return jobs_table(jobs).text() if jobs else "no jobs"


def jobs_html(jobs: Sequence[JobInfo]) -> str:
    return jobs_table(jobs).html() if jobs else "<p>no jobs</p>"


# Where a failure's last lines were read, as the status says it.
_LOG_SOURCE = {
    "current": "its log",
    "previous": "its previous run (logs --previous)",
    "archive": "the log archive",
}


def failure_lines(failure: JobFailure) -> list[str]:
    """Why the job failed, first thing: the headline, the hint, the last lines."""
    lines = [f"Failure:  {failure.headline}"]
    if failure.reason not in ("Error", "") and failure.reason not in failure.headline:
        lines.append(f"Reason:   {failure.reason}")
    if failure.hint:
        lines.append(f"Hint:     {failure.hint}")
    if failure.tail:
        source = _LOG_SOURCE.get(failure.log_source or "", "its log")
        who = f"{failure.replica}, " if failure.replica else ""
        lines.append(f"Output ({who}from {source}):")
        lines += [f"  {line}" for line in failure.tail]
    return lines


def waiting_lines(waiting: JobWaiting) -> list[str]:
    """What the job waits for (the platform's words) and what to do."""
    lines = [f"Waiting:  {waiting.reason}: {waiting.message}"]
    if waiting.hint:
        lines.append(f"Hint:     {waiting.hint}")
    return lines


def failure_html(failure: JobFailure) -> str:
    """The failure as a notebook shows it: headline, hint, the last lines."""
    parts = [
        '<p><b style="color: var(--jp-error-color1, #d32f2f)">Failure:</b> '
        f"{escape(failure.headline)}</p>"
    ]
    if failure.hint:
        parts.append(f"<p><b>Hint:</b> {escape(str(failure.hint))}</p>")
    if failure.tail:
        parts.append(f"<pre>{escape(chr(10).join(failure.tail))}</pre>")
    return "".join(parts)


def waiting_html(waiting: JobWaiting) -> str:
    hint = f" <b>Hint:</b> {escape(str(waiting.hint))}" if waiting.hint else ""
    text = f"{waiting.reason}: {waiting.message}"
    return f"<p><b>Waiting:</b> {escape(text)}{hint}</p>"


def format_status(job: JobInfo) -> str:
    lines = [f"Name:     {job.name}", f"State:    {job.state.value}"]
    # Why it failed or waits comes first: what the user came for.
    if job.failure is not None:
        lines += failure_lines(job.failure)
    if job.waiting is not None:
        lines += waiting_lines(job.waiting)
    elif job.message:
        lines.append(f"Note:     {job.message}")
    lines += [
        f"Nodes:    {job.nodes} ({job.topology})",
        f"Duration: {human_duration(job.duration)}",
    ]
    if job.logdir:
        lines.append(f"Logdir:   {job.logdir}")
    if job.progress is not None:
        lines += progress_lines(job.progress)
    if job.conditions:
        lines.append("Conditions:")
        lines += [f"  {c.type:<11}{c.status:<6}{c.message}" for c in job.conditions]
    lines += ["Replicas:", replicas_table(job).text()]
    return "\n".join(lines)


def status_html(job: JobInfo) -> str:
    parts = [
        f"<p><b>{escape(job.name)}</b> {state_html(job.state.value)} &middot; "
        f"{job.nodes} node(s) ({escape(job.topology)}) &middot; "
        f"duration {human_duration(job.duration)}"
        + (f" &middot; logdir <code>{escape(job.logdir)}</code>" if job.logdir else "")
        + "</p>"
    ]
    if job.failure is not None:
        parts.append(failure_html(job.failure))
    if job.waiting is not None:
        parts.append(waiting_html(job.waiting))
    elif job.message:
        parts.append(f"<p><i>{escape(str(job.message))}</i></p>")
    if job.progress is not None:
        first, *metrics = progress_lines(job.progress)
        parts.append(f"<p>{escape(first)}</p>")
        if metrics:
            rows = [[name, metric(job.progress, name)] for name in job.progress.metrics]
            parts.append(Table(["METRIC", "VALUE"], rows).html())
    parts.append(replicas_table(job).html())
    if job.conditions:
        parts.append(conditions_table(job).html())
    return "".join(parts)


class LogWriter:
    """Log chunks printed as a terminal shows them (``job.loglines.TerminalText``): on
    stdout, a notice on stderr, each line tagged ``master-0 | `` when ``prefix``. A redraw
    goes over its line in place where stdout is a terminal (``overwrite``: also a
    notebook's output); in a pipe each line waits until it is known not to be redrawn.
    ``raw`` prints the lines as the program wrote them; without ``colour`` their ANSI
    codes are stripped first. ``close`` ends the last line."""

    def __init__(
        self,
        *,
        prefix: bool,
        raw: bool = False,
        overwrite: bool | None = None,
        colour: bool = True,
    ) -> None:
        from ..job.loglines import TerminalText  # for logs only

        tty = sys.stdout.isatty()
        self.prefix = prefix
        self.colour = colour
        self.terminal = TerminalText(
            raw=raw, overwrite=tty if overwrite is None else overwrite, clear=CLEAR if tty else ""
        )

    def text(self, chunk: LogChunk) -> str:
        """What ``write`` prints on stdout for ``chunk`` (not a notice)."""
        text = chunk.text if self.colour else strip_ansi(chunk.text)
        if chunk.owners:
            tags = [f"{r} | " if self.prefix else "" for r in chunk.replicas]
            return self.terminal.merged(text, chunk.owners, chunk.replicas, tags)
        tag = f"{chunk.replica} | " if self.prefix else ""
        return self.terminal.text(chunk.replica, text, tag)

    def write(self, chunk: LogChunk) -> None:
        if chunk.notice:
            sys.stderr.write(chunk.display(prefix=True))
            sys.stderr.flush()
            return
        sys.stdout.write(self.text(chunk))
        sys.stdout.flush()

    def close(self) -> None:
        sys.stdout.write(self.terminal.end())
        sys.stdout.flush()
