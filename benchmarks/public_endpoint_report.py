"""The printed report of ``public_endpoint.py``: the load's table, the serial medians, the event
dispatch, the cold starts, and issue 19's figures beside their goals."""

import os
import statistics

from bench_processes import percentile


def _met(ok: bool | None) -> str:
    return "—" if ok is None else "met" if ok else "MISSED"


def _cpu_table(results, labels) -> None:
    """The CPU each group of processes used per request under load (``CpuMeter``)."""
    groups = list(next(iter(results.values()))[2])
    print("\nCPU ms per request under load, by process (/proc, user + system)\n")
    print(f"| {'contender':<28} | " + " | ".join(f"{group:>12}" for group in groups) + " | total |")
    print(f"| {'-' * 28} | " + " | ".join("-" * 11 + ":" for _ in groups) + " | ----: |")
    for name, (latencies, _rates, cpu) in results.items():
        per_request = [cpu[group] * 1000 / len(latencies) for group in groups]
        cells = " | ".join(f"{value:>12.2f}" for value in per_request)
        print(f"| {labels[name]:<28} | {cells} | {sum(per_request):>5.2f} |")


def report(args, results, serial, events, cold, fairness, started_at, load_before, hosts) -> None:
    rows = {}
    for name, (latencies, rates, _cpu) in results.items():
        rows[name] = (
            len(latencies),
            statistics.mean(rates),
            percentile(latencies, 0.50) * 1000,
            percentile(latencies, 0.99) * 1000,
        )
    load_after = os.getloadavg()
    print(
        f"{started_at}; {os.cpu_count()} cores, load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after (a shared machine: figures move from run to run). "
        f"PostgreSQL, Redis, gunicorn web -w {args.web_workers} gthread x{args.web_threads}, "
        f"DEBUG off, runtime host "
        f"runtime_host ({args.transport}; bubblewrap or unconfined), Celery worker prefork x2"
    )
    for sandbox, line in hosts.items():
        print(f"runtime host ({sandbox}): {line}")
    print(
        f"\nUnder load: {args.concurrency} connections, {args.rounds} rounds of "
        f"{args.seconds:g} s\n"
    )
    print(f"| {'contender':<28} | {'requests':>8} | {'req/s':>7} | {'p50 ms':>7} | {'p99 ms':>7} |")
    print(f"| {'-' * 28} | {'-' * 7}:| {'-' * 6}:| {'-' * 6}:| {'-' * 6}:|")
    labels = {
        "bare": "bare Django view",
        "endpoint": "public endpoint, sandboxed",
        "unconfined": "public endpoint, unconfined",
        "against": "endpoint, --against's code",
    }
    for name, (count, rate, p50, p99) in rows.items():
        print(f"| {labels[name]:<28} | {count:>8} | {rate:>7.0f} | {p50:>7.2f} | {p99:>7.2f} |")
    ratios = [
        ("sandboxed / bare", "endpoint", "bare"),
        ("sandboxed / unconfined", "endpoint", "unconfined"),
    ]
    if "against" in rows:
        ratios += [
            ("--against's / bare", "against", "bare"),
            ("this / --against's", "endpoint", "against"),
        ]
    for label, top, bottom in ratios:
        a, b = rows[top], rows[bottom]
        print(
            f"| {'ratio ' + label:<28} | {'':>8} | {a[1] / b[1]:>7.2f} "
            f"| {a[2] / b[2]:>7.2f} | {a[3] / b[3]:>7.2f} |"
        )

    _cpu_table(results, labels)

    print(f"\nSerially: one connection, {args.serial} of each in blocks of {args.serial_block}\n")
    print(f"| {'request':<40} | {'median ms':>9} | {'p90 ms':>7} | {'p99 ms':>7} |")
    print(f"| {'-' * 40} | {'-' * 8}:| {'-' * 6}:| {'-' * 6}:|")
    serial_labels = {
        "bare": "bare Django view",
        "endpoint": "public endpoint, sandboxed",
        "render": "component render (API, token)",
        "action": "component action (API, token)",
        "api": "installation read (API, token; no call)",
    }
    median = {kind: statistics.median(values) * 1000 for kind, values in serial.items()}
    for kind, values in serial.items():
        print(
            f"| {serial_labels[kind]:<40} | {median[kind]:>9.2f} "
            f"| {percentile(values, 0.9) * 1000:>7.2f} | {percentile(values, 0.99) * 1000:>7.2f} |"
        )

    if events:  # --events 0: not measured
        ms = {name: [value * 1000 for value in values] for name, values in events.items()}
        ms["call"] = events["call"]
        print(f"\nEvent dispatch: {args.events} space_content_updated, one at a time\n")
        print(f"| {'from fire (ms)':<40} | {'median':>7} | {'p90':>7} | {'max':>7} |")
        print(f"| {'-' * 40} | {'-' * 6}:| {'-' * 6}:| {'-' * 6}:|")
        for name, label in (
            ("commit", "to the commit (event, delivery, queued)"),
            ("handler", "to the handler's run"),
            ("logged", "to its log line seen (polled, 5 ms)"),
            ("call", "the runtime call alone (log line, ms)"),
        ):
            values = ms[name]
            print(
                f"| {label:<40} | {statistics.median(values):>7.1f} "
                f"| {percentile(values, 0.9):>7.1f} | {max(values):>7.1f} |"
            )
    cold_ms = [value * 1000 for value in cold]
    print(f"\nCold start, first call after a publish ({args.cold_starts}): ", end="")
    print(" ".join(f"{value:.1f}" for value in cold_ms))

    statuses = ", ".join(
        f"{count} x {status}" for status, count in sorted(fairness["statuses"].items())
    )
    print(
        f"\nFairness: the endpoint's serial p50 {fairness['quiet_p50']:.2f} ms alone, "
        f"{fairness['loaded_p50']:.2f} ms while another integration is hammered through its own "
        f"web server (32 connections: {fairness['hammered_rate']:.0f} req/s, p50 "
        f"{fairness['hammered_p50']:.1f} ms; answered {statuses})"
    )
    fair = fairness["loaded_p50"] / fairness["quiet_p50"]

    bare, endpoint = rows["bare"], rows["endpoint"]
    ratio = endpoint[1] / bare[1]
    serial_over = median["endpoint"] - median["bare"]
    render_over, action_over = median["render"] - median["bare"], median["action"] - median["bare"]
    cold_median = statistics.median(cold_ms)
    figures = [
        ("ratio (req/s, endpoint / bare)", f"{ratio:.2f}",
         f"{endpoint[1]:.0f} / {bare[1]:.0f} req/s", ">= 0.33", ratio >= 0.33),
        ("p50 under load", f"{endpoint[2]:.2f} ms",
         f"{endpoint[2] / bare[2]:.1f} x bare {bare[2]:.2f} ms", "<= 3 x bare",
         endpoint[2] <= 3 * bare[2]),
        ("p99 under load", f"{endpoint[3]:.2f} ms",
         f"{endpoint[3] / bare[3]:.1f} x bare {bare[3]:.2f} ms", "—", None),
        ("serial (endpoint - bare, median)", f"{serial_over:+.2f} ms",
         f"{median['endpoint']:.2f} - {median['bare']:.2f} ms", "<= 3 ms", serial_over <= 3),
        (f"cold start (median of {len(cold_ms)})", f"{cold_median:.1f} ms",
         f"max {max(cold_ms):.1f} ms", "< 60 ms", cold_median < 60),
        ("render (- bare serial, median)", f"{render_over:+.2f} ms",
         f"{median['render']:.2f} - {median['bare']:.2f} ms", "<= 5 ms", render_over <= 5),
        ("action (- bare serial, median)", f"{action_over:+.2f} ms",
         f"{median['action']:.2f} - {median['bare']:.2f} ms", "<= 5 ms", action_over <= 5),
        ("fairness (p50 hammered / quiet)", f"{fair:.2f}",
         f"{fairness['loaded_p50']:.2f} / {fairness['quiet_p50']:.2f} ms", "<= 2", fair <= 2),
    ]  # fmt: skip
    if events:
        figures.append(
            ("event dispatch (fire -> handler, median)",
             f"{statistics.median(ms['handler']):.1f} ms",
             f"runtime call {statistics.median(ms['call']):.1f} ms", "—", None)
        )  # fmt: skip
    print("\nIssue 19's figures (sandboxed, bubblewrap):\n")
    print(f"| {'figure':<42} | {'measured':>9} | {'from':<30} | {'goal':<11} | met    |")
    print(f"| {'-' * 42} | {'-' * 8}:| {'-' * 30} | {'-' * 11} | ------ |")
    for label, value, source, goal, ok in figures:
        print(f"| {label:<42} | {value:>9} | {source:<30} | {goal:<11} | {_met(ok):<6} |")
