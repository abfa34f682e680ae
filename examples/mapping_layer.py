"""The PyQuasar manual's custom PyTorch layer: only the forward is written, the backward derived.

y = a[x] looks each input value up in a 256-entry table `a` (clamped indices). The forward is a
template over its element type, registered with ip::generic; the library derives its backward
(mapping_forward_vjp: the output gradient scattered into the table entries read), and with
ip::with_jvp its forward mode (mapping_forward_jvp: a tangent of the table gathered like it).
The layer becomes a torch.autograd.Function through q.autograd.function, passes
torch.autograd.gradcheck in float64, and trains the table so that y approximates cos(x). Then
the same layer becomes a torch.library custom op (q.torch.custom_op, docs/torch.md), passes
torch.library.opcheck, and the training step runs under torch.compile(fullgraph=True): one graph
with the plugin in it, forward and backward.

    python examples/mapping_layer.py [--backend inductor|aot_eager|eager]   (default inductor)
"""
import argparse

import numpy as np
import torch
from torch.autograd import gradcheck

import isthmus as q

LAYER_SRC = r"""
#include <cmath>
namespace ip = isthmus::plugin;

template <typename T>
using table = ip::view<const T, 1, ip::access::clamped>; // Quasar: a : vec'clamped(256)

// Written once over the element type T. The index is computed from the plain value
// (ip::value_of): the table entry read is differentiated, not the lookup position.
template <typename T>
static ip::tensor<T, 2> forward(table<T> a, ip::view<const T, 2> x) {
    ip::tensor<T, 2> y({x.size(0), x.size(1)});
    for (int64_t m = 0; m < x.size(0); ++m)
        for (int64_t n = 0; n < x.size(1); ++n)
            y(m, n) = a(static_cast<int64_t>(std::floor(ip::value_of(x(m, n)))));
    return y;
}

// mapping_forward for float and double, and its derived backward, mapping_forward_vjp
// (Quasar: mapping_backward = (a, x, da) -> $diffmul(mapping_forward(a, x), a, da)).
ISTHMUS_PLUGIN(layer, m) {
    m.def("mapping_forward", ip::generic<float, double>(ISTHMUS_GENERIC(forward), ip::with_jvp),
          {"a", "x"});
}
"""


def main(steps=300, backend="inductor"):
    q.init("cpu")
    q.compile_string("layer", LAYER_SRC)
    # no backward given: the one derived from the forward (q.mapping_forward.vjp)
    Mapping = q.autograd.function(q.mapping_forward, differentiable=(0,), name="Mapping")
    mapping = Mapping.apply

    torch.manual_seed(0)
    # gradcheck in float64: table entries are the differentiable inputs, x holds indices.
    w64 = torch.randn(256, dtype=torch.float64, requires_grad=True)
    x64 = torch.floor(torch.rand(3, 40, dtype=torch.float64) * 300) - 20  # some out of range
    assert gradcheck(mapping, (w64, x64), eps=1e-6, atol=1e-6)
    print("gradcheck (float64): passed")
    # The forward mode, derived too (ip::with_jvp): moving the table along dw moves y by dw[x].
    dw = torch.randn(256, dtype=torch.float64)
    y64, dy64 = q.mapping_forward.jvp(w64.detach(), x64, dw, torch.zeros_like(x64))
    idx = x64.long().clamp(0, 255)
    assert np.array_equal(np.asarray(dy64), dw[idx].numpy())
    assert np.array_equal(np.asarray(y64), w64.detach()[idx].numpy())
    print("forward mode (mapping_forward_jvp): dy = dw[x], as expected")

    # Training, as in the PyQuasar manual: fit the table so that y_pred = w[x] approximates cos(x).
    dtype = torch.float32
    N, D_in = 1, 1000
    x = torch.floor(torch.rand(N, D_in, dtype=dtype) * 255)
    y = torch.cos(x) + torch.randn(N, D_in, dtype=dtype) * 0.1
    w = torch.linspace(0, 255, steps=256, dtype=dtype, requires_grad=True)
    learning_rate = 5e-2
    losses = []
    for t in range(steps):
        y_pred = mapping(w, x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        if t % 50 == 49:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            w -= learning_rate * w.grad
            w.grad.zero_()
    print(f"loss: {losses[0]:.1f} -> {losses[-1]:.3f}")
    assert losses[-1] < 0.01 * losses[0], "the loss did not fall"
    compiled_training(x, y, backend, steps)
    print("mapping_layer: OK")
    return losses


def compiled_training(x, y, backend, steps):
    """The layer as a custom op, trained with a torch.compile'd step (no graph breaks)."""
    mapping = q.torch.custom_op(q.mapping_forward, fake="x", differentiable=("a",))
    torch.library.opcheck(mapping, (torch.randn(256), torch.floor(torch.rand(2, 7) * 255)))
    print(f"opcheck {q.mapping_forward.plugin}::{q.mapping_forward.__name__}: passed")

    def loss_fn(w):
        return (mapping(w, x) - y).pow(2).sum()

    step = torch.compile(loss_fn, backend=backend, fullgraph=True)
    w = torch.linspace(0, 255, steps=256, dtype=x.dtype, requires_grad=True)
    first = last = None
    for t in range(steps):
        loss = step(w)
        loss.backward()
        with torch.no_grad():
            w -= 5e-2 * w.grad
            w.grad.zero_()
        first = loss.item() if first is None else first
        last = loss.item()
    print(f"torch.compile(backend={backend!r}, fullgraph=True): loss {first:.1f} -> {last:.3f}")
    assert last < 0.01 * first, "the compiled training did not converge"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="inductor", help="torch.compile backend")
    backend = parser.parse_args().backend
    main(backend=backend)
