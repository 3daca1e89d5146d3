"""Pictures: mechanism drawings and animations (:mod:`.plotting`). matplotlib is imported here only."""
