# The two commands of the README:
#   make demo   install everything, then run the main job on the bundled sample corpus
#   make test   install everything, then lint and run the whole test suite
#   make serve  install everything, then serve the HTTP API on 127.0.0.1:8765 (embedded LLM)
VENV ?= .venv
STAMP := $(VENV)/.quaderno-installed

.PHONY: install demo test bench serve

$(STAMP): pyproject.toml scripts/install.sh
	VENV=$(VENV) bash scripts/install.sh
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/quaderno demo

test: $(STAMP)
	$(VENV)/bin/ruff check quaderno tests benchmarks
	QUADERNO_REQUIRE_BROWSER=1 $(VENV)/bin/python -m pytest -q

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/retrieval.py

serve: $(STAMP)
	$(VENV)/bin/quaderno serve
