"""RAT, Retrieval-Augmented Thoughts (Wang et al., 2024; CraftJarvis/RAT ``app/gradio_app.py``),
a PAGER Table 1 baseline: a zero-shot chain of thought revised step by step with retrieval.

As the official pipeline runs it:

1. a draft: step-by-step thoughts, paragraphs separated by blank lines;
2. the draft split by the model into paragraphs at "##", the model asked for fewer than
   ``max_paragraphs`` (4); as in the official code, whatever it returns is used;
3. for each paragraph in turn: append it to the answer so far; a search query from the
   question and the answer so far (aimed at its last sentences); retrieve; revise the whole
   answer with each of the first ``revise_docs`` (2) documents, one revision per document;
4. a reflection that titles and structures the answer.

The official app searches the web (Bing/Google pages, chunked); here the retriever is the
knowledge base, ``k`` documents per query. For QA benchmarks the final answer is read from the
revised text by quaderno's span step (the official RAT writes long answers only): recorded as
quaderno's. Prompts carry the meaning of the official ones in quaderno's words.
"""

from __future__ import annotations

from quaderno.errors import ConfigError
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import extract_tag
from quaderno.llm.steps import Step, text_output
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import ChainDetails
from quaderno.methods.episode import Episode
from quaderno.methods.pager.steps import ANSWER_GRAMMAR, SUBQUERY_GRAMMAR
from quaderno.methods.span import SPAN_REPAIR, SPAN_RULES

# for the embedded model (constrained decoding): paragraphs separated by blank lines, or by ##
_PARA = r"[^\n#<]{20,300}"
PARAGRAPHS = f'root ::= para ("\\n\\n" para){{0,3}}\npara ::= {_PARA}\n'
SPLIT_GRAMMAR = f'root ::= para ("##" para){{0,3}}\npara ::= {_PARA}\n'

DRAFT = Step(name="rat.draft", inputs=("question",), parse=text_output, max_tokens=768,
             grammar=PARAGRAPHS,
             instruction="{question}\n\nAnswer with step-by-step thoughts, in a structured way: "
                         "separate the paragraphs with a blank line. Answer directly, without "
                         "an introduction or extra explanation.")
SPLIT = Step(name="rat.split", inputs=("question", "draft", "n"), parse=text_output,
             max_tokens=1024, grammar=SPLIT_GRAMMAR,
             instruction="Question: {question}\n\nResponse: {draft}\n\nSplit the response into "
                         "fewer than {n} paragraphs, keeping its text, and put ## between "
                         "paragraphs. Output only the split response.")
QUERY = Step(name="rat.query", inputs=("question", "answer"), parse=text_output, max_tokens=64,
             grammar=SUBQUERY_GRAMMAR,
             instruction="Question: {question}\n\nContent: {answer}\n\nTo check whether the "
                         "content is correct, above all its last sentences, write a short and "
                         "specific search query for them. Output only the query.")
REVISE = Step(name="rat.revise", inputs=("text", "question", "answer"), parse=text_output,
              max_tokens=1024, grammar=PARAGRAPHS,
              instruction="Retrieved text: {text}\n\nQuestion: {question}\n\nAnswer: {answer}\n\n"
                          "Check the answer against the retrieved text. Correct what is wrong, "
                          "add necessary details the text gives, and if it is right and "
                          "complete, repeat it unchanged. Keep its paragraphs, separated by "
                          "blank lines. Output only the revised answer.")
REFLECT = Step(name="rat.reflect", inputs=("question", "answer"), parse=text_output,
               max_tokens=1024, grammar=PARAGRAPHS,
               instruction="Question:\n{question}\n\nAnswer:\n{answer}\n\nGive the answer a "
                           "title and subtitles so that it reads as a structured text, keeping "
                           "its content and paragraphs (separated by blank lines). Output only "
                           "the answer.")
ANSWER = Step(name="answer", inputs=("text", "question"),
              parse=lambda t: extract_tag(t, "answer"), max_tokens=256, grammar=ANSWER_GRAMMAR,
              repair=SPAN_REPAIR,
              instruction="Text:\n{text}\n\nQuestion: {question}\n\nFrom the text, give the "
                          "final answer inside <answer></answer>. " + SPAN_RULES)


def paragraphs(text: str, sep: str) -> list[str]:
    """The official split: pieces longer than 5 characters."""
    return [p.strip() for p in text.split(sep) if len(p.strip()) > 5]


class RAT(BaseMethod):
    name = "rat"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 max_paragraphs: int = 4, revise_docs: int = 2) -> None:
        for label, value in (("k", k), ("max_paragraphs", max_paragraphs),
                             ("revise_docs", revise_docs)):
            if value < 1:
                raise ConfigError(f"{label} must be at least 1, got {value}")
        super().__init__(lm, retriever)
        self.k, self.max_paragraphs, self.revise_docs = k, max_paragraphs, revise_docs

    async def run(self, episode: Episode) -> Answer:
        q = episode.question
        draft = await episode.text_step(DRAFT, question=q)
        split = await episode.text_step(SPLIT, default=draft, question=q, draft=draft,
                                 n=str(self.max_paragraphs))
        # the official code asks for fewer than n paragraphs and uses what comes back
        parts = paragraphs(split, "##") or paragraphs(draft, "\n\n") or [draft or q]
        answer, queries = "", []
        for part in parts:
            answer = (answer + "\n\n" + part).strip()
            query = await episode.text_step(QUERY, default=answer[-300:], question=q,
                                            answer=answer)
            queries.append(query)
            hits = await episode.retrieve(query, self.k)
            for hit in hits[:self.revise_docs]:
                answer = await episode.text_step(REVISE, default=answer, text=hit.chunk.text,
                                                 question=q, answer=answer)
        final = await episode.text_step(REFLECT, default=answer, question=q, answer=answer)
        short, raw = await episode.answer_step(ANSWER, text=final, question=q)
        return episode.finish(short, explanation=raw, context=final,
                              details=ChainDetails(steps=[draft, *parts, final],
                                                   queries=queries))
