"""The IDA path (row ``ida`` of the path table): SUNDIALS IDA on the stabilized index-2 form.

Dense IDA with the compiled kernel's analytic Jacobian (:mod:`.ida`, :mod:`.ida_kernel`) and, for large
models, IDA with a sparse analytic Jacobian from the element templates (:mod:`.sparse_ida`). Hidden
constraints and index reduction come from the shared :mod:`netdyn.numerics.dae` room.
"""
