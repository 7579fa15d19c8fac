"""icml26.lm.quant: RTN and GPTQ on layers whose optimal quantisation is known."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml26.lm import quant  # noqa: E402


def _on_grid(rng, rows, cols, bits):
    """Weights already on each row's symmetric grid (every row reaches its absmax)."""
    m = quant.qmax_sym(bits)
    q = rng.integers(-m, m + 1, size=(rows, cols)).astype(float)
    q[:, 0] = m
    scale = rng.uniform(0.01, 0.1, size=(rows, 1))
    return torch.tensor(q * scale)


def test_weights_on_grid_have_zero_error():
    rng = np.random.default_rng(0)
    w = _on_grid(rng, 5, 8, 3)
    x = torch.tensor(rng.standard_normal((50, 8)) @ rng.standard_normal((8, 8)))
    assert torch.allclose(quant.rtn(w, 3), w, rtol=0, atol=1e-15)
    wq = quant.gptq(w, quant.hessian(x), 3)
    assert torch.allclose(wq, w, atol=1e-12)
    assert quant.calibration_error(w, wq, x) < 1e-20


def test_rtn_by_hand_symmetric_and_asymmetric():
    w = torch.tensor([[0.9, -0.3, 0.15, 0.0]], dtype=torch.float64)
    # symmetric 3 bits: scale 0.3, levels -3..3 -> [0.9, -0.3, 0, 0] (0.15 / 0.3: half to even)
    assert torch.allclose(quant.rtn(w, 3), torch.tensor([[0.9, -0.3, 0.0, 0.0]],
                                                         dtype=torch.float64))
    # asymmetric 2 bits: range [-0.3, 0.9], step 0.4, zero 1 -> levels -0.4, 0, 0.4, 0.8
    assert torch.allclose(quant.rtn(w, 2, sym=False),
                          torch.tensor([[0.8, -0.4, 0.0, 0.0]], dtype=torch.float64))


def test_one_column_gptq_equals_rtn():
    rng = np.random.default_rng(1)
    w = torch.tensor(rng.standard_normal((6, 1)))
    x = torch.tensor(rng.standard_normal((30, 1)))
    assert torch.allclose(quant.gptq(w, quant.hessian(x), 3), quant.rtn(w, 3))


def test_uncorrelated_inputs_gptq_equals_rtn():
    """Diagonal Hessian: no error feedback between columns, so GPTQ is RTN."""
    rng = np.random.default_rng(2)
    w = torch.tensor(rng.standard_normal((4, 5)))
    h = torch.diag(torch.tensor(rng.uniform(0.5, 2.0, 5)))
    assert torch.allclose(quant.gptq(w, h, 3), quant.rtn(w, 3))


def _brute_force(w, x, bits):
    """Exhaustive search of one row over its symmetric grid."""
    scale, _ = quant.grid_params(w, bits)
    m = quant.qmax_sym(bits)
    best, arg = np.inf, None
    for q in itertools.product(range(-m, m + 1), repeat=w.shape[1]):
        wq = torch.tensor([q], dtype=torch.float64) * scale
        e = quant.calibration_error(w, wq, x)
        if e < best:
            best, arg = e, wq
    return best, arg


def test_two_columns_sequential_optimum_by_hand():
    """Column 0 is rounded; column 1 gets the least-squares correction
    w1 + (w0 - q0) H01 / H11, then is rounded: GPTQ's result, never worse than RTN."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        w = torch.tensor(rng.standard_normal((1, 2)))
        z = rng.standard_normal((40, 2))
        x = torch.tensor(np.c_[z[:, 0], 0.9 * z[:, 0] + 0.3 * z[:, 1]])
        h = quant.hessian(x, damp=0.0)
        scale, zero = quant.grid_params(w, 3)
        q0 = quant.quantize(w[:, :1], scale, zero, 3)
        w1 = w[:, 1:] + (w[:, :1] - q0) * h[0, 1] / h[1, 1]
        q1 = quant.quantize(w1, scale, zero, 3)
        wq = quant.gptq(w, h, 3)
        assert torch.allclose(wq, torch.cat([q0, q1], 1))
        assert quant.calibration_error(w, wq, x) <= quant.calibration_error(
            w, quant.rtn(w, 3), x) + 1e-12


def test_gptq_reaches_brute_force_optimum_on_a_tiny_layer():
    """2 bits, 3 correlated inputs: GPTQ's calibration error is below RTN's and equals the
    exhaustive optimum over the grid (checked on this fixed case)."""
    rng = np.random.default_rng(0)
    w = torch.tensor(rng.uniform(-1, 1, (1, 3)))
    z = rng.standard_normal((200, 3))
    x = torch.tensor(np.c_[z[:, 0], 0.8 * z[:, 0] + 0.6 * z[:, 1], 0.5 * z[:, 1]
                           + 0.2 * z[:, 2]])
    wq = quant.gptq(w, quant.hessian(x, damp=0.0), 2)
    best, _ = _brute_force(w, x, 2)
    e_gptq = quant.calibration_error(w, wq, x)
    assert e_gptq < quant.calibration_error(w, quant.rtn(w, 2), x)
    assert e_gptq == pytest.approx(best, rel=1e-9)


def test_token_weights_equal_repeated_tokens():
    """Integer token weights give the Hessian of the calibration set with tokens repeated."""
    rng = np.random.default_rng(5)
    x = torch.tensor(rng.standard_normal((10, 4)))
    t = torch.tensor(rng.integers(1, 4, 10).astype(float))
    rep = torch.repeat_interleave(x, t.long(), dim=0)
    assert torch.allclose(quant.hessian(x, t), quant.hessian(rep))
    w = torch.tensor(rng.standard_normal((3, 4)))
    assert torch.allclose(quant.gptq(w, quant.hessian(x, t), 3),
                          quant.gptq(w, quant.hessian(rep), 3))


def test_kept_columns_and_groups():
    rng = np.random.default_rng(6)
    w = torch.tensor(rng.standard_normal((3, 8)))
    x = torch.tensor(rng.standard_normal((40, 8)))
    wq = quant.gptq(w, quant.hessian(x), 3, keep=[0])
    assert torch.equal(wq[:, 0], w[:, 0])              # first column never rounded
    r = quant.rtn(w, 3, group_size=4)
    assert torch.allclose(r[:, :4], quant.rtn(w[:, :4], 3))
    assert torch.allclose(r[:, 4:], quant.rtn(w[:, 4:], 3))
    # diagonal Hessian with groups: GPTQ is group-wise RTN
    assert torch.allclose(quant.gptq(w, torch.eye(8, dtype=torch.float64), 3, group_size=4), r)


def test_activation_quantisation():
    x = torch.tensor([[0.0, 1.0, -2.0, 30.0], [0.5, -0.26, 1.9, -1.0]])
    assert quant.act_scale(x, 6) == pytest.approx(30.0 / 31)
    assert torch.equal(quant.outlier_channels(x, 0.03, 1), torch.tensor([3]))
    s = quant.act_scale(x, 6, channels=[0, 1, 2])
    assert s == pytest.approx(2.0 / 31)
    lin = quant.QuantLinear(torch.eye(4), None, act_bits=6, act_scale=s, fp_channels=[3])
    y = lin(x.float())
    assert y[0, 3] == 30.0                              # outlier channel passes unquantised
    assert torch.allclose(y[:, :3].double(),
                          (torch.round(x[:, :3] / s).clamp(-31, 31) * s).double(),
                          atol=1e-6)
