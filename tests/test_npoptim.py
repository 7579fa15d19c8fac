"""The shared numpy Adam against torch.optim.Adam, and its per-model freeze."""
import numpy as np
import pytest

from icml26.npoptim import Adam

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("weight_decay", [0.0, 1e-2])
def test_numpy_adam_matches_torch_adam(weight_decay):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,)]
    params = [rng.normal(size=s) for s in shapes]
    tparams = [torch.tensor(p.copy(), requires_grad=True) for p in params]
    opt = Adam(params, lr=0.05, weight_decay=weight_decay)
    topt = torch.optim.Adam(tparams, lr=0.05, weight_decay=weight_decay)
    for _ in range(25):
        grads = [rng.normal(size=s) for s in shapes]
        opt.step(grads)
        for tp, g in zip(tparams, grads, strict=True):
            tp.grad = torch.tensor(g)
        topt.step()
    for p, tp in zip(params, tparams, strict=True):
        np.testing.assert_allclose(p, tp.detach().numpy(), rtol=0, atol=1e-13)


def test_frozen_models_keep_their_parameters_and_others_are_unaffected():
    rng = np.random.default_rng(1)
    stacked = [rng.normal(size=(3, 5))]
    alone = [stacked[0][2].copy()]
    frozen_before = stacked[0][1].copy()
    opt, opt_alone = Adam(stacked, lr=0.1), Adam(alone, lr=0.1)
    for _ in range(5):
        g = rng.normal(size=(3, 5))
        opt.step([g], active=np.array([True, False, True]))
        opt_alone.step([g[2]])
    np.testing.assert_array_equal(stacked[0][1], frozen_before)
    np.testing.assert_array_equal(stacked[0][2], alone[0])
