"""A PNG of the ratios per case: ovpool / best peer and ovpool / roofline (log scale)."""

from __future__ import annotations

_SHORT = {"onnxruntime": "ORT", "openvino": "OV", "torch": "torch"}


def plot_ratios(report, path, quiet=False):
    """Write the PNG; ``quiet``: use the ratios over quiet runs (``ratios_quiet``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator

    if quiet:
        have = [e for e in report["results"] if e.get("ratios_quiet")]
        if have:
            report = dict(report, results=[dict(e, ratios=e["ratios_quiet"]) for e in have])
        else:
            # a run without per-run loads (one process) has no quiet ratios:
            # its ratios as they are, not an empty plot
            quiet = False
    threads = report["options"]["threads"]
    names = list(dict.fromkeys(e["case"] for e in report["results"]))
    by_key = {(e["case"], e["threads"]): e for e in report["results"]}
    height = max(4.0, 0.32 * len(names) * max(1, len(threads)) + 1.8)
    fig, axes = plt.subplots(1, 2, figsize=(13, height), sharey=True)
    panels = [
        (
            "ovpool_over_best_peer",
            "ovpool time / best peer time",
            [(0.8, "target 0.8 ", "right"), (1.0, " parity", "left")],
        ),
        (
            "ovpool_over_roofline",
            "ovpool time / roofline time",
            [(1.0, "roofline ", "right"), (3.0, " target 3", "left")],
        ),
    ]
    all_values = {
        key: [e["ratios"][key] for e in report["results"] if key in e["ratios"]]
        for key in ("ovpool_over_best_peer", "ovpool_over_roofline")
    }
    bar_h = 0.8 / max(1, len(threads))
    colors = ["#4C72B0", "#DD8452", "#55A868", "#C44E52"]
    for ax, (key, title, lines) in zip(axes, panels):
        for j, n in enumerate(threads):
            ys, values = [], []
            for i, name in enumerate(names):
                value = by_key.get((name, n), {}).get("ratios", {}).get(key)
                if value is not None:
                    ys.append(i + (j - (len(threads) - 1) / 2) * bar_h)
                    values.append(value)
            ax.barh(
                ys,
                values,
                height=bar_h * 0.9,
                color=colors[j % len(colors)],
                label=f"{n} thread{'s' if n > 1 else ''}",
            )
            for y, v, name in zip(
                ys,
                values,
                [
                    nm
                    for nm in names
                    if by_key.get((nm, n), {}).get("ratios", {}).get(key) is not None
                ],
            ):
                peer = (
                    by_key[(name, n)]["ratios"].get("best_peer", "")
                    if key.endswith("best_peer")
                    else ""
                )
                ax.text(v, y, f" {v:.2f} {_SHORT.get(peer, peer)}", va="center", fontsize=7)
        lows = [v for v in all_values[key] if v > 0]
        ax.set_xlim(min([0.4] + [v * 0.8 for v in lows]), max([4.0] + [v * 1.6 for v in lows]))
        for x, label, align in lines:
            ax.axvline(x, color="black", linestyle="--", linewidth=0.8)
            ax.text(
                x, 1.0, label, fontsize=7, ha=align, va="bottom", transform=ax.get_xaxis_transform()
            )
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_title(title, fontsize=10, pad=14)
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[0].set_yticks(range(len(names)))
    axes[0].set_yticklabels(names, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=8, loc="lower right")
    machine = report.get("machine", {})
    fig.suptitle(
        f"ovpool vs PyTorch / ONNX Runtime / OpenVINO: {machine.get('cpu_model', '')}, "
        f"{machine.get('cpus', '?')} vCPU; median of block medians"
        f" ({report['options'].get('processes', 1)} process(es)"
        + (", quiet runs only" if quiet else "")
        + "); lower is better",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
