"""The hand evaluator against first principles: full 5-card enumeration, a brute-force reference
for 6 and 7 cards and Omaha, treys as a peer, and invariants under hypothesis.

Showdown (BET-3 split pots, BET-4 who wins) is only a comparison of these values, so these tests
are what those rules stand on.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import Card, parse_cards
from engine.evaluator import (
    EvaluationError,
    HandCategory,
    category,
    describe,
    evaluate,
    evaluate7,
    evaluate_omaha,
    ranks_of_value,
)
from engine.evaluator_tables import TableFormatError, build_tables, dump_tables, load_tables

Reference = tuple[int, tuple[int, ...]]


def reference_five(cards: Sequence[Card]) -> Reference:
    """A deliberately plain 5-card classifier, written apart from the table builder: the hand's
    category and its ranks grouped by (count, rank) descending; a straight is ranked by its top."""
    ranks = [card >> 2 for card in cards]
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    shape = tuple(count for _, count in groups)
    order = tuple(rank for rank, _ in groups)
    is_flush = len({card & 3 for card in cards}) == 1
    distinct = sorted(counts)
    top: int | None = None
    if len(distinct) == 5 and distinct[4] - distinct[0] == 4:
        top = distinct[4]
    elif distinct == [0, 1, 2, 3, 12]:
        top = 3
    if top is not None and is_flush:
        return (8, (top,))
    if shape == (4, 1):
        return (7, order)
    if shape == (3, 2):
        return (6, order)
    if is_flush:
        return (5, order)
    if top is not None:
        return (4, (top,))
    if shape == (3, 1, 1):
        return (3, order)
    if shape == (2, 2, 1):
        return (2, order)
    if shape == (2, 1, 1, 1):
        return (1, order)
    return (0, order)


def reference_best(cards: Sequence[Card]) -> Reference:
    """The best of every 5-card subset, by the plain classifier."""
    return max(reference_five(five) for five in combinations(cards, 5))


def as_reference(value: int) -> Reference:
    return (int(category(value)), ranks_of_value(value))


def random_hands(count: int, size: int, seed: int) -> list[list[Card]]:
    rng = random.Random(seed)
    deck = list(range(52))
    return [rng.sample(deck, size) for _ in range(count)]


# --- the full 5-card enumeration ------------------------------------------------------------

EXPECTED_FIVE_CARD_COUNTS = {
    HandCategory.STRAIGHT_FLUSH: 40,
    HandCategory.FOUR_OF_A_KIND: 624,
    HandCategory.FULL_HOUSE: 3_744,
    HandCategory.FLUSH: 5_108,
    HandCategory.STRAIGHT: 10_200,
    HandCategory.THREE_OF_A_KIND: 54_912,
    HandCategory.TWO_PAIR: 123_552,
    HandCategory.PAIR: 1_098_240,
    HandCategory.HIGH_CARD: 1_302_540,
}


def test_all_2598960_five_card_hands_category_counts_and_7462_classes() -> None:
    values = Counter(map(evaluate, combinations(range(52), 5)))
    assert sum(values.values()) == 2_598_960, f"expected 2,598,960 hands, got {sum(values.values())}"
    assert len(values) == 7_462, f"expected 7,462 distinct hand values, got {len(values)}"
    by_category: Counter[HandCategory] = Counter()
    for value, hands in values.items():
        by_category[category(value)] += hands
    assert dict(by_category) == EXPECTED_FIVE_CARD_COUNTS, (
        f"expected {EXPECTED_FIVE_CARD_COUNTS}, got {dict(by_category)}"
    )


# --- differential: brute force and treys ----------------------------------------------------


@pytest.mark.parametrize(("size", "count"), [(5, 3_000), (6, 2_000), (7, 2_000)])
def test_bet_4_values_equal_brute_force_best_of_five(size: int, count: int) -> None:
    for cards in random_hands(count, size, seed=size):
        got = as_reference(evaluate(cards))
        expected = reference_best(cards)
        assert got == expected, f"{cards}: expected {expected}, got {got}"


def test_bet_3_equal_values_are_exact_ties_and_order_matches_brute_force() -> None:
    # Split pots (BET-3) rest on equal values meaning tied hands; winners (BET-4) on the order.
    hands = random_hands(1_500, 7, seed=33)
    # Boards shared by both hands make ties common enough to matter.
    rng = random.Random(34)
    for _ in range(1_500):
        cards = rng.sample(range(52), 9)
        board = cards[:5]
        hands.append(cards[5:7] + board)
        hands.append(cards[7:9] + board)
    pairs = list(zip(hands[::2], hands[1::2], strict=True))
    ties = 0
    for first, second in pairs:
        ours = (evaluate(first) > evaluate(second)) - (evaluate(first) < evaluate(second))
        reference = (reference_best(first) > reference_best(second)) - (
            reference_best(first) < reference_best(second)
        )
        ties += ours == 0
        assert ours == reference, f"{first} vs {second}: expected comparison {reference}, got {ours}"
    assert ties > 20, f"expected the shared-board sample to contain ties, got {ties}"


def test_bet_4_comparisons_agree_with_treys_on_random_seven_card_hands() -> None:
    treys = pytest.importorskip("treys")
    from engine.cards import card_str

    peer = treys.Evaluator()
    to_treys = [treys.Card.new(card_str(card)) for card in range(52)]
    rng = random.Random(77)
    disagreements = []
    for _ in range(3_000):
        cards = rng.sample(range(52), 9)
        board = cards[:5]
        first, second = cards[5:7] + board, cards[7:9] + board
        ours = (evaluate(first) > evaluate(second)) - (evaluate(first) < evaluate(second))
        # treys: lower is better.
        treys_board = [to_treys[c] for c in board]
        treys_first = peer.evaluate([to_treys[c] for c in first[:2]], treys_board)
        treys_second = peer.evaluate([to_treys[c] for c in second[:2]], treys_board)
        theirs = (treys_first < treys_second) - (treys_first > treys_second)
        if ours != theirs:
            disagreements.append((first, second, ours, theirs))
    assert not disagreements, f"expected agreement with treys, got {len(disagreements)}: {disagreements[:3]}"


def test_evaluate7_equals_evaluate() -> None:
    for cards in random_hands(2_000, 7, seed=71):
        assert evaluate7(*cards) == evaluate(cards), f"{cards}: evaluate7 and evaluate differ"


def test_omaha_equals_brute_force_two_from_hole_three_from_board() -> None:
    rng = random.Random(4)
    for board_size in (3, 4, 5):
        for _ in range(300):
            cards = rng.sample(range(52), 4 + board_size)
            hole, board = cards[:4], cards[4:]
            expected = max(
                reference_five(two + three)
                for two in combinations(hole, 2)
                for three in combinations(board, 3)
            )
            got = as_reference(evaluate_omaha(hole, board))
            assert got == expected, f"hole {hole} board {board}: expected {expected}, got {got}"


def test_omaha_uses_exactly_two_hole_cards() -> None:
    # Four spades in hand and a rainbow board is no flush in Omaha; the board's trips need a pair.
    hole = parse_cards("AsKsQsJs")
    board = parse_cards("2s7d7h7c9s")
    value = evaluate_omaha(hole, board)
    assert category(value) is HandCategory.THREE_OF_A_KIND, f"expected trips, got {describe(value)}"
    assert describe(evaluate_omaha(parse_cards("AhAd2c3c"), parse_cards("AsKsQsJsTs"))) == (
        "Three of a Kind, Aces"
    ), "a royal flush on board does not play in Omaha"


# --- the shipped table -----------------------------------------------------------------------


def test_shipped_table_equals_fresh_build(repo_root: Path) -> None:
    shipped = (repo_root / "engine" / "evaluator_tables.bin").read_bytes()
    fresh = build_tables()
    assert load_tables(shipped) == fresh, (
        "engine/evaluator_tables.bin differs from build_tables(); run scripts/build_evaluator_tables.py"
    )
    assert load_tables(dump_tables(fresh)) == fresh, "dump/load should round-trip"


@pytest.mark.parametrize("data", [b"", b"nope", b"FELTDEVAL1\nnot zlib"])
def test_load_tables_rejects_foreign_files(data: bytes) -> None:
    with pytest.raises(TableFormatError):
        load_tables(data)


# --- words -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("KsKdKc5h5d", "Full House, Kings full of Fives"),
        ("5s5d5cKhKd", "Full House, Fives full of Kings"),
        ("AsAdAh9c9d9s2c", "Full House, Aces full of Nines"),
        ("Ad Kd 7d 4d 2d Ac Ah", "Flush, Ace high"),
        ("AsAd9c9d3s2c4h", "Two Pair, Aces and Nines"),
        ("Ah2d3c4s5h9d9c", "Straight, Five high"),
        ("6h2d3c4s5hAc", "Straight, Six high"),
        ("AsKsQsJsTs9s2d", "Straight Flush, Ace high"),
        ("5c4c3c2cAc", "Straight Flush, Five high"),
        ("QsQdQhQc2c3d", "Four of a Kind, Queens"),
        ("7s7d7hKc2d", "Three of a Kind, Sevens"),
        ("6s6dKc2d9h", "Pair, Sixes"),
        ("2c3d4h6s7c9dJh", "High Card, Jack"),
    ],
)
def test_describe_known_hands(text: str, expected: str) -> None:
    got = describe(evaluate(parse_cards(text)))
    assert got == expected, f"{text}: expected {expected!r}, got {got!r}"


def test_categories_are_ordered_worst_to_best() -> None:
    ordered = [
        "2c3d4h6s8c",
        "2c2d4h6s8c",
        "2c2d4h4s8c",
        "2c2d2h6s8c",
        "2c3d4h5s6c",
        "2c3c4c6c8c",
        "2c2d2h8s8c",
        "2c2d2h2s8c",
        "2c3c4c5c6c",
    ]
    values = [evaluate(parse_cards(text)) for text in ordered]
    assert [category(value) for value in values] == list(HandCategory), f"got {[category(v) for v in values]}"
    assert values == sorted(values), "each category should beat the one before"
    assert HandCategory.FLUSH > HandCategory.STRAIGHT, "HandCategory compares by strength"


def test_bet_4_kickers_decide_and_wheel_is_lowest_straight() -> None:
    wins = [
        ("AsAd KcQh9s", "AhAc KdQs8h"),  # third kicker
        ("9s9d 5c5h As", "9h9c 5d5s Kh"),  # two-pair kicker
        ("6h2d3c4s5h", "Ah2d3c4s5c"),  # six-high straight beats the wheel
        ("KsKdKhQs2c", "KcKdKsJs2d"),  # trips kicker
    ]
    for better, worse in wins:
        assert evaluate(parse_cards(better)) > evaluate(parse_cards(worse)), f"expected {better} > {worse}"


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "fragment"),
    [
        ([0, 1, 2, 3], "5 to 7 cards, got 4"),
        (list(range(8)), "5 to 7 cards, got 8"),
        (list(range(13)), "5 to 7 cards, got 13"),
        ([0, 1, 2, 3, 52], "ints 0..51"),
        ([0, 1, 2, 3, 4, 5, 99], "ints 0..51"),
        ([0, 1, 2, 3, -1], "ints 0..51"),
        ([0, 1, 2, 3, 4, 5, -52], "ints 0..51"),
        ([47, 43, 39, 35, 31, 2, 103], "ints 0..51"),
        ([0, 1, 2, 3, "As"], "ints 0..51"),
        ([51, 51, 51, 51, 51], "same card twice"),
        ([51, 51, 51, 51, 51, 0, 4], "same card twice"),
    ],
)
def test_evaluate_rejects_impossible_input(cards: list[Card], fragment: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        evaluate(cards)
    assert fragment in str(caught.value), f"expected {fragment!r} in error, got {caught.value}"


@pytest.mark.parametrize("bad", [60, -1, 103, -52])
def test_evaluate7_rejects_non_cards(bad: int) -> None:
    with pytest.raises(EvaluationError, match=r"ints 0\.\.51"):
        evaluate7(0, 1, 2, 3, 4, 5, bad)


@pytest.mark.parametrize(
    ("hole", "board", "fragment"),
    [
        ([0, 1, 2], [10, 11, 12], "4 hole cards"),
        ([0, 1, 2, 3], [10, 11], "3 to 5 cards"),
        ([0, 1, 2, 3], [10, 11, 12, 13, 14, 15], "3 to 5 cards"),
        ([0, 1, 2, 3], [3, 11, 12], "appears twice"),
    ],
)
def test_evaluate_omaha_rejects_bad_counts(hole: list[Card], board: list[Card], fragment: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        evaluate_omaha(hole, board)
    assert fragment in str(caught.value), f"expected {fragment!r} in error, got {caught.value}"


# --- invariants ------------------------------------------------------------------------------

seven_cards = st.lists(st.integers(min_value=0, max_value=51), min_size=7, max_size=7, unique=True)


@given(seven_cards, st.permutations([0, 1, 2, 3]), st.randoms(use_true_random=False))
@settings(max_examples=300, deadline=None)
def test_value_ignores_card_order_and_suit_names(
    cards: list[Card], suits: list[int], rng: random.Random
) -> None:
    value = evaluate(cards)
    shuffled = cards[:]
    rng.shuffle(shuffled)
    assert evaluate(shuffled) == value, f"{cards}: order changed the value"
    renamed = [(card & ~3) | suits[card & 3] for card in cards]
    assert evaluate(renamed) == value, f"{cards}: renaming suits {suits} changed the value"


@given(seven_cards)
@settings(max_examples=300, deadline=None)
def test_more_cards_never_make_a_worse_hand(cards: list[Card]) -> None:
    five, six, seven = evaluate(cards[:5]), evaluate(cards[:6]), evaluate(cards)
    assert five <= six <= seven, f"{cards}: expected 5 <= 6 <= 7 card values, got {five}, {six}, {seven}"
    assert seven == max(evaluate(list(sub)) for sub in combinations(cards, 5)), (
        f"{cards}: 7-card value should be the best 5-card subset value"
    )


# --- the benchmark command ---------------------------------------------------------------------


def test_bench_engine_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    # A smoke run of `feltd bench engine`: it must print each rate and ratio (figures, not asserts).
    from server.cli.main import main

    assert main(["bench", "engine", "--seconds", "0.01", "--hands", "3", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    for expected in (
        "evaluations/s",
        "hands/s",
        "evaluations feltd/treys",
        "evaluations feltd/pokerkit",
        "hands feltd/pokerkit",
        "pokerkit finished 3 of 3 hands on feltd's stacks, every pass",
        "hands feltd/pokerkit, round by round: median",
    ):
        assert expected in out, f"expected {expected!r} in the bench output, got:\n{out}"
    assert "n/a" not in out, f"expected every ratio (treys and pokerkit are installed), got:\n{out}"
