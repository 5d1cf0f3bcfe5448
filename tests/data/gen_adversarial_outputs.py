"""Generate tests/data/adversarial_outputs.jsonl: malformed and adversarial model replies.

Run from the repository root: python tests/data/gen_adversarial_outputs.py
Each record: {"id", "category", "text", "json": expected object or null when unknown/none}.
"""

import json
import random
from pathlib import Path

rng = random.Random(7)
records = []


def add(category, text, expected=None):
    records.append({"id": len(records), "category": category, "text": text, "json": expected})


payloads = [
    {"answer": "Paris", "confidence": 0.9},
    {"thought": "The passages lack the birth year.", "judge": False,
     "missing_knowledge": "birth year of X", "query": "X birth year"},
    {"answer": "Wilhelm Conrad Röntgen", "confidence": 1},
    {"answer": "東京", "confidence": 0.5},
    {"answer": "He said \"yes\"", "confidence": 0.2},
    {"answer": "line1\nline2", "confidence": 0.3},
    {"answer": "", "confidence": 0.0},
    {"answer": "a, b, and c", "confidence": 0.7, "extra": [1, 2, {"x": None}]},
]
wrappers = [
    ("bare", lambda s: s),
    ("fence_json", lambda s: f"```json\n{s}\n```"),
    ("fence_plain", lambda s: f"```\n{s}\n```"),
    ("prose_before", lambda s: f"Sure! Here is the JSON you asked for:\n{s}"),
    ("prose_after", lambda s: f"{s}\n\nI hope this helps. Let me know {{if}} you need more."),
    ("prose_both", lambda s: f"Answer follows.\n{s}\nThat is all."),
    ("think", lambda s: f"<think>The user wants JSON. {{not: json}}</think>\n{s}"),
    ("fence_unclosed", lambda s: f"```json\n{s}"),
]
for p in payloads:
    s = json.dumps(p, ensure_ascii=False)
    for name, wrap in wrappers:
        add(f"wrapped/{name}", wrap(s), p)

# syntax damage that a tolerant parser should still read
for p in payloads[:6]:
    s = json.dumps(p, ensure_ascii=False)
    add("trailing_comma", s[:-1] + ",}", p)
    add("single_quotes", s.replace('"', "'") if '\\"' not in s and "'" not in s else s,
        p if '\\"' not in s and "'" not in s else p)
    add("pretty_printed", json.dumps(p, ensure_ascii=False, indent=4), p)
    add("python_literals", s.replace("false", "False").replace("true", "True"), None)

# truncated JSON at every few characters
base = json.dumps(payloads[1])
for cut in range(1, len(base), max(1, len(base) // 24)):
    add("truncated", base[:cut], None)
base = json.dumps(payloads[0])
for cut in range(1, len(base), 3):
    add("truncated_short", base[:cut], None)

# wrong keys, wrong types, wrong shapes
add("wrong_keys", '{"response": "Paris", "score": 0.9}')
add("case_keys", '{"Answer": "Paris", "Confidence": 0.9}')
add("wrong_type", '{"answer": ["Paris"], "confidence": "high"}')
add("array_top", '[{"answer": "Paris", "confidence": 0.9}]')
add("string_top", '"Paris"')
add("number_top", "42")
add("null_top", "null")
add("nested_deep", "{" * 200 + "}" * 200)
add("unbalanced_close", '}}}{"answer": "x", "confidence": 1}')
add("two_objects", '{"answer": "first", "confidence": 1} {"answer": "second", "confidence": 0}',
    {"answer": "first", "confidence": 1})
add("braces_in_strings", '{"answer": "use {curly} and [square]", "confidence": 1}',
    {"answer": "use {curly} and [square]", "confidence": 1})
add("escaped_quotes", '{"answer": "say \\"hi\\"", "confidence": 1}',
    {"answer": 'say "hi"', "confidence": 1})
add("comment_inside", '{"answer": "x", // the answer\n "confidence": 1}')
add("nan_value", '{"answer": "x", "confidence": NaN}')

# empty, whitespace, markers missing, junk
for text in ["", " ", "\n\n", "\t", "```", "```json\n```", "{}", "[]", "{ }", "<answer></answer>",
             "<answer>", "</answer>", "<OUTLINE></OUTLINE>", "#", "##", "# \n## ",
             "None", "N/A", "I don't know.", "I cannot help with that request."]:
    add("empty_or_junk", text)

# answer tags
tagged = [
    ("<answer>Paris</answer>", "Paris"),
    ("Reasoning... so the answer is <answer> Paris </answer>.", "Paris"),
    ("<answer>Lyon</answer> wait, no: <answer>Paris</answer>", "Paris"),
    ("<ANSWER>Paris</ANSWER>", "Paris"),
    ("The answer: <answer>Paris", "Paris"),
    ("<think>maybe <answer>Rome</answer></think><answer>Paris</answer>", "Paris"),
    ("<answer>\nMarie Curie\n</answer>", "Marie Curie"),
    ("answer: Paris", None),
    ("<answer></answer>", None),
    ("<answers>Paris</answers>", None),
]
for text, expected in tagged:
    records.append({"id": len(records), "category": "answer_tag", "text": text, "json": None,
                    "answer": expected})

# outlines
outlines = [
    ("# Title\n## A\n<TO BE FILLED>\n## B\n<TO BE FILLED>", ("Title", ["A", "B"])),
    ("<OUTLINE>\n# T\n## One\n<TO BE FILLED>\n</OUTLINE>", ("T", ["One"])),
    ("Reasoning first.\n\n```markdown\n# T\n## X\n<TO BE FILLED>\n## Y\n<TO BE FILLED>\n```",
     ("T", ["X", "Y"])),
    ("## Only sections\n<TO BE FILLED>\n## Second\n<TO BE FILLED>",
     ("", ["Only sections", "Second"])),
    ("# T\n### Deep A\n<TO BE FILLED>\n### Deep B\n<TO BE FILLED>", ("T", ["Deep A", "Deep B"])),
    ("**Background**\n<TO BE FILLED>\n**Answer**\n<TO BE FILLED>", ("", ["Background", "Answer"])),
    ("# Title with no sections", ("", ["Title with no sections"])),
    ("no headings at all, just prose", None),
    ("#NoSpace\n##AlsoNoSpace\n<TO BE FILLED>", ("NoSpace", ["AlsoNoSpace"])),
    ("# T\n## A\n<to be filled>\n## B\ncontent already", ("T", ["A", "B"])),
]
for text, expected in outlines:
    records.append({"id": len(records), "category": "outline", "text": text, "json": None,
                    "outline": expected})

# very long and unicode-heavy replies
add("very_long_prose", "word " * 20000)
add("very_long_json", json.dumps({"answer": "x" * 50000, "confidence": 1}),
    {"answer": "x" * 50000, "confidence": 1})
add("unicode_mix", '{"answer": "Zürich – 東京 – القاهرة – 🚀", "confidence": 1}',
    {"answer": "Zürich – 東京 – القاهرة – 🚀", "confidence": 1})
add("unicode_escapes", '{"answer": "\\u00e9t\\u00e9", "confidence": 1}',
    {"answer": "été", "confidence": 1})
add("control_chars", '{"answer": "a\u0000b", "confidence": 1}')
add("lone_surrogate_escape", '{"answer": "\\ud800", "confidence": 1}')
add("bom", '\ufeff{"answer": "x", "confidence": 1}')
for _ in range(30):
    alphabet = '{}[]":,\'\\ntrue false null 0123456789abc<>/#`\n'
    add("random_noise", "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 120))))

# outlines with a stray or unclosed <OUTLINE> marker (the measuring model writes them),
# appended after the rest so the earlier ids stay put
stray_outlines = [
    ("# T\n## A\nx <outline> is here\n## B\ny", ("T", ["A", "B"])),
    ("# T\n## A\n<TO BE FILLED>\n## B\n<TO BE FILLED>\n<OUTLINE>\nThis outline guides.",
     ("T", ["A", "B"])),
    ("Plan first.\n<OUTLINE>\n# T\n## A\n<TO BE FILLED>\n## B\n<TO BE FILLED>",
     ("T", ["A", "B"])),
    ("# Draft\n## Old\n<OUTLINE>\n# T\n## A\n<TO BE FILLED>\n</OUTLINE>", ("T", ["A"])),
]
for text, expected in stray_outlines:
    records.append({"id": len(records), "category": "outline", "text": text, "json": None,
                    "outline": expected})

out = Path(__file__).with_name("adversarial_outputs.jsonl")
with out.open("w", encoding="utf-8") as fh:
    for rec in records:
        fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
print(f"wrote {len(records)} records to {out}")
