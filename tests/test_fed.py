"""Behaviour of the numpy federated-learning blocks (icml26.fed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26 import fed
from icml26.errors import ConfigError


def test_long_tail_counts_by_hand():
    assert fed.long_tail_counts(1000, 100, 10).tolist()[0] == 1000
    assert fed.long_tail_counts(1000, 100, 10).tolist()[-1] == 10
    assert fed.long_tail_counts(110, 20, 10).tolist()[:2] == [110, int(110 * 20 ** (-1 / 9))]


def test_dirichlet_partition_is_a_partition_with_min_size():
    labels = np.repeat(np.arange(5), 40)
    parts = fed.dirichlet_partition(labels, 8, 0.5, np.random.default_rng(0), min_size=5)
    joined = np.sort(np.concatenate(parts))
    assert joined.tolist() == list(range(200)) and min(map(len, parts)) >= 5
    with pytest.raises(ConfigError, match="cannot give 8 clients 30 samples"):
        fed.dirichlet_partition(labels, 8, 0.5, np.random.default_rng(0), min_size=30)


def test_digits_scaled():
    x, y = fed.load_digits_scaled()
    assert x.shape == (1797, 64) and x.min() == 0.0 and x.max() == 1.0 and set(y) == set(range(10))
    from sklearn.datasets import load_digits

    ref = load_digits()
    assert np.array_equal(x, ref.data / 16.0) and np.array_equal(y, ref.target)


def _torch_mlp(params):
    layers = []
    for i in range(len(params) // 2):
        lin = torch.nn.Linear(*params[2 * i].shape).double()
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(params[2 * i].T))
            lin.bias.copy_(torch.tensor(params[2 * i + 1]))
        layers += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def test_gradients_match_autograd_with_weights_and_shift():
    rng = np.random.default_rng(0)
    params = fed.mlp_init([5, 7, 3], rng)
    x, y = rng.normal(size=(6, 5)), rng.integers(0, 3, 6)
    mask = np.array([1, 1, 1, 0, 1, 1], bool)
    cw, shift = np.array([0.5, 1.0, 2.0]), np.log(np.array([0.6, 0.3, 0.1]))
    logits, acts = fed.mlp_forward(params, x)
    loss, dl = fed.softmax_xent(logits, y, mask, class_weight=cw, logit_shift=shift)
    grads = fed.mlp_grads(params, acts, dl)
    net = _torch_mlp(params)
    z = net(torch.tensor(x)) + torch.tensor(shift)
    per = torch.nn.functional.cross_entropy(z, torch.tensor(y), reduction="none")
    m = torch.tensor(mask, dtype=torch.float64)
    ref = (per * m * torch.tensor(cw)[torch.tensor(y)]).sum() / m.sum()
    ref.backward()
    assert np.isclose(loss, ref.item())
    for i, lin in enumerate(net[::2]):
        assert np.allclose(grads[2 * i], lin.weight.grad.numpy().T)
        assert np.allclose(grads[2 * i + 1], lin.bias.grad.numpy())


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_one_client_fedavg_is_plain_sgd(momentum):
    """FedAvg(M) with one client over 3 rounds == torch.optim.SGD on the same batches."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(50, 4)), rng.integers(0, 3, 50)
    params = fed.mlp_init([4, 8, 3], rng)
    net = _torch_mlp(params)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=momentum)
    glob, vel = params, None
    brng = np.random.default_rng(2)
    for _ in range(3):
        batches, mask = fed.epoch_batches([np.arange(50)], 16, brng)
        local, vel = fed.local_sgd(fed.broadcast(glob, 1), x, y, batches, mask, 0.1,
                                   momentum=momentum, velocity=vel)
        glob = fed.weighted_average(local, [50])
        for s in range(batches.shape[1]):
            rows = batches[0, s][mask[0, s]]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(torch.tensor(x[rows])),
                                              torch.tensor(y[rows])).backward()
            opt.step()
    for i, lin in enumerate(net[::2]):
        assert np.allclose(glob[2 * i], lin.weight.detach().numpy().T, atol=1e-10)
        assert np.allclose(glob[2 * i + 1], lin.bias.detach().numpy(), atol=1e-10)


def test_batched_clients_are_independent_and_padding_is_inert():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(60, 4)), rng.integers(0, 3, 60)
    clients = [np.arange(0, 50), np.arange(50, 60)]          # 4 vs 1 local steps of 16
    params = fed.broadcast(fed.mlp_init([4, 6, 3], rng), 2)
    batches, mask = fed.epoch_batches(clients, 16, np.random.default_rng(4))
    assert batches.shape == (2, 4, 16) and mask[1].sum() == 10 and mask[0].sum() == 50
    both, _ = fed.local_sgd(params, x, y, batches, mask, 0.2)
    alone, _ = fed.local_sgd([p[1:] for p in params], x, y, batches[1:, :1], mask[1:, :1], 0.2)
    for a, b in zip(both, alone, strict=True):
        assert np.allclose(a[1:], b)


def test_weighted_average_and_balanced_accuracy():
    avg = fed.weighted_average([np.array([[1.0], [3.0]])], [1, 3])
    assert avg[0].tolist() == [2.5]
    yt, yp = np.array([0, 0, 0, 1]), np.array([0, 0, 1, 1])
    assert fed.balanced_accuracy(yt, yp, 2) == pytest.approx((2 / 3 + 1) / 2)
