"""Synthetic labelled questions for the gate tests (no LLM): "when was X founded" questions
where retrieval helps, "what is the capital of X" questions the LLM knows (retrieval hurts
or changes nothing). Also checks the generator itself."""

from __future__ import annotations

import random

from quaderno.gate.labels import LabelFile, LabelProvenance, LabelRecord

THINGS = ["acme", "globex", "initech", "umbrella", "hooli", "vandelay", "soylent", "tyrell",
          "wonka", "cyberdyne", "stark", "wayne", "oscorp", "aperture", "black mesa", "monarch",
          "gringotts", "duff", "krusty", "planet express", "nakatomi", "weyland", "massive dynamic",
          "dunder mifflin", "prestige", "sterling", "pied piper", "bluth", "los pollos", "paddy"]
PLACES = [("france", "paris"), ("italy", "rome"), ("spain", "madrid"), ("japan", "tokyo"),
          ("kenya", "nairobi"), ("peru", "lima"), ("egypt", "cairo"), ("norway", "oslo"),
          ("chile", "santiago"), ("cuba", "havana"), ("ghana", "accra"), ("iran", "tehran"),
          ("iraq", "baghdad"), ("nepal", "kathmandu"), ("laos", "vientiane"),
          ("mali", "bamako"), ("oman", "muscat"), ("fiji", "suva"), ("chad", "ndjamena"),
          ("togo", "lome"), ("benin", "porto novo"), ("malta", "valletta"),
          ("cyprus", "nicosia"), ("qatar", "doha"), ("sudan", "khartoum"),
          ("syria", "damascus"), ("yemen", "sanaa"), ("zambia", "lusaka"),
          ("gabon", "libreville"), ("niger", "niamey")]

PROVENANCE = LabelProvenance(llm="fake:fake", retriever="list:3", k=3, prompt_id="test")


def synthetic(n: int, *, seed: int = 0, split: str = "train") -> list[LabelRecord]:
    """``n`` records, half of each kind, deterministic for ``seed``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 2 == 0:
            thing = rng.choice(THINGS)
            year = str(rng.randint(1900, 1999))
            out.append(LabelRecord(
                id=f"{split}{i}", question=f"when was the {thing} company founded {i}",
                golden_answers=[year], answer_no_retrieval="unknown", answer_retrieval=year,
                response_no_retrieval="not sure <answer>unknown</answer>",
                judgement="ir_better", rqm_target=0.0, split=split, source="synthetic",
                llm_calls_no_retrieval=1, llm_calls_retrieval=1))
        else:
            country, city = rng.choice(PLACES)
            hurt = rng.random() < 0.5
            out.append(LabelRecord(
                id=f"{split}{i}", question=f"what is the capital city of {country} {i}",
                golden_answers=[city], answer_no_retrieval=city,
                answer_retrieval="somewhere" if hurt else city,
                response_no_retrieval=f"The capital of {country} is {city}, a large city. "
                                      f"<answer>{city}</answer>",
                judgement="ir_worse" if hurt else "same", rqm_target=0.9, split=split,
                source="synthetic", llm_calls_no_retrieval=1, llm_calls_retrieval=1))
    return out


def label_file(n_train: int = 60, n_val: int = 30, n_test: int = 30, seed: int = 0) -> LabelFile:
    return LabelFile(provenance=PROVENANCE,
                     records=[*synthetic(n_train, seed=seed, split="train"),
                              *synthetic(n_val, seed=seed + 1, split="val"),
                              *synthetic(n_test, seed=seed + 2, split="test")])


def test_synthetic_is_deterministic_and_balanced():
    a, b = synthetic(20, seed=3), synthetic(20, seed=3)
    assert a == b
    assert sum(r.judgement == "ir_better" for r in a) == 10
