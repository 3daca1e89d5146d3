"""Ready-made mechanisms: networks of bodies and joints built from published data.

One module a family; everything is re-exported here, so ``from netdyn.linkages import four_bar`` works.

>>> from netdyn.linkages import four_bar
>>> sorted(four_bar().graph.nodes)[:2]
['0', 'crank']
"""
from netdyn.linkages.andrews import ANDREWS, ANDREWS_Q0, andrews_squeezer  # noqa: F401
from netdyn.linkages.mixed import MOTOR, motor_four_bar  # noqa: F401
from netdyn.linkages.planar import (BOOK, FOUR_BAR_GUESS, five_bar, four_bar, four_bar_pose, pendulum,  # noqa: F401
                                    pendulum_state, slider_crank, slider_crank_pose, three_rrr)
from netdyn.linkages.spatial import (HEAVY_TOP, chain_parameters, heavy_top, rssr, rssr_guess,  # noqa: F401
                                     spatial_chain, spherical_pendulum, stewart_leg_motions, stewart_platform)
from netdyn.linkages.spatial import delta_circle, delta_inverse_kinematics, delta_robot  # noqa: F401

__all__ = ["ANDREWS", "ANDREWS_Q0", "andrews_squeezer", "BOOK", "FOUR_BAR_GUESS", "five_bar", "four_bar",
           "four_bar_pose", "slider_crank_pose",
           "MOTOR", "motor_four_bar",
           "pendulum", "pendulum_state", "slider_crank", "three_rrr", "HEAVY_TOP", "chain_parameters", "heavy_top", "rssr", "rssr_guess", "spatial_chain",
           "spherical_pendulum", "stewart_leg_motions", "stewart_platform",
           "delta_robot", "delta_circle", "delta_inverse_kinematics"]
