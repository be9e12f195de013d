"""Cards as ints: parsing, printing, the deck, and the suit order the first-button draw uses."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import (
    FULL_DECK,
    RANKS,
    SUITS,
    CardError,
    card_str,
    cards_str,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    shuffled_deck,
    suit_of,
)


def test_card_layout_is_rank_times_four_plus_suit() -> None:
    for rank, rank_symbol in enumerate(RANKS):
        for suit, suit_symbol in enumerate(SUITS):
            card = parse_card(rank_symbol + suit_symbol)
            expected = rank * 4 + suit
            assert card == expected, f"{rank_symbol}{suit_symbol}: expected {expected}, got {card}"
            assert (rank_of(card), suit_of(card)) == (rank, suit), f"{card}: rank/suit do not round-trip"
            assert make_card(rank, suit) == card, f"make_card({rank}, {suit}) != {card}"
    assert parse_card("2c") == 0 and parse_card("As") == 51, "expected 2c=0 and As=51"


def test_full_deck_is_every_card_once() -> None:
    assert list(FULL_DECK) == list(range(52)), f"expected 0..51, got {FULL_DECK}"
    names = {card_str(card) for card in FULL_DECK}
    assert len(names) == 52, f"expected 52 distinct card names, got {len(names)}"


def test_seat_2_draw_suit_order_spades_hearts_diamonds_clubs() -> None:
    # SEAT-2: highest card gets the button, ties broken spades > hearts > diamonds > clubs, so the
    # int order is the draw order.
    order = [parse_card(text) for text in ("Kc", "Kd", "Kh", "Ks", "Ac")]
    assert order == sorted(order), f"expected Kc < Kd < Kh < Ks < Ac as ints, got {order}"
    assert max(parse_cards("Ah Ks As Ad")) == parse_card("As"), "expected As to win the draw"


@given(st.integers(min_value=0, max_value=51))
@settings(max_examples=60)
def test_card_str_round_trips(card: int) -> None:
    assert parse_card(card_str(card)) == card, f"card {card} does not round-trip through {card_str(card)!r}"


def test_parse_cards_accepts_spaces_commas_and_tens() -> None:
    expected = [parse_card("As"), parse_card("Kd"), parse_card("Tc")]
    for text in ("AsKd Tc", "AsKdTc", "As Kd Tc", "as, kd, tc", " As  Kd\tTc ", "AsKd10c"):
        got = parse_cards(text)
        assert got == expected, f"parse_cards({text!r}): expected {expected}, got {got}"
    assert parse_cards("") == [], "empty text is no cards"
    assert parse_card("10h") == parse_card("Th"), "10h should read as Th"


def test_cards_str_joins_with_separator() -> None:
    cards = parse_cards("AsKdTc")
    assert cards_str(cards) == "AsKdTc", f"got {cards_str(cards)!r}"
    assert cards_str(cards, sep=" ") == "As Kd Tc", f"got {cards_str(cards, sep=' ')!r}"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "rank and a suit"),
        ("A", "rank and a suit"),
        ("Asd", "rank and a suit"),
        ("1s", "unknown rank '1'"),
        ("Xs", "unknown rank 'X'"),
        ("Ax", "unknown suit 'x'"),
    ],
)
def test_parse_card_rejects_bad_text_with_reason(text: str, fragment: str) -> None:
    with pytest.raises(CardError) as caught:
        parse_card(text)
    assert fragment in str(caught.value), f"expected {fragment!r} in error, got {caught.value}"


@pytest.mark.parametrize(
    ("text", "fragment"), [("AsK", "odd length"), ("AsKx", "unknown suit"), ("As Zd", "rank")]
)
def test_parse_cards_rejects_bad_text_with_reason(text: str, fragment: str) -> None:
    with pytest.raises(CardError) as caught:
        parse_cards(text)
    assert fragment in str(caught.value), f"expected {fragment!r} in error, got {caught.value}"


@pytest.mark.parametrize("bad", [-1, 52, 3.0, "As"])
def test_card_str_rejects_non_cards(bad: object) -> None:
    with pytest.raises(CardError):
        card_str(bad)  # type: ignore[arg-type]


def test_make_card_rejects_out_of_range() -> None:
    with pytest.raises(CardError, match=r"rank must be 0\.\.12"):
        make_card(13, 0)
    with pytest.raises(CardError, match=r"suit must be 0\.\.3"):
        make_card(0, 4)


def test_card_error_is_a_value_error() -> None:
    assert issubclass(CardError, ValueError), "CardError should be a ValueError"


def test_shuffled_deck_is_a_permutation_and_seedable() -> None:
    first = shuffled_deck(random.Random(7))
    again = shuffled_deck(random.Random(7))
    assert first == again, "the same seed should give the same deck"
    assert sorted(first) == list(FULL_DECK), "a shuffled deck holds every card once"
    assert first != list(FULL_DECK), "a seeded shuffle should not leave the deck in order"
    system = shuffled_deck()
    assert sorted(system) == list(FULL_DECK), "the system-random deck holds every card once"
