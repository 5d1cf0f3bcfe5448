"""PAGER (seed paper 000): the method, its ablations, its steps and page splicing."""

from quaderno.methods.pager.fill import FillMode, rewrite_grammar
from quaderno.methods.pager.method import VARIANTS, Pager, Variant
from quaderno.methods.pager.splice import Splice, splice

__all__ = ["VARIANTS", "FillMode", "Pager", "Splice", "Variant", "rewrite_grammar", "splice"]
