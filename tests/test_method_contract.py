"""Every registered method passes the method contract (tests/method_contract.py)."""

from __future__ import annotations

import pytest

from method_contract import MethodContract
from quaderno.methods.registry import METHODS


@pytest.fixture(params=list(METHODS))
def name(request):
    return request.param


class TestRegisteredMethods(MethodContract):
    @pytest.fixture
    def build(self, name):
        spec = METHODS[name]
        # a method whose model decides whether to search is not held to retrieving
        self.needs_retrieval = spec.needs_retrieval and not spec.model_decides_retrieval
        options = {"k": 2, **({"max_iters": 3} if "max_iters" in spec.options.model_fields
                              else {})} if spec.needs_retrieval else {}

        def make(lm, retriever):
            method = METHODS.make(name, lm, retriever, options)
            assert method.name == name
            return method
        return make
