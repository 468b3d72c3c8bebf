"""Integer arithmetic every layer uses: exact, with no float in between."""


def ceil_div(a: int, b: int) -> int:
    """The least integer >= a / b (b > 0): how many pieces of b hold a."""
    return -(-a // b)
