"""Fictional names from a syllable grammar, seeded, never a real English word.

A name stem is 2–3 syllables (onset + nucleus + optional coda). Stems that are English
words (or words of the BERT uncased vocabulary, which also holds many real place and
person names: see :mod:`.wordlist`) are rejected, so parametric knowledge cannot answer a
question about them. Every draw takes a :class:`random.Random` so that the caller owns the
state; nothing here is global or mutable.
"""

from __future__ import annotations

import random
import re

from quaderno.eval.synth.wordlist import WORDS

ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr",
          "gr", "kr", "tr", "st", "th", "sk", "vh", "q")
NUCLEI = ("a", "e", "i", "o", "u", "ae", "ia", "ou", "y")
CODAS = ("", "", "", "n", "r", "l", "s", "th", "nd", "rn", "x")
PLACE_SUFFIXES = ("ia", "ora", "ane", "ell", "und", "eth", "ar", "is")

# every string the grammar can produce (used to keep the word list compact)
_SYL = f"(?:{'|'.join(ONSETS)})(?:{'|'.join(NUCLEI)})(?:{'|'.join(c for c in CODAS if c)})?"
GRAMMAR = re.compile(f"^(?:{_SYL}){{2,3}}(?:{'|'.join(PLACE_SUFFIXES)})?$")


def is_word(text: str) -> bool:
    """True when ``text`` or any of its words is a real word (of the shipped list)."""
    return any(tok in WORDS for tok in re.findall(r"[a-z]+", text.lower()))


def stem(rng: random.Random, *, syllables: tuple[int, int] = (2, 3),
         suffix: bool = False) -> str:
    """One capitalized stem that is not a real word."""
    while True:
        n = rng.randint(*syllables)
        s = "".join(rng.choice(ONSETS) + rng.choice(NUCLEI) + rng.choice(CODAS)
                    for _ in range(n))
        if suffix:
            s += rng.choice(PLACE_SUFFIXES)
        if 4 <= len(s) <= 12 and not is_word(s):
            return s.capitalize()


class NameBook:
    """Draws distinct stems for one world (a stem is never used twice)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def fresh(self, *, suffix: bool = False, syllables: tuple[int, int] = (2, 3)) -> str:
        while True:
            s = stem(self._rng, syllables=syllables, suffix=suffix)
            if s.lower() not in self._used:
                self._used.add(s.lower())
                return s

    def reserve(self, name: str) -> None:
        self._used.add(name.lower())

    def person(self) -> str:
        return f"{self.fresh(syllables=(2, 2))} {self.fresh()}"


def acronym(name: str) -> str:
    """Initials of a multi-word name ("Vorland Institute of Technology" → "VIT")."""
    words = [w for w in name.replace("-", " ").split() if w.lower() not in {"of", "the", "and"}]
    return "".join(w[0].upper() for w in words) if len(words) >= 2 else name
