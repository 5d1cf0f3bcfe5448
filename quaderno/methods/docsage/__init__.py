"""DocSage (seed 002): a schema discovered for the question (ASK), constraint-checked
extraction into tables (CLEAR), and SQL over them with provenance back to source chunks."""
