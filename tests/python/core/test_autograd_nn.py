# isthmus.nn and isthmus.optim: modules, parameters and state against torch.nn / torch.optim.
import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")


def norch_model():
    return q.nn.Sequential(q.nn.Linear(1, 10), q.nn.Sigmoid(), q.nn.Linear(10, 1))


def torch_twin(model):
    """torch's Sequential with the same weights as an isthmus one (float64)."""
    layers = []
    for m in model:
        if isinstance(m, q.nn.Linear):
            t = torch.nn.Linear(m.in_features, m.out_features, dtype=torch.float64)
            with torch.no_grad():
                t.weight.copy_(torch.tensor(np.asarray(m.weight.detach())))
                t.bias.copy_(torch.tensor(np.asarray(m.bias.detach())))
            layers.append(t)
        else:
            layers.append({"Sigmoid": torch.nn.Sigmoid, "ReLU": torch.nn.ReLU,
                           "Tanh": torch.nn.Tanh}[type(m).__name__]())
    return torch.nn.Sequential(*layers)


def data():
    x = np.linspace(-2, 2, 32).reshape(32, 1)
    return x, np.sin(x)


def as_float64(model):
    return model.to(dtype="float64")


def test_module_registers_parameters_and_submodules():
    model = norch_model()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(list(model.parameters())) == 4
    assert all(isinstance(p, q.nn.Parameter) and p.requires_grad and p.is_leaf
               for p in model.parameters())
    assert [type(m).__name__ for m in model.children()] == ["Linear", "Sigmoid", "Linear"]
    assert model[0].weight.shape == (10, 1)
    assert not isinstance(q.value([1.0]), q.nn.Parameter)

    class Net(q.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = norch_model()
            self.scale = q.nn.Parameter(q.value([2.0]))
            self.plain = 3

        def forward(self, x):
            return self.body(x) * self.scale

    net = Net()
    assert [n for n, _ in net.named_parameters()][0] == "scale"  # own parameters first, as torch
    assert net.plain == 3
    with pytest.raises(AttributeError):
        net.missing


def test_repr_looks_like_torch():
    assert repr(norch_model()) == (
        "Sequential(\n"
        "  (0): Linear(in_features=1, out_features=10, bias=True)\n"
        "  (1): Sigmoid()\n"
        "  (2): Linear(in_features=10, out_features=1, bias=True)\n"
        ")")
    assert repr(q.nn.MSELoss()) == "MSELoss()"


def test_train_eval_and_zero_grad():
    model = norch_model()
    assert model.training and model[1].training
    model.eval()
    assert not model.training and not model[1].training
    model.train()
    assert model[2].training
    x, y = data()
    q.nn.MSELoss()(model(q.value(x, dtype="float32")), q.value(y, dtype="float32")).backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_state_dict_round_trip_and_errors():
    a, b = norch_model(), norch_model()
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert not sd["0.weight"].requires_grad
    b.load_state_dict(sd)
    for pa, pb in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(np.asarray(pa.detach()), np.asarray(pb.detach()))
        assert pb.requires_grad
    before = np.asarray(b[0].weight.detach()).copy()
    bad = dict(sd)
    bad["0.weight"] = q.zeros(3, 3)
    with pytest.raises(ValueError, match="shape"):
        b.load_state_dict(bad)
    del bad["0.bias"]
    with pytest.raises(KeyError, match="missing"):
        b.load_state_dict(bad)
    np.testing.assert_array_equal(np.asarray(b[0].weight.detach()), before)  # unchanged


def test_the_norch_model_trains_like_torch_with_sgd_momentum():
    model = as_float64(norch_model())
    twin = torch_twin(model)
    x, y = data()
    xq, yq = q.value(x), q.value(y)
    xt, yt = torch.tensor(x), torch.tensor(y)
    opt = q.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3, nesterov=True)
    opt_t = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3,
                            nesterov=True)
    loss_fn, loss_t = q.nn.MSELoss(), torch.nn.MSELoss()
    first = None
    for _ in range(50):
        loss = loss_fn(model(xq), yq)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lt = loss_t(twin(xt), yt)
        opt_t.zero_grad()
        lt.backward()
        opt_t.step()
        np.testing.assert_allclose(float(loss), lt.item(), rtol=1e-9)
        first = first or float(loss)
    assert float(loss) < first / 2
    for p, pt in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(np.asarray(p.detach()), pt.detach().numpy(), rtol=1e-8,
                                   atol=1e-10)


@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.01)),
                                         ("Adam", dict(lr=0.01, weight_decay=0.1)),
                                         ("AdamW", dict(lr=0.01, weight_decay=0.1)),
                                         ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.1))])
def test_optimizers_follow_torch(name, kwargs):
    q.manual_seed(3)
    model = as_float64(q.nn.Sequential(q.nn.Linear(1, 8), q.nn.Tanh(), q.nn.Linear(8, 1)))
    twin = torch_twin(model)
    opt = getattr(q.optim, name)(model.parameters(), **kwargs)
    opt_t = getattr(torch.optim, name)(twin.parameters(), **kwargs)
    x, y = data()
    for _ in range(20):
        opt.zero_grad()
        q.nn.MSELoss()(model(q.value(x)), q.value(y)).backward()
        opt.step()
        opt_t.zero_grad()
        torch.nn.MSELoss()(twin(torch.tensor(x)), torch.tensor(y)).backward()
        opt_t.step()
    for p, pt in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(np.asarray(p.detach()), pt.detach().numpy(), rtol=1e-7,
                                   atol=1e-9)


def test_optimizer_bad_input():
    with pytest.raises(ValueError, match="empty"):
        q.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="require grad"):
        q.optim.SGD([q.value([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        q.optim.Adam(norch_model().parameters(), lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        q.optim.SGD(norch_model().parameters(), lr=0.1, nesterov=True)


def test_relu_and_cross_entropy_match_torch():
    rng = np.random.default_rng(4)
    logits0 = rng.normal(size=(6, 4))
    target = np.array([0, 3, 1, 1, 2, 0])
    x = q.value(logits0, requires_grad=True)
    loss = q.nn.CrossEntropyLoss()(q.nn.ReLU()(x) + x, q.value(target))
    loss.backward()
    xt = torch.tensor(logits0, requires_grad=True)
    lt = torch.nn.CrossEntropyLoss()(torch.relu(xt) + xt, torch.tensor(target))
    lt.backward()
    np.testing.assert_allclose(float(loss), lt.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(IndexError, match="class indices"):
        q.nn.CrossEntropyLoss()(x, q.value([0, 1, 2, 3, 4, 5]))
    with pytest.raises(TypeError, match="integers"):
        q.nn.CrossEntropyLoss()(x, q.value([0.0] * 6))


def test_mse_loss_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="shape"):
        q.nn.MSELoss()(q.value([1.0, 2.0]), q.value([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="reduction"):
        q.nn.MSELoss(reduction="avg")
