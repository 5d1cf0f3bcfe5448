"""Answer steps return the span benchmarks score, with the explanation apart (issue 14.6)."""

from __future__ import annotations

import asyncio

import pytest

from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.baselines import VanillaLLM
from quaderno.methods.span import to_span

# the sentences the measuring model put inside <answer> on HotpotQA (issue 14, item 6)
CASES = [
    ("Are Chlidanthus and Maianthemum both flowering plants?",
     "Yes, both Chlidanthus and Maianthemum are flowering plants.", "yes", ["yes/no"]),
    ("Were Scott Derrickson and Ed Wood of the same nationality?",
     "No. Scott Derrickson is American and Ed Wood was too, but...", "no", ["yes/no"]),
    ("Which genus has more species, Polypodium or Maianthemum?",
     "Polypodium has more species.", "Polypodium", ["option"]),
    ("Which magazine was started first Arthur's Magazine or First for Women?",
     "Arthur's Magazine was started first.", "Arthur's Magazine", ["option"]),
    ("What city hosts the agency?", "The answer is Washington D.C.", "Washington D.C.",
     ["prefix"]),
    ("What city hosts the agency?", '"Paris."', "Paris", ["punctuation"]),
    ("Who wrote it?", "Answer: John Smith Jr.", "John Smith Jr.", ["prefix"]),
]


@pytest.mark.parametrize(("question", "reply", "span", "rules"), CASES)
def test_sentences_become_spans(question, reply, span, rules):
    assert to_span(question, reply) == (span, rules)


@pytest.mark.parametrize(("question", "reply"), [
    ("Who was born first, Arthur Conan Doyle or Penelope Lively?", "Arthur Conan Doyle"),
    ("Which is older, the Nile or the Amazon?",  # names both: not ours to choose
     "The Amazon is younger than the Nile"),
    ("What is the capital of France?", "yes"),   # not a yes/no question: left alone
    ("Is Paris the capital?", "Paris, yes"),     # does not start with yes/no
    ("How many moons?", "2"),
])
def test_spans_and_undecidable_replies_are_left_alone(question, reply):
    assert to_span(question, reply) == (reply, [])


def test_option_rule_needs_the_word_next_to_or():
    # "species" is in the reply and the question, but an option must touch the " or "
    assert to_span("Which has more species, Polypodium or Maianthemum?",
                   "Both have many species") == ("Both have many species", [])


def _ask(reply: str, question: str) -> tuple:
    lm = LM(FakeLLM(respond=lambda r: reply))
    answer = asyncio.run(VanillaLLM(lm).answer(question))
    spans = [s for s in answer.trace.spans if s.name == "answer"]
    return answer, spans[-1].outputs


def test_methods_answer_the_span_and_keep_the_sentence_as_explanation():
    reply = "Both are plants.\n<answer>Yes, both are flowering plants.</answer>"
    answer, outputs = _ask(reply, "Are Chlidanthus and Maianthemum both flowering plants?")
    assert answer.answer == "yes"
    assert "Yes, both are flowering plants." in answer.explanation
    assert outputs == {"answer": "yes", "tagged": "Yes, both are flowering plants.",
                       "span_rules": ["yes/no"]}


def test_a_span_already_is_not_touched():
    answer, outputs = _ask("<answer>Polypodium</answer>",
                           "Which genus has more species, Polypodium or Maianthemum?")
    assert answer.answer == "Polypodium" and outputs == {"answer": "Polypodium"}


def test_the_span_instruction_does_not_prime_a_yes():
    """With "yes or no" in the instruction the 1.5B measuring model opened every reply with
    "Yes" and wrote no tag (checked on the real server); yes/no replies are reduced by
    to_span instead, so the instruction names neither word."""
    import re

    from quaderno.methods.span import SPAN_RULES

    assert not re.search(r"\b(yes|no)\b", SPAN_RULES, re.I)
    assert to_span("Is Paris in France?", "Yes, it is.") == ("yes", ["yes/no"])


def test_an_untagged_sentence_is_re_asked_for_the_span_alone_and_the_bare_span_is_taken():
    """The measuring model repeated its untagged sentence word for word when asked to
    "follow the required format exactly"; asked for only the short answer in the tag, it
    replied "Greenwich Village, New York City" (untagged again): the fallback takes that."""
    from quaderno.methods.span import SPAN_REPAIR

    seen = []

    def reply(request):
        seen.append(request.messages[-1].content)
        if len(request.messages) == 1:
            return "Based on the documents, the director is based in Greenwich Village."
        return "Greenwich Village"

    answer = asyncio.run(VanillaLLM(LM(FakeLLM(respond=reply))).answer("Where is she based?"))
    assert seen[1].endswith(SPAN_REPAIR) and "follow the required format" not in seen[1]
    assert answer.answer == "Greenwich Village"


def test_an_answer_before_an_empty_tag_loses_the_tag_markup():
    answer, _ = _ask("David Weissman <answer></answer>", "Who co-wrote the film?")
    assert answer.answer == "David Weissman"  # was "David Weissman <answer></answer>"
    empty, _ = _ask("<answer></answer>", "Who co-wrote the film?")
    assert empty.answer == "unknown"
