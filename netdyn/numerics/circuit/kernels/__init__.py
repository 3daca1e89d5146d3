"""The circuit path's compiled (numba) kernels: one BDF step (:mod:`.circuit_kernel`), the Newton matrix on
a fixed sparse pattern (:mod:`.newton_matrix`), sources as stack programs (:mod:`.source_program`)."""
