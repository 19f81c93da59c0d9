"""The array-wise Laplace draw equals ``Generator.laplace`` bit for bit, state included.

The reference is NumPy's own ``generator.laplace``; a per-element Python transcription of
its C ``random_laplace`` (``math.log`` is the C library's ``log``) checks the pure
transform, and a generator whose uniform stream holds chosen values (zeros, 0.5)
checks the rejection of ``U == 0`` and the sign of a zero at ``U = 0.5``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.privacy.mechanisms import laplace_draw
from fedpriv.privacy.mechanisms.laplace_draw import laplace_from_uniforms, sample_laplace
from hypothesis import given, settings
from hypothesis import strategies as st

fast_only = pytest.mark.skipif(
    not laplace_draw.FAST_PATH, reason="np.log is not libm's log here: the fallback is used"
)


@pytest.fixture(autouse=True, scope="module")
def _fast_path_for_every_size():
    """Every size takes the array-wise path here (the library takes it from
    ``_MIN_FAST`` draws on), so that small cases test it too."""
    saved = laplace_draw._MIN_FAST
    laplace_draw._MIN_FAST = 1
    yield
    laplace_draw._MIN_FAST = saved


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


def _c_laplace(u: float, scale: float, loc: float = 0.0) -> float:
    """``random_laplace`` of one accepted uniform, transcribed from NumPy's C source."""
    if u >= 0.5:
        return loc - scale * math.log(2.0 - u - u)
    return loc + scale * math.log(u + u)


class _ScriptedGenerator:
    """A Generator whose uniforms are a real stream with chosen values at chosen
    positions; ``laplace`` is the C loop over that stream (rejecting zeros)."""

    def __init__(self, seed: int, planted: dict[int, float]) -> None:
        self._rng = np.random.default_rng(seed)
        self._planted = planted
        self.position = 0

    def random(self, size=None, *, out=None):
        n = out.size if out is not None else int(np.prod(size))
        values = self._rng.random(n)
        for index, value in self._planted.items():
            if self.position <= index < self.position + n:
                values[index - self.position] = value
        self.position += n
        if out is None:
            return values
        out[...] = values
        return out

    def laplace(self, loc, scale, size):
        n = int(np.prod(size))
        out = np.empty(n)
        for i in range(n):
            u = 0.0
            while u == 0.0:
                u = float(self.random(1)[0])
            out[i] = _c_laplace(u, scale, loc)
        return out.reshape(size)


@fast_only
@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.one_of(st.integers(0, 40_000), st.tuples(st.integers(1, 300), st.integers(1, 200))),
    scale=st.one_of(
        st.floats(1e-300, 1e300, allow_nan=False, allow_infinity=False),
        st.sampled_from([1.0, 0.5, 3.0, 1e-320]),
    ),
)
def test_equals_generator_laplace_and_leaves_the_same_state(seed, size, scale) -> None:
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    drawn = sample_laplace(ours, scale, size)
    expected = theirs.laplace(0.0, scale, size=size)
    assert drawn.shape == expected.shape
    np.testing.assert_array_equal(_bits(drawn), _bits(expected))
    assert ours.bit_generator.state == theirs.bit_generator.state
    assert ours.random() == theirs.random()


@fast_only
def test_long_draw_spans_many_blocks_and_keeps_the_state() -> None:
    n = 3 * laplace_draw._BLOCK * 7 + 11
    ours, theirs = np.random.default_rng(2026), np.random.default_rng(2026)
    np.testing.assert_array_equal(
        _bits(sample_laplace(ours, 1.0, n)), _bits(theirs.laplace(0.0, 1.0, n))
    )
    assert ours.bit_generator.state == theirs.bit_generator.state


@fast_only
@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-300, 1e300), loc=st.floats(-1e6, 1e6))
def test_transform_is_the_c_expression_element_by_element(seed, scale, loc) -> None:
    u = np.random.default_rng(seed).random(2000)
    u = u[u > 0.0]
    u[:4] = [0.5, 2.0**-53, 1.0 - 2.0**-53, 0.5 - 2.0**-54]
    expected = np.array([_c_laplace(x, scale, loc) for x in u.tolist()])
    np.testing.assert_array_equal(_bits(laplace_from_uniforms(u, scale, loc)), _bits(expected))


@fast_only
def test_u_one_half_gives_positive_zero_as_c_does() -> None:
    out = laplace_from_uniforms(np.array([0.5]), 1.0)
    assert out[0] == 0.0 and math.copysign(1.0, out[0]) == 1.0
    gen = _ScriptedGenerator(1, {700: 0.5})
    drawn = sample_laplace(gen, 2.0, 1000)
    assert math.copysign(1.0, drawn[700]) == 1.0 and drawn[700] == 0.0


@fast_only
@pytest.mark.parametrize(
    ("planted", "n"),
    [
        ({0: 0.0}, 1000),  # first uniform rejected
        ({999: 0.0}, 1000),  # the last one: one more uniform is drawn
        ({5: 0.0, 6: 0.0, 3000: 0.0}, 10_000),  # several, in two blocks
        ({laplace_draw._BLOCK: 0.0}, 2 * laplace_draw._BLOCK),  # first of the 2nd block
        ({1000: 0.0, 1001: 0.0}, 1002),  # the redraws themselves include a zero
    ],
)
def test_zero_uniforms_are_rejected_as_c_rejects_them(planted, n) -> None:
    ours, reference = _ScriptedGenerator(9, planted), _ScriptedGenerator(9, planted)
    drawn = sample_laplace(ours, 0.7, n)
    expected = reference.laplace(0.0, 0.7, n)
    np.testing.assert_array_equal(_bits(drawn), _bits(expected))
    assert np.all(np.isfinite(drawn))
    assert ours.position == reference.position == n + len(planted)


def test_fallback_is_generator_laplace(monkeypatch) -> None:
    monkeypatch.setattr(laplace_draw, "FAST_PATH", False)
    calls = []

    class Spy:
        def laplace(self, loc, scale, size):
            calls.append((loc, scale, size))
            return np.random.default_rng(0).laplace(loc, scale, size)

    out = sample_laplace(Spy(), 1.5, (40, 50))
    assert calls == [(0.0, 1.5, (40, 50))]
    np.testing.assert_array_equal(out, np.random.default_rng(0).laplace(0.0, 1.5, (40, 50)))


@fast_only
@pytest.mark.parametrize("feature", ["AVX512F", "AVX512_SKX"])
def test_fast_path_is_off_with_avx512(monkeypatch, feature) -> None:
    from numpy._core._multiarray_umath import __cpu_features__

    assert laplace_draw._fast_path_available()
    monkeypatch.setitem(__cpu_features__, feature, True)
    assert not laplace_draw._fast_path_available()


def test_fast_path_is_off_off_x86_64(monkeypatch) -> None:
    monkeypatch.setattr(laplace_draw.platform, "machine", lambda: "aarch64")
    assert not laplace_draw._fast_path_available()


@fast_only
@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_every_bit_generator_gives_generator_laplace(bit_generator) -> None:
    ours = np.random.Generator(bit_generator(11))
    theirs = np.random.Generator(bit_generator(11))
    theirs.random(3)
    ours.random(3)  # a used stream, then two draws in a row
    for scale, size in ((0.3, 5000), (4.0, (70, 90))):
        np.testing.assert_array_equal(
            _bits(sample_laplace(ours, scale, size)), _bits(theirs.laplace(0.0, scale, size))
        )
    np.testing.assert_equal(ours.bit_generator.state, theirs.bit_generator.state)
    np.testing.assert_array_equal(_bits(ours.random(9)), _bits(theirs.random(9)))


def test_a_bad_scale_is_generator_laplaces_business() -> None:
    with pytest.raises(ValueError):
        np.random.default_rng(0).laplace(0.0, -1.0, 1000)
    with pytest.raises(ValueError):
        sample_laplace(np.random.default_rng(0), -1.0, 1000)
    ours, theirs = np.random.default_rng(1), np.random.default_rng(1)
    np.testing.assert_array_equal(
        _bits(sample_laplace(ours, np.nan, 1000)), _bits(theirs.laplace(0.0, np.nan, 1000))
    )


@fast_only
def test_scale_zero_gives_positive_zeros_as_c_does() -> None:
    ours, theirs = np.random.default_rng(4), np.random.default_rng(4)
    np.testing.assert_array_equal(
        _bits(sample_laplace(ours, 0.0, 3000)), _bits(theirs.laplace(0.0, 0.0, 3000))
    )
