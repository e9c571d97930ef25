"""How the tuning commands print: search configurations, query sets, experiments, comparisons
and the optimizer's answer, as text (stdout) or one JSON document."""

from __future__ import annotations

from typing import Any

from keepui.cli.output import emit_json, note, out

SHOWN = 10  # queries listed in text; --json has them all


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "-" if v is None else str(v)


def _settings(values: dict[str, Any]) -> str:
    return " ".join(f"{k}={_value(v)}" for k, v in values.items()) or "(as default)"


def render_configs(configs: list[dict[str, Any]], *, json_: bool) -> None:
    """`keepui config --configs`: each configuration and what it changes."""
    if json_:
        emit_json({"configs": configs})
        return
    width = max(len(c["name"]) for c in configs)
    for c in configs:
        shown = c["settings"] if c["name"] == "default" else c["changes"]
        out(f"{c['name']:{width}s}  {_settings(shown)}")
    note("default is [search] in keepui.toml; add others as [search.configs.NAME]")


def render_queryset(qs: dict[str, Any], *, json_: bool) -> None:
    """`keepui queryset add|show`: the set and its queries."""
    if json_:
        emit_json(qs)
        return
    action = f" ({qs['action']})" if qs.get("action") else ""
    note(
        f"query set {qs['name']}{action}: {qs['count']} queries, version {qs['version']}, from "
        f"{qs['source']}"
    )
    for row in qs["queries"]:
        judged = f"\t{row['judgments']}" if "judgments" in row else ""
        out(f"{row['qid']}{judged}\t{row['query']}")


def render_querysets(sets: list[dict[str, Any]], *, json_: bool) -> None:
    """`keepui queryset list`."""
    if json_:
        emit_json({"querysets": [{k: v for k, v in s.items() if k != "queries"} for s in sets]})
        return
    if not sets:
        note("no query sets yet (keepui queryset add NAME --from-judgments)")
    for s in sets:
        out(f"{s['name']}\t{s['count']} queries\tv{s['version']}\t{s['source']}\t{s['updated']}")


def _ci(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def _p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def render_experiment(exp: dict[str, Any], *, json_: bool) -> None:
    """`keepui experiment run|show`: scores, paired tests, differences and the pool."""
    if json_:
        emit_json(exp)
        return
    out(
        f"experiment {exp['id']}  {exp['when']}  query set {exp['queryset']} "
        f"v{exp['queryset_version']}: {exp['queries']} queries, {exp['judged']} judged "
        f"({exp['skipped']} skipped: no judgments)"
    )
    names = exp["metrics"]
    width = max(8, *(len(c) for c in exp["configs"]))
    out(f"{'config':{width}s}  " + "  ".join(f"{n:>24s}" for n in names))
    for c in exp["configs"]:
        cells = [f"{exp['scores'][c][n]:.4f} {_ci(*exp['intervals'][c][n])}" for n in names]
        changes = _settings(exp["changes"][c]) if c != "default" else "[search]"
        out(f"{c:{width}s}  " + "  ".join(f"{x:>24s}" for x in cells) + f"  {changes}")
    for t in exp["paired"]:
        out(
            f"{t['a']} vs {t['b']} {t['metric']}: {t['delta']:+.4f} "
            f"{_ci(t['low'], t['high'])} {_p(float(t['p']))}, wins {t['wins']}, losses "
            f"{t['losses']}" + ("" if t["low"] > 0 or t["high"] < 0 else " (no difference)")
        )
    for pair in exp["differences"]:
        rows = pair["queries"]
        if not rows:
            continue
        out(f"queries where {pair['a']} and {pair['b']} differ most ({pair['metric']}):")
        picked = rows[: SHOWN // 2] + [
            r for r in rows[-(SHOWN // 2) :] if r not in rows[: SHOWN // 2]
        ]
        for r in picked:
            out(f"  {r['delta']:+.4f}  {r['b']:.4f} -> {r['a']:.4f}  {r['query']}")
    pool = exp["pool"]
    if pool:
        total = sum(len(v) for v in pool.values())
        out(
            f"unjudged in the top 10 (judge these next): {total} document(s) over "
            f"{len(pool)} quer{'y' if len(pool) == 1 else 'ies'} (--json lists them all), e.g."
        )
        texts = {q: row["query"] for q, row in exp["per_query"].items()}
        for q, ids in list(pool.items())[:3]:
            more = f" +{len(ids) - 5}" if len(ids) > 5 else ""
            out(f"  {texts.get(q, q)}: {' '.join(ids[:5])}{more}")


def render_experiments(exps: list[dict[str, Any]], *, json_: bool) -> None:
    """`keepui experiment list`: every run, a line per configuration, oldest first."""
    if json_:
        keep = (
            "id",
            "when",
            "queryset",
            "queryset_version",
            "configs",
            "changes",
            "metrics",
            "queries",
            "judged",
            "scores",
            "intervals",
        )
        emit_json({"experiments": [{k: e[k] for k in keep} for e in exps]})
        return
    if not exps:
        note("no experiments yet (keepui experiment run --queries SET --config default)")
    for e in exps:
        for c in e["configs"]:
            cells = " ".join(f"{n}={e['scores'][c][n]:.4f}" for n in e["metrics"])
            out(
                f"{e['when']}  {e['id']}  {e['queryset']}/v{e['queryset_version']} "
                f"({e['judged']} judged)  {c}  {cells}"
            )


def render_comparison(cmp: dict[str, Any], *, json_: bool) -> None:
    """`keepui experiment compare`."""
    if json_:
        emit_json(cmp)
        return
    k = cmp["k"]
    out(
        f"{cmp['a']} vs {cmp['b']} on {cmp['queryset']} ({cmp['queries']} queries, top {k}): "
        f"mean Jaccard@{k} {cmp['jaccard']:.3f}, mean RBO {cmp['rbo']:.3f} (p={cmp['rbo_p']}), "
        f"{cmp['identical']} identical"
    )
    rows = [r for r in cmp["per_query"] if r["rbo"] < 1.0 or r["only_a"] or r["only_b"]]
    if rows:
        out("least overlap first:")
    for r in rows[:SHOWN]:
        out(f"  RBO {r['rbo']:.3f}  Jaccard {r['jaccard']:.2f}  {r['query']}")
        if r["only_a"]:
            out(f"      only {cmp['a']}: {' '.join(r['only_a'])}")
        if r["only_b"]:
            out(f"      only {cmp['b']}: {' '.join(r['only_b'])}")
    if len(rows) > SHOWN:
        note(f"{len(rows) - SHOWN} more queries differ (--json lists every query)")


def render_optimization(opt: dict[str, Any], *, json_: bool) -> None:
    """`keepui experiment optimize`."""
    if json_:
        emit_json(opt)
        return
    t = opt["paired"]
    m = opt["metric"]
    out(
        f"optimize on {opt['queryset']}: {opt['judged']} judged queries, {opt['folds']} folds "
        f"(seed {opt['seed']}), {opt['points']} settings searched"
    )
    out(
        f"held-out {m}  {opt['heldout']:.4f} {_ci(*opt['heldout_ci'])}  (each fold scored with "
        "the settings chosen on the other folds)"
    )
    out(f"default  {m}  {opt['default']:.4f} {_ci(*opt['default_ci'])}")
    verdict = {
        "gain": f"a gain of {t['delta']:+.4f}",
        "loss": f"a loss of {t['delta']:+.4f}",
        "none": "no gain (the interval of the difference spans 0)",
    }[opt["verdict"]]
    out(
        f"difference  {t['delta']:+.4f} {_ci(t['low'], t['high'])} {_p(float(t['p']))}, wins "
        f"{t['wins']}, losses {t['losses']}: {verdict}"
    )
    same = sum(f["config"] == opt["best"] for f in opt["chosen"])
    out(
        f"best settings on all judged queries: {_settings(opt['best'])} (chosen in {same} of "
        f"{opt['folds']} folds)"
    )
    if opt["saved"]:
        out(
            f"saved as [search.configs.{opt['saved']}] in keepui.toml "
            f"(keepui find --config {opt['saved']})"
        )
    else:
        note("not saved: --save NAME writes it as [search.configs.NAME]")
