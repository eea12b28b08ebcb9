"""Registry of case generators: each generator is a function ctx -> list of Case, registered for
the operator names it produces cases for."""

GENERATORS = []


def gen(*ops):
    def deco(f):
        GENERATORS.append((ops, f))
        return f
    return deco


class Ctx:
    def __init__(self, seed=1, quick=False):
        self.seed = seed
        self.quick = quick
