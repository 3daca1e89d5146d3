"""Andrews' squeezing mechanism (Schiehlen 1990; Hairer & Wanner II §VII.7; the IVP test set's "andrews"),
built from the paper's data with body frames at the pivots, simulated over 0.03 s in absolute and relative
coordinates, compared with the test set's reference solution, and plotted.

    python examples/planar_andrews.py [output-folder]
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import netdyn  # noqa: E402
from netdyn.linkages import ANDREWS_Q0, andrews_squeezer  # noqa: E402

# the test set's reference angles at t = 0.03 s (PSIDE, rtol = atol = 1e-14)
REFERENCE = {"O": 15.81077119629904, "F": -15.75637105984298, "B": 0.04082224013073101,
             "G": -0.5347301163226948, "A5": 0.5244099658805304, "H": 0.5347301163226948, "A7": 1.048080741042263}
PAPER = {"O": "β", "F": "Θ", "B": "γ", "G": "Φ", "A5": "δ", "H": "Ω", "A7": "ε"}


def main(out=Path("out")):
    out.mkdir(parents=True, exist_ok=True)
    net = andrews_squeezer()
    sols = {}
    for form, model in (("absolute", net.model()),
                        ("relative", net.model(formulation="relative", cut=["E3", "E4", "E6"]))):
        sols[form] = netdyn.simulate(model, (0, 0.03), q0={"O": ANDREWS_Q0["O"]}, guess=ANDREWS_Q0,
                                     t_eval=np.linspace(0, 0.03, 601))
        err = max(abs(sols[form][j][-1] - v) for j, v in REFERENCE.items())
        print(f"{form:8s} ({sols[form].method}): largest angle error at t = 0.03 s vs the test set: {err:.2g} rad")
    sol = sols["absolute"]
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for j in ("O", "F"):
        axes[0].plot(sol.t * 1e3, sol[j], label=f"{PAPER[j]} (joint {j})")
    for j in ("B", "G", "A5", "H", "A7"):
        axes[1].plot(sol.t * 1e3, np.mod(sol[j] + np.pi, 2 * np.pi) - np.pi, label=f"{PAPER[j]} (joint {j})")
    for ax, joints in ((axes[0], ("O", "F")), (axes[1], ("B", "G", "A5", "H", "A7"))):
        for j in joints:
            ax.plot([30.0], [REFERENCE[j] if ax is axes[0] else np.mod(REFERENCE[j] + np.pi, 2 * np.pi) - np.pi],
                    "kx", ms=8)
        ax.set_ylabel("angle (rad)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[0].set_title("Andrews' squeezing mechanism: joint angles (x: test-set reference at 30 ms)")
    axes[1].set_xlabel("t (ms)")
    fig.tight_layout()
    fig.savefig(out / "andrews_angles.png", dpi=110)
    plt.close(fig)
    netdyn.plot_mechanism(sol.model, sol.q[:, 0], path=out / "andrews_mechanism.png")
    return sols


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out"))
