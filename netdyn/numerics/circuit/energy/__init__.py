"""The diode path's energy: the work each element does, carried with the BDF steps (:mod:`.circuit_work`), and
the per-element energy report from numbers (:mod:`.circuit_report`). A sub-room of the circuit path room."""
