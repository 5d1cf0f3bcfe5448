"""The missing-knowledge paper's prompts (seed 001, Figs. 4 and 5), kept verbatim apart from
their slots (wrapped lines joined, curly quotes straightened), and the few-shot examples the
paper does not publish (ours, never from an evaluation set: REC A13).

Slots: Fig. 4 ``{question}``, ``{contexts}``, ``{first_answer}``; Fig. 5 ``{contexts}``,
``{missing_block}`` (the "Missing Knowledge Context" lines and the second-round contexts),
``{question}``. The first-round reader prompt (not given by the paper) is Fig. 5 without its
missing-knowledge section (REC A12), so STD-RAG and Misknow differ only by the method.
"""

from __future__ import annotations

FIG4_EXAMPLES = """Example 1
## Question
Who carried the US flag in the 2014 Olympics?
## Retrieval Context
Document[1]: United States at the 2014 Winter Olympics
The United States sent 230 athletes to the 2014 Winter Olympics in Sochi, Russia.
Document[2]: Flag bearers for the United States at the Olympics
This is a list of flag bearers who have represented the United States at the Olympics.
## First-round answer
The contexts do not say who carried the flag.
Output:
The contexts describe the US team in Sochi but name no flag bearer; the opening and closing ceremonies had different bearers, so two facts are missing.
```json
{"thought": "The contexts are relevant but name no flag bearer for either ceremony.", "judge": true, "missing_knowledge": ["the US flag bearer at the 2014 opening ceremony", "the US flag bearer at the 2014 closing ceremony"], "query": ["who carried the US flag at the 2014 Olympics opening ceremony?", "who carried the US flag at the 2014 Olympics closing ceremony?"]}
```

Example 2
## Question
What is the capital city of Australia?
## Retrieval Context
Document[1]: Canberra
Canberra is the capital city of Australia, located in the Australian Capital Territory.
## First-round answer
Canberra
Output:
The first context states the answer directly and the first-round answer matches it.
```json
{"thought": "The context names Canberra as the capital; the answer is correct and complete.", "judge": false, "missing_knowledge": [], "query": []}
```"""

FIG4_SYSTEM = """You are a knowledge expert proficient in JSON formats.
## Instructions
Given a question, retrieval contexts, and a predicted answer, your task is to determine if the provided contexts are sufficient to answer the question or if additional knowledge is required. If additional knowledge is needed, rewrite it as a short query closely related to the main entity in the question.
### Requirements
Proceed step by step as follows:
- First, based on the question and the initial answer, determine if the answer is incomplete or if the retrieval contexts lack the knowledge required to answer the question.
- Second, if so, list the missing knowledge and generate the corresponding query.
- Third, output your reasoning and a JSON dict containing the fields "thought", "judge", "missing_knowledge", and "query", adhering strictly to the JSON format.
- Queries should be short, precise, and closely related to the main entity in the question.
## Output Format
Provide a JSON dict in a markdown code block:
Key-value descriptions:
- thought: Analysis of the correctness and relevance of the retrieved context.
- judge: Whether the knowledge is missing.
- missing_knowledge: List of the missing knowledge points.
- query: List of queries corresponding to the missing knowledge.
## Examples
""" + FIG4_EXAMPLES

FIG4_USER = """## Question
{question}
## Retrieval Context
{contexts}
## First-round answer
{first_answer}"""

FIG5_EXAMPLE = """## Context
Document[1]: Anthony Hopkins
Sir Anthony Hopkins is a Welsh actor. He played Dr. Hannibal Lecter in The Silence of the Lambs (1991).
## Question
who played hannibal lecter in silence of the lambs
## Answer
Anthony Hopkins"""

FIG5_SYSTEM = """## Instructions Please carefully read the following context and briefly answer the question with essential keywords or short phrases based on the context.
## Requirements
- Ensure that your answer is highly relevant to the provided contexts and missing knowledge contexts.
- The answer should be short, concise, and as accurate as possible without explanation.
- If it is not mentioned in the context, briefly answer with your own knowledge.
## Examples
""" + FIG5_EXAMPLE

FIG5_USER = """## Context
{contexts}
## Missing Knowledge Context
{missing_block}
## Question
{question}
## Answer"""

FIRST_ROUND_USER = """## Context
{contexts}
## Question
{question}
## Answer"""

# the lines of the "Missing Knowledge Context" section (Fig. 5); THOUGHT_LINE is REC A11 (Eq. 3
# and App. B.2 give the reader the reflective thought, Fig. 5 has no slot for it); the
# "w/o reasoning" ablation (Table 5) drops REASONING_LINE and nothing else (REC A16)
MISSING_LINE = "Additional knowledge about {missing}"
THOUGHT_LINE = "Analysis of first-round answer: {thought}"
REASONING_LINE = "keywords from reasoning process: {reasoning}"
