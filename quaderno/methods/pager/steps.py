"""PAGER's LLM steps (paper, Appendix A.9, Figures 10-12), declared once.

Each step has a GBNF grammar that the embedded model uses for constrained decoding (tiny
models follow formats only that way); servers get the plain instruction.
"""

from __future__ import annotations

from quaderno.errors import ParseError
from quaderno.llm.parsing import extract_tag, parse_outline
from quaderno.methods.span import SPAN_REPAIR, SPAN_RULES
from quaderno.llm.steps import Step, text_output

OUTLINE_INSTRUCTION = """You are a Page Planning Expert.

For a given question, you are tasked with generating a page outline based on the theme of the question. The outline you generate will serve as the foundation for the subsequent process, during which the outline will be filled with content to create a complete page that assists the reader in answering the given question. Please strictly follow the instructions below.

Input:
- Question: {question}

Task Steps:
1. **Reasoning Analysis**
- First, analyze the theme of the question and thoroughly understand the knowledge required to answer it, as well as the logical relationships between this knowledge.
- Based on the theme of the question, generate a page outline and identify the key content that should be covered in each section.
- For each section, propose a suitable and appropriate title, ensuring that each title effectively guides the reader to progressively deepen their understanding of the various aspects of the question.

2. **Outline Initialization**
- Generate the outline:
  - Use # [Main Title] for the main title. The main title is a concise and comprehensive abstraction of the page content.
  - Use ## [Section Title] for each section title. The section title is the section heading (do not reveal the final answer).
  - Insert special marker <TO BE FILLED> under all section titles.

Make sure the sections of the page are ordered logically, building up the reader's understanding toward answering the question.

The number of sections on the page should be limited to the scope necessary to answer the question, avoiding any overlap of content between sections.

3. **Output**
- First, you should output the reasoning analysis for initializing the outline.
- Then, you should generate a special symbol <OUTLINE>, followed by the generated page outline. Note that the content after <OUTLINE> should only include the final generated page outline, without any comments or explanations."""

SUBQUERY_INSTRUCTION = """You are a professional question-generation expert.

First, following the order of the page sections, locate and identify the first unfinished section. An unfinished section is defined as one that contains the special symbol <TO BE FILLED> under the section title.

Please strictly follow the steps and format below to formulate a precise retrieval question for the first unfinished section of the current page, in order to obtain the necessary information to complete that section.

Input Parameters:
- Original question: {question}
- Current page content:
{page}

Task Steps:
1. **Parse the page plan:** Read the Page and locate the title and topic of the first section that remains unfilled.
2. **Align with the original question:** Align the section's topic with the core needs of original question to ensure the retrieval question directly serves the original question.
3. **Design the retrieval question. The question must:**
  - Be focused: target only the core subtopic of that section;
  - Be clear: use search terms that can be directly used in a search engine or knowledge base;
  - Be concise: include no unnecessary background.
4. **Output format:** Output only one line containing the English retrieval question, with no additional comments or explanations."""

# quaderno's re-ask (issue 14.7), not the paper's: a sub-query that repeats the question or an
# earlier sub-query retrieves what is already there; asked once, naming the section
SUBQUERY_REASK_INSTRUCTION = SUBQUERY_INSTRUCTION + """

Your previous retrieval question was: {previous}
It repeats {repeats}, so it would retrieve the same documents again. Write a different retrieval question that targets only the section "{section}"."""

FILL_REWRITE_INSTRUCTION = """You are a professional page content writer.

Please strictly follow the instructions below.

First, following the order of the page sections, locate and identify the first unfinished section. An unfinished section is defined as one that contains the special symbol <TO BE FILLED> under the section title.

Use the retrieved documents, and your internal knowledge to complete the first unfinished section of the page, and generate the page with that section filled in.

Please note that you should only fill in one unfinished section, and that section must be the first unfinished section on the page. Do not fill in additional sections or fill across different sections.

Input:
- Original question: {question}
- Sub-question for retrieval: {sub_question}
- Retrieved documents:
{docs}
- Current page:
{page}

Task Steps:
1. **Section Completion**
- Find the first unfinished section in the page, where the section title contains a special placeholder <TO BE FILLED>.
- Using information from the retrieved documents and your internal knowledge, write a short paragraph under that section. The paragraph should:
  - Be tightly related to the original question.
  - Focus strictly on the topic of that section.
  - Avoid redundant or irrelevant information.
  - Remove the <TO BE FILLED> placeholder under that section.
  - Retain <TO BE FILLED> placeholders for all other unfinished sections.
- If you have filled the last unfinished section of the page, ensure that no <TO BE FILLED> placeholders remain in the page.

2. **Output format**
- Only output the entire page with the first unfinished section fully filled in. Do not include any comments, explanations, or isolated section content.
- Your output must be the entire updated page, including the newly filled content, seamlessly integrated into the original page structure.
- Do not output just the section you filled in; your output must be the entire page, including all content, both existing and newly added."""

FILL_SECTION_INSTRUCTION = """You are a professional page content writer.

Use the retrieved documents and your internal knowledge to write the content of ONE section of the page below: the section titled "{section_title}".

Input:
- Original question: {question}
- Sub-question for retrieval: {sub_question}
- Retrieved documents:
{docs}
- Current page:
{page}

Write a short paragraph for the section "{section_title}" that:
- is tightly related to the original question;
- focuses strictly on the topic of that section;
- avoids redundant or irrelevant information.

Output only the paragraph text of that section: no heading, no other sections, no comments."""

ANSWER_INSTRUCTION = """You are given a page of knowledge organized in sections, constructed to help answer a question.

Page:
{page}

Question: {question}

Using the page (and your own knowledge where the page is silent), reason briefly about the answer, then give the final answer as a short span (an entity, a date, a number, or a few words) inside <answer></answer> tags. """ + SPAN_RULES

# the `paper` profile's answer step: the meaning of the official infer_page.py instruction
# (in quaderno's words); a reply without the tag is no answer, as the official scoring has it
ANSWER_OFFICIAL_INSTRUCTION = """You are given a page of knowledge written to help answer a question.

Page:
{page}

Question: {question}

Answer the question by following the knowledge on the page. Think it through, then give your final answer, precise and as short as possible, inside <answer></answer> tags."""

# PAGER w/o initialization (Table 2): each round's documents refined into a concise summary
# of their own; the summaries are concatenated (quaderno's wording of the paper's description)
SUMMARIZE_INSTRUCTION = """Question: {question}

Retrieved documents:
{docs}

Refine these documents into a concise summary of what they say that helps answer the question. Output only the summary."""

NEXT_QUERY_INSTRUCTION = """Question: {question}
Notes gathered so far:
{notes}

If the notes already contain enough information to answer the question, reply exactly SUFFICIENT.
Otherwise, reply with one line: a search query for the most important missing information."""

# -- grammars for the embedded model (llama.cpp GBNF) --------------------------------------
_LINE = r'[^\n#<]'
OUTLINE_GRAMMAR = (
    'root ::= reasoning "\\n<OUTLINE>\\n# " title "\\n" section section section section? section?\n'
    f'reasoning ::= {_LINE}{{10,200}}\n'
    f'title ::= {_LINE}{{3,80}}\n'
    f'section ::= "\\n## " {_LINE}{{3,80}} "\\n<TO BE FILLED>\\n"\n'
)
SUBQUERY_GRAMMAR = f"root ::= {_LINE}{{5,120}}\n"
SECTION_GRAMMAR = f"root ::= {_LINE}{{20,300}}\n"
ANSWER_GRAMMAR = (
    'root ::= reasoning "<answer>" span "</answer>"\n'
    f'reasoning ::= {_LINE}{{0,200}}\n'
    r'span ::= [^<\n]{1,60}' "\n"
)
NEXT_QUERY_GRAMMAR = f'root ::= "SUFFICIENT" | {_LINE}{{5,150}}\n'


def _one_line(text: str) -> str:
    line = next((ln.strip() for ln in text_output(text).splitlines() if ln.strip()), "")
    return line.strip().strip('"').strip()


def _answer_span(text: str) -> str:
    return extract_tag(text, "answer")


def _official_answer(text: str) -> str:
    """The tag's text, or "" (no answer) without one: never re-asked."""
    try:
        return extract_tag(text, "answer")
    except ParseError:
        return ""


OUTLINE = Step(name="pager.outline", instruction=OUTLINE_INSTRUCTION, inputs=("question",),
               parse=parse_outline, grammar=OUTLINE_GRAMMAR, max_tokens=1024)
SUBQUERY = Step(name="pager.subquery", instruction=SUBQUERY_INSTRUCTION,
                inputs=("question", "page"), parse=_one_line, grammar=SUBQUERY_GRAMMAR,
                max_tokens=96)
SUBQUERY_REASK = Step(name="pager.subquery_reask", instruction=SUBQUERY_REASK_INSTRUCTION,
                      inputs=("question", "page", "previous", "repeats", "section"),
                      parse=_one_line, grammar=SUBQUERY_GRAMMAR, max_tokens=96)
FILL_REWRITE = Step(name="pager.fill_rewrite", instruction=FILL_REWRITE_INSTRUCTION,
                    inputs=("question", "sub_question", "docs", "page"), parse=parse_outline,
                    max_tokens=2048)
FILL_SECTION = Step(name="pager.fill_section", instruction=FILL_SECTION_INSTRUCTION,
                    inputs=("question", "sub_question", "docs", "page", "section_title"),
                    grammar=SECTION_GRAMMAR, max_tokens=512)
ANSWER_OFFICIAL = Step(name="pager.answer_official", instruction=ANSWER_OFFICIAL_INSTRUCTION,
                       inputs=("page", "question"), parse=_official_answer,
                       max_tokens=1024)
ANSWER = Step(name="answer", instruction=ANSWER_INSTRUCTION, inputs=("page", "question"),
              parse=_answer_span, grammar=ANSWER_GRAMMAR, max_tokens=1024,
              repair=SPAN_REPAIR)
SUMMARIZE = Step(name="notes.summarize", instruction=SUMMARIZE_INSTRUCTION,
                 inputs=("question", "docs"), grammar=SECTION_GRAMMAR, max_tokens=512)
NEXT_QUERY = Step(name="notes.next_query", instruction=NEXT_QUERY_INSTRUCTION,
                  inputs=("question", "notes"), parse=_one_line, grammar=NEXT_QUERY_GRAMMAR,
                  max_tokens=96)
