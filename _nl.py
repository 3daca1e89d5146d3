import time, cProfile, pstats, numpy as np, netdyn
from benchmarks.cases_netdyn import nonlinear_ladder_network
from benchmarks.problems import NLRC
opts = {"t_eval": np.linspace(0.0, NLRC["t_stop"], NLRC["points"]), "rtol": 1e-6, "atol": 1e-16}
netdyn.simulate(nonlinear_ladder_network(2), (0.0, NLRC["t_stop"]), **opts)
t0 = time.process_time()
pr = cProfile.Profile(); pr.enable()
m = nonlinear_ladder_network(200).model()
t1 = time.process_time()
sol = netdyn.simulate(m, (0.0, NLRC["t_stop"]), **opts)
t2 = time.process_time()
pr.disable()
print("model", t1-t0, "simulate", t2-t1, sol.method)
pstats.Stats(pr).sort_stats("cumulative").print_stats(30)
