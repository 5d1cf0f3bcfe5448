"""StructRAG (Li et al., 2025; Li-Z-Q/StructRAG ``main.py``, ``router.py``,
``structurizer.py``, ``utilizer.py``), a PAGER Table 1 baseline: the retrieved documents are
turned into the knowledge structure a router picks for the question, and the answer is
inferred from that structure.

As the official pipeline runs it:

1. **route**: from the question and the documents' titles the model names one structure
   (the prompt offers table, graph and chunk); the reply is read by substring in the
   official order — "table", then "graph", "algorithm", "catalogue", else chunk;
2. **structurize**, one call per document: a table holding the values the question names
   (with their source), a graph of (head, relation, tail) triples, an algorithm's
   steps or a catalogue (a numbered hierarchical summary); "chunk" keeps the documents as
   they are ("title: text", no call). The structure's *info* for the next step is the first
   line of each output, up to 128 characters (for chunks: the titles);
3. **decompose**: the question broken into simple sub-questions, one per line, given the info;
4. **extract**: for a chunk structure each document answers all sub-questions at once, one
   call per document; for the others each sub-question filters the whole structure, one call
   per sub-question;
5. **merge**: the question answered from the extracted knowledge, as a detailed text.

Differences, recorded here:

- the documents: the official code structurizes the long documents of Loong that come with
  each question; PAGER runs it as one-pass retrieval RAG, so here they are the question's
  top-``k`` retrieval, and the query is the bare question (Loong's is its task instruction
  with the question);
- the router is the answering model prompted with examples, as the README's default (a
  DPO-trained 7B router is optional, its weights not public); it sees the titles quoted in
  retrieval order, the official one the distinct titles, one per line;
- the structurize and decompose prompts are zero-shot (the official ones teach by long Loong
  examples; the decomposition's one-per-line format is said instead of shown), and the
  structurizer sees the document's title with its text;
- the graph instruction asks for the entities and relations the question needs (the official
  one is written for Loong's citation task: papers as entities, "reference" as relation);
- blank lines of the decomposition are not sub-questions (the official split keeps them and
  spends a call on each), and at most ``max_subqueries`` are used;
- replies are capped (router 64 tokens, structures and merge 1,024, filters 512; the official
  calls are not), and under constrained decoding (the embedded model) a structure is at most
  12 lines and the decomposition 6;
- the answer is read from the merged text by quaderno's span step (the official merge writes a
  long answer only); the merged text is kept as the answer's context.

Prompts carry the meaning of the official ones in quaderno's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, get_args

from quaderno.errors import ConfigError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import extract_tag
from quaderno.llm.steps import Step, text_output
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import StructDetails
from quaderno.methods.episode import NO_DOCS, Episode
from quaderno.methods.pager.steps import ANSWER_GRAMMAR
from quaderno.methods.rat import PARAGRAPHS
from quaderno.methods.span import SPAN_REPAIR, SPAN_RULES

Structure = Literal["table", "graph", "algorithm", "catalogue", "chunk"]
Route = Literal["auto", Structure]  # the router chooses, or one structure fixed
STRUCTURES: tuple[str, ...] = get_args(Structure)
ROUTES: tuple[str, ...] = get_args(Route)
INFO_CHARS = 128  # the official info: each structure output's first line, this long at most

# for the embedded model (constrained decoding)
ROUTE_GRAMMAR = 'root ::= "table" | "graph" | "chunk"\n'
LINES_GRAMMAR = 'root ::= line ("\\n" line){0,5}\nline ::= [^\\n<]{5,160}\n'
STRUCTURE_GRAMMAR = 'root ::= line ("\\n" line){0,11}\nline ::= [^\\n<]{2,240}\n'

ROUTE = Step(
    name="structrag.route", inputs=("titles", "question"), parse=text_output, max_tokens=64,
    grammar=ROUTE_GRAMMAR,
    instruction="To answer a question from documents, I first put the documents into one "
                "knowledge structure: a table, a graph or chunks. As a rule, questions that "
                "compare or aggregate values suit a table, questions that chain facts across "
                "entities suit a graph, and questions answered by one passage suit chunks.\n\n"
                "Examples:\nDocuments: \"Annual report 2023\", \"Annual report 2024\"\n"
                "Question: Which year had the higher operating income?\nStructure: table\n\n"
                "Documents: \"Ada Lovelace\", \"Charles Babbage\"\nQuestion: Who designed the "
                "machine that Ada Lovelace wrote the first program for?\nStructure: graph\n\n"
                "Documents: \"Mount Kenya\"\nQuestion: How high is Mount Kenya?\n"
                "Structure: chunk\n\n"
                "Documents: {titles}\nQuestion: {question}\n\nReply with one word, table, "
                "graph or chunk, and nothing else.\nStructure:")

_TASKS = {
    "table": "Question: {question}\nFrom the document, extract the complete tables of the "
             "values that the entities and attributes named in the question need. Keep each "
             "table's title and where its values come from. If the document holds none of it, "
             "extract the little that is most relevant. Keep the document's language.",
    "graph": "Question: {question}\nFrom the document, extract the triples that the entities "
             "and relations named in the question need, one per line as "
             '{{"head": "...", "relation": "...", "tail": ["..."]}}. Keep heads and tails as '
             "complete as the document states them (a phrase or a sentence), without "
             "abbreviating. The documents are titled: {titles}.",
    "algorithm": "Question: {question}\nFrom the document, write the steps (pseudocode) that "
                 "solve what the question asks, each step tied to what the document says. If "
                 "the question cannot be solved as steps, list the information that solves "
                 "it instead.",
    "catalogue": "Question: {question}\nFrom the document, write a detailed numbered "
                 "hierarchical summary (1., (1), (a)) of what it says that is relevant to the "
                 "question, above all about the entities and people the question names.",
}
STRUCTURIZE = {
    kind: Step(name=f"structrag.{kind}", inputs=("question", "titles", "title", "text"),
               parse=text_output, max_tokens=1024, grammar=STRUCTURE_GRAMMAR,
               instruction=task + "\n\nDocument: {title}\n{text}\n\nOutput:")
    for kind, task in _TASKS.items()
}
DECOMPOSE = Step(
    name="structrag.decompose", inputs=("info", "question"), parse=text_output, max_tokens=256,
    grammar=LINES_GRAMMAR,
    instruction="Break the question below into a few simple, independent sub-questions, one per "
                "line; if it is already simple or cannot be broken down, write it as one line. "
                "What the documents hold: {info}\n\nQuestion: {question}\n\nOutput only the "
                "sub-questions, without explanations.")
EXTRACT_CHUNK = Step(
    name="structrag.extract", inputs=("queries", "title", "text"), parse=text_output,
    max_tokens=512, grammar=PARAGRAPHS,
    instruction="Answer the questions from the document.\n\nQuestions:\n{queries}\n\n"
                "Document: {title}\n{text}\n\nOutput:")
_NAMES = {"table": "tables", "graph": "triples", "algorithm": "algorithm descriptions",
          "catalogue": "catalogues"}
_FILTER = {  # what each filter is told beyond "keep only what helps answer the query"
    "table": "Look at the entities and attributes it names and check the tables one by one: "
             "what answers it is in one or several of them.",
    "graph": "Look at the entities and relations it names and keep the triples about them.",
    "algorithm": "Look at the entities and relations it names and keep the steps about them.",
    "catalogue": "Look at the entities and relations it names and keep the entries about "
                 "them.",
}
EXTRACT = {
    kind: Step(name="structrag.extract", inputs=("structure", "query"), parse=text_output,
               max_tokens=512, grammar=PARAGRAPHS,
               instruction=f"Below are {_NAMES[kind]} built from several documents, one after "
                           f"another. Keep only what helps answer the query. {_FILTER[kind]}"
                           "\n\n{structure}\n\nQuery: {query}\n\nOutput:")
    for kind in _NAMES
}
MERGE = Step(
    name="structrag.merge", inputs=("question", "knowledge"), parse=text_output,
    max_tokens=1024, grammar=PARAGRAPHS,
    instruction="Answer the question from the retrieval results: find what in them is "
                "relevant and write it out in detail, specifically and at length, as one "
                "coherent text.\n\nQuestion:\n{question}\n\nRetrieval results:\n{knowledge}")
ANSWER = Step(name="answer", inputs=("text", "question"),
              parse=lambda t: extract_tag(t, "answer"), max_tokens=256, grammar=ANSWER_GRAMMAR,
              repair=SPAN_REPAIR,
              instruction="Text:\n{text}\n\nQuestion: {question}\n\nFrom the text, give the "
                          "final answer inside <answer></answer>. " + SPAN_RULES)


def read_route(reply: str) -> str:
    """The official reading of the router's reply: the first of table, graph, algorithm,
    catalogue found in it (lowercased), in that order; chunk otherwise. One difference: the
    kinds are matched as whole words (plural allowed), since the official substring test
    reads "suitable" or "notable" as "table" in the chattier replies of small models."""
    low = reply.lower()
    return next((kind for kind in STRUCTURES[:-1] if re.search(rf"\b{kind}s?\b", low)),
                "chunk")


def info_line(output: str) -> str:
    """What one structure output tells the decomposer: its first line, 128 characters."""
    return output.split("\n", 1)[0][:INFO_CHARS]


def doc_name(hit: Hit) -> str:
    """How a document is named to the model: its title, else its id."""
    return hit.chunk.title or hit.chunk.id


def sub_questions(reply: str, question: str, most: int) -> list[str]:
    """The decomposition's non-blank lines (at most ``most``); the question when none."""
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip()]
    return lines[:most] or [question]


class StructRAG(BaseMethod):
    name = "structrag"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 route: str = "auto", max_subqueries: int = 6) -> None:
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if max_subqueries < 1:
            raise ConfigError(f"max_subqueries must be at least 1, got {max_subqueries}")
        if route not in ROUTES:
            raise ConfigError(f"route must be one of {', '.join(ROUTES)}, got {route!r}")
        super().__init__(lm, retriever)
        self.k, self.route, self.max_subqueries = k, route, max_subqueries

    async def run(self, episode: Episode) -> Answer:
        q = episode.question
        hits = await episode.retrieve(q, self.k)
        if not hits:  # nothing to route, build or filter: the merge says so
            merged = await episode.text_step(MERGE, default=NO_DOCS, question=q,
                                             knowledge=NO_DOCS)
            short, raw = await episode.answer_step(ANSWER, text=merged, question=q)
            return episode.finish(short, explanation=raw, context=merged,
                                  details=StructDetails(structure="none", knowledge=NO_DOCS))
        names = [doc_name(h) for h in hits]
        reply = ""
        if self.route == "auto":
            reply = await episode.text_step(ROUTE, default="chunk", question=q,
                                            titles=", ".join(f'"{n}"' for n in names))
            chosen = read_route(reply)
        else:
            chosen = self.route
        structures, info = await self._structurize(episode, chosen, hits, names)
        decomposed = await episode.text_step(DECOMPOSE, default=q, info=info, question=q)
        queries = sub_questions(decomposed, q, self.max_subqueries)
        knowledge = await self._extract(episode, chosen, hits, names, structures, queries)
        merged = await episode.text_step(MERGE, default=knowledge, question=q,
                                         knowledge=knowledge)
        short, raw = await episode.answer_step(ANSWER, text=merged, question=q)
        return episode.finish(short, explanation=raw, context=merged,
                              details=StructDetails(structure=chosen, route_reply=reply,
                                                    info=info, structures=structures,
                                                    subqueries=queries, knowledge=knowledge))

    async def _structurize(self, episode: Episode, chosen: str, hits: Sequence[Hit],
                           names: list[str]) -> tuple[list[str], str]:
        """One structure per document ("title: output") and the info the decomposer sees.
        A document whose structurize call fails is kept as its text (recorded)."""
        if chosen == "chunk":
            return [f"{n}: {h.chunk.text}" for n, h in zip(names, hits, strict=True)], \
                " ".join(names)
        structures, info = [], ""
        titles = ", ".join(f'"{n}"' for n in names)
        for n, hit in zip(names, hits, strict=True):
            out = await episode.text_step(STRUCTURIZE[chosen], default=hit.chunk.text,
                                          question=episode.question, titles=titles, title=n,
                                          text=hit.chunk.text)
            info += info_line(out)
            structures.append(f"{n}: {out}")
        return structures, info

    async def _extract(self, episode: Episode, chosen: str, hits: Sequence[Hit],
                       names: list[str], structures: list[str], queries: list[str]) -> str:
        """The merge step's retrieval results, laid out as the official merge lays them (a
        failed call found nothing: recorded, and it adds nothing)."""
        q = episode.question
        under_question = f"Subquery: {q}\nRetrieval results:\n"
        if chosen == "chunk":
            found = []
            for n, hit in zip(names, hits, strict=True):
                out = await episode.text_step(EXTRACT_CHUNK, queries="\n".join(queries),
                                              title=n, text=hit.chunk.text)
                if out:
                    found.append(f"Retrieval result for {n}: {out}")
            return under_question + "\n".join(found)
        if chosen == "table":
            body = "\n\n".join(f"Table {i}:\n{s}" for i, s in enumerate(structures, start=1))
        else:
            body = "\n\n".join(structures)
        asked = [(sub, await episode.text_step(EXTRACT[chosen], structure=body, query=sub))
                 for sub in queries]
        answered = [(sub, out) for sub, out in asked if out]
        if chosen == "catalogue" or not answered:  # as the official merge: one block under
            # the question (and where every call failed, that block, empty)
            return under_question + "\n".join(out for _, out in answered)
        return "\n\n".join(f"Subquery: {sub}\nRetrieval results:\n{out}"
                             for sub, out in answered)
