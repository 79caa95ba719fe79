"""Shared problems and helpers for the quantity chain tests (not a test module)."""

from __future__ import annotations

import json

from prosfi.data.problem import Problem

EGGS = Problem.from_dict({
    "id": "eggs", "kind": "quantity", "source": "gsm8k", "difficulty": 2,
    "question": "Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with 4. "
                "She sells the rest at $2 per egg. How much does she make every day?",
    "givens": [{"id": "g1", "value": "16", "unit": "", "text": "16 eggs per day"},
               {"id": "g2", "value": "3", "unit": "", "text": "three"},
               {"id": "g3", "value": "4", "unit": "", "text": "4"},
               {"id": "g4", "value": "2", "unit": "USD", "text": "$2 per egg"}],
    "target": {"name": "income", "unit": "USD"}, "answer": {"value": "18", "unit": "USD"}})
EGGS_GOLD = [{"id": "s1", "expr": "g1 - g2 - g3", "value": 9, "unit": "", "name": "eggs_for_sale"},
             {"id": "s2", "expr": "s1 * g4", "value": 18, "unit": "USD", "name": "income"}]

SPEED = Problem.from_dict({
    "id": "speed", "kind": "quantity", "source": "physics", "difficulty": "easy",
    "question": "A car covers 120 km in 1.5 h. What is its average speed?",
    "givens": [{"id": "g1", "value": "120", "unit": "km", "text": "120 km"},
               {"id": "g2", "value": "1.5", "unit": "h", "text": "1.5 h"}],
    "target": {"name": "speed", "unit": "km/h"}, "answer": {"value": "80", "unit": "km/h"}})
SPEED_GOLD = [{"id": "s1", "expr": "g1 / g2", "value": 80, "unit": "km/h", "name": "speed"}]

ENERGY = Problem.from_dict({
    "id": "energy", "kind": "quantity", "source": "physics", "difficulty": "medium",
    "question": "A 2 kg ball moves at 3 m/s. It is then lifted... What is its kinetic energy?",
    "givens": [{"id": "g1", "value": "2", "unit": "kg", "text": "2 kg"},
               {"id": "g2", "value": "3", "unit": "m/s", "text": "3 m/s"}],
    "target": {"name": "energy", "unit": "J"}, "answer": {"value": "9", "unit": "J"}})
ENERGY_GOLD = [{"id": "s1", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 9, "unit": "J"}]

# the answer (18) is also one of the givens: citing it must not earn the top level
ECHO = Problem.from_dict({
    "id": "echo", "kind": "quantity", "source": "gsm8k", "difficulty": 2,
    "question": "Tom had 18 marbles... he has 16 and gets 3 more but loses 1. How many does he have?",
    "givens": [{"id": "g1", "value": "18", "unit": ""}, {"id": "g2", "value": "16", "unit": ""},
               {"id": "g3", "value": "3", "unit": ""}, {"id": "g4", "value": "1", "unit": ""}],
    "target": {"name": "marbles", "unit": ""}, "answer": {"value": "18", "unit": ""}})
ECHO_GOLD = [{"id": "s1", "expr": "g2 + g3", "value": 19, "unit": ""},
             {"id": "s2", "expr": "s1 - g4", "value": 18, "unit": ""}]


def completion(steps, answer, think="reasoning") -> str:
    return f"<think>{think}</think>\n<steps>\n{json.dumps(steps)}\n</steps>\n<answer>{answer}</answer>"


def step(sid, expr, value, unit=""):
    return {"id": sid, "expr": expr, "value": value, "unit": unit}
