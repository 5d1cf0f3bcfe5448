"""DeepNote (Wang et al., 2024; thunlp/DeepNote ``src/main.py``), a PAGER Table 1 baseline:
knowledge gathered as a note that is refined only when it gets better.

As the official loop runs it:

1. retrieve ``k`` documents with the question; write an initial note from them;
2. at most ``max_steps`` times, while no more than ``max_docs`` distinct documents were read
   (the official ``>`` check: a step that starts exactly at the cap still reads a whole round):
   propose new queries from the best note (avoiding those asked before), retrieve with the
   new queries followed by the question (cut to 500 characters), keeping only unseen documents
   when the cap is near; refine the best note with them; let the model compare the refined
   note with the best one: better → it becomes the best note; after ``max_fail_steps``
   "not better" verdicts, stop;
3. answer from the best note.

The prompts carry the meaning of the repository's ``prompts/en`` files in quaderno's words;
the answer step is quaderno's span step (the official one asks for the bare answer without a
tag). Defaults are the official ones: k = 5, 3 steps, 2 failed steps, 15 documents.
"""

from __future__ import annotations

import json
import re

from quaderno.errors import ConfigError, StepError
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import extract_tag
from quaderno.llm.steps import Step, text_output
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import NotesDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.pager.steps import ANSWER_GRAMMAR, SECTION_GRAMMAR, SUBQUERY_GRAMMAR
from quaderno.methods.span import SPAN_REPAIR, SPAN_RULES

# for the embedded model (constrained decoding); servers get the plain instruction
COMPARE_GRAMMAR = 'root ::= "{\\"status\\": \\"" ("True" | "False") "\\"}"\n'

INIT = Step(name="deepnote.init_note", inputs=("question", "docs"), parse=text_output,
            max_tokens=512, grammar=SECTION_GRAMMAR, instruction=(
                "Write a note from the documents below for answering the question: one "
                "coherent paragraph that keeps every piece of the documents' information "
                "that helps answer it.\n\nQuestion: {question}\nDocuments:\n{docs}\n\n"
                "The note:"))
NEW_QUERY = Step(name="deepnote.new_query", inputs=("question", "note", "asked"),
                 parse=text_output, max_tokens=96, grammar=SUBQUERY_GRAMMAR, instruction=(
                     "From the note, propose two new short search questions, with keywords "
                     "that help retrieval, to find documents that complete the note for the "
                     "original question. Do not repeat a question already asked.\n\n"
                     "Original question: {question}\nNote: {note}\nAlready asked: {asked}\n\n"
                     "Output only the two questions, nothing else."))
REFINE = Step(name="deepnote.refine_note", inputs=("question", "docs", "note"),
              parse=text_output, max_tokens=768, grammar=SECTION_GRAMMAR, instruction=(
                  "Add to the note what the retrieved documents say that the note does not "
                  "have yet and that helps answer the question, in the documents' own words, "
                  "as much of it as is useful.\n\nQuestion: {question}\nRetrieved documents:\n"
                  "{docs}\n\nNote: {note}\n\nThe completed note:"))
COMPARE = Step(name="deepnote.compare", inputs=("question", "best", "new"), parse=text_output,
               max_tokens=32, grammar=COMPARE_GRAMMAR, instruction=(
                   "Which note is better for the question? Judge by: key information directly "
                   "about the question; completeness; level of detail; practical use. If "
                   "Note 2 adds nothing meaningful to Note 1, or only repeats it, answer "
                   '{{"status": "False"}}. If Note 2 is clearly better, answer '
                   '{{"status": "True"}}; otherwise {{"status": "False"}}.\n\n'
                   "Question: {question}\nNote 1: {best}\nNote 2: {new}\n\n"
                   "Answer with the JSON only."))
ANSWER = Step(name="answer", inputs=("note", "question"),
              parse=lambda t: extract_tag(t, "answer"), max_tokens=256,
              grammar=ANSWER_GRAMMAR, repair=SPAN_REPAIR, instruction=(
                  "Answer the question from the note.\n\nNote:\n{note}\n\nQuestion: "
                  "{question}\n\nGive the answer inside <answer></answer>. " + SPAN_RULES))


def better(reply: str) -> bool:
    """The compare verdict: true only for an explicit True (the official rule reads "true"
    anywhere in the reply; a JSON status is read first here, then that rule)."""
    m = re.search(r"\{.*?\}", reply, re.S)
    if m:
        try:
            status = json.loads(m.group(0)).get("status")
            return str(status).strip().lower() == "true"
        except (json.JSONDecodeError, AttributeError):
            pass
    return "true" in reply.lower()


class DeepNote(BaseMethod):
    name = "deepnote"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5, max_steps: int = 3,
                 max_fail_steps: int = 2, max_docs: int = 15) -> None:
        for label, value, low in (("k", k, 1), ("max_steps", max_steps, 0),
                                  ("max_fail_steps", max_fail_steps, 1),
                                  ("max_docs", max_docs, 1)):
            if value < low:
                raise ConfigError(f"{label} must be at least {low}, got {value}")
        super().__init__(lm, retriever)
        self.k, self.max_steps, self.max_fail_steps = k, max_steps, max_fail_steps
        self.max_docs = max_docs

    async def run(self, episode: Episode) -> Answer:
        q, trace, lm = episode.question, episode.trace, episode.lm
        hits = await episode.retrieve(q, self.k)
        seen = {h.chunk.id for h in hits}
        best = await episode.text_step(INIT, question=q, docs=format_docs(hits)) or \
            format_docs(hits)
        notes, asked, fails = [best], [], 0
        for _ in range(self.max_steps):
            if len(seen) > self.max_docs:
                break
            room = self.max_docs - len(seen) if len(seen) + self.k > self.max_docs else 0
            query = await episode.text_step(NEW_QUERY, question=q, note=best,
                                     asked=str(asked)) or q
            asked.append(query)
            found = await episode.retrieve((query + "\n" + q)[:500], self.k)
            if room > 0:
                found = [h for h in found if h.chunk.id not in seen][:room]
            seen |= {h.chunk.id for h in found}
            new = await episode.text_step(REFINE, question=q, docs=format_docs(found),
                                   note=best)
            with trace.span("deepnote.compare") as span:
                try:
                    verdict = (await COMPARE.run(lm, question=q, best=best, new=new or "",
                                                 trace=trace)).value if new else "False"
                except StepError:
                    verdict = "False"
                improved = bool(new) and better(verdict)
                span.outputs = {"better": improved}
            if improved:
                best = new.replace("\n", " ")
                notes.append(best)
            else:
                fails += 1
                if fails >= self.max_fail_steps:
                    break
        answer, explanation = await episode.answer_step(ANSWER, note=best, question=q)
        return episode.finish(answer, explanation=explanation, context=best,
                              details=NotesDetails(notes=notes))
