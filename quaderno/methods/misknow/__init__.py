"""Reasoning-enhanced missing-knowledge RAG (seed paper 001) and STD-RAG."""

from quaderno.methods.misknow.judgment import Judgment
from quaderno.methods.misknow.method import MisknowRAG, StdRAG

__all__ = ["Judgment", "MisknowRAG", "StdRAG"]
