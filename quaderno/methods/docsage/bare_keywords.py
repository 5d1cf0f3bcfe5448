"""The schema's names that SQL reads as keywords, written unquoted in a query (a check of
the read-only gate, :mod:`.sqlgate`).

A table or column named ``grant`` or ``current_date`` is a name sqlglot cannot read as one:
unquoted, the query is refused, or read as something else (``current_date`` as today). The
gate asks the model to double-quote such a name instead of refusing the query for a reason
the model cannot see.
"""

from __future__ import annotations

from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from quaderno.methods.docsage.identifiers import sqlglot_keywords
from quaderno.methods.docsage.schema import Schema


def bare_keywords(sql: str, schema: Schema) -> list[str]:
    """The schema's table and column names that sqlglot cannot read as names
    (:func:`.identifiers.sqlglot_keywords`: ``grant``, ``current_date``), written unquoted in
    ``sql``: parsed, the query would be refused, or read as something else (``current_date``
    as today). Drafted schemas never name one (:func:`.identifiers.avoided`); a schema given by
    hand may."""
    words = {n for t in schema.tables for n in (t.name, *t.column_names)} & sqlglot_keywords()
    if not words:
        return []
    try:
        tokens = DuckDB().tokenize(sql)
    except SqlglotError:
        return []              # the parse refuses it, with its own message
    # read as the keyword itself: not a quoted name, a string of any kind (E'grant',
    # $$grant$$), a name after a dot (a.grant) or an alias after AS, which sqlglot reads
    # as names; nor a grouping keyword called with its parentheses in a GROUP BY (GROUP BY
    # ROLLUP (region)), which no name can be ("SELECT rollup(a)" is still asked about)
    keywords = DuckDB.Tokenizer.KEYWORDS
    out: set[str] = set()
    clause: TokenType | None = None
    outer: list[TokenType | None] = []      # the clause each open parenthesis is in
    for before, tok, after in zip([None, *tokens[:-1]], tokens, [*tokens[1:], None],
                                  strict=True):
        if tok.token_type == TokenType.L_PAREN:
            outer.append(clause)
        elif tok.token_type == TokenType.R_PAREN and outer:
            clause = outer.pop()           # "GROUP BY (SELECT 1), CUBE (a)": back in GROUP BY
        elif tok.token_type in _CLAUSES:
            clause = tok.token_type
        if tok.text.lower() not in words or tok.token_type != keywords.get(tok.text.upper()):
            continue
        if before is not None and before.token_type in (TokenType.DOT, TokenType.ALIAS):
            continue
        if clause == TokenType.GROUP_BY and after is not None and \
                after.token_type == TokenType.L_PAREN:
            continue
        out.add(tok.text.lower())
    return sorted(out)


# the tokens that open a clause: a keyword called in a GROUP BY is a grouping construct
_CLAUSES = frozenset({TokenType.SELECT, TokenType.FROM, TokenType.WHERE, TokenType.GROUP_BY,
                      TokenType.HAVING, TokenType.ORDER_BY, TokenType.QUALIFY,
                      TokenType.WINDOW, TokenType.LIMIT, TokenType.JOIN, TokenType.ON})


__all__ = ["bare_keywords"]
